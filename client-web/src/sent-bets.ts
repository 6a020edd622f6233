// Bets sent and not yet answered: which to send again when the answer says the table's node
// did not answer in time (docs/protocol.md, `table_unavailable`). A cluster node that waited
// too long for the node running the table cannot tell whether the bet was placed; sending
// the same `place_bet` again (its `bet_id` makes that safe) learns whether it stands.
import type { ErrorMessage, PlaceBet } from "./protocol";

/** How many times a bet answered `table_unavailable` is sent again, and how far apart. */
export const BET_RESENDS = 3;
export const BET_RESEND_MS = 700;

export class SentBets {
  private sent = new Map<number, { bet: PlaceBet; resent: number }>();

  /** `bet` went out with `ref` (the `resent`-th time). */
  add(ref: number, bet: PlaceBet, resent = 0): void {
    this.sent.set(ref, { bet, resent });
  }

  /** A reply with `ref` came (a `bet_accepted`): nothing more to do for it. */
  answered(ref: number | null | undefined): void {
    if (typeof ref === "number") this.sent.delete(ref);
  }

  /** An error came: the bet to send again (and how many times it was), or null to show it. */
  resend(error: ErrorMessage): { bet: PlaceBet; resent: number } | null {
    if (typeof error.ref !== "number") return null;
    const sent = this.sent.get(error.ref);
    this.sent.delete(error.ref);
    if (!sent || error.code !== "table_unavailable" || sent.resent >= BET_RESENDS) return null;
    return { bet: sent.bet, resent: sent.resent + 1 };
  }

  /** A new connection: the old one's replies will not come. */
  clear(): void {
    this.sent.clear();
  }

  get size(): number {
    return this.sent.size;
  }
}
