// The main display (/display/TABLE): the big screen above a table with player stations. It
// watches the table as a spectator and shows what everyone at the table may see — the table's
// name, the countdown while betting, the cards as they are dealt with the hands' totals, the
// result, the roads (bead plate, big road, big eye boy, small road, cockroach pig), the
// progressive meters and the last winners by seat. No player data, no balance.
//
// Data: `joined.snapshot` (phase, closes_in_ms, cards, meters, last_results), the table's
// `event`s (betting_opened/closed, card_dealt, result_announced, round_settled, round_voided,
// meters, table_held/resumed), `lobby` (the name, and the betting window's length) and
// `winners` (after each round: what each seat was paid back).

import type { Connection } from "./connection";
import { createGameView } from "./games";
import type { GameContext, GameView } from "./games/types";
import { el, GAME_LABEL, money, phaseLabel, resultHeadline, spotLabel } from "./format";
import type { Joined, Rules, ServerMessage, TableEvent, Winners } from "./protocol";
import { beadPlate, bigRoadElement, DERIVED_ROADS, derivedRoadElement, nextMarks, winnersOf } from "./roads";
import type { RoadColour } from "./roads";
import { addWinners, winnerLine } from "./station-text";
import type { WinnerEntry } from "./station-text";

export class DisplayView {
  readonly root = el("main", { class: "display-view", id: "main", "data-testid": "display" });
  private rules: Rules | null = null;
  private game: GameView | null = null;
  private seq = -1;
  private phase = "waiting";
  private closesAt: number | null = null;
  private windowMs = 0;
  private held: string | null = null;
  private lastResults: string[] = [];
  private meters: Record<string, number> = {};
  private winners: WinnerEntry[] = [];
  private unsubscribe: (() => void)[] = [];
  private ticker = 0;

  private titleEl = el("h1", { class: "display-title", text: "…" });
  private gameEl = el("span", { class: "game-tag" });
  private phaseEl = el("div", { class: "display-phase", "aria-live": "polite", "data-testid": "phase" });
  private secondsEl = el("span", { class: "display-seconds", "data-testid": "countdown" });
  private barEl = el("div", { class: "countdown-bar", role: "timer", "aria-label": "Time left to bet" }, el("span"));
  private stageBox = el("div", { class: "display-stage-box" });
  private resultEl = el("div", { class: "display-result", "aria-live": "polite", "data-testid": "round-result" });
  private roadsBox = el("section", { class: "display-roads", "aria-label": "Scoreboard" });
  private metersBox = el("section", { class: "panel display-meters", "data-testid": "meters" });
  private winnersBox = el("section", { class: "panel display-winners", "data-testid": "winners" });

  constructor(
    private conn: Connection,
    readonly tableId: string,
  ) {
    this.root.append(
      el(
        "header",
        { class: "display-head" },
        el("div", { class: "display-name" }, this.titleEl, this.gameEl),
        this.phaseEl,
        el("div", { class: "display-countdown" }, this.secondsEl, this.barEl),
      ),
      el("div", { class: "display-main" }, el("section", { class: "display-stage" }, this.stageBox, this.resultEl), this.roadsBox),
      el("aside", { class: "display-side" }, this.metersBox, this.winnersBox),
    );
    this.render();
  }

  mount(): void {
    document.body.classList.add("kiosk", "big-screen");
    this.unsubscribe.push(
      this.conn.onMessage((m) => this.onMessage(m)),
      this.conn.onReady(() => void this.enter()),
      this.conn.onStatus(() => this.renderPhase()),
    );
    if (this.conn.ready) void this.enter();
    this.ticker = window.setInterval(() => this.tick(), 100);
  }

  unmount(): void {
    window.clearInterval(this.ticker);
    for (const u of this.unsubscribe) u();
    document.body.classList.remove("kiosk", "big-screen");
  }

  /** Watch the table (again after a reconnect: a fresh snapshot is all the screen needs). */
  private async enter(): Promise<void> {
    try {
      if (!this.rules) {
        const rules = await this.conn.request({ type: "get_rules", table: this.tableId });
        if (rules.type === "error") {
          this.phaseEl.textContent = rules.code === "unknown_table" ? `No table "${this.tableId}".` : rules.message;
          return;
        }
        if (rules.type !== "rules") return;
        this.rules = rules;
        this.setupGame(rules);
      }
      void this.fetchSummary();
      const reply = await this.conn.request({ type: "join", table: this.tableId, role: "spectator" });
      if (reply.type === "error") this.phaseEl.textContent = reply.message;
    } catch (exc) {
      console.warn(exc); // the connection dropped: onReady calls again
    }
  }

