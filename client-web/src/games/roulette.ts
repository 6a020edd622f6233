// Roulette (617a): the full layout — straights, splits, streets, corners, six-lines, the
// zero boxes (and 00, First Five on a double-zero table), columns, dozens and the even-money
// bets — plus the racetrack for Five Adjacent Numbers (a number and two either side of it on
// the wheel). The layout turns upright on a narrow screen.

import { el, pocketColour, spotLabel } from "../format";
import type { Rules, TableEvent } from "../protocol";
import type { GameContext, GameView } from "./types";

// 617a.1(c), (d): clockwise from zero (the same orders as rng/wheel_layouts.py).
export const SINGLE_ZERO_ORDER =
  "0 32 15 19 4 21 2 25 17 34 6 27 13 36 11 30 8 23 10 5 24 16 33 1 20 14 31 9 22 18 29 7 28 12 35 3 26".split(" ");
export const DOUBLE_ZERO_ORDER =
  "0 28 9 26 30 11 7 20 32 17 5 22 34 15 3 24 36 13 1 00 27 10 25 29 12 8 19 31 18 6 21 33 16 4 23 35 14 2".split(" ");

export type Wheel = "single_zero" | "double_zero" | "double_zero_as_single";

export function neighbours(order: string[], centre: string, eachSide = 2): string[] {
  const i = order.indexOf(centre);
  const n = order.length;
  const out: string[] = [];
  for (let k = -eachSide; k <= eachSide; k++) out.push(order[(i + k + n) % n]);
  return out;
}

const layoutKey = (label: string) => (label === "00" ? 1 : label === "0" ? 0 : Number(label) + 1);
/** The canonical spot text the server uses: numbers in layout order (0, 00, 1 … 36). */
export function canonical(kind: string, numbers: (number | string)[]): string {
  return `${kind}:${numbers.map(String).sort((a, b) => layoutKey(a) - layoutKey(b)).join("-")}`;
}

interface Area {
  spot: string;
  label: string;
  cls: string;
  text?: string;
  rect?: [number, number, number, number]; // x, y, w, h in layout units (horizontal)
  point?: [number, number]; // a hotspot centred on a line or corner
  multiplier?: number;
}

const W = 14;
const H = 5;
const HOT = 0.36;

/** Every betting area of the layout for a wheel, in horizontal layout units. */
export function layoutAreas(wheel: Wheel): Area[] {
  const areas: Area[] = [];
  const pays = (k: string) => ({ straight: "35 to 1", split: "17 to 1", three_numbers: "11 to 1", four_numbers: "8 to 1", six_numbers: "5 to 1", first_five: "6 to 1" })[k] ?? "";
  const cell = (n: number): [number, number] => {
    const s = Math.ceil(n / 3) - 1;
    const p = (n - 1) % 3;
    return [1 + s, 2 - p];
  };
  // zeros
  if (wheel === "double_zero") {
    areas.push({ spot: "straight:00", label: "Straight 00, pays 35 to 1", cls: "num green", text: "00", rect: [0, 0, 1, 1.5] });
    areas.push({ spot: "straight:0", label: "Straight 0, pays 35 to 1", cls: "num green", text: "0", rect: [0, 1.5, 1, 1.5] });
  } else {
    areas.push({ spot: "straight:0", label: "Straight 0, pays 35 to 1", cls: "num green", text: "0", rect: [0, 0, 1, 3] });
  }
  for (let n = 1; n <= 36; n++) {
    const [x, y] = cell(n);
    areas.push({ spot: `straight:${n}`, label: `Straight ${n}, pays 35 to 1`, cls: `num ${pocketColour(String(n))}`, text: String(n), rect: [x, y, 1, 1] });
  }
  const hot = (kind: string, numbers: (number | string)[], point: [number, number], name: string) =>
    areas.push({ spot: canonical(kind, numbers), label: `${name} ${numbers.join(", ")}, pays ${pays(kind)}`, cls: `hot hot-${kind}`, point });
  for (let n = 1; n <= 36; n++) {
    const [x, y] = cell(n);
    if (n % 3 !== 0) hot("split", [n, n + 1], [x + 0.5, y], "Split");
    if (n <= 33) hot("split", [n, n + 3], [x + 1, y + 0.5], "Split");
    if (n % 3 !== 0 && n <= 32) hot("four_numbers", [n, n + 1, n + 3, n + 4], [x + 1, y], "Corner");
    if (n % 3 === 1) {
      hot("three_numbers", [n, n + 1, n + 2], [x + 0.5, 3], "Street");
      if (n <= 31) hot("six_numbers", [n, n + 1, n + 2, n + 3, n + 4, n + 5], [x + 1, 3], "Six line");
    }
  }
  if (wheel === "single_zero") {
    hot("split", [0, 1], [1, 2.5], "Split");
    hot("split", [0, 2], [1, 1.5], "Split");
    hot("split", [0, 3], [1, 0.5], "Split");
    hot("three_numbers", [0, 1, 2], [1, 2], "Three numbers");
  } else if (wheel === "double_zero_as_single") {
    hot("split", [0, 1], [1, 2.5], "Split");
    hot("split", [0, 2], [1, 1.5], "Split");
    hot("three_numbers", [0, 1, 2], [1, 2], "Three numbers");
  } else {
    hot("split", [0, 1], [1, 2.55], "Split");
    hot("split", [0, 2], [1, 1.8], "Split");
    hot("split", ["00", 2], [1, 1.2], "Split");
    hot("split", ["00", 3], [1, 0.45], "Split");
    hot("split", [0, "00"], [0.5, 1.5], "Split");
    hot("three_numbers", [0, 1, 2], [1, 2.12], "Three numbers");
    hot("three_numbers", [0, 2, "00"], [1, 1.5], "Three numbers");
    hot("three_numbers", ["00", 2, 3], [1, 0.88], "Three numbers");
    areas.push({ spot: "first_five", label: "First Five: 0, 00, 1, 2, 3, pays 6 to 1", cls: "hot hot-first_five", point: [1, 3] });
  }
  for (let c = 1; c <= 3; c++) areas.push({ spot: `column:${c}`, label: `Column ${c}, pays 2 to 1`, cls: "outside col", text: "2 to 1", rect: [13, 3 - c, 1, 1] });
  ["1st 12", "2nd 12", "3rd 12"].forEach((t, d) => areas.push({ spot: `dozen:${d + 1}`, label: `${t} (${d * 12 + 1} to ${d * 12 + 12}), pays 2 to 1`, cls: "outside dozen", text: t, rect: [1 + 4 * d, 3, 4, 1] }));
  const even: [string, string, string][] = [
    ["low", "1–18", "1 to 18"],
    ["even", "Even", "Even"],
    ["red", "◆", "Red"],
    ["black", "◆", "Black"],
    ["odd", "Odd", "Odd"],
    ["high", "19–36", "19 to 36"],
  ];
  even.forEach(([spot, text, name], i) => areas.push({ spot, label: `${name}, pays 1 to 1`, cls: `outside even-money em-${spot}`, text, rect: [1 + 2 * i, 4, 2, 1] }));
  return areas;
}

