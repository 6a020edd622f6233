// Baccarat scoreboards from the table's last results ("player 8-5", "banker 9-8", "tie 8-8"):
// the bead plate (every round in order, six to a column) and the big road (a column per streak
// of Player or Banker wins, ties marked on the last cell).

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

/** The big road: a new column when the winner changes; a streak longer than six turns right
 * along the bottom row (the "dragon tail"). Ties before the first decision are kept on a
 * placeholder cell. */
export function bigRoad(winners: Winner[], rows = 6): RoadCell[] {
  const cells: RoadCell[] = [];
  const taken = new Set<string>();
  let pendingTies = 0;
  let streakStartCol = -1;
  let col = -1;
  let row = 0;
  let last: "P" | "B" | null = null;
  for (const w of winners) {
    if (w === "T") {
      if (cells.length) cells[cells.length - 1].ties += 1;
      else pendingTies += 1;
      continue;
    }
    if (w !== last) {
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
    cells.push({ winner: w, ties: pendingTies, col, row });
    pendingTies = 0;
    last = w;
  }
  return cells;
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