  private setupGame(rules: Rules): void {
    const ctx: GameContext = {
      rules,
      seat: null,
      spot: (template) => template.replace("{seat}", ""),
      offered: (spot) => rules.spots.includes(spot),
    };
    this.game = createGameView(rules, ctx);
    this.stageBox.replaceChildren(this.game.stage);
    this.root.dataset.game = rules.game;
    this.gameEl.textContent = GAME_LABEL[rules.game] ?? rules.game;
    if (this.titleEl.textContent === "…") this.titleEl.textContent = GAME_LABEL[rules.game] ?? rules.table;
  }

  /** The table's name, and while betting how long the window has left (and so its length). */
  private async fetchSummary(): Promise<void> {
    const reply = await this.conn.request({ type: "list_tables" }).catch(() => null);
    if (reply?.type !== "lobby") return;
    const mine = reply.tables.find((t) => t.table === this.tableId);
    if (!mine) return;
    this.titleEl.textContent = mine.name;
    document.title = `${mine.name} · Display · Croupier`;
    if (mine.phase === "betting" && mine.closes_in_ms !== null && this.phase === "betting") {
      this.closesAt = performance.now() + mine.closes_in_ms - (this.conn.latencyMs ?? 0) / 2;
      this.windowMs = Math.max(this.windowMs, mine.closes_in_ms);
    }
  }

  private get baccarat(): boolean {
    return this.rules?.game === "baccarat";
  }

  // --- messages ----------------------------------------------------------------------------

  private onMessage(m: ServerMessage): void {
    if (m.type === "joined" && m.table === this.tableId) this.onJoined(m);
    else if (m.type === "event" && m.table === this.tableId) this.onEvent(m);
    else if (m.type === "winners" && m.table === this.tableId) this.onWinners(m);
  }

  private onJoined(m: Joined): void {
    const s = m.snapshot;
    this.seq = s.seq;
    this.phase = s.phase;
    this.closesAt = s.closes_in_ms !== null ? performance.now() + s.closes_in_ms : null;
    if (s.closes_in_ms && !this.windowMs) this.windowMs = Math.max(s.closes_in_ms, 15_000);
    this.meters = { ...s.meters };
    this.lastResults = [...s.last_results];
    this.held = s.held ? s.held.reason : null;
    this.resultEl.textContent = "";
    this.resultEl.className = "display-result";
    this.game?.reset();
    this.game?.setCards(s.cards);
    this.render();
  }

  private onEvent(ev: TableEvent): void {
    if (ev.seq <= this.seq) return;
    this.seq = ev.seq;
    const data = ev.data;
    switch (ev.event) {
      case "betting_opened":
        this.phase = "betting";
        this.closesAt = this.windowMs ? performance.now() + this.windowMs : null;
        this.resultEl.textContent = "";
        this.resultEl.className = "display-result";
        this.game?.reset();
        void this.fetchSummary();
        break;
      case "betting_closed":
        this.phase = "dealing";
        this.closesAt = null;
        break;
      case "round_settled":
        this.phase = "settled";
        this.closesAt = null;
        if (typeof data.result === "string") {
          this.lastResults = [...this.lastResults, data.result].slice(-120);
          this.showResult(data.result);
        }
        break;
      case "round_voided":
        this.phase = "voided";
        this.held = null;
        this.resultEl.textContent = `Round voided${data.reason ? `: ${String(data.reason)}` : ""} — every wager returned`;
        this.resultEl.className = "display-result voided";
        break;
      case "table_held":
        this.held = String(data.reason ?? "");
        break;
      case "table_resumed":
        this.held = null;
        break;
      case "meters":
        this.meters = { ...(data as Record<string, number>) };
        break;
      default:
        break;
    }
    this.game?.event(ev, false);
    this.render();
  }

  private onWinners(m: Winners): void {
    this.winners = addWinners(this.winners, m, 10);
    this.renderWinners();
  }

  private showResult(result: string): void {
    const w = /^(player|banker|tie)/i.exec(result)?.[1]?.toLowerCase();
    this.resultEl.textContent = this.baccarat || this.rules?.game === "twenty_one_baccarat" ? resultHeadline(result) : result;
    this.resultEl.className = `display-result${w ? ` result-${w}` : ""}`;
  }

  // --- rendering ---------------------------------------------------------------------------

  private render(): void {
    this.renderPhase();
    this.renderRoads();
    this.renderMeters();
    this.renderWinners();
    this.tick();
  }

