// Big Six Wheel (619a): seven symbols, the wheel's stop revealed.

import { el, spotLabel } from "../format";
import type { Rules, TableEvent } from "../protocol";
import type { GameContext, GameView } from "./types";

const SYMBOL_OF: Record<string, string> = { one: "$1", two: "$2", five: "$5", ten: "$10", twenty: "$20", joker: "joker", flag: "flag" };

export class BigSixView implements GameView {
  stage: HTMLElement;
  board: HTMLElement;
  private result = el("div", { class: "wheel-result", "aria-live": "polite", "data-testid": "wheel-result", text: "—" });
  private strip = el("ol", { class: "result-strip" });

  constructor(rules: Rules, _ctx: GameContext) {
    const pays = (rules.paytables.big_six as { pays?: Record<string, string> } | undefined)?.pays ?? {};
    this.stage = el("div", { class: "stage wheel-stage" }, el("div", { class: "big-six-wheel", "aria-hidden": "true" }, this.result), el("div", {}, el("span", { class: "road-title", text: "Last stops" }), this.strip));
    this.board = el(
      "div",
      { class: "board big-six-board" },
      ...rules.spots.map((s) => {
        const label = `${spotLabel(s)}, pays ${pays[s] ?? ""}`;
        return el(
          "button",
          { type: "button", class: `spot b6-spot b6-${s}`, "data-spot": s, "data-label": label, "data-testid": `spot-${s}`, "aria-label": label },
          el("span", { class: "spot-name", text: spotLabel(s) }),
          el("span", { class: "spot-pays", text: pays[s] ?? "" }),
        );
      }),
    );
  }

  reset(): void {
    this.result.textContent = "Spinning soon";
    this.result.className = "wheel-result";
    for (const b of this.board.querySelectorAll(".hit")) b.classList.remove("hit");
  }

  setCards(): void {}

  event(ev: TableEvent): void {
    if (ev.event === "betting_closed") {
      this.result.textContent = "Spinning…";
      this.result.classList.add("spinning");
    } else if (ev.event === "wheel_stopped") {
      const symbol = String(ev.data.symbol);
      this.result.textContent = symbol === "joker" ? "Joker" : symbol === "flag" ? "Flag" : symbol;
      this.result.className = "wheel-result landed";
      const spot = Object.entries(SYMBOL_OF).find(([, v]) => v === symbol)?.[0];
      if (spot) this.board.querySelector(`[data-spot="${spot}"]`)?.classList.add("hit");
    }
  }

  history(results: string[]): void {
    this.strip.replaceChildren(...results.filter((r) => r !== "no wagers").slice(-12).reverse().map((r) => el("li", { class: "result-chip", text: r })));
  }
}
