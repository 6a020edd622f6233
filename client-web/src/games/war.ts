// Casino War (651a): your card against the dealer's; on a tie, go to War or surrender.

import { HandView } from "../cards";
import { el } from "../format";
import type { Rules, TableEvent } from "../protocol";
import { Boxes, boxSpot } from "./boxed";
import type { GameContext, GameView } from "./types";

const RANK = (code: string | null) => (code ? code.slice(0, -1) : "");

export class CasinoWarView implements GameView {
  stage: HTMLElement;
  board: HTMLElement;
  private dealer = new HandView("Dealer", (c) => RANK(c[c.length - 1]), "hand-dealer");
  private boxes: Boxes;
  private note = el("p", { class: "stage-note", "aria-live": "polite", "data-testid": "war-note" });

  constructor(rules: Rules, private ctx: GameContext) {
    this.boxes = new Boxes(ctx, (c) => RANK(c[c.length - 1]));
    this.stage = el("div", { class: "stage boxed-stage war-stage" }, this.dealer.root, this.note, this.boxes.root);
    const spots = rules.spots.map((t) => boxSpot(rules, ctx, t, `spot-${t.split(":")[0]}`));
    this.board = el(
      "div",
      { class: "board boxed-board" },
      ctx.seat === null ? el("p", { class: "muted", text: "Watching — no box." }) : el("div", { class: "box-spots" }, ...spots),
      el("p", { class: "hint", text: "Higher card wins 1 to 1 (ace high). On a tie you choose: go to War with an equal bet, or surrender half." }),
    );
  }

  reset(): void {
    this.dealer.clear();
    this.boxes.clear();
    this.note.textContent = "";
  }

  setCards(cards: Record<string, string[]>): void {
    this.reset();
    for (const [target, codes] of Object.entries(cards)) {
      if (target === "dealer") this.dealer.set(codes);
      else if (target.startsWith("box:")) this.boxes.hand(target).set(codes);
    }
  }

  event(ev: TableEvent, mine: boolean): void {
    const d = ev.data;
    switch (ev.event) {
      case "card_dealt":
        if (d.target === "dealer") this.dealer.add((d.card as string) ?? null);
        else if (typeof d.target === "string" && d.target.startsWith("box:")) this.boxes.hand(d.target).add((d.card as string) ?? null);
        break;
      case "hand_compared": {
        const h = this.boxes.hand(`box:${d.box}`);
        h.mark(d.result === "higher" ? "win" : d.result === "lower" ? "lose" : "tie");
        if (Number(d.box) === this.ctx.seat) {
          this.note.textContent =
            d.result === "tie" ? (d.deal === "war" ? "A tie at War — you win more!" : "A tie! Go to War or surrender.") : d.result === "higher" ? "Your card is higher." : "The dealer's card is higher.";
        }
        break;
      }
      case "war_declared":
        if (mine) this.note.textContent = "War! Three cards are burned, then a card each.";
        break;
      case "surrendered":
        if (mine) this.note.textContent = "You surrendered: half your bet returned.";
        break;
      default:
        break;
    }
  }
}
