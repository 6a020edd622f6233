// Baccarat (every variant and side wager) and 21 Baccarat: the Player and Banker hands, the
// main betting areas, every side wager the table offers, and the bead plate / big road.

import { HandView } from "../cards";
import { baccaratTotal, blackjackTotal, el, spotLabel } from "../format";
import type { Rules, TableEvent } from "../protocol";
import { beadPlate, bigRoadElement } from "../roads";
import type { GameContext, GameView } from "./types";

/** The headline of a paytable entry, e.g. "1 to 1", "19 to 20", "up to 25 to 1", "up to
 * 299 for 1" (the server words odds as the regulation does: "X to Y", "X for 1", "push"). */
export function paysSummary(value: unknown): string {
  if (typeof value === "string") return value.split(";")[0];
  if (value && typeof value === "object") {
    const pays = ("pays" in value ? (value as { pays: Record<string, string> }).pays : value) as Record<string, unknown>;
    let best = 0;
    let bestText = "";
    for (const v of Object.values(pays)) {
      const m = /^(\d+)\s+(to|for)\s+(\d+)/.exec(String(v));
      if (m) {
        const ratio = Number(m[1]) / Number(m[3]) - (m[2] === "for" ? 1 : 0);
        if (ratio > best) {
          best = ratio;
          bestText = String(v);
        }
      }
    }
    if (bestText) return Object.keys(pays).length > 1 ? `up to ${bestText}` : bestText;
  }
  return "";
}

export function paysFor(rules: Rules, spot: string): string {
  const p = rules.paytables;
  const entry = p[spot] as { pays?: Record<string, string> } | undefined;
  // A main bet: what it pays when its hand wins ("1 to 1", "19 to 20").
  const wins = entry?.pays?.[`${spot}_wins`];
  if (wins) return wins;
  if (p[spot] !== undefined) return paysSummary(p[spot]);
  if (spot.startsWith("bonus_") && p.bonus) return paysSummary(p.bonus);
  return "";
}

export class BaccaratView implements GameView {
  stage: HTMLElement;
  board: HTMLElement;
  private player: HandView;
  private banker: HandView;
  private roads = el("div", { class: "roads in-table" });
  private twentyOne: boolean;

  constructor(
    private rules: Rules,
    ctx: GameContext,
  ) {
    this.twentyOne = rules.game === "twenty_one_baccarat";
    const total = this.twentyOne
      ? (c: (string | null)[]) => String(blackjackTotal(c).total)
      : (c: (string | null)[]) => String(baccaratTotal(c));
    this.player = new HandView("Player", total, "hand-player");
    this.banker = new HandView("Banker", total, "hand-banker");
    this.stage = el("div", { class: "stage baccarat-stage" }, el("div", { class: "hands" }, this.player.root, this.banker.root), this.roads);

    const main = ["player", "tie", "banker"].filter((s) => ctx.offered(s));
    const side = rules.spots.filter((s) => !main.includes(s));
    this.board = el(
      "div",
      { class: "board baccarat-board" },
      el("div", { class: "main-spots" }, ...main.map((s) => this.spotButton(s, `main-spot spot-${s}`))),
      side.length
        ? el("div", { class: "side-spots", role: "group", "aria-label": "Side bets" }, el("h3", { class: "side-title", text: "Side bets" }), el("div", { class: "side-grid" }, ...side.map((s) => this.spotButton(s, "side-spot"))))
        : "",
    );
  }

  private spotButton(spot: string, cls: string): HTMLElement {
    const pays = paysFor(this.rules, spot);
    const label = `${spotLabel(spot)}${pays ? `, pays ${pays}` : ""}`;
    return el(
      "button",
      { type: "button", class: `spot ${cls}`, "data-spot": spot, "data-label": label, "data-testid": `spot-${spot}`, "aria-label": label },
      el("span", { class: "spot-name", text: spotLabel(spot) }),
      pays ? el("span", { class: "spot-pays", text: pays }) : "",
    );
  }

  reset(): void {
    this.player.clear();
    this.banker.clear();
    this.player.mark(null);
    this.banker.mark(null);
  }

  setCards(cards: Record<string, string[]>): void {
    this.player.set(cards.player ?? []);
    this.banker.set(cards.banker ?? []);
  }

  event(ev: TableEvent): void {
    const d = ev.data;
    if (ev.event === "card_dealt") {
      const hand = d.target === "player" ? this.player : d.target === "banker" ? this.banker : null;
      hand?.add(d.face_up === false ? null : (d.card as string) ?? null, { rotated: hand.codes.length === 2 && !this.twentyOne });
    } else if (ev.event === "result_announced" || ev.event === "round_settled") {
      const text = String(d.winner ?? d.result ?? "");
      const w = /^(player|banker|tie)/i.exec(text)?.[1]?.toLowerCase();
      if (w) {
        this.player.mark(w === "player" ? "win" : w === "tie" ? "tie" : "lose");
        this.banker.mark(w === "banker" ? "win" : w === "tie" ? "tie" : "lose");
      }
    }
  }

  history(results: string[]): void {
    if (this.twentyOne) {
      this.roads.replaceChildren();
      return;
    }
    this.roads.replaceChildren(
      el("div", { class: "road-wrap" }, el("span", { class: "road-title", text: "Bead plate" }), beadPlate(results.slice(-48))),
      el("div", { class: "road-wrap" }, el("span", { class: "road-title", text: "Big road" }), bigRoadElement(results.slice(-60))),
    );
  }
}
