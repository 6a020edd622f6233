// The lobby: every table with its game, limits, players seated, betting countdown and last
// results (baccarat: bead plate and big road); join as a player or watch as a spectator.

import type { Connection } from "./connection";
import { GAME_LABEL, el, money, phaseLabel, pocketColour } from "./format";
import type { TableSummary } from "./protocol";
import { beadPlate, bigRoadElement } from "./roads";

export class LobbyView {
  readonly root = el("main", { class: "lobby", id: "main", "aria-labelledby": "lobby-title" });
  private list = el("div", { class: "table-list", "data-testid": "table-list" });
  // Until the first lobby arrives (and whenever the connection is down): what is happening.
  private noticeTitle = el("strong", { class: "notice-title" });
  private noticeDetail = el("span", { class: "notice-detail" });
  private notice = el(
    "div",
    { class: "lobby-notice", role: "status", "aria-live": "polite", "data-testid": "lobby-status" },
    el("span", { class: "spinner", "aria-hidden": "true" }),
    el("div", {}, this.noticeTitle, this.noticeDetail),
  );
  private timer = 0;
  private tick = 0;
  private tables: TableSummary[] = [];
  private received = 0;
  private unsubscribe: (() => void)[] = [];

  constructor(
    private conn: Connection,
    private go: (path: string) => void,
  ) {
    this.root.append(
      el(
        "div",
        { class: "lobby-head" },
        el("h1", { id: "lobby-title", text: "Tables" }),
        el("p", { class: "hint", text: "Choose a table to play, or watch one without betting." }),
      ),
      this.notice,
      this.list,
    );
    this.bind();
    this.showConnection();
  }

  /** The notice: the connection's state, or "loading" until the first list of tables. */
  private showConnection(): void {
    const n = this.conn.notice();
    const waiting = this.received === 0;
    this.notice.hidden = n === null && !waiting;
    this.notice.classList.toggle("failed", n?.failed ?? false);
    this.notice.classList.toggle("over-tables", !waiting);
    this.noticeTitle.textContent = n?.title ?? "Loading the tables…";
    this.noticeDetail.textContent = n?.detail ?? "";
  }

  mount(): void {
    this.unsubscribe.push(
      this.conn.onMessage((m) => {
        if (m.type === "lobby") {
          this.tables = m.tables;
          this.received = performance.now();
          this.render();
          this.showConnection();
        }
      }),
      this.conn.onReady(() => this.refresh()),
      this.conn.onStatus(() => this.showConnection()),
    );
    this.showConnection();
    if (this.conn.ready) this.refresh();
    this.timer = window.setInterval(() => this.refresh(), 2000);
    this.tick = window.setInterval(() => {
      this.updateCountdowns();
      if (this.conn.status !== "open") this.showConnection(); // the retry countdown
    }, 250);
  }

  unmount(): void {
    window.clearInterval(this.timer);
    window.clearInterval(this.tick);
    for (const u of this.unsubscribe) u();
  }

  private refresh(): void {
    if (this.conn.ready) this.conn.send({ type: "list_tables" });
  }

  private render(): void {
    const focused = document.activeElement?.getAttribute("data-focus-key");
    this.list.replaceChildren(...this.tables.map((t) => this.card(t)));
    if (focused) (this.list.querySelector(`[data-focus-key="${focused}"]`) as HTMLElement | null)?.focus();
    this.updateCountdowns();
  }

  private card(t: TableSummary): HTMLElement {
    const game = GAME_LABEL[t.game] ?? t.game;
    const results = el("div", { class: "last-results" });
    if (t.game === "baccarat") {
      results.append(
        el("div", { class: "roads" }, el("div", { class: "road-wrap" }, el("span", { class: "road-title", text: "Bead plate" }), beadPlate(t.last_results)), el("div", { class: "road-wrap" }, el("span", { class: "road-title", text: "Big road" }), bigRoadElement(t.last_results))),
      );
    } else {
      const shown = t.last_results.filter((r) => r !== "no wagers").slice(-10).reverse();
      results.append(
        el("span", { class: "road-title", text: "Last results" }),
        shown.length
          ? el("ol", { class: "result-strip" }, ...shown.map((r) => this.resultChip(t.game, r)))
          : el("p", { class: "muted", text: "No rounds played yet" }),
      );
    }
    const seatsText = t.boxed ? `${t.seated}/${t.seats} boxes taken` : `${t.seated} seated`;
    const full = t.seated >= t.seats;
    return el(
      "article",
      { class: `table-card game-${t.game}`, "data-table": t.table, "aria-labelledby": `t-${t.table}` },
      el(
        "header",
        {},
        el("h2", { id: `t-${t.table}`, text: t.name }),
        el("span", { class: "game-tag", text: t.automated ? `${game} · automated` : game }),
      ),
      el(
        "dl",
        { class: "facts" },
        el("div", {}, el("dt", { text: "Limits" }), el("dd", { text: `${money(t.minimum)} – ${money(t.maximum)}` })),
        el("div", {}, el("dt", { text: "Players" }), el("dd", { text: seatsText })),
        el(
          "div",
          {},
          el("dt", { text: "Now" }),
          el("dd", { class: "countdown", "data-closes": t.closes_in_ms ?? "", "data-phase": t.phase, text: phaseLabel(t.phase) }),
        ),
      ),
      results,
      t.stations_only
        ? el("p", { class: "stations-note", "data-testid": `stations-only-${t.table}`, text: "Played at its player stations on the casino floor — you can watch." })
        : null,
      el(
        "div",
        { class: "actions" },
        t.stations_only
          ? null
          : el("button", {
              class: "btn primary",
              "data-focus-key": `play-${t.table}`,
              "data-testid": `play-${t.table}`,
              disabled: full,
              "aria-label": `Play at ${t.name}`,
              text: full ? "Full" : "Play",
            }),
        el("button", {
          class: t.stations_only ? "btn primary" : "btn",
          "data-focus-key": `watch-${t.table}`,
          "data-testid": `watch-${t.table}`,
          "aria-label": `Watch ${t.name}`,
          text: "Watch",
        }),
      ),
    );
  }

  private resultChip(game: string, r: string): HTMLElement {
    if (game === "roulette") {
      const label = r.split(" ")[0];
      return el("li", { class: `pocket pocket-${pocketColour(label)}`, title: r, text: label });
    }
    return el("li", { class: "result-chip", text: r });
  }

  /** Click handling by delegation: the list is re-rendered every refresh. */
  bind(): void {
    this.list.addEventListener("click", (ev) => {
      const button = (ev.target as HTMLElement).closest("button");
      if (!button) return;
      const key = button.getAttribute("data-focus-key") ?? "";
      const [action, ...rest] = key.split("-");
      const table = rest.join("-");
      if (action === "play") this.go(`/table/${encodeURIComponent(table)}`);
      if (action === "watch") this.go(`/table/${encodeURIComponent(table)}?watch=1`);
    });
  }

  private updateCountdowns(): void {
    const elapsed = performance.now() - this.received;
    for (const node of this.list.querySelectorAll<HTMLElement>(".countdown")) {
      const closes = node.dataset.closes;
      if (node.dataset.phase === "betting" && closes) {
        const left = Math.max(0, Number(closes) - elapsed);
        node.textContent = left > 0 ? `Betting · ${Math.ceil(left / 1000)} s` : "No more bets";
        node.classList.toggle("hot", left > 0);
      }
    }
  }
}
