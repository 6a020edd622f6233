// The attendant menu of a player station: open while the attendant key is turned (the
// `station` message names the `attendant` and carries the `meters`), closed when it is turned
// back. It shows the station's meters and locks and offers "Clear locks" and, while a handpay
// is pending, "Handpay paid" (`attendant_action`).

import { el, money } from "./format";
import type { StationStatus } from "./protocol";
import { formatWhen, handpayText, lockRows, meterRows } from "./station-text";

export class AttendantMenu {
  readonly root = el("div", {
    class: "attendant-overlay",
    role: "dialog",
    "aria-modal": "true",
    "aria-labelledby": "attendant-title",
    hidden: true,
    "data-testid": "attendant-menu",
  });
  private title = el("h2", { id: "attendant-title" });
  private facts = el("dl", { class: "attendant-facts" });
  private metersBody = el("tbody");
  private locksBox = el("div", { class: "attendant-locks" });
  private message = el("p", { class: "attendant-message", role: "status", "aria-live": "polite" });
  private clearBtn = el("button", { type: "button", class: "btn big-btn", "data-testid": "attendant-clear", text: "Clear locks" });
  private handpayBtn = el("button", { type: "button", class: "btn big-btn primary", "data-testid": "attendant-handpay", text: "Handpay paid" });
  private attendant: string | null = null;

  constructor(private act: (action: "clear" | "handpay") => void) {
    this.root.append(
      el(
        "div",
        { class: "attendant-sheet" },
        el("header", { class: "attendant-head" }, this.title, el("span", { class: "muted", text: "Turn the key back to close" })),
        this.facts,
        el(
          "div",
          { class: "attendant-cols" },
          el("section", { class: "panel" }, el("h3", { text: "Meters" }), el("table", { class: "meters-table", "data-testid": "attendant-meters" }, this.metersBody)),
          el("section", { class: "panel" }, el("h3", { text: "Locks" }), this.locksBox),
        ),
        this.message,
        el("div", { class: "attendant-actions" }, this.clearBtn, this.handpayBtn),
      ),
    );
    this.clearBtn.addEventListener("click", () => this.send("clear"));
    this.handpayBtn.addEventListener("click", () => this.send("handpay"));
  }

  private send(action: "clear" | "handpay"): void {
    this.say(action === "clear" ? "Clearing locks…" : "Recording the handpay…");
    this.act(action);
  }

  /** A line under the tables: the answer to the last action (an error, or what it did). */
  say(text: string, kind: "info" | "error" = "info"): void {
    this.message.textContent = text;
    this.message.classList.toggle("error", kind === "error");
  }

  get open(): boolean {
    return this.attendant !== null;
  }

  update(s: StationStatus): void {
    const was = this.attendant;
    this.attendant = s.attendant;
    this.root.hidden = s.attendant === null;
    if (s.attendant === null) {
      this.say("");
      return;
    }
    if (was !== s.attendant) this.say("");
    this.title.textContent = `Attendant menu — ${s.attendant}`;
    const fact = (term: string, value: string) => el("div", { class: "fact" }, el("dt", { text: term }), el("dd", { text: value }));
    this.facts.replaceChildren(
      fact("Station", `${s.station} · seat ${s.seat}`),
      fact("Tables", s.tables.join(", ")),
      fact("Credits", money(s.credits, { cents: true })),
      fact("State", s.enabled ? "Enabled" : "Disabled"),
      fact("Attendant call", s.called ? "On" : "Off"),
      fact("Player card", s.player_card ?? "—"),
      fact("Handpay", s.handpay ? handpayText(s.handpay) : "None"),
      fact(
        "Last ticket",
        s.last_ticket ? `${money(s.last_ticket.amount, { cents: true })} · ${s.last_ticket.validation} · expires ${formatWhen(s.last_ticket.expires_at)}` : "—",
      ),
    );
    const rows = meterRows(s.meters);
    this.metersBody.replaceChildren(
      ...(rows.length
        ? rows.map((r) => el("tr", { "data-meter": r.name }, el("th", { scope: "row", text: r.label }), el("td", { text: r.value })))
        : [el("tr", {}, el("td", { colspan: 2, class: "muted", text: "No meters sent." }))]),
    );
    const locks = lockRows(s.locks);
    this.locksBox.replaceChildren(
      locks.length
        ? el(
            "table",
            { class: "locks-table", "data-testid": "attendant-locks" },
            el("thead", {}, el("tr", {}, el("th", { text: "Lock" }), el("th", { text: "Since" }), el("th", { text: "Cause" }))),
            el(
              "tbody",
              {},
              ...locks.map((l) =>
                el(
                  "tr",
                  { class: l.present ? "present" : "gone", "data-cause": l.cause },
                  el("td", { text: l.reason }),
                  el("td", { text: l.since }),
                  el("td", { class: l.present ? "lose" : "win", text: l.state }),
                ),
              ),
            ),
          )
        : el("p", { class: "muted", text: "No locks." }),
    );
    this.clearBtn.disabled = locks.length === 0;
    this.clearBtn.title = locks.some((l) => l.present) ? "Locks whose cause is still present stay" : "";
    this.handpayBtn.hidden = s.handpay === null;
    if (s.handpay) this.handpayBtn.textContent = `Handpay paid (${money(s.handpay.amount, { cents: true })})`;
  }
}
