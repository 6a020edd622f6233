// A table: joins (or resumes), adopts the snapshot, applies events in `seq` order, and gives
// the player chips, bet/undo/clear/repeat, the countdown to "no more bets", decisions with
// their deadline, the win/loss per wager, the rules and paytable, and the game recall.
// The game-specific stage and layout come from games/*.

import type { Connection } from "./connection";
import { chipFace, chipsFor, decisionLabel, el, GAME_LABEL, money, outcomeLabel, phaseLabel, spotLabel } from "./format";
import type { GameContext, GameView } from "./games/types";
import { createGameView } from "./games";
import type {
  BetRecord,
  ErrorMessage,
  Joined,
  PlaceBet,
  RecalledRound,
  Role,
  Rules,
  ServerMessage,
  Settlement,
  TableEvent,
  TableSnapshot,
  TableSummary,
} from "./protocol";
import { cardElement } from "./cards";
import { showRulesDialog, showRecallDialog } from "./dialogs";
import { BET_RESEND_MS, SentBets } from "./sent-bets";

interface MyBet extends BetRecord {
  result?: string;
  returned?: number;
  net?: string;
}

export const ERROR_TEXT: Record<string, string> = {
  betting_closed: "Too late — no more bets for this round.",
  round_not_open: "That round has closed; wait for the next one.",
  not_in_phase: "Not now — wait for the next betting window.",
  insufficient_funds: "Your balance does not cover that wager.",
  below_minimum: "Below the minimum for that bet.",
  above_maximum: "Above the maximum for that bet.",
  main_wager_required: "Place a main bet first (e.g. Player or Banker), then side bets.",
  main_wager_in_use: "Remove the side bets before the main bet they depend on.",
  not_seated: "Only seated players bet — you are watching this table.",
  table_full: "The table is full; you can watch it.",
  nothing_to_repeat: "No bets from your previous round here to repeat.",
  spot_taken: "That spot already holds a bet.",
  five_adjacent_amount: "A Five Adjacent bet is five equal straight bets.",
  no_decision_pending: "That decision is no longer open.",
  rate_limited: "Slow down a little.",
  stations_only: "This table takes bets from its player stations only — you can watch it.",
};

/** How a table is shown: on a player station's touchscreen (`kiosk`) or in the web client. */
export interface TableOptions {
  /**
   * A cabinet's touchscreen: no lobby link, no keyboard shortcuts, no recall button of its own
   * (the station has one) and no error toasts (the station shows every error itself).
   */
  kiosk?: boolean;
  /** Why the player cannot bet now whatever the table's phase (a locked station), or null. */
  blocked?: () => string | null;
}

export class TableView {
  readonly root = el("main", { class: "table-view", id: "main" });
  private rules: Rules | null = null;
  private game: GameView | null = null;
  private summary: TableSummary | null = null;
  private seq = -1;
  private round: string | null = null;
  private phase = "waiting";
  private seat: number | null = null;
  private role: Role;
  private closesAt: number | null = null;
  private windowMs = 0;
  private bets = new Map<string, MyBet>();
  private placedOrder: string[] = [];
  private sentBets = new SentBets();
  private lastResults: string[] = [];
  private meters: Record<string, number> = {};
  // A device hold (docs/devices.md): the table waits for staff or for the device's fault to clear.
  private held: string | null = null;
  private pending: { spot: string; options: string[]; default: string; deadline: number | null; total: number } | null = null;
  private chip = 0;
  private chips: number[] = [];
  private betCounter = 0;
  private readonly idPrefix = Math.random().toString(36).slice(2, 7);
  private joined = false;
  private unsubscribe: (() => void)[] = [];
  private ticker = 0;
  private resultText = "";
  private lastStatus = "";
  private measureWindow = false;
  private windowMeasured = false;

