// The roulette layout and the baccarat roads. The layout's spots are also checked against the
// server's rules (tests/e2e/test_codec_fixtures.py reads test/fixtures/roulette-layout.json):
// every betting area is a legal wager and every legal wager has an area.
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { canonical, DOUBLE_ZERO_ORDER, layoutAreas, neighbours, SINGLE_ZERO_ORDER, type Wheel } from "../src/games/roulette";
import { bigRoad, parseResult } from "../src/roads";

const fixture = join(dirname(fileURLToPath(import.meta.url)), "fixtures", "roulette-layout.json");

function spotsFor(wheel: Wheel): string[] {
  const spots = layoutAreas(wheel).map((a) => a.spot);
  const order = wheel === "single_zero" ? SINGLE_ZERO_ORDER : DOUBLE_ZERO_ORDER;
  for (const centre of order) {
    const blocked = wheel === "double_zero_as_single" && neighbours(order, centre).includes("00");
    if (!blocked) spots.push(`five_adjacent:${centre}`);
  }
  return spots.sort();
}

describe("roulette layout", () => {
  const wheels: Wheel[] = ["single_zero", "double_zero", "double_zero_as_single"];
  const computed = Object.fromEntries(wheels.map((w) => [w, spotsFor(w)]));

  it("matches the spot list the server checks (test/fixtures/roulette-layout.json)", () => {
    if (process.env.UPDATE_FIXTURES) writeFileSync(fixture, JSON.stringify(computed, null, 1) + "\n");
    expect(JSON.parse(readFileSync(fixture, "utf-8"))).toEqual(computed);
  });

  it("has no area twice", () => {
    for (const w of wheels) expect(new Set(computed[w]).size).toBe(computed[w].length);
  });

  it("writes inside bets in the server's canonical order", () => {
    expect(canonical("split", [20, 17])).toBe("split:17-20");
    expect(canonical("three_numbers", ["00", 2, 0])).toBe("three_numbers:0-00-2");
  });

  it("finds the wheel neighbours for Five Adjacent Numbers", () => {
    expect(neighbours(SINGLE_ZERO_ORDER, "0")).toEqual(["3", "26", "0", "32", "15"]);
    expect(neighbours(DOUBLE_ZERO_ORDER, "17")).toEqual(["20", "32", "17", "5", "22"]);
  });
});

describe("baccarat roads", () => {
  it("reads results", () => {
    expect(parseResult("banker 9-8")).toEqual({ winner: "B", score: "9-8" });
    expect(parseResult("tie 8-8")?.winner).toBe("T");
    expect(parseResult("no wagers")).toBeNull();
  });

  it("starts a column per streak, marks ties, and turns a long streak right", () => {
    const cells = bigRoad(["P", "P", "T", "B", "B", "B", "B", "B", "B", "B", "P"]);
    expect(cells.map((c) => [c.winner, c.col, c.row, c.ties])).toEqual([
      ["P", 0, 0, 0],
      ["P", 0, 1, 1],
      ["B", 1, 0, 0],
      ["B", 1, 1, 0],
      ["B", 1, 2, 0],
      ["B", 1, 3, 0],
      ["B", 1, 4, 0],
      ["B", 1, 5, 0],
      ["B", 2, 5, 0],
      ["P", 2, 0, 0],
    ]);
  });
});
