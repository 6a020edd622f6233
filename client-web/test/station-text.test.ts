// What a player station's touchscreen, its attendant menu and the big screen say
// (src/station-text.ts).
import { describe, expect, it } from "vitest";
import {
  addWinners,
  billsText,
  formatWhen,
  handpayText,
  lockBanner,
  lockReason,
  lockRows,
  meterRows,
  stationErrorText,
  ticketText,
  winnerLine,
} from "../src/station-text";
import type { StationLock } from "../src/protocol";

const lock = (cause: string, extra: Partial<StationLock> = {}): StationLock => ({ cause, since: "2025-05-02T18:04:11Z", detail: "", present: false, ...extra });

describe("lock reasons", () => {
  it("says every cause the server sends in plain words", () => {
    expect(lockReason("door_open")).toBe("Main door open");
    expect(lockReason("cash_box_open")).toBe("Cash box door open");
    expect(lockReason("tilt")).toBe("Tilt");
    expect(lockReason("connection")).toBe("Connection to the server lost");
    expect(lockReason("heartbeat")).toBe("Station not answering (heartbeat)");
    expect(lockReason("self_test")).toBe("Self-test failed");
    expect(lockReason("critical_memory")).toBe("Critical memory check failed");
    expect(lockReason("memory")).toBe("Station memory fault");
    expect(lockReason("printer")).toBe("Ticket printer fault");
    expect(lockReason("bill_validator")).toBe("Bill validator fault");
  });

  it("shows an unknown cause as its code", () => {
    expect(lockReason("coin_hopper_jam")).toBe("coin_hopper_jam");
  });
});

describe("lock banner", () => {
  const base = { enabled: false, locks: [] as StationLock[], handpay: null, called: false };

  it("is absent while the station is enabled", () => {
    expect(lockBanner({ ...base, enabled: true })).toBeNull();
  });

  it("lists each lock once, with the station's detail, and asks to call the attendant", () => {
    const b = lockBanner({ ...base, locks: [lock("door_open", { present: true }), lock("printer", { detail: "paper out" }), lock("door_open")] });
    expect(b).toEqual({ headline: "Station locked", reasons: ["Main door open", "Ticket printer fault (paper out)"], handpay: null, call: "Call attendant" });
  });

  it("says 'Station not ready' when the server names no reason", () => {
    const b = lockBanner(base);
    expect(b?.headline).toBe("Station not ready");
    expect(b?.reasons).toEqual([]);
  });

  it("shows a pending handpay: a jackpot, or a cash-out above the ticket limit", () => {
    expect(lockBanner({ ...base, handpay: { amount: 250000, kind: "jackpot" } })).toMatchObject({
      headline: "Handpay pending",
      handpay: "HANDPAY $2,500.00 — an attendant will pay you",
    });
    expect(handpayText({ amount: 1234567, kind: "cancelled_credits" })).toBe("Cash out above the ticket limit — an attendant will pay $12,345.67");
  });

  it("says when the attendant was called", () => {
    expect(lockBanner({ ...base, called: true })?.call).toBe("Attendant called — please wait");
  });
});

describe("tickets and times", () => {
  it("words the cash-out ticket", () => {
    expect(ticketText({ validation: "001234567890123456", amount: 20000, expires_at: "2025-08-01T15:30:00Z" }, "UTC")).toBe(
      "Ticket printed: $200.00, validation 001234567890123456, expires Aug 1, 2025, 3:30 PM",
    );
  });
  it("keeps a time it cannot read as it is", () => {
    expect(formatWhen("someday")).toBe("someday");
  });
});