  // elements
  private titleEl = el("h1", { class: "table-title", text: "…" });
  private phaseEl = el("div", { class: "phase", "aria-live": "polite", "data-testid": "phase" });
  private countdownEl = el("div", { class: "countdown-bar", role: "timer", "aria-label": "Time left to bet" }, el("span"));
  private countdownText = el("span", { class: "countdown-text", "data-testid": "countdown" });
  private resultEl = el("div", { class: "round-result", "aria-live": "polite", "data-testid": "round-result" });
  private stageBox = el("div", { class: "stage-box" });
  private boardBox = el("div", { class: "board-box" });
  private chipRack = el("div", { class: "chip-rack", role: "radiogroup", "aria-label": "Chip value" });
  private betsList = el("ul", { class: "bets-list", "data-testid": "my-bets" });
  private betsTotal = el("p", { class: "bets-total" });
  private historyBox = el("div", { class: "history-box" });
  private metersBox = el("div", { class: "meters", "data-testid": "meters" });
  private decisionBox = el("section", { class: "decision", hidden: true, "aria-live": "assertive", "data-testid": "decision" });
  private toastBox = el("div", { class: "toasts", "aria-live": "polite" });
  private roleNote = el("p", { class: "role-note" });
  private actionButtons: Record<string, HTMLButtonElement> = {};

  constructor(
    private conn: Connection,
    readonly tableId: string,
    watch: boolean,
    private go: (path: string) => void,
    private setBalance: (balance: number, delta?: number) => void,
    private options: TableOptions = {},
  ) {
    this.role = watch ? "spectator" : "player";
    this.build();
  }

  /** Draw again after something outside the table changed (a station locked or unlocked). */
  refresh(): void {
    this.renderAll();
  }

  // --- lifecycle ---------------------------------------------------------------------------

  mount(): void {
    this.unsubscribe.push(
      this.conn.onMessage((m) => this.onMessage(m)),
      this.conn.onReady((_w, again) => void this.enter(again)),
      this.conn.onStatus(() => {
        if (this.conn.status !== this.lastStatus) {
          this.lastStatus = this.conn.status;
          this.renderAll();
        }
      }),
    );
    if (this.conn.ready) void this.enter(false);
    this.ticker = window.setInterval(() => this.tick(), 100);
    if (!this.options.kiosk) window.addEventListener("keydown", this.onKey);
  }

  unmount(): void {
    window.clearInterval(this.ticker);
    window.removeEventListener("keydown", this.onKey);
    for (const u of this.unsubscribe) u();
    if (this.conn.ready && this.joined) this.conn.send({ type: "leave", table: this.tableId });
  }

  /** Join the table, or after a reconnect resume from the last event seen. */
  private async enter(again: boolean): Promise<void> {
    try {
      if (!this.rules) {
        const rules = await this.conn.request({ type: "get_rules", table: this.tableId });
        if (rules.type === "error") {
          this.fatal(rules);
          return;
        }
        if (rules.type === "rules") this.rules = rules;
        void this.fetchSummary();
      }
      if (again && this.joined && this.seq >= 0) {
        this.toast("Reconnected — catching up…");
        this.conn.send({ type: "resume", table: this.tableId, last_seq: this.seq, role: this.role });
      } else {
        const reply = await this.conn.request({ type: "join", table: this.tableId, role: this.role });
        if (reply.type === "error") {
          if ((reply.code === "table_full" || reply.code === "stations_only") && this.role === "player" && !this.options.kiosk) {
            this.toast(reply.code === "table_full" ? "The table is full — watching instead." : "This table takes bets from its player stations only — watching instead.");
            this.role = "spectator";
            await this.enter(false);
            return;
          }
          this.fatal(reply);
        }
      }
    } catch (exc) {
      // The connection dropped mid-way; onReady will call us again.
      console.warn(exc);
    }
  }

  private fatal(error: ErrorMessage): void {
    this.phaseEl.textContent = error.code === "unknown_table" ? "No such table." : error.message;
    this.toast(error.message, "error");
  }

  private async fetchSummary(): Promise<void> {
    const reply = await this.conn.request({ type: "list_tables" }).catch(() => null);
    if (reply?.type !== "lobby") return;
    const mine = reply.tables.find((t) => t.table === this.tableId);
    if (!mine) return;
    this.summary = mine;
    this.titleEl.textContent = mine.name;
    document.title = `${mine.name} · Croupier`;
    if (mine.phase === "betting" && mine.closes_in_ms !== null && this.phase === "betting") {
      const latency = (this.conn.latencyMs ?? 0) / 2;
      this.closesAt = performance.now() + mine.closes_in_ms - latency;
      if (this.measureWindow) {
        // Asked just after "betting_opened": this is (nearly) the whole betting window.
        this.windowMs = mine.closes_in_ms;
        this.measureWindow = false;
        this.windowMeasured = true;
      }
    }
  }

