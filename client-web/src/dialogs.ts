// The rules-and-paytable dialog (58 Pa. Code 810a.3) and the game recall (810a.11).

import { el, GAME_LABEL, money, outcomeLabel, spotLabel } from "./format";
import type { RecalledRound, Rules, TableSummary } from "./protocol";

function dialog(title: string, testid: string, ...body: (Node | string)[]): HTMLDialogElement {
  const close = el("button", { type: "button", class: "btn close", "aria-label": "Close", "data-testid": `${testid}-close`, text: "Close" });
  const d = el(
    "dialog",
    { class: "sheet", "aria-labelledby": `${testid}-title`, "data-testid": `${testid}-dialog` },
    el("header", {}, el("h2", { id: `${testid}-title`, text: title }), close),
    el("div", { class: "sheet-body" }, ...body),
  );
  close.addEventListener("click", () => d.close());
  d.addEventListener("click", (ev) => {
    if (ev.target === d) d.close(); // a click on the backdrop
  });
  d.addEventListener("close", () => d.remove());
  document.body.append(d);
  d.showModal();
  close.focus();
  return d;
}

function humanKey(key: string): string {
  return key.replace(/_/g, " ").replace(/^\w/, (c) => c.toUpperCase());
}

function paysTable(pays: Record<string, unknown>): HTMLElement {
  return el(
    "table",
    { class: "pays" },
    el("tbody", {}, ...Object.entries(pays).map(([k, v]) => el("tr", {}, el("th", { scope: "row", text: humanKey(k) }), el("td", { text: typeof v === "object" ? JSON.stringify(v) : String(v) })))),
  );
}

function paytableSection(name: string, value: unknown): HTMLElement {
  const title = spotLabel(name);
  if (typeof value === "string") return el("tr", {}, el("th", { scope: "row", text: title }), el("td", { text: value }));
  const v = value as Record<string, unknown>;
  if (v && typeof v === "object" && "pays" in v) {
    const meta = [v.section ? `58 Pa. Code ${String(v.section)}` : "", v.letter ? `paytable ${String(v.letter)}` : ""].filter(Boolean).join(" · ");
    return el("tr", {}, el("th", { scope: "row" }, el("span", { text: title }), meta ? el("small", { class: "muted", text: meta }) : ""), el("td", {}, paysTable(v.pays as Record<string, unknown>)));
  }
  return el("tr", {}, el("th", { scope: "row", text: title }), el("td", {}, paysTable(v)));
}

export function showRulesDialog(rules: Rules, summary: TableSummary | null): void {
  const game = GAME_LABEL[rules.game] ?? rules.game;
  const limits = rules.limits;
  const extras: HTMLElement[] = [];
  if (rules.main_spots.length) {
    extras.push(el("p", { text: `A main bet (${rules.main_spots.map((s) => spotLabel(s)).join(" or ")}) is needed before any other bet.` }));
  }
  for (const [spot, l] of Object.entries(rules.spot_limits)) {
    extras.push(el("p", { text: `${spotLabel(spot)}: ${money(l.minimum)} – ${money(l.maximum)}.` }));
  }
  if (rules.game === "roulette") {
    extras.push(
      el("p", {
        text: "Five Adjacent Numbers: pick a number on the racetrack; your chip is placed five times, on it and on the two numbers either side of it on the wheel (five equal straight bets, each paying 35 to 1).",
      }),
    );
  }
  if (rules.game === "down_under_blackjack") {
    extras.push(el("p", { text: "The reader light shows the range of the dealer's face-down card: blue 2–5, red 6–9, yellow 10, J, Q, K or A." }));
  }
  dialog(
    `${summary?.name ?? game} — rules and pays`,
    "rules",
    el("p", { class: "summary", text: rules.summary }),
    el("p", { text: `Table limits: ${money(limits.minimum)} – ${money(limits.maximum)} per bet.` }),
    ...extras,
    el("h3", { text: "Paytable" }),
    el("table", { class: "paytable" }, el("tbody", {}, ...Object.entries(rules.paytables).map(([k, v]) => paytableSection(k, v)))),
  );
}

export function showRecallDialog(rounds: RecalledRound[], card: (code: string | null) => HTMLElement): void {
  const items = rounds.slice(0, 10).map((r) => {
    const net = r.returned - r.wagered;
    return el(
      "li",
      { class: "recall-round" },
      el("div", { class: "recall-head" }, el("strong", { text: r.round }), el("span", { text: r.result }), el("span", { class: net > 0 ? "win" : net < 0 ? "lose" : "", text: `bet ${money(r.wagered)} · paid ${money(r.returned)}` })),
      Object.keys(r.cards).length
        ? el("div", { class: "recall-cards" }, ...Object.entries(r.cards).map(([target, codes]) => el("div", { class: "recall-hand" }, el("span", { class: "muted", text: humanKey(target) }), ...codes.map((c) => card(c)))))
        : "",
      el("ul", { class: "recall-wagers" }, ...r.wagers.map((w) => el("li", { text: `${spotLabel(w.spot)} ${money(w.amount)} — ${w.result ? outcomeLabel(w.result) : ""} ${w.returned !== undefined ? `(paid ${money(w.returned)})` : ""}` }))),
    );
  });
  dialog("Game recall — your last 10 rounds", "recall", items.length ? el("ol", { class: "recall-list" }, ...items) : el("p", { text: "You have not played a round at this table yet." }));
}