describe("meters", () => {
  it("shows amounts as money, counts as numbers, bills by denomination, in the attendant's order", () => {
    const rows = meterRows({
      games_played: 1204,
      credits_in: 50000,
      bills_in: { "10000": 1, "2000": 2 },
      won: 102550,
      tickets_out_amount: 20000,
      tickets_out: 1,
    });
    expect(rows.map((r) => [r.label, r.value])).toEqual([
      ["Credits in", "$500.00"],
      ["Won", "$1,025.50"],
      ["Games played", "1,204"],
      ["Bills in", "$20 × 2, $100 × 1 (total $140.00)"],
      ["Tickets out", "1"],
      ["Tickets out, amount", "$200.00"],
    ]);
  });

  it("renders meters it does not know generically, after the known ones", () => {
    const rows = meterRows({ door_opens: 3, jackpots_amount: 99900, firmware: "2.1", coins: { a: 1 }, credits_out: 0 });
    expect(rows.map((r) => [r.name, r.label, r.value])).toEqual([
      ["credits_out", "Credits out", "$0.00"],
      ["door_opens", "Door opens", "3"],
      ["jackpots_amount", "Jackpots amount", "$999.00"],
      ["firmware", "Firmware", "2.1"],
      ["coins", "Coins", "a: 1"],
    ]);
  });

  it("puts the server's other known meters in their place", () => {
    const rows = meterRows({ tickets_voided_amount: 500, bills_in_amount: 4000, bills_in: { "2000": 2 }, tickets_voided: 1 });
    expect(rows.map((r) => [r.label, r.value])).toEqual([
      ["Bills in", "$20 × 2 (total $40.00)"],
      ["Bills in, amount", "$40.00"],
      ["Tickets voided", "1"],
      ["Tickets voided, amount", "$5.00"],
    ]);
  });

  it("shows the credits sent with the meters as money, last", () => {
    const rows = meterRows({ credits: 2000, credits_in: 2000, bills_in: { "2000": 1 } });
    expect(rows.map((r) => [r.name, r.label, r.value])).toEqual([
      ["credits_in", "Credits in", "$20.00"],
      ["bills_in", "Bills in", "$20 × 1 (total $20.00)"],
      ["credits", "Credits now", "$20.00"],
    ]);
  });

  it("has no rows without meters", () => {
    expect(meterRows(null)).toEqual([]);
    expect(billsText({})).toBe("none");
  });

  it("lists locks with since and whether the cause is present", () => {
    expect(lockRows([lock("tilt", { present: true }), lock("memory")], "UTC")).toEqual([
      { cause: "tilt", reason: "Tilt", since: "May 2, 2025, 6:04 PM", state: "Present", present: true },
      { cause: "memory", reason: "Station memory fault", since: "May 2, 2025, 6:04 PM", state: "Gone — can be cleared", present: false },
    ]);
  });
});

describe("errors", () => {
  it("uses the server's reason for a locked station, and plain words for the rest", () => {
    expect(stationErrorText("station_locked", "main door open")).toBe("Station locked — main door open");
    expect(stationErrorText("nothing_to_cash_out", "")).toBe("There are no credits to cash out.");
    expect(stationErrorText("fault_present", "x")).toMatch(/still present/);
    expect(stationErrorText("betting_closed", "closed", { betting_closed: "Too late." })).toBe("Too late.");
    expect(stationErrorText("surprise", "Something odd")).toBe("Something odd");
  });
});

describe("last winners", () => {
  it("words a seat's win", () => {
    expect(winnerLine({ seat: 3, amount: 45000 })).toBe("Seat 3 · $450.00");
  });

  it("keeps the newest rounds first, at most ten, each round once, and no zero wins", () => {
    let list = addWinners([], { round: "t.1", wins: [{ seat: 2, amount: 1000 }, { seat: 5, amount: 0 }] });
    list = addWinners(list, { round: "t.2", wins: [{ seat: 3, amount: 45000 }, { seat: 1, amount: 200 }] });
    list = addWinners(list, { round: "t.2", wins: [{ seat: 3, amount: 45000 }] });
    expect(list.map(winnerLine)).toEqual(["Seat 3 · $450.00", "Seat 1 · $2.00", "Seat 2 · $10.00"]);
    for (let i = 3; i < 20; i++) list = addWinners(list, { round: `t.${i}`, wins: [{ seat: 1, amount: i * 100 }] });
    expect(list).toHaveLength(10);
    expect(list[0].round).toBe("t.19");
  });
});