  // --- building the page -------------------------------------------------------------------

  private build(): void {
    const back = el("a", { href: "/", class: "btn ghost back", "data-testid": "back", text: "← Lobby" });
    back.addEventListener("click", (ev) => {
      ev.preventDefault();
      this.go("/");
    });
    const rulesBtn = this.button("Rules & pays", "rules", () => this.openRules(), "R");
    const kiosk = this.options.kiosk ?? false;
    const recallBtn = kiosk ? null : this.button("Game recall", "recall", () => this.openRecall(), "G");
    this.actionButtons.undo = this.button("Undo", "undo", () => this.undo(), "U");
    this.actionButtons.clear = this.button("Clear", "clear", () => this.clear(), "C");
    this.actionButtons.repeat = this.button("Repeat", "repeat", () => this.repeat(), "P");

    this.root.append(
      el(
        "div",
        { class: "table-head" },
        kiosk ? null : back,
        el("div", { class: "title-wrap" }, this.titleEl, this.roleNote),
        el("div", { class: "info-actions" }, rulesBtn, recallBtn),
      ),
      el("div", { class: "status-row" }, this.phaseEl, el("div", { class: "countdown-wrap" }, this.countdownEl, this.countdownText)),
      el(
        "div",
        { class: "table-grid" },
        el(
          "div",
          { class: "play-col" },
          this.stageBox,
          this.resultEl,
          this.decisionBox,
          el(
            "div",
            { class: "controls", role: "toolbar", "aria-label": "Betting controls" },
            this.chipRack,
            el("div", { class: "bet-actions" }, this.actionButtons.undo, this.actionButtons.clear, this.actionButtons.repeat),
          ),
          this.boardBox,
        ),
        el(
          "aside",
          { class: "side-col", "aria-label": "Your bets and the table's history" },
          el("section", { class: "panel" }, el("h2", { text: "Your bets this round" }), this.betsList, this.betsTotal),
          this.metersBox,
          el("section", { class: "panel" }, el("h2", { text: "Last results" }), this.historyBox),
        ),
      ),
      this.toastBox,
    );
    this.boardBox.addEventListener("click", (ev) => {
      const target = (ev.target as HTMLElement).closest<HTMLElement>("[data-spot]");
      if (!target || target.getAttribute("aria-disabled") === "true") return;
      this.placeBet(target.dataset.spot!, Number(target.dataset.multiplier ?? "1"));
    });
  }

  private button(label: string, id: string, action: () => void, key?: string): HTMLButtonElement {
    const b = el("button", { class: "btn", type: "button", "data-testid": id, "aria-keyshortcuts": key, title: key ? `${label} (${key})` : label, text: label });
    b.addEventListener("click", action);
    return b;
  }

  private onKey = (ev: KeyboardEvent): void => {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    if ((ev.target as HTMLElement).closest("input, textarea, dialog")) return;
    const k = ev.key.toLowerCase();
    if (k === "u") this.undo();
    else if (k === "c") this.clear();
    else if (k === "p") this.repeat();
    else if (k === "r") this.openRules();
    else if (k === "g") this.openRecall();
    else if (/^[1-6]$/.test(k) && this.chips[Number(k) - 1]) this.selectChip(this.chips[Number(k) - 1]);
  };

  private setupGame(snapshotSeat: number | null): void {
    if (!this.rules) return;
    const rules = this.rules;
    this.seat = snapshotSeat;
    const ctx: GameContext = {
      rules,
      seat: this.seat,
      spot: (template) => template.replace("{seat}", String(this.seat ?? "")),
      offered: (spot) => rules.spots.some((s) => s.replace("{seat}", String(this.seat ?? "")) === spot),
    };
    this.game = createGameView(rules, ctx);
    this.stageBox.replaceChildren(this.game.stage);
    this.boardBox.replaceChildren(this.game.board);
    const limits = rules.limits;
    this.chips = chipsFor(limits.minimum ?? 100, limits.maximum ?? 100000);
    if (!this.chips.includes(this.chip)) this.chip = this.chips[Math.min(1, this.chips.length - 1)];
    this.renderChips();
    this.titleEl.textContent = this.summary?.name ?? GAME_LABEL[rules.game] ?? rules.table;
    this.root.dataset.game = rules.game;
    this.roleNote.textContent =
      this.role === "spectator"
        ? "Watching — you cannot bet at this table."
        : this.seat !== null && rules.boxed
          ? `Your box: ${this.seat} · limits ${money(limits.minimum)}–${money(limits.maximum)}`
          : `Limits ${money(limits.minimum)}–${money(limits.maximum)}`; // a station's bar names its seat
    this.root.classList.toggle("spectating", this.role === "spectator");
  }

