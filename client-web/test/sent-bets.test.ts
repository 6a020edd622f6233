// A bet answered `table_unavailable` (a cluster node that did not hear from the table's node in
// time) is sent again as it was, a few times; any other answer ends it.
import { describe, expect, it } from "vitest";
import type { ErrorMessage, PlaceBet } from "../src/protocol";
import { BET_RESENDS, SentBets } from "../src/sent-bets";

const bet: PlaceBet = { type: "place_bet", table: "bac-1", round: "r1", bet_id: "b1", spot: "banker", amount: 500 };
const error = (code: string, ref: number | null): ErrorMessage => ({ type: "error", code, message: "", value: null, ref });

describe("sent bets", () => {
  it("sends a bet answered table_unavailable again, the same bet, at most BET_RESENDS times", () => {
    const sent = new SentBets();
    sent.add(1, bet);
    let ref = 1;
    for (let n = 1; n <= BET_RESENDS; n++) {
      const again = sent.resend(error("table_unavailable", ref));
      expect(again).toEqual({ bet, resent: n });
      ref += 1;
      sent.add(ref, again!.bet, again!.resent);
    }
    expect(sent.resend(error("table_unavailable", ref))).toBeNull(); // shown to the player now
    expect(sent.size).toBe(0);
  });

  it("shows every other error, and forgets a bet once answered", () => {
    const sent = new SentBets();
    sent.add(1, bet);
    expect(sent.resend(error("betting_closed", 1))).toBeNull();
    sent.add(2, bet);
    sent.answered(2);
    expect(sent.resend(error("table_unavailable", 2))).toBeNull(); // not a bet waiting
    expect(sent.resend(error("table_unavailable", null))).toBeNull();
    sent.add(3, bet);
    sent.clear();
    expect(sent.size).toBe(0);
  });
});
