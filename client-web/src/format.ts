// Money, cards, spot names and results as a player reads them.

// The sign money is shown with: the player's currency (`welcome.currency`), "$" for USD and
// for play money, as every amount in minor units of a hundredth.
const SYMBOLS: Record<string, string> = { USD: "$", PLAY: "$", EUR: "€", GBP: "£" };
let symbol = "$";

/** Show money in `currency` (ISO 4217, or PLAY) from now on: its sign where it has a
 * common one, else its code ("CHF 12.50"). */
export function setCurrency(currency: string): void {
  symbol = SYMBOLS[currency] ?? `${currency} `;
}

/** Minor units → "$1,234.50" (whole units without cents unless `cents`: "$450.00", as a
 * ticket or a credit meter reads), in the player's currency (`setCurrency`). PLAY money
 * shows as dollars. */
export function money(minor: number, opts: { sign?: boolean; cents?: boolean } = {}): string {
  const negative = minor < 0;
  const abs = Math.abs(minor);
  const dollars = Math.floor(abs / 100);
  const cents = abs % 100;
  const text = `${symbol}${dollars.toLocaleString("en-US")}${cents || opts.cents ? `.${String(cents).padStart(2, "0")}` : ""}`;
  if (negative) return `−${text}`;
  return opts.sign && minor > 0 ? `+${text}` : text;
}

/** A chip's short face: 100 → "1", 2500 → "25", 100000 → "1K". */
export function chipFace(minor: number): string {
  const dollars = minor / 100;
  if (dollars >= 1000 && dollars % 1000 === 0) return `${dollars / 1000}K`;
  if (dollars < 1) return `${minor}¢`;
  return Number.isInteger(dollars) ? String(dollars) : dollars.toFixed(2);
}

const STANDARD_CHIPS = [100, 500, 2500, 10000, 50000, 100000, 500000, 1000000];

/** The chip denominations for a table: from its minimum up, at most six. */
export function chipsFor(minimum: number, maximum: number): number[] {
  const chips = STANDARD_CHIPS.filter((c) => c >= minimum && c <= maximum);
  if (!chips.length || chips[0] !== minimum) chips.unshift(minimum);
  return chips.slice(0, 6);
}

export const SUIT_SYMBOL: Record<string, string> = { S: "♠", H: "♥", D: "♦", C: "♣" };
export const SUIT_NAME: Record<string, string> = { S: "spades", H: "hearts", D: "diamonds", C: "clubs" };
const RANK_NAME: Record<string, string> = { A: "Ace", K: "King", Q: "Queen", J: "Jack" };

export function parseCard(code: string): { rank: string; suit: string } {
  return { rank: code.slice(0, -1), suit: code.slice(-1) };
}

export function cardName(code: string | null): string {
  if (!code) return "face-down card";
  const { rank, suit } = parseCard(code);
  return `${RANK_NAME[rank] ?? rank} of ${SUIT_NAME[suit] ?? suit}`;
}

/** Baccarat value: A=1, 2–9 face, 10/J/Q/K = 0. */
export function baccaratValue(code: string): number {
  const { rank } = parseCard(code);
  if (rank === "A") return 1;
  const n = Number(rank);
  return Number.isFinite(n) && n < 10 ? n : 0;
}

export function baccaratTotal(cards: (string | null)[]): number {
  return cards.reduce((t, c) => (c ? (t + baccaratValue(c)) % 10 : t), 0);
}

/** Blackjack-style total (21 Baccarat, Down Under): the best total, and whether it is soft. */
export function blackjackTotal(cards: (string | null)[]): { total: number; soft: boolean } {
  let total = 0;
  let aces = 0;
  for (const c of cards) {
    if (!c) continue;
    const { rank } = parseCard(c);
    if (rank === "A") {
      aces += 1;
      total += 1;
    } else if (["K", "Q", "J"].includes(rank)) total += 10;
    else total += Number(rank);
  }
  const soft = aces > 0 && total + 10 <= 21;
  return { total: soft ? total + 10 : total, soft };
}

// --- spot names ------------------------------------------------------------------------------

