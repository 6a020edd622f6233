// Shared by the games where each seat is a betting box (Casino War, Down Under Blackjack):
// the dealer's hand, the player's own box up front, and the other boxes in play.

import { HandView } from "../cards";
import { el, spotLabel } from "../format";
import type { Rules } from "../protocol";
import { paysFor } from "./baccarat";
import type { GameContext } from "./types";

export class Boxes {
  readonly root = el("div", { class: "boxes" });
  private hands = new Map<string, HandView>();

  constructor(
    private ctx: GameContext,
    private total: (codes: (string | null)[]) => string,
  ) {}

  /** "box:3" / "bet:3" / "split:3" → the hand, created on first use. */
  hand(target: string): HandView {
    let h = this.hands.get(target);
    if (h) return h;
    const [kind, n] = target.split(":");
    const mine = this.ctx.seat !== null && Number(n) === this.ctx.seat;
    const title = `${mine ? "You" : `Box ${n}`}${kind === "split" ? " — split hand" : ""}`;
    h = new HandView(title, this.total, mine ? "hand-mine" : "hand-other");
    h.root.dataset.target = target;
    this.hands.set(target, h);
    const ordered = [...this.hands.entries()].sort(([a], [b]) => this.order(a) - this.order(b));
    this.root.replaceChildren(...ordered.map(([, v]) => v.root));
    return h;
  }

  private order(target: string): number {
    const [kind, n] = target.split(":");
    const mine = this.ctx.seat !== null && Number(n) === this.ctx.seat;
    return (mine ? 0 : 100) + Number(n) * 2 + (kind === "split" ? 1 : 0);
  }

  all(): Map<string, HandView> {
    return this.hands;
  }

  clear(): void {
    this.hands.clear();
    this.root.replaceChildren();
  }
}

export function boxSpot(rules: Rules, ctx: GameContext, template: string, cls: string): HTMLElement {
  const spot = ctx.spot(template);
  const kind = template.split(":")[0];
  const pays = paysFor(rules, kind);
  const label = `${spotLabel(spot)}${pays ? `, pays ${pays}` : ""}`;
  return el(
    "button",
    { type: "button", class: `spot circle ${cls}`, "data-spot": spot, "data-label": label, "data-testid": `spot-${kind}`, "aria-label": label },
    el("span", { class: "spot-name", text: spotLabel(spot) }),
    pays ? el("span", { class: "spot-pays", text: pays }) : "",
  );
}
