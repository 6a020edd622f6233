import type { Rules } from "../protocol";
import { BaccaratView } from "./baccarat";
import { BigSixView } from "./bigsix";
import { CasinoWarView } from "./war";
import { DownUnderView } from "./downunder";
import { RouletteView } from "./roulette";
import type { GameContext, GameView } from "./types";

export function createGameView(rules: Rules, ctx: GameContext): GameView {
  switch (rules.game) {
    case "baccarat":
    case "twenty_one_baccarat":
      return new BaccaratView(rules, ctx);
    case "roulette":
      return new RouletteView(rules, ctx);
    case "big_six":
      return new BigSixView(rules, ctx);
    case "casino_war":
      return new CasinoWarView(rules, ctx);
    case "down_under_blackjack":
      return new DownUnderView(rules, ctx);
    default:
      return new BaccaratView(rules, ctx);
  }
}
