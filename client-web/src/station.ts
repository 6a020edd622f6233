// A player station's touchscreen (/station/ID#token=TOKEN): a cabinet at a fully automated
// table. Full screen, no lobby and no other tables: the station's seat at its table(s) (big
// tabs when it has more than one), the CREDITS, CASH OUT, ATTENDANT CALL and GAME RECALL, the
// lock overlay while the station is not enabled, the ticket after a cash-out, and the
// attendant menu while the attendant key is turned.
//
// Data: `welcome` (its `balance` is the station's credits, `station` its id), then `station`
// after the welcome and whenever the station changes (credits, enabled, locks, handpay,
// attendant + meters, called, player_card, last_ticket), `balance` and each table's own
// messages (TableView), `cashed_out` after a cash-out, `recall` for GAME RECALL, `error`.

import { AttendantMenu } from "./attendant";
import { cardElement } from "./cards";
import type { Connection } from "./connection";
import { showRecallDialog } from "./dialogs";
import { el, money } from "./format";
import type { CashedOut, ErrorMessage, RecalledRound, ServerMessage, StationStatus } from "./protocol";
import { formatWhen, lockBanner, stationErrorText, ticketText } from "./station-text";
import { ERROR_TEXT, TableView } from "./table";

type Pending = { kind: "attendant"; action: "clear" | "handpay" } | { kind: "cash_out" } | { kind: "call" };

export class StationView {
  readonly root = el("div", { class: "station-view", "data-testid": "station" });
  private status: StationStatus | null = null;
  private credits: number | null = null;
  private tables = new Map<string, TableView>();
  private names = new Map<string, string>();
  private active: string | null = null;
  private pending = new Map<number, Pending>();
  private unsubscribe: (() => void)[] = [];
  private errorTimer = 0;
  private ticketTimer = 0;
  private deltaTimer = 0;
  private lockKey = "";
  private lastBlocked: string | null | undefined = undefined;

  // elements
  private stationLabel = el("span", { class: "station-id" });
  private cardLabel = el("span", { class: "player-card", hidden: true, "data-testid": "player-card" });
  private creditsEl = el("strong", { class: "credits", "data-testid": "credits", "aria-live": "polite", text: "—" });
  private creditsDelta = el("span", { class: "credits-delta", "aria-hidden": "true" });
  private playMoney = el("span", { class: "play-money", hidden: true, text: "Play money" });
  private connDot = el("span", { class: "dot", "aria-hidden": "true" });
  private connEl = el("span", { class: "connection connecting", role: "status", title: "Connection to the table server" }, this.connDot);
  private tabs = el("nav", { class: "station-tabs", "aria-label": "Tables", hidden: true });
  private body = el("div", { class: "station-body" });
  private starting = el("div", { class: "station-starting" }, el("span", { class: "spinner", "aria-hidden": "true" }), el("span", { text: "Starting the station…" }));
  private lockEl = el("div", { class: "lock-overlay", role: "alert", hidden: true, "data-testid": "lock-overlay" });
  private errorEl = el("div", { class: "station-error", role: "alert", hidden: true, "data-testid": "station-error" });
  private ticketEl = el("div", { class: "ticket-overlay", role: "dialog", "aria-modal": "true", hidden: true, "data-testid": "ticket" });
  private cashOutBtn = el("button", { type: "button", class: "btn big-btn cash-out", "data-testid": "cash-out" }, el("span", { text: "CASH OUT" }));
  private callBtn = el("button", { type: "button", class: "btn big-btn call", "aria-pressed": "false", "data-testid": "call-attendant" });
  private recallBtn = el("button", { type: "button", class: "btn big-btn recall", "data-testid": "game-recall", text: "GAME RECALL" });
  private ticketNote = el("span", { class: "last-ticket muted", "data-testid": "last-ticket" });
  private attendant = new AttendantMenu((action) => this.send({ type: "attendant_action", action }, { kind: "attendant", action }));

