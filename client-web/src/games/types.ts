import type { Rules, TableEvent } from "../protocol";

/** What the table shell gives a game's view. */
export interface GameContext {
  rules: Rules;
  seat: number | null;
  /** Spot name with `{seat}` filled in. */
  spot(template: string): string;
  /** Is the spot offered at this table (from rules.spots, or the game's own layout)? */
  offered(spot: string): boolean;
}

/**
 * A game's part of the table: the stage (cards, wheel, result) and the betting layout.
 * Every betting area is a <button data-spot="SPOT"> inside `board` (optionally
 * data-multiplier="5": the amount is that many chips, e.g. Five Adjacent Numbers); the shell
 * handles clicks, chip badges and win/loss marks.
 */
export interface GameView {
  stage: HTMLElement;
  board: HTMLElement;
  /** A new round: clear the cards and the result. */
  reset(): void;
  /** The cards as of a snapshot (target → codes; face-down cards may be absent). */
  setCards(cards: Record<string, string[]>): void;
  /** Every table event, after the shell has handled the common ones. */
  event(ev: TableEvent, mine: boolean): void;
  /** The table's last results (for history strips / roads). */
  history?(results: string[]): void;
  /** Called when the viewport changes orientation class (roulette re-lays its board). */
  relayout?(): void;
}
