// The pages from the URL (src/routes.ts) and the station token from the fragment (connection.ts).
import { describe, expect, it } from "vitest";
import { fragmentToken, parseFragment } from "../src/connection";
import { money, resultHeadline, setCurrency } from "../src/format";
import { parseRoute } from "../src/routes";

describe("routes", () => {
  it("tells the lobby, a table, a station and a display apart", () => {
    expect(parseRoute("/")).toEqual({ kind: "lobby" });
    expect(parseRoute("/table/baccarat")).toEqual({ kind: "table", table: "baccarat" });
    expect(parseRoute("/station/st-3/")).toEqual({ kind: "station", station: "st-3" });
    expect(parseRoute("/display/lucky-nines")).toEqual({ kind: "display", table: "lucky-nines" });
    expect(parseRoute("/display/lucky%2Dnines")).toEqual({ kind: "display", table: "lucky-nines" });
    expect(parseRoute("/station/")).toEqual({ kind: "lobby" });
    expect(parseRoute("/station/a/b")).toEqual({ kind: "lobby" });
    expect(parseRoute("/table/%E0%A4%A")).toEqual({ kind: "lobby" });
  });
});

describe("fragment token", () => {
  it("reads the token from #token=…", () => {
    expect(fragmentToken("#token=abc.def-ghi_jk")).toBe("abc.def-ghi_jk");
    expect(fragmentToken("#x=1&token=a%2Bb%3D%3D")).toBe("a+b==");
    expect(fragmentToken("token=eyJ0==")).toBe("eyJ0==");
  });

  it("keeps a + as a + (base64 tokens)", () => {
    expect(fragmentToken("#token=a+b")).toBe("a+b");
  });

  it("has no token when there is none", () => {
    expect(fragmentToken("")).toBeNull();
    expect(fragmentToken("#")).toBeNull();
    expect(fragmentToken("#token=")).toBeNull();
    expect(fragmentToken("#token")).toBeNull();
    expect(fragmentToken("#tokens=abc")).toBeNull();
  });

  it("survives a malformed escape", () => {
    expect(parseFragment("#token=%E0%A4%A&b=2")).toEqual({ token: "%E0%A4%A", b: "2" });
  });
});

describe("money and results for the big screens", () => {
  it("shows cents when asked", () => {
    expect(money(45000)).toBe("$450");
    expect(money(45000, { cents: true })).toBe("$450.00");
    expect(money(-5, { cents: true })).toBe("−$0.05");
  });

  it("shows the player's currency (welcome.currency)", () => {
    try {
      setCurrency("EUR");
      expect(money(123450)).toBe("€1,234.50");
      expect(money(500, { sign: true })).toBe("+€5");
      setCurrency("CHF");
      expect(money(1250)).toBe("CHF 12.50");
      setCurrency("PLAY");
      expect(money(45000)).toBe("$450");
    } finally {
      setCurrency("USD");
    }
  });

  it("words a baccarat result", () => {
    expect(resultHeadline("banker 9-8")).toBe("Banker wins 9–8");
    expect(resultHeadline("player 8-5")).toBe("Player wins 8–5");
    expect(resultHeadline("tie 8-8")).toBe("Tie 8–8");
    expect(resultHeadline("banker")).toBe("Banker wins");
    expect(resultHeadline("17 red")).toBe("17 red");
  });
});