const SPOT_LABELS: Record<string, string> = {
  player: "Player",
  banker: "Banker",
  tie: "Tie",
  perfect_pairs_player: "Perfect Pairs · Player",
  perfect_pairs_banker: "Perfect Pairs · Banker",
  player_pair: "Player Pair",
  banker_pair: "Banker Pair",
  heavenly_9_progressive: "Heavenly 9 Progressive",
  harmony_progressive: "Harmony Progressive",
  fortune_7: "Fortune 7",
  golden_8: "Golden 8",
  heavenly_9: "Heavenly 9",
  blazing_7s: "Blazing 7s",
  cover_all: "Cover All",
  majestic_match_player: "Majestic Match · Player",
  majestic_match_banker: "Majestic Match · Banker",
  golden_talons_player: "Golden Talons · Player",
  golden_talons_banker: "Golden Talons · Banker",
  lucky_six: "Lucky 6",
  lucky_nines: "Lucky Nines",
  bonus_player: "Bonus · Player",
  bonus_banker: "Bonus · Banker",
  sun_7: "Sun 7",
  moon_8: "Moon 8",
  tie_0: "Tie 0",
  tie_1_2_3: "Tie 1·2·3",
  tie_4_5_6_7: "Tie 4·5·6·7",
  tie_8_9: "Tie 8·9",
  red: "Red",
  black: "Black",
  odd: "Odd",
  even: "Even",
  low: "1 to 18",
  high: "19 to 36",
  first_five: "First Five (0-00-1-2-3)",
  one: "$1",
  two: "$2",
  five: "$5",
  ten: "$10",
  twenty: "$20",
  joker: "Joker",
  flag: "Flag",
  initial: "Bet",
  bet: "Bet",
  match_the_dealer: "Match the Dealer",
  war: "War",
  double: "Double",
  double_split: "Double (split hand)",
  split: "Split hand",
  insurance: "Insurance",
};

function titleCase(text: string): string {
  return text
    .split("_")
    .map((w) => (w ? w[0].toUpperCase() + w.slice(1) : w))
    .join(" ");
}

/** A spot as a player reads it: "banker" → "Banker", "split:17-20" → "Split 17/20". */
export function spotLabel(spot: string): string {
  if (SPOT_LABELS[spot]) return SPOT_LABELS[spot];
  const [kind, arg] = spot.split(":", 2);
  if (arg !== undefined) {
    const numbers = arg.split("-").join("/");
    switch (kind) {
      case "straight":
        return `Straight ${arg}`;
      case "split":
        return `Split ${numbers}`;
      case "three_numbers":
        return `Street ${numbers}`;
      case "four_numbers":
        return `Corner ${numbers}`;
      case "six_numbers":
        return `Line ${numbers}`;
      case "column":
        return `Column ${arg}`;
      case "dozen":
        return `${["1st", "2nd", "3rd"][Number(arg) - 1] ?? arg} 12`;
      case "five_adjacent":
        return `Five Adjacent around ${arg}`;
      case "tie":
        return "Tie";
      default:
        return SPOT_LABELS[kind] ?? titleCase(kind);
    }
  }
  return titleCase(spot);
}

export function decisionLabel(option: string): string {
  const labels: Record<string, string> = {
    war: "Go to War",
    "war+tie": "War + Tie bet",
    surrender: "Surrender",
    hit: "Hit",
    stand: "Stand",
    double: "Double",
    split: "Split",
    insurance: "Insurance",
    no_insurance: "No insurance",
    even_money: "Even money",
  };
  return labels[option] ?? titleCase(option);
}

/** "19/20" → "19/20 to 1"; "-1/1" → lost. For the wager list. */
export function outcomeLabel(result: string): string {
  const labels: Record<string, string> = { win: "Won", lose: "Lost", push: "Push", tie: "Push", surrender: "Surrendered" };
  return labels[result] ?? titleCase(result);
}

export function phaseLabel(phase: string): string {
  const labels: Record<string, string> = {
    betting: "Place your bets",
    dealing: "No more bets",
    deciding: "Waiting for decisions",
    settled: "Round over",
    voided: "Round voided",
    waiting: "Waiting for the next round",
    closed: "Table closed",
  };
  return labels[phase] ?? titleCase(phase);
}

export const GAME_LABEL: Record<string, string> = {
  baccarat: "Baccarat",
  twenty_one_baccarat: "21 Baccarat",
  roulette: "Roulette",
  big_six: "Big Six Wheel",
  casino_war: "Casino War",
  down_under_blackjack: "Down Under Blackjack",
};

export const ROULETTE_RED = new Set([1, 3, 5, 7, 9, 12, 14, 16, 18, 19, 21, 23, 25, 27, 30, 32, 34, 36]);

export function pocketColour(label: string): "red" | "black" | "green" {
  if (label === "0" || label === "00") return "green";
  return ROULETTE_RED.has(Number(label)) ? "red" : "black";
}

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | number | boolean | undefined> = {},
  ...children: (Node | string | null | undefined | false)[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    if (key === "class") node.className = String(value);
    else if (key === "text") node.textContent = String(value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child);
  }
  return node;
}

/** A baccarat round's result for the big screen: "banker 9-8" → "Banker wins 9–8", "tie 8-8" →
 * "Tie 8–8"; any other result as it is. */
export function resultHeadline(result: string): string {
  const m = /^(player|banker|tie)\b\s*(\d+)\s*-\s*(\d+)/i.exec(result.trim()) ?? /^(player|banker|tie)\b/i.exec(result.trim());
  if (!m) return result;
  const who = m[1].toLowerCase();
  const score = m[2] !== undefined && m[3] !== undefined ? ` ${m[2]}–${m[3]}` : "";
  return who === "tie" ? `Tie${score}` : `${who === "player" ? "Player" : "Banker"} wins${score}`;
}
