// Baccarat scoreboards from the table's last results ("player 8-5", "banker 9-8", "tie 8-8"):
// the bead plate (every round in order, six to a column), the big road (a column per streak
// of Player or Banker wins, ties marked on the last cell) and the three roads derived from it —
// big eye boy, small road and cockroach pig — which mark each new big-road entry red when the
// road repeats its pattern and blue when it breaks it (see `derivedRoad`).

import { el } from "./format";

export type Winner = "P" | "B" | "T";

export function parseResult(result: string): { winner: Winner; score: string } | null {
  const m = /^(player|banker|tie)\b\s*(\S*)/i.exec(result.trim());
  if (!m) return null;
  const winner = m[1].toLowerCase() === "player" ? "P" : m[1].toLowerCase() === "banker" ? "B" : "T";
  return { winner, score: m[2] ?? "" };
}

export interface RoadCell {
  winner: "P" | "B";
  ties: number;
  col: number;
  row: number;
}

export interface PlacedMark<T> {
  mark: T;
  col: number;
  row: number;
}

/** Lay marks out as the big road does: a new column when the mark changes; a streak longer
 * than the column (or one that meets an earlier tail) turns right along its row (the
 * "dragon tail"). The derived roads are laid out the same way, red and blue. */
export function placeMarks<T>(marks: T[], rows = 6): PlacedMark<T>[] {
  const placed: PlacedMark<T>[] = [];
  const taken = new Set<string>();
  let streakStartCol = -1;
  let col = -1;
  let row = 0;
  let last: T | undefined;
  marks.forEach((m, i) => {
    if (i === 0 || m !== last) {
      streakStartCol += 1;
      while (taken.has(`${streakStartCol},0`)) streakStartCol += 1;
      col = streakStartCol;
      row = 0;
    } else if (row + 1 < rows && !taken.has(`${col},${row + 1}`)) {
      row += 1;
    } else {
      col += 1;
    }
    taken.add(`${col},${row}`);
    placed.push({ mark: m, col, row });
    last = m;
  });
  return placed;
}

/** The big road: a new column when the winner changes; a streak longer than six turns right
 * along the bottom row (the "dragon tail"). Ties before the first decision are kept on a
 * placeholder cell. */
export function bigRoad(winners: Winner[], rows = 6): RoadCell[] {
  const decisions: ("P" | "B")[] = [];
  const ties: number[] = [];
  let pendingTies = 0;
  for (const w of winners) {
    if (w === "T") {
      if (ties.length) ties[ties.length - 1] += 1;
      else pendingTies += 1;
      continue;
    }
    decisions.push(w);
    ties.push(pendingTies);
    pendingTies = 0;
  }
  return placeMarks(decisions, rows).map((p, i) => ({ winner: p.mark, ties: ties[i], col: p.col, row: p.row }));
}

/** The big road's logical columns: the length of each streak of Player or Banker wins (ties do
 * not count; a dragon tail is still one column). */
export function streaks(winners: Winner[]): number[] {
  const out: number[] = [];
  let last: Winner | null = null;
  for (const w of winners) {
    if (w === "T") continue;
    if (w === last) out[out.length - 1] += 1;
    else out.push(1);
    last = w;
  }
  return out;
}

export type RoadColour = "red" | "blue";

/** 1: big eye boy, 2: small road, 3: cockroach pig — how many columns back each compares. */
export type DerivedOffset = 1 | 2 | 3;

export const DERIVED_ROADS: { offset: DerivedOffset; name: string; key: string }[] = [
  { offset: 1, name: "Big eye boy", key: "big-eye-boy" },
  { offset: 2, name: "Small road", key: "small-road" },
  { offset: 3, name: "Cockroach pig", key: "cockroach-pig" },
];

/**
 * A derived road (the standard rules): each big-road entry from the second entry of column
 * `offset + 1` on (or, when that column has only one entry, from the first entry of the next
 * column) gets a mark. Columns count from 1 and are the big road's logical columns.
 * - An entry that starts a new column c: red when columns c−1 and c−1−offset are as long
 *   as each other, else blue.
 * - An entry in row r > 1 of column c: look at column c−offset — red if it also has a row r;
 *   blue if it stops exactly at row r−1; red if it stopped earlier still (both empty).
 */