  private renderChips(): void {
    this.chipRack.replaceChildren(
      ...this.chips.map((value, i) => {
        const b = el("button", {
          type: "button",
          class: `chip chip-${i}`,
          role: "radio",
          "aria-checked": value === this.chip ? "true" : "false",
          "aria-label": `${money(value)} chip`,
          "aria-keyshortcuts": String(i + 1),
          "data-chip": value,
          "data-testid": `chip-${value}`,
          text: chipFace(value),
        });
        b.addEventListener("click", () => this.selectChip(value));
        return b;
      }),
    );
  }

  private selectChip(value: number): void {
    this.chip = value;
    for (const b of this.chipRack.querySelectorAll<HTMLElement>(".chip")) {
      b.setAttribute("aria-checked", Number(b.dataset.chip) === value ? "true" : "false");
    }
  }

  // --- messages ----------------------------------------------------------------------------

  private onMessage(m: ServerMessage): void {
    switch (m.type) {
      case "joined":
        if (m.table === this.tableId) this.onJoined(m);
        break;
      case "event":
        if (m.table === this.tableId) this.onEvent(m);
        break;
      case "bet_accepted":
        this.sentBets.answered(m.ref);
        if (m.table !== this.tableId) break;
        this.setBalance(m.balance);
        if (m.round === this.round) {
          this.bets.set(m.bet_id, { bet_id: m.bet_id, spot: m.spot, amount: m.amount });
          this.renderBets();
        }
        break;
      case "bet_cancelled":
        if (m.table !== this.tableId) break;
        this.setBalance(m.balance);
        this.bets.delete(m.bet_id);
        this.placedOrder = this.placedOrder.filter((id) => id !== m.bet_id);
        this.renderBets();
        break;
      case "balance":
        this.setBalance(m.balance);
        break;
      case "error": {
        const again = this.sentBets.resend(m);
        if (again) {
          // In a cluster the table's node may not have answered in time, and the bet may
          // stand: sending it again as it was (its id makes that safe) learns whether it does.
          window.setTimeout(() => this.sendBet(again.bet, again.resent), BET_RESEND_MS);
          break;
        }
        if (!this.options.kiosk) this.toast(ERROR_TEXT[m.code] ?? m.message, "error", m.code);
        break;
      }
      case "notice":
        this.toast(m.message, "info");
        break;
      default:
        break;
    }
  }

  private onJoined(m: Joined): void {
    this.joined = true;
    this.sentBets.clear(); // a new connection: the old one's replies will not come
    this.role = m.role === "spectator" ? "spectator" : "player";
    if (m.resumed && this.game) {
      this.seq = Math.max(this.seq, m.snapshot.seq);
      this.toast("Back at the table.");
      return;
    }
    this.adopt(m.snapshot);
  }

  /** Adopt a snapshot whole. */
  private adopt(s: TableSnapshot): void {
    if (!this.game || s.seat !== this.seat) this.setupGame(s.seat);
    this.seq = s.seq;
    this.round = s.round;
    this.phase = s.phase;
    this.closesAt = s.closes_in_ms !== null ? performance.now() + s.closes_in_ms : null;
    // Joined mid-window: the window's length is not known yet (the server's default is 15 s).
    if (s.closes_in_ms && !this.windowMs) this.windowMs = Math.max(s.closes_in_ms, 15_000);
    this.bets = new Map(s.my_bets.map((b) => [b.bet_id, { ...b }]));
    this.placedOrder = s.my_bets.map((b) => b.bet_id);
    this.meters = { ...s.meters };
    this.lastResults = [...s.last_results];
    this.resultText = "";
    this.held = s.held ? s.held.reason : null;
    this.game!.reset();
    this.game!.setCards(s.cards);
    this.pending = s.pending_decision
      ? { ...s.pending_decision, deadline: performance.now() + s.pending_decision.closes_in_ms, total: s.pending_decision.closes_in_ms }
      : null;
    this.renderAll();
  }