export class RouletteView implements GameView {
  stage: HTMLElement;
  board: HTMLElement;
  private wheel: Wheel;
  private order: string[];
  private layout = el("div", { class: "roulette-layout", role: "group", "aria-label": "Roulette layout" });
  private track = el("div", { class: "racetrack", role: "group", "aria-label": "Five Adjacent Numbers: choose the centre number on the wheel" });
  private ball = el("div", { class: "ball-result", "aria-live": "polite", "data-testid": "ball-result", text: "—" });
  private strip = el("ol", { class: "result-strip" });
  private vertical = false;
  private media = window.matchMedia("(max-width: 720px)");

  constructor(rules: Rules, _ctx: GameContext) {
    this.wheel = (["single_zero", "double_zero", "double_zero_as_single"].includes(rules.variant) ? rules.variant : "single_zero") as Wheel;
    this.order = this.wheel === "single_zero" ? SINGLE_ZERO_ORDER : DOUBLE_ZERO_ORDER;
    this.stage = el(
      "div",
      { class: "stage wheel-stage roulette-stage" },
      el("div", { class: "ball-wrap" }, this.ball),
      el("div", { class: "strip-wrap" }, el("span", { class: "road-title", text: "Last numbers" }), this.strip),
    );
    this.board = el(
      "div",
      { class: "board roulette-board" },
      this.layout,
      el("div", { class: "track-wrap" }, el("h3", { class: "side-title", text: "Racetrack — Five Adjacent Numbers (5 chips: a number and its two neighbours either side on the wheel)" }), this.track),
    );
    this.vertical = this.media.matches;
    this.media.addEventListener("change", () => this.relayout());
    this.drawLayout();
    this.drawTrack();
    const highlight = (ev: Event) => {
      const t = (ev.target as HTMLElement).closest<HTMLElement>("[data-centre]");
      this.highlight(t && ev.type !== "mouseout" && ev.type !== "focusout" ? t.dataset.centre! : null);
    };
    for (const type of ["mouseover", "mouseout", "focusin", "focusout"]) this.track.addEventListener(type, highlight);
  }

  relayout(): void {
    if (this.vertical === this.media.matches) return;
    this.vertical = this.media.matches;
    this.drawLayout();
    this.drawTrack();
  }