export function derivedRoad(winners: Winner[], offset: DerivedOffset): RoadColour[] {
  const columns = streaks(winners);
  const marks: RoadColour[] = [];
  columns.forEach((length, c) => {
    for (let r = 0; r < length; r++) {
      if (c < offset || (c === offset && r === 0)) continue;
      if (r === 0) {
        marks.push(columns[c - 1] === columns[c - 1 - offset] ? "red" : "blue");
      } else {
        const beside = columns[c - offset];
        marks.push(beside === r ? "blue" : "red");
      }
    }
  });
  return marks;
}

export const bigEyeBoy = (winners: Winner[]): RoadColour[] => derivedRoad(winners, 1);
export const smallRoad = (winners: Winner[]): RoadColour[] => derivedRoad(winners, 2);
export const cockroachPig = (winners: Winner[]): RoadColour[] => derivedRoad(winners, 3);

/** What each derived road would mark if the next decision were `next` (the "Banker ask" /
 * "Player ask" of a scoreboard): null where that road would not mark anything yet. */
export function nextMarks(winners: Winner[], next: "P" | "B"): (RoadColour | null)[] {
  return DERIVED_ROADS.map(({ offset }) => {
    const now = derivedRoad(winners, offset);
    const then = derivedRoad([...winners, next], offset);
    return then.length > now.length ? then[then.length - 1] : null;
  });
}

/** The winners in the table's results, in order (unreadable results left out). */
export function winnersOf(results: string[]): Winner[] {
  return results.map(parseResult).filter((r): r is { winner: Winner; score: string } => r !== null).map((r) => r.winner);
}

export function beadPlate(results: string[], rows = 6, minCols = 6): HTMLElement {
  const parsed = results.map(parseResult).filter((r): r is { winner: Winner; score: string } => r !== null);
  const cols = Math.max(minCols, Math.ceil(parsed.length / rows));
  const grid = el("div", {
    class: "road bead-plate",
    role: "img",
    "aria-label": `Bead plate: ${parsed.map((p) => ({ P: "Player", B: "Banker", T: "Tie" })[p.winner]).join(", ") || "no rounds yet"}`,
    style: `--cols:${cols};--rows:${rows}`,
  });
  parsed.forEach((p, i) => {
    const bead = el("span", { class: `bead bead-${p.winner}`, title: `${p.winner} ${p.score}`, text: p.winner });
    bead.style.gridColumn = String(Math.floor(i / rows) + 1);
    bead.style.gridRow = String((i % rows) + 1);
    grid.append(bead);
  });
  return grid;
}

export function bigRoadElement(results: string[], rows = 6, minCols = 10): HTMLElement {
  const winners = results.map(parseResult).filter((r) => r !== null).map((r) => r!.winner);
  const cells = bigRoad(winners, rows);
  const cols = Math.max(minCols, ...cells.map((c) => c.col + 1));
  const grid = el("div", {
    class: "road big-road",
    role: "img",
    "aria-label": `Big road: ${cells.length} decisions`,
    style: `--cols:${cols};--rows:${rows}`,
  });
  for (const c of cells) {
    const ring = el("span", { class: `ring ring-${c.winner}`, title: c.ties ? `${c.ties} tie(s)` : "" });
    if (c.ties) ring.append(el("span", { class: "tie-slash", text: c.ties > 1 ? String(c.ties) : "" }));
    ring.style.gridColumn = String(c.col + 1);
    ring.style.gridRow = String(c.row + 1);
    grid.append(ring);
  }
  return grid;
}

/** A derived road drawn on its grid: big eye boy as hollow circles, small road as dots,
 * cockroach pig as slashes — red or blue. */
export function derivedRoadElement(results: string[], offset: DerivedOffset, rows = 6, minCols = 12): HTMLElement {
  const road = DERIVED_ROADS.find((r) => r.offset === offset)!;
  const marks = derivedRoad(winnersOf(results), offset);
  const placed = placeMarks(marks, rows);
  const cols = Math.max(minCols, ...placed.map((p) => p.col + 1));
  const red = marks.filter((m) => m === "red").length;
  const grid = el("div", {
    class: `road derived ${road.key}`,
    role: "img",
    "aria-label": `${road.name}: ${red} red, ${marks.length - red} blue`,
    style: `--cols:${cols};--rows:${rows}`,
    "data-testid": road.key,
  });
  for (const p of placed) {
    const mark = el("span", { class: `mark mark-${p.mark}` });
    mark.style.gridColumn = String(p.col + 1);
    mark.style.gridRow = String(p.row + 1);
    grid.append(mark);
  }
  return grid;
}