  private renderPhase(): void {
    const offline = this.conn.status !== "open";
    this.phaseEl.textContent = offline ? "Reconnecting…" : this.held !== null ? `Table on hold${this.held ? ` — ${this.held}` : ""}` : phaseLabel(this.phase);
    this.root.dataset.phase = this.phase;
    this.root.classList.toggle("offline", offline);
    this.root.classList.toggle("held", this.held !== null);
  }

  private renderRoads(): void {
    if (!this.baccarat) {
      // Other games keep their own history strip in the stage.
      this.game?.history?.(this.lastResults);
      this.roadsBox.hidden = true;
      return;
    }
    this.roadsBox.hidden = false;
    const results = this.lastResults.filter((r) => r !== "no wagers");
    const winners = winnersOf(results);
    const count = (w: string) => winners.filter((x) => x === w).length;
    const ask = (next: "P" | "B") =>
      el(
        "div",
        { class: `road-ask ask-${next}` },
        el("span", { class: "road-ask-title", text: next === "B" ? "Banker next" : "Player next" }),
        ...nextMarks(winners, next).map((mark: RoadColour | null, i) =>
          el("span", {
            class: `mark ${DERIVED_ROADS[i].key} ${mark ? `mark-${mark}` : "mark-none"}`,
            title: `${DERIVED_ROADS[i].name}: ${mark ?? "no mark yet"}`,
          }),
        ),
      );
    this.roadsBox.replaceChildren(
      el(
        "div",
        { class: "road-tally" },
        el("span", { class: "tally tally-B", text: `Banker ${count("B")}` }),
        el("span", { class: "tally tally-P", text: `Player ${count("P")}` }),
        el("span", { class: "tally tally-T", text: `Tie ${count("T")}` }),
        el("span", { class: "tally", text: `Rounds ${winners.length}` }),
        ask("B"),
        ask("P"),
      ),
      el(
        "div",
        { class: "roads-grid" },
        this.roadWrap("bead-wrap", "Bead plate", beadPlate(results.slice(-120), 6, 6)),
        this.roadWrap("big-wrap", "Big road", bigRoadElement(results.slice(-120), 6, 10)),
        ...DERIVED_ROADS.map((r) => this.roadWrap(`derived-wrap ${r.key}-wrap`, r.name, derivedRoadElement(results.slice(-120), r.offset, 6, 10))),
      ),
    );
    this.fitRoads();
  }

  private roadWrap(cls: string, title: string, road: HTMLElement): HTMLElement {
    return el("div", { class: `road-wrap ${cls}` }, el("span", { class: "road-title", text: title }), el("div", { class: "road-scroll" }, road));
  }

  /** Each road fills its box's width with empty columns, and shows its newest column: the
   * oldest columns scroll out on the left when the road is longer than the box. */
  private fitRoads(): void {
    for (const box of this.roadsBox.querySelectorAll<HTMLElement>(".road-scroll")) {
      const road = box.firstElementChild as HTMLElement | null;
      if (!road || !box.clientWidth) continue;
      const cols = Number(road.style.getPropertyValue("--cols")) || 1;
      const cell = road.scrollWidth / cols;
      const fit = Math.floor(box.clientWidth / cell);
      if (cell > 0 && fit > cols) road.style.setProperty("--cols", String(fit));
      box.scrollLeft = box.scrollWidth;
    }
  }

  private renderMeters(): void {
    const entries = Object.entries(this.meters);
    this.metersBox.hidden = entries.length === 0;
    this.metersBox.replaceChildren(
      el("h2", { text: "Progressive jackpots" }),
      ...entries.map(([name, amount]) => el("div", { class: "meter big-meter" }, el("span", { text: spotLabel(name) }), el("strong", { text: money(amount, { cents: true }) }))),
    );
  }

  private renderWinners(): void {
    this.winnersBox.replaceChildren(
      el("h2", { text: "Last winners" }),
      this.winners.length
        ? el("ol", { class: "winners-list" }, ...this.winners.map((w) => el("li", { "data-round": w.round, text: winnerLine(w) })))
        : el("p", { class: "muted", text: "No winners yet." }),
    );
  }

  private tick(): void {
    const bar = this.barEl.firstElementChild as HTMLElement;
    if (this.phase === "betting" && this.closesAt !== null && this.conn.status === "open") {
      const left = Math.max(0, this.closesAt - performance.now());
      bar.style.width = `${(left / Math.max(this.windowMs, left, 1)) * 100}%`;
      this.secondsEl.textContent = String(Math.ceil(left / 1000));
      this.barEl.classList.toggle("urgent", left < 3000);
      this.root.classList.add("counting");
    } else {
      bar.style.width = "0%";
      this.secondsEl.textContent = "";
      this.root.classList.remove("counting");
    }
  }
}
