// The baccarat roads (src/roads.ts): the big road's placement and the three derived roads —
// big eye boy, small road, cockroach pig — by the standard rules.
import { describe, expect, it } from "vitest";
import { bigEyeBoy, bigRoad, cockroachPig, derivedRoad, nextMarks, placeMarks, smallRoad, streaks, winnersOf } from "../src/roads";
import type { Winner } from "../src/roads";

const w = (text: string): Winner[] => text.replace(/\s/g, "").split("") as Winner[];
// red/blue as R/B, to read the expectations at a glance
const rb = (marks: string[]): string => marks.map((m) => (m === "red" ? "R" : "B")).join("");

describe("big road", () => {
  it("starts a column per streak and keeps ties on the last cell", () => {
    const cells = bigRoad(w("T B B T P B"));
    expect(cells).toEqual([
      { winner: "B", ties: 1, col: 0, row: 0 },
      { winner: "B", ties: 1, col: 0, row: 1 },
      { winner: "P", ties: 0, col: 1, row: 0 },
      { winner: "B", ties: 0, col: 2, row: 0 },
    ]);
  });

  it("turns a streak longer than six right along the bottom row (dragon tail)", () => {
    const cells = bigRoad(w("BBBBBBBB P"));
    expect(cells.slice(5, 8).map((c) => [c.col, c.row])).toEqual([[0, 5], [1, 5], [2, 5]]);
    expect(cells[8]).toMatchObject({ winner: "P", col: 1, row: 0 });
  });

  it("counts a dragon tail as one logical column", () => {
    expect(streaks(w("BBBBBBBB T P P B"))).toEqual([8, 2, 1]);
  });

  it("places any marks the same way", () => {
    expect(placeMarks(["red", "red", "blue"]).map((p) => [p.col, p.row])).toEqual([[0, 0], [0, 1], [1, 0]]);
  });
});

describe("derived roads", () => {
  // Big road B B | P | B B B | P P: columns of 2, 1, 3, 2.
  const shoe = w("B B P B B B P P");

  it("big eye boy starts at the first entry of column 3 when column 2 has one entry", () => {
    // col3 row1: columns 2 and 1 differ (1 vs 2) → blue; col3 row2: column 2 stops at row 1 → blue;
    // col3 row3: column 2 stopped earlier → red; col4 row1: columns 3 and 2 differ → blue;
    // col4 row2: column 3 has a row 2 → red.
    expect(rb(bigEyeBoy(shoe))).toBe("BBRBR");
  });

  it("big eye boy starts at the second entry of column 2 when there is one", () => {
    // B | P P: col2 row2 compares with column 1 (length 1: stops at row 1) → blue.
    expect(rb(bigEyeBoy(w("B P P")))).toBe("B");
    expect(bigEyeBoy(w("B P"))).toEqual([]);
    expect(rb(bigEyeBoy(w("B P B")))).toBe("R");
  });

  it("small road and cockroach pig compare two and three columns back", () => {
    expect(rb(smallRoad(shoe))).toBe("RBBB");
    expect(rb(cockroachPig(shoe))).toBe("R");
    expect(cockroachPig(w("B P B"))).toEqual([]);
  });

  it("marks a chop (every streak one long) and equal streaks all red", () => {
    const chop = w("B P B P B P B P");
    for (const offset of [1, 2, 3] as const) expect(derivedRoad(chop, offset).every((m) => m === "red")).toBe(true);
    expect(rb(bigEyeBoy(w("BBB PPP BBB")))).toBe("RRRRR");
  });

  it("ignores ties", () => {
    expect(bigEyeBoy(w("B T B P T B B"))).toEqual(bigEyeBoy(w("B B P B B")));
  });

  it("marks one entry per big-road entry once the road has started", () => {
    const long = w("BPPBBBPBPPPPBBPTBPBBBPPB");
    const entries = streaks(long).reduce((a, b) => a + b, 0);
    for (const offset of [1, 2, 3] as const) {
      const cols = streaks(long);
      const skipped = cols.slice(0, offset).reduce((a, b) => a + b, 0) + 1;
      expect(derivedRoad(long, offset)).toHaveLength(entries - skipped);
    }
  });

  it("predicts the next mark of each road for a Banker or a Player", () => {
    // B B | P | B B B | P P: a Banker starts column 5 (columns 4 and 3 differ: blue; 4 vs 2: blue;
    // 4 vs 1: equal: red); a Player continues column 4 (row 3: column 3 has one: red; column 2 stopped
    // earlier: red; column 1 stopped at row 2: blue).
    expect(nextMarks(shoe, "B")).toEqual(["blue", "blue", "red"]);
    expect(nextMarks(shoe, "P")).toEqual(["red", "red", "blue"]);
    expect(nextMarks(w("B"), "P")).toEqual([null, null, null]);
  });

  it("reads the winners from the table's results", () => {
    expect(winnersOf(["player 8-5", "banker 9-8", "no wagers", "tie 8-8"])).toEqual(["P", "B", "T"]);
  });
});
