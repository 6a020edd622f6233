// Down Under Blackjack (685a): the dealer's up card and hole card, the Masque reader's light
// (the range of the hole card), the player's hands with hit / stand / double / split.

import { HandView } from "../cards";
import { blackjackTotal, el } from "../format";
import type { Rules, TableEvent } from "../protocol";
import { Boxes, boxSpot } from "./boxed";
import type { GameContext, GameView } from "./types";

const RANGE_TEXT: Record<string, string> = { small: "2 to 5", medium: "6 to 9", large: "10, J, Q, K or A" };

function totalText(codes: (string | null)[]): string {
  const { total, soft } = blackjackTotal(codes);
  return soft && total < 21 ? `${total - 10}/${total}` : String(total);
}

export class DownUnderView implements GameView {
  stage: HTMLElement;
  board: HTMLElement;
  private dealer = new HandView("Dealer", totalText, "hand-dealer");
  private boxes: Boxes;
  private light = el("div", { class: "reader-light off", role: "status", "aria-live": "polite", "data-testid": "reader-light" });

  constructor(rules: Rules, ctx: GameContext) {
    this.boxes = new Boxes(ctx, totalText);
    this.resetLight();
    this.stage = el("div", { class: "stage boxed-stage du-stage" }, el("div", { class: "dealer-row" }, this.dealer.root, this.light), this.boxes.root);
    const spots = rules.spots.map((t) => boxSpot(rules, ctx, t, `spot-${t.split(":")[0]}`));
    this.board = el(
      "div",
      { class: "board boxed-board" },
      ctx.seat === null ? el("p", { class: "muted", text: "Watching — no box." }) : el("div", { class: "box-spots" }, ...spots),
      el("p", { class: "hint", text: "Get closer to 21 than the dealer without going over. Blackjack pays 3 to 2. The reader light tells you the range of the dealer's face-down card; a dealer 22 pushes most hands." }),
    );
  }

  private resetLight(): void {
    this.light.className = "reader-light off";
    this.light.replaceChildren(el("span", { class: "lamp", "aria-hidden": "true" }), el("span", { class: "light-text", text: "Reader: waiting for the hole card" }));
  }

  reset(): void {
    this.dealer.clear();
    this.boxes.clear();
    this.resetLight();
  }

  setCards(cards: Record<string, string[]>): void {
    this.reset();
    for (const [target, codes] of Object.entries(cards)) {
      if (target === "dealer") this.dealer.set(codes);
      else if (/^(bet|split):/.test(target)) this.boxes.hand(target).set(codes);
    }
  }

  event(ev: TableEvent, mine: boolean): void {
    const d = ev.data;
    switch (ev.event) {
      case "card_dealt": {
        const code = d.face_up === false ? null : ((d.card as string) ?? null);
        if (d.target === "dealer") this.dealer.add(code);
        else if (typeof d.target === "string" && /^(bet|split):/.test(d.target)) this.boxes.hand(d.target).add(code);
        break;
      }
      case "hole_card_range_read": {
        const range = String(d.range);
        const colour = String(d.light);
        this.light.className = `reader-light light-${colour}`;
        this.light.replaceChildren(
          el("span", { class: "lamp", "aria-hidden": "true" }),
          el("span", { class: "light-text", text: `Reader: ${colour} — hole card ${RANGE_TEXT[range] ?? range}` }),
        );
        break;
      }
      case "hole_card_revealed":
        this.dealer.reveal(String(d.card));
        break;
      case "decision_made":
        if (d.decision === "split" && typeof d.spot === "string") {
          // The second card of the pair starts the split hand.
          const box = d.spot.split(":")[1];
          const moved = this.boxes.hand(`bet:${box}`).popLast();
          this.boxes.hand(`split:${box}`).add(moved);
        }
        break;
      case "wager_settled": {
        if (!mine) break;
        const s = d.settlement as { wager: { spot: string }; outcome: { result: string } };
        const hand = this.boxes.all().get(s.wager.spot);
        hand?.mark(s.outcome.result === "win" ? "win" : s.outcome.result === "lose" ? "lose" : "tie");
        break;
      }
      default:
        break;
    }
  }
}