  private onEvent(ev: TableEvent): void {
    if (ev.seq <= this.seq) return; // already seen (a resume can replay)
    this.seq = ev.seq;
    const me = this.conn.welcome?.player_id;
    const data = ev.data;
    const mine = data.player_id === me || (data.wager as { player_id?: string } | undefined)?.player_id === me;
    switch (ev.event) {
      case "betting_opened":
        this.round = ev.round;
        this.phase = "betting";
        this.bets.clear();
        this.placedOrder = [];
        this.pending = null;
        this.resultText = "";
        this.closesAt = this.windowMs ? performance.now() + this.windowMs : null;
        this.game?.reset();
        if (!this.windowMeasured) {
          // "betting_opened" does not say how long the window is: ask the lobby once, then
          // count on the same length every round (docs: the table's betting_seconds).
          this.measureWindow = true;
          void this.fetchSummary();
        }
        break;
      case "betting_closed":
        this.phase = "dealing";
        this.closesAt = null;
        break;
      case "bet_accepted": {
        const w = data.wager as BetRecord & { player_id: string };
        if (w.player_id === me && !this.bets.has(w.bet_id)) this.bets.set(w.bet_id, { bet_id: w.bet_id, spot: w.spot, amount: w.amount });
        break;
      }
      case "bet_cancelled": {
        const w = data.wager as BetRecord;
        this.bets.delete(w.bet_id);
        break;
      }
      case "wager_settled": {
        const s = data.settlement as Settlement;
        if (s.wager.player_id === me) {
          const bet = this.bets.get(s.wager.bet_id) ?? { bet_id: s.wager.bet_id, spot: s.wager.spot, amount: s.wager.amount };
          bet.result = s.outcome.result;
          bet.returned = s.returned;
          bet.net = s.outcome.net;
          this.bets.set(bet.bet_id, bet);
          const delta = s.returned - s.wager.amount;
          this.flashSpot(s.wager.spot, s.outcome.result, delta);
        }
        break;
      }
      case "decision_requested":
        if (mine) {
          this.phase = "deciding";
          this.pending = { spot: String(data.spot), options: data.options as string[], default: String(data.default), deadline: null, total: 0 };
        }
        break;
      case "decision_deadline":
        if (mine && this.pending && this.pending.spot === data.spot) {
          const ms = Number(data.closes_in_ms);
          this.pending.deadline = performance.now() + ms;
          this.pending.total = ms;
        }
        break;
      case "decision_made":
      case "decision_timed_out":
        if (mine && this.pending?.spot === data.spot) {
          this.pending = null;
          if (ev.event === "decision_timed_out") this.toast(`Time is up: ${decisionLabel(String(data.decision ?? data.default ?? "default"))} was applied.`);
        }
        break;
      case "round_settled":
        this.phase = "settled";
        this.closesAt = null;
        this.pending = null;
        if (typeof data.result === "string") {
          this.lastResults = [...this.lastResults, data.result].slice(-60);
          this.resultText = this.myResult(data.result);
        }
        break;
      case "table_held":
        this.held = String(data.reason ?? "");
        break;
      case "table_resumed":
        this.held = null;
        break;
      case "round_voided":
        this.held = null;
        this.phase = "voided";
        this.pending = null;
        this.resultText = `Round voided: ${String(data.reason ?? "")}. Your wagers were returned.`;
        break;
      case "meters":
        this.meters = { ...(data as Record<string, number>) };
        break;
      case "progressive_awarded":
        if (mine) this.toast(`Progressive won: ${money(Number(data.amount ?? 0))}!`, "win");
        break;
      case "shoe_shuffled":
        this.toast("A new shoe is in play.");
        break;
      default:
        break;
    }
    this.game?.event(ev, mine);
    this.renderAll();
  }

  /** In the boxed games the round's result lists every box: keep the player's own. */
  private myResult(result: string): string {
    if (this.seat === null || !/^box \d+ /.test(result)) return result;
    const mine = result
      .split(";")
      .map((part) => part.trim())
      .filter((part) => part.startsWith(`box ${this.seat} `))
      .map((part) => part.replace(/^box \d+ /, ""));
    return mine.length ? `Your box: ${mine.join("; ")}` : result;
  }