  constructor(
    private conn: Connection,
    readonly stationId: string,
  ) {
    this.stationLabel.textContent = `Station ${stationId}`;
    this.body.append(this.starting);
    this.root.append(
      el(
        "header",
        { class: "station-bar" },
        el("div", { class: "station-who" }, this.stationLabel, this.cardLabel),
        el("div", { class: "credits-wrap" }, el("span", { class: "credits-label", text: "CREDITS" }), this.creditsEl, this.creditsDelta, this.playMoney),
        this.connEl,
      ),
      this.tabs,
      // The overlay sits beside the scrolling tables, so it stays over them however far they scroll.
      el("div", { class: "station-main" }, this.body, this.lockEl),
      el("footer", { class: "station-actions" }, el("div", { class: "cash-out-wrap" }, this.cashOutBtn, this.ticketNote), this.callBtn, this.recallBtn),
      this.errorEl,
      this.ticketEl,
      this.attendant.root,
    );
    this.cashOutBtn.addEventListener("click", () => this.cashOut());
    this.callBtn.addEventListener("click", () => this.toggleCall());
    this.recallBtn.addEventListener("click", () => void this.openRecall());
    this.errorEl.addEventListener("click", () => (this.errorEl.hidden = true));
    // A touchscreen: no long-press menu.
    this.root.addEventListener("contextmenu", (ev) => ev.preventDefault());
    this.render();
  }

  mount(): void {
    document.title = `Station ${this.stationId} · Croupier`;
    document.body.classList.add("kiosk");
    this.unsubscribe.push(
      this.conn.onMessage((m) => this.onMessage(m)),
      this.conn.onReady((w) => {
        this.setCredits(w.balance);
        this.playMoney.hidden = !w.play_money;
        if (w.station && w.station !== this.stationId) this.showError(`This screen signed in as station ${w.station}, not ${this.stationId}.`);
        void this.fetchNames();
        this.render();
      }),
      this.conn.onStatus(() => {
        if (this.conn.status !== "open") this.pending.clear(); // no answer will come
        this.render();
      }),
    );
  }

  unmount(): void {
    for (const u of this.unsubscribe) u();
    for (const t of this.tables.values()) t.unmount();
    document.body.classList.remove("kiosk");
  }

  // --- messages ----------------------------------------------------------------------------

  private onMessage(m: ServerMessage): void {
    const ref = "ref" in m && typeof m.ref === "number" ? m.ref : null;
    const pending = ref !== null ? this.pending.get(ref) : undefined;
    if (ref !== null) this.pending.delete(ref);
    switch (m.type) {
      case "station":
        this.onStation(m);
        if (pending?.kind === "attendant") this.attendant.say(pending.action === "clear" ? "Done: every lock whose cause is gone was cleared." : "Done: the handpay is recorded as paid.");
        break;
      case "balance":
        this.setCredits(m.balance);
        break;
      case "cashed_out":
        this.showTicket(m);
        break;
      case "error":
        this.onError(m, pending);
        break;
      default:
        break;
    }
    if (pending) this.renderButtons();
  }

  private onStation(s: StationStatus): void {
    this.status = s;
    this.setCredits(s.credits);
    this.syncTables(s.tables);
    this.attendant.update(s);
    this.render();
  }

  private onError(m: ErrorMessage, pending: Pending | undefined): void {
    if (m.code === "bad_token" || m.code === "token_required") {
      this.render(); // the lock overlay says it (Connection.refused)
      return;
    }
    const text = stationErrorText(m.code, m.message, ERROR_TEXT);
    if (pending?.kind === "attendant" && this.attendant.open) {
      this.attendant.say(text, "error");
      return;
    }
    this.showError(text);
  }

  private send(message: Parameters<Connection["send"]>[0], pending: Pending): void {
    if (!this.conn.ready) {
      this.showError("Not connected to the server — try again in a moment.");
      return;
    }
    const ref = this.conn.send(message);
    this.pending.set(ref, pending);
  }

  // --- the tables --------------------------------------------------------------------------

