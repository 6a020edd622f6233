// Playing cards drawn with HTML and CSS (no images, no web fonts).

import { cardName, el, parseCard, SUIT_SYMBOL } from "./format";

export function cardElement(code: string | null, opts: { rotated?: boolean } = {}): HTMLElement {
  if (!code) {
    return el("span", { class: "card face-down", role: "img", "aria-label": "face-down card" });
  }
  const { rank, suit } = parseCard(code);
  const red = suit === "H" || suit === "D";
  const node = el(
    "span",
    { class: `card ${red ? "red" : "black"} deal-in${opts.rotated ? " rotated" : ""}`, role: "img", "aria-label": cardName(code), "data-card": code },
    el("span", { class: "rank", "aria-hidden": "true", text: rank }),
    el("span", { class: "suit", "aria-hidden": "true", text: SUIT_SYMBOL[suit] ?? suit }),
  );
  return node;
}

/** A labelled hand: title, cards and an optional total. */
export class HandView {
  readonly root: HTMLElement;
  private cardsBox: HTMLElement;
  private totalBox: HTMLElement;
  codes: (string | null)[] = [];

  constructor(
    title: string,
    private total: (codes: (string | null)[]) => string,
    cls = "",
  ) {
    this.cardsBox = el("div", { class: "cards", "aria-live": "polite" });
    this.totalBox = el("span", { class: "total", "aria-label": `${title} total` });
    this.root = el(
      "section",
      { class: `hand ${cls}`, "aria-label": title },
      el("h3", { class: "hand-title" }, el("span", { text: title }), this.totalBox),
      this.cardsBox,
    );
  }

  set(codes: (string | null)[]): void {
    this.codes = [...codes];
    this.cardsBox.replaceChildren(...this.codes.map((c) => cardElement(c)));
    this.updateTotal();
  }

  add(code: string | null, opts: { rotated?: boolean } = {}): void {
    this.codes.push(code);
    this.cardsBox.append(cardElement(code, opts));
    this.updateTotal();
  }

  /** Turn the first face-down card up (a hole card revealed). */
  reveal(code: string): void {
    const i = this.codes.indexOf(null);
    if (i < 0) {
      this.add(code);
      return;
    }
    this.codes[i] = code;
    this.cardsBox.children[i]?.replaceWith(cardElement(code));
    this.updateTotal();
  }

  popLast(): string | null {
    const code = this.codes.pop() ?? null;
    this.cardsBox.lastElementChild?.remove();
    this.updateTotal();
    return code;
  }

  clear(): void {
    this.set([]);
  }

  mark(state: "win" | "lose" | "tie" | null): void {
    this.root.classList.toggle("won", state === "win");
    this.root.classList.toggle("lost", state === "lose");
    this.root.classList.toggle("tied", state === "tie");
  }

  private updateTotal(): void {
    this.totalBox.textContent = this.codes.some((c) => c) ? this.total(this.codes) : "";
  }
}