  // --- betting -----------------------------------------------------------------------------

  private canBet(): boolean {
    return this.role === "player" && this.phase === "betting" && this.round !== null && this.conn.ready && !this.options.blocked?.();
  }

  private nextBetId(): string {
    this.betCounter += 1;
    return `${this.idPrefix}${this.betCounter}`;
  }

  private placeBet(spot: string, multiplier: number): void {
    if (this.role !== "player") {
      this.toast("You are watching this table. Go back to the lobby and choose Play to bet.", "error");
      return;
    }
    const blocked = this.options.blocked?.();
    if (blocked) {
      this.toast(blocked, "error");
      return;
    }
    if (!this.canBet()) {
      this.toast(this.phase === "betting" ? "Connecting…" : "Bets are closed — wait for the next round.", "error");
      return;
    }
    const amount = this.chip * multiplier;
    // At a boxed table every spot is KIND:BOX (the server's canonical form).
    const boxed = (this.rules?.boxed ?? false) && spot.includes(":");
    const existing = [...this.bets.values()].find((b) => b.spot === spot);
    if (boxed && existing) {
      // A box spot holds one wager: replace it with the larger one.
      this.conn.send({ type: "cancel_bet", table: this.tableId, round: this.round!, bet_id: existing.bet_id });
      const id = this.nextBetId();
      this.placedOrder.push(id);
      this.sendBet({ type: "place_bet", table: this.tableId, round: this.round!, bet_id: id, spot, amount: existing.amount + amount });
      return;
    }
    const id = this.nextBetId();
    this.placedOrder.push(id);
    this.sendBet({ type: "place_bet", table: this.tableId, round: this.round!, bet_id: id, spot, amount });
  }

  private sendBet(bet: PlaceBet, resent = 0): void {
    this.sentBets.add(this.conn.send(bet), bet, resent);
  }

  private undo(): void {
    if (!this.canBet()) return;
    const id = [...this.placedOrder].reverse().find((b) => this.bets.has(b)) ?? [...this.bets.keys()].pop();
    if (!id) return;
    this.placedOrder = this.placedOrder.filter((b) => b !== id);
    this.conn.send({ type: "cancel_bet", table: this.tableId, round: this.round!, bet_id: id });
  }

  private clear(): void {
    if (!this.canBet()) return;
    // Side bets first: a main bet cannot go while side bets depend on it (631a.8(a)).
    const main = new Set((this.rules?.main_spots ?? []).map((s) => s.replace("{seat}", String(this.seat ?? ""))));
    const ids = [...this.bets.values()].sort((a, b) => Number(main.has(a.spot)) - Number(main.has(b.spot))).map((b) => b.bet_id);
    for (const id of ids) this.conn.send({ type: "cancel_bet", table: this.tableId, round: this.round!, bet_id: id });
    this.placedOrder = [];
  }

  private repeat(): void {
    if (!this.canBet()) return;
    this.betCounter += 1;
    this.conn.send({ type: "repeat_bets", table: this.tableId, round: this.round!, bet_id_prefix: `${this.idPrefix}r${this.betCounter}` });
  }

  private decide(option: string): void {
    if (!this.pending || !this.round) return;
    let decision = option;
    if (option === "war+tie") decision = `war+tie:${this.chip}`;
    this.conn.send({ type: "decide", table: this.tableId, round: this.round, spot: this.pending.spot, decision });
    this.decisionBox.querySelectorAll("button").forEach((b) => (b.disabled = true));
  }

  // --- rendering ---------------------------------------------------------------------------

  private renderAll(): void {
    this.renderPhase();
    this.renderBets();
    this.renderDecision();
    this.renderMeters();
    this.game?.history?.(this.lastResults);
    this.renderHistory();
    this.tick();
  }