  private syncTables(ids: string[]): void {
    for (const [id, view] of this.tables) {
      if (ids.includes(id)) continue;
      view.unmount();
      view.root.remove();
      this.tables.delete(id);
    }
    for (const id of ids) {
      if (this.tables.has(id)) continue;
      const view = new TableView(this.conn, id, false, () => undefined, (balance) => this.setCredits(balance), {
        kiosk: true,
        blocked: () => this.blockedReason(),
      });
      view.root.removeAttribute("id");
      view.root.hidden = true;
      this.tables.set(id, view);
      this.body.append(view.root);
      view.mount();
    }
    if (!this.active || !this.tables.has(this.active)) this.active = ids[0] ?? null;
    this.renderTabs();
  }

  private select(id: string): void {
    this.active = id;
    this.renderTabs();
  }

  private async fetchNames(): Promise<void> {
    const reply = await this.conn.request({ type: "list_tables" }).catch(() => null);
    if (reply?.type !== "lobby") return;
    for (const t of reply.tables) this.names.set(t.table, t.name);
    this.renderTabs();
  }

  private renderTabs(): void {
    const ids = [...this.tables.keys()];
    this.tabs.hidden = ids.length < 2;
    this.tabs.replaceChildren(
      ...ids.map((id) => {
        const b = el("button", {
          type: "button",
          class: "station-tab",
          "aria-pressed": id === this.active ? "true" : "false",
          "data-testid": `tab-${id}`,
          text: this.names.get(id) ?? id,
        });
        b.addEventListener("click", () => this.select(id));
        return b;
      }),
    );
    for (const [id, view] of this.tables) {
      view.root.hidden = id !== this.active;
      if (id === this.active) view.root.id = "main";
      else view.root.removeAttribute("id");
    }
    this.starting.hidden = this.tables.size > 0;
  }

  /** Why the station cannot bet now, for the tables (null: it can). */
  private blockedReason(): string | null {
    if (!this.conn.ready) return "Reconnecting to the server…";
    const s = this.status;
    if (!s) return "Waiting for the station…";
    const banner = lockBanner(s);
    if (banner) return [banner.headline, ...banner.reasons, banner.handpay].filter(Boolean).join(" — ");
    if (s.attendant !== null) return "The attendant menu is open.";
    return null;
  }

  // --- actions -----------------------------------------------------------------------------

  private cashOut(): void {
    if (!this.status?.enabled) {
      this.showError(this.blockedReason() ?? "The station cannot cash out now.");
      return;
    }
    if (!this.credits) {
      this.showError(stationErrorText("nothing_to_cash_out", ""));
      return;
    }
    this.cashOutBtn.disabled = true;
    this.send({ type: "cash_out" }, { kind: "cash_out" });
    window.setTimeout(() => this.render(), 3000); // the answer re-renders sooner
  }

  private toggleCall(): void {
    const on = !(this.status?.called ?? false);
    this.send({ type: "call_attendant", on }, { kind: "call" });
  }

  private async openRecall(): Promise<void> {
    if (!this.active) return;
    const reply = await this.conn.request({ type: "get_recall", table: this.active }).catch(() => null);
    if (reply?.type === "error") {
      this.showError(stationErrorText(reply.code, reply.message, ERROR_TEXT));
      return;
    }
    const rounds: RecalledRound[] = reply?.type === "recall" ? reply.rounds : [];
    showRecallDialog(rounds, cardElement);
  }

  // --- rendering ---------------------------------------------------------------------------

  private setCredits(value: number): void {
    if (this.credits !== null && value !== this.credits) {
      const d = value - this.credits;
      this.creditsDelta.textContent = money(d, { sign: true, cents: true });
      this.creditsDelta.className = `credits-delta show ${d > 0 ? "up" : "down"}`;
      window.clearTimeout(this.deltaTimer);
      this.deltaTimer = window.setTimeout(() => (this.creditsDelta.className = "credits-delta"), 2000);
    }
    this.credits = value;
    this.creditsEl.textContent = money(value, { cents: true });
    this.renderButtons();
  }