  private drawLayout(): void {
    const v = this.vertical;
    const bw = v ? H : W;
    const bh = v ? W : H;
    this.layout.classList.toggle("vertical", v);
    this.layout.style.aspectRatio = `${bw} / ${bh}`;
    const pct = (x: number, y: number, w: number, h: number) => `left:${(x / bw) * 100}%;top:${(y / bh) * 100}%;width:${(w / bw) * 100}%;height:${(h / bh) * 100}%`;
    const nodes: HTMLElement[] = [];
    // Big areas first, hotspots last, so the hotspots sit on top (and come later in tab order).
    for (const a of layoutAreas(this.wheel)) {
      let style: string;
      if (a.rect) {
        const [x, y, w, h] = a.rect;
        style = v ? pct(H - (y + h), x, h, w) : pct(x, y, w, h);
      } else {
        const [px, py] = a.point!;
        const [cx, cy] = v ? [H - py, px] : [px, py];
        style = pct(cx - HOT / 2, cy - HOT / 2, HOT, HOT);
      }
      const node = el(
        "button",
        { type: "button", class: `spot ${a.cls}`, style, "data-spot": a.spot, "data-label": a.label, "aria-label": a.label, title: a.label, "data-testid": `spot-${a.spot}` },
        a.text ? el("span", { class: "spot-name", text: a.text }) : "",
      );
      nodes.push(node);
    }
    this.layout.replaceChildren(...nodes);
  }

  private drawTrack(): void {
    const n = this.order.length;
    const k = 18;
    const v = this.vertical;
    this.track.classList.toggle("vertical", v);
    const cells: HTMLElement[] = [];
    const place = (col: number, row: number, colSpan: number, rowSpan: number) =>
      v ? `grid-column:${3 - row - (rowSpan - 1)} / span ${rowSpan};grid-row:${col} / span ${colSpan}` : `grid-column:${col} / span ${colSpan};grid-row:${row} / span ${rowSpan}`;
    // The racetrack: 0 at the left end, the wheel running clockwise along the top row, round
    // the right end (00 on a double-zero wheel) and back along the bottom row.
    this.order.forEach((label, i) => {
      let style: string;
      const right = n === 38 ? k + 1 : -1;
      if (i === 0) style = place(1, 1, 1, 2);
      else if (i <= k) style = place(i + 1, 1, 1, 1);
      else if (i === right) style = place(k + 2, 1, 1, 2);
      else style = place(k + 1 - (i - (n === 38 ? k + 2 : k + 1)), 2, 1, 1);
      const covered = neighbours(this.order, label);
      const blocked = this.wheel === "double_zero_as_single" && (label === "00" || covered.includes("00"));
      const name = `Five Adjacent around ${label}: ${covered.join(", ")}`;
      cells.push(
        el(
          "button",
          {
            type: "button",
            class: `spot track-num pocket-${pocketColour(label)}${blocked ? " blocked" : ""}`,
            style,
            "data-spot": blocked ? undefined : `five_adjacent:${label}`,
            "data-multiplier": 5,
            "data-centre": label,
            "data-label": name,
            "aria-label": blocked ? `${label}: not available (00 is covered on this table)` : name,
            "aria-disabled": blocked ? "true" : undefined,
            "data-testid": `track-${label}`,
            title: blocked ? "00 is covered on this table" : name,
          },
          el("span", { class: "spot-name", text: label }),
        ),
      );
    });
    if (v) this.track.style.gridTemplateRows = `repeat(${n === 38 ? k + 2 : k + 1}, auto)`;
    else this.track.style.gridTemplateRows = "";
    this.track.style.setProperty("--track-cols", String(n === 38 ? k + 2 : k + 1));
    this.track.replaceChildren(...cells);
  }

  private highlight(centre: string | null): void {
    for (const node of this.board.querySelectorAll(".neighbour")) node.classList.remove("neighbour");
    if (!centre) return;
    for (const label of neighbours(this.order, centre)) {
      this.layout.querySelector(`[data-spot="straight:${label}"]`)?.classList.add("neighbour");
      this.track.querySelector(`[data-centre="${label}"]`)?.classList.add("neighbour");
    }
  }

  reset(): void {
    this.ball.textContent = "Waiting for the spin";
    this.ball.className = "ball-result";
    for (const node of this.board.querySelectorAll(".hit")) node.classList.remove("hit");
  }

  setCards(): void {}

  event(ev: TableEvent): void {
    if (ev.event === "betting_closed") {
      this.ball.textContent = "No more bets — spinning";
      this.ball.className = "ball-result spinning";
    } else if (ev.event === "ball_landed") {
      const label = String(ev.data.label);
      this.ball.replaceChildren(el("span", { class: `pocket big pocket-${pocketColour(label)}`, text: label }), el("span", { text: ` ${pocketColour(label)}` }));
      this.ball.className = "ball-result landed";
      this.ball.setAttribute("aria-label", `The ball landed on ${label} ${pocketColour(label)}`);
      this.layout.querySelector(`[data-spot="straight:${label}"]`)?.classList.add("hit");
    } else if (ev.event === "spin_voided") {
      this.ball.textContent = "Spin voided — spinning again";
    }
  }

  history(results: string[]): void {
    const shown = results.filter((r) => r !== "no wagers").slice(-14).reverse();
    this.strip.replaceChildren(
      ...shown.map((r) => {
        const label = r.split(" ")[0];
        return el("li", { class: `pocket pocket-${pocketColour(label)}`, title: r, text: label });
      }),
    );
  }
}

export { spotLabel };