  private renderPhase(): void {
    const offline = this.conn.status !== "open";
    this.phaseEl.textContent = offline
      ? "Connection lost — reconnecting…"
      : this.held !== null
        ? `Table on hold — ${this.held}`
        : this.pending && this.role === "player"
          ? "Your turn — decide"
          : phaseLabel(this.phase);
    this.root.classList.toggle("offline", offline);
    this.root.classList.toggle("held", this.held !== null);
    this.root.dataset.phase = this.phase;
    this.root.dataset.round = this.round ?? "";
    const bettable = this.canBet();
    this.root.dataset.canBet = String(bettable);
    this.boardBox.classList.toggle("closed", !bettable);
    for (const key of ["undo", "clear", "repeat"]) this.actionButtons[key].disabled = !bettable;
    let text = this.resultText;
    const mine = [...this.bets.values()];
    const settled = mine.filter((b) => b.result !== undefined);
    if (settled.length && (this.phase === "settled" || settled.length === mine.length)) {
      const wagered = settled.reduce((t, b) => t + b.amount, 0);
      const returned = settled.reduce((t, b) => t + (b.returned ?? 0), 0);
      const net = returned - wagered;
      text = `${text ? `${text} — ` : ""}${net > 0 ? `you won ${money(net)}` : net < 0 ? `you lost ${money(-net)}` : "your bets pushed"}`;
      this.resultEl.className = `round-result ${net > 0 ? "win" : net < 0 ? "lose" : "push"}`;
    } else {
      this.resultEl.className = "round-result";
    }
    this.resultEl.textContent = text;
  }

  private renderBets(): void {
    const bets = [...this.bets.values()];
    this.betsList.replaceChildren(
      ...(bets.length
        ? bets.map((b) => {
            const status =
              b.result === undefined
                ? el("span", { class: "pending", text: "in play" })
                : el("span", {
                    class: `outcome ${b.result === "win" ? "win" : b.result === "lose" ? "lose" : "push"}`,
                    "data-testid": "outcome",
                    text: `${outcomeLabel(b.result)} ${b.returned !== undefined ? money(b.returned - b.amount, { sign: true }) : ""}`,
                  });
            return el("li", { "data-spot": b.spot }, el("span", { class: "bet-spot", text: spotLabel(b.spot) }), el("span", { class: "bet-amount", text: money(b.amount) }), status);
          })
        : [el("li", { class: "muted", text: this.role === "player" ? (this.phase === "betting" ? "Pick a chip, then tap a betting area." : "No bets this round.") : "Watching." })]),
    );
    const total = bets.reduce((t, b) => t + b.amount, 0);
    this.betsTotal.textContent = bets.length ? `Total bet ${money(total)}` : "";
    // chip badges on the layout
    const bySpot = new Map<string, number>();
    for (const b of bets) bySpot.set(b.spot, (bySpot.get(b.spot) ?? 0) + b.amount);
    for (const node of this.boardBox.querySelectorAll<HTMLElement>("[data-spot]")) {
      const amount = bySpot.get(node.dataset.spot!);
      let badge = node.querySelector<HTMLElement>(":scope > .stake");
      if (amount) {
        if (!badge) {
          badge = el("span", { class: "stake", "aria-hidden": "true" });
          node.append(badge);
        }
        badge.textContent = chipFace(amount);
        node.classList.add("has-bet");
      } else {
        badge?.remove();
        node.classList.remove("has-bet");
      }
      const label = node.getAttribute("data-label") ?? spotLabel(node.dataset.spot!);
      node.setAttribute("aria-label", amount ? `${label}, your bet ${money(amount)}` : label);
    }
    if (this.phase === "betting") {
      for (const node of this.boardBox.querySelectorAll<HTMLElement>(".won, .lost")) node.classList.remove("won", "lost");
    }
  }

  private flashSpot(spot: string, result: string, delta: number): void {
    const node = this.boardBox.querySelector<HTMLElement>(`[data-spot="${CSS.escape(spot)}"]`);
    if (!node) return;
    node.classList.toggle("won", result === "win");
    node.classList.toggle("lost", result === "lose");
    node.title = `${outcomeLabel(result)} ${money(delta, { sign: true })}`;
  }