  private render(): void {
    const s = this.status;
    const open = this.conn.status === "open";
    this.connEl.className = `connection ${this.conn.status}`;
    this.connEl.setAttribute("aria-label", open ? "Connected" : "Reconnecting");
    if (s) {
      this.stationLabel.textContent = `Station ${s.station} · Seat ${s.seat}`;
      this.cardLabel.hidden = !s.player_card;
      this.cardLabel.textContent = s.player_card ? `Player card: ${s.player_card}` : "";
      this.ticketNote.textContent = s.last_ticket ? `Last ticket ${money(s.last_ticket.amount, { cents: true })} · expires ${formatWhen(s.last_ticket.expires_at)}` : "";
    }
    this.renderLock();
    this.renderButtons();
    const blocked = this.blockedReason();
    if (blocked !== this.lastBlocked) {
      this.lastBlocked = blocked;
      for (const t of this.tables.values()) t.refresh();
    }
  }

  private renderLock(): void {
    const s = this.status;
    let headline = "";
    let lines: string[] = [];
    let handpay: string | null = null;
    let call = "";
    if (this.conn.refused) {
      headline = "Station screen not signed in";
      lines = [stationErrorText(this.conn.refused.code, this.conn.refused.message)];
      call = "Call attendant";
    } else if (this.conn.status !== "open") {
      headline = "Reconnecting…";
      lines = ["This screen lost its connection to the table server."];
    } else if (s) {
      const banner = lockBanner(s);
      if (banner) {
        headline = banner.headline;
        lines = banner.reasons;
        handpay = banner.handpay;
        call = banner.call;
      }
    }
    const locked = headline !== "";
    const key = JSON.stringify([headline, lines, handpay, call, s?.called]);
    if (key === this.lockKey) return; // unchanged: do not announce it again
    this.lockKey = key;
    this.root.classList.toggle("locked", locked);
    this.lockEl.hidden = !locked;
    if (!locked) {
      this.lockEl.replaceChildren();
      return;
    }
    this.lockEl.replaceChildren(
      el(
        "div",
        { class: "lock-card" },
        el("h2", { class: "lock-headline", text: headline }),
        lines.length ? el("ul", { class: "lock-reasons", "data-testid": "lock-reasons" }, ...lines.map((l) => el("li", { text: l }))) : "",
        handpay ? el("p", { class: "lock-handpay", "data-testid": "handpay", text: handpay }) : "",
        call ? el("p", { class: `lock-call${s?.called ? " called" : ""}`, text: call }) : "",
      ),
    );
  }

  private renderButtons(): void {
    const s = this.status;
    const ready = this.conn.ready && s !== null;
    this.cashOutBtn.disabled = !ready || !s.enabled || !this.credits || [...this.pending.values()].some((p) => p.kind === "cash_out");
    this.callBtn.disabled = !ready;
    this.recallBtn.disabled = !this.conn.ready || !this.active;
    const called = s?.called ?? false;
    this.callBtn.setAttribute("aria-pressed", String(called));
    this.callBtn.classList.toggle("on", called);
    this.callBtn.replaceChildren(el("span", { text: "ATTENDANT CALL" }), el("small", { text: called ? "On — tap to cancel" : "Tap to call" }));
  }

  private showError(text: string): void {
    this.errorEl.textContent = text;
    this.errorEl.hidden = false;
    window.clearTimeout(this.errorTimer);
    this.errorTimer = window.setTimeout(() => (this.errorEl.hidden = true), 6000);
  }

  private showTicket(t: CashedOut): void {
    this.pending.forEach((p, ref) => p.kind === "cash_out" && this.pending.delete(ref));
    const ok = el("button", { type: "button", class: "btn big-btn primary", "data-testid": "ticket-ok", text: "OK" });
    const close = () => {
      this.ticketEl.hidden = true;
      window.clearTimeout(this.ticketTimer);
    };
    ok.addEventListener("click", close);
    this.ticketEl.replaceChildren(
      el(
        "div",
        { class: "ticket-card" },
        el("h2", { text: "Ticket printed" }),
        el("p", { class: "ticket-amount", text: money(t.amount, { cents: true }) }),
        el("p", { class: "ticket-line", "data-testid": "ticket-text", text: ticketText(t) }),
        el("p", { class: "muted", text: "Take your ticket from the printer." }),
        ok,
      ),
    );
    this.ticketEl.hidden = false;
    ok.focus();
    window.clearTimeout(this.ticketTimer);
    this.ticketTimer = window.setTimeout(close, 30_000);
    this.renderButtons();
  }
}