  private renderDecision(): void {
    const p = this.pending;
    if (!p || this.role !== "player") {
      this.decisionBox.hidden = true;
      this.decisionBox.replaceChildren();
      this.decisionBox.dataset.spot = "";
      return;
    }
    const key = `${p.spot}|${p.options.join(",")}`;
    if (this.decisionBox.dataset.key === key && !this.decisionBox.hidden) return;
    this.decisionBox.dataset.key = key;
    this.decisionBox.hidden = false;
    const buttons = p.options.map((o) => {
      const b = el("button", {
        type: "button",
        class: `btn decision-btn ${o === p.default ? "" : "primary"}`,
        "data-decision": o,
        "data-testid": `decide-${o}`,
        text: o === "war+tie" ? `${decisionLabel(o)} (${money(this.chip)})` : decisionLabel(o),
      });
      b.addEventListener("click", () => this.decide(o));
      return b;
    });
    const hand = p.spot.startsWith("split:") ? " (split hand)" : p.spot.startsWith("insurance:") ? " — insurance" : "";
    this.decisionBox.replaceChildren(
      el("h2", { text: `Your decision${hand}` }),
      el("p", { class: "hint", text: `If time runs out: ${decisionLabel(p.default)}.` }),
      el("div", { class: "decision-buttons" }, ...buttons),
      el("div", { class: "countdown-bar decision-bar", role: "timer", "aria-label": "Time left to decide" }, el("span")),
      el("span", { class: "decision-left", "data-testid": "decision-left" }),
    );
    buttons[0]?.focus({ preventScroll: true });
  }

  private renderMeters(): void {
    const entries = Object.entries(this.meters);
    this.metersBox.hidden = entries.length === 0;
    this.metersBox.replaceChildren(
      el("h2", { text: "Progressive meters" }),
      ...entries.map(([name, amount]) => el("div", { class: "meter" }, el("span", { text: spotLabel(name) }), el("strong", { text: money(amount) }))),
    );
  }

  private renderHistory(): void {
    if (this.game?.history) {
      // the game shows its own history (roads, number strips) in its stage; keep a short list here
    }
    const shown = this.lastResults.filter((r) => r !== "no wagers").slice(-8).reverse().map((r) => this.myResult(r));
    this.historyBox.replaceChildren(
      shown.length ? el("ol", { class: "history-list" }, ...shown.map((r) => el("li", { text: r }))) : el("p", { class: "muted", text: "No rounds yet." }),
    );
  }

  private tick(): void {
    const now = performance.now();
    const bar = this.countdownEl.firstElementChild as HTMLElement;
    if (this.phase === "betting" && this.closesAt !== null && this.conn.status === "open") {
      const left = Math.max(0, this.closesAt - now);
      this.root.dataset.closesIn = String(Math.round(left));
      const total = Math.max(this.windowMs, left, 1);
      bar.style.width = `${(left / total) * 100}%`;
      this.countdownText.textContent = left > 0 ? `${Math.ceil(left / 1000)} s` : "0 s";
      this.countdownEl.classList.toggle("urgent", left < 3000);
      this.countdownEl.setAttribute("aria-valuenow", String(Math.ceil(left / 1000)));
    } else {
      bar.style.width = "0%";
      this.root.dataset.closesIn = "0";
      this.countdownText.textContent = this.phase === "betting" ? "" : "";
    }
    if (this.pending?.deadline) {
      const left = Math.max(0, this.pending.deadline - now);
      const dbar = this.decisionBox.querySelector<HTMLElement>(".decision-bar > span");
      if (dbar) dbar.style.width = `${(left / Math.max(this.pending.total, 1)) * 100}%`;
      const t = this.decisionBox.querySelector<HTMLElement>(".decision-left");
      if (t) t.textContent = `${Math.ceil(left / 1000)} s to decide`;
    }
  }

  private toast(text: string, kind: "info" | "error" | "win" = "info", code?: string): void {
    const t = el("div", { class: `toast ${kind}`, role: kind === "error" ? "alert" : "status", "data-code": code, text });
    this.toastBox.append(t);
    window.setTimeout(() => t.remove(), 4000);
    while (this.toastBox.children.length > 3) this.toastBox.firstElementChild?.remove();
  }

  // --- dialogs -----------------------------------------------------------------------------

  private openRules(): void {
    if (this.rules) showRulesDialog(this.rules, this.summary);
  }

  private async openRecall(): Promise<void> {
    const reply = await this.conn.request({ type: "get_recall", table: this.tableId }).catch(() => null);
    const rounds: RecalledRound[] = reply?.type === "recall" ? reply.rounds : [];
    showRecallDialog(rounds, cardElement);
  }
}
