// What a player station's touchscreen and its attendant menu say, from the `station`,
// `cashed_out` and `winners` messages (docs/protocol.md, "Player stations"): lock reasons in
// plain words, the handpay line, the ticket, the meters as an attendant reads them, and the
// "last winners" of the big screen. Pure functions (no DOM), tested in test/station-text.test.ts.

import { money } from "./format";
import type { Handpay, SeatWin, StationLock, StationMeters, StationStatus, TicketInfo, Winners } from "./protocol";

/** A lock's cause in plain words; an unknown cause is shown as its code. */
export const LOCK_TEXT: Record<string, string> = {
  door_open: "Main door open",
  cash_box_open: "Cash box door open",
  tilt: "Tilt",
  connection: "Connection to the server lost",
  heartbeat: "Station not answering (heartbeat)",
  self_test: "Self-test failed",
  critical_memory: "Critical memory check failed",
  memory: "Station memory fault",
  printer: "Ticket printer fault",
  bill_validator: "Bill validator fault",
};

export function lockReason(cause: string): string {
  return LOCK_TEXT[cause] ?? cause;
}

/** A lock with its detail, if the station gave one: "Ticket printer fault (paper out)". */
export function lockLine(lock: Pick<StationLock, "cause" | "detail">): string {
  const detail = lock.detail?.trim();
  return detail ? `${lockReason(lock.cause)} (${detail})` : lockReason(lock.cause);
}

/** The pending handpay as the player reads it. */
export function handpayText(handpay: Pick<Handpay, "amount" | "kind">): string {
  const amount = money(handpay.amount, { cents: true });
  if (handpay.kind === "cancelled_credits") return `Cash out above the ticket limit — an attendant will pay ${amount}`;
  return `HANDPAY ${amount} — an attendant will pay you`;
}

export interface LockBanner {
  headline: string;
  /** One line per lock (each cause once), in plain words. */
  reasons: string[];
  /** The handpay line, while one is pending. */
  handpay: string | null;
  /** What to do: call the attendant (or that the call is on). */
  call: string;
}

/**
 * What the lock overlay says while the station is not enabled (null while it is): why — the
 * locks, a handpay — or "Station not ready" when the server names no reason (e.g. waiting
 * for the station's self-test).
 */
export function lockBanner(status: Pick<StationStatus, "enabled" | "locks" | "handpay" | "called">): LockBanner | null {
  if (status.enabled) return null;
  const seen = new Set<string>();
  const reasons: string[] = [];
  for (const lock of status.locks) {
    if (seen.has(lock.cause)) continue;
    seen.add(lock.cause);
    reasons.push(lockLine(lock));
  }
  const handpay = status.handpay ? handpayText(status.handpay) : null;
  const headline = reasons.length ? "Station locked" : handpay ? "Handpay pending" : "Station not ready";
  const call = status.called ? "Attendant called — please wait" : "Call attendant";
  return { headline, reasons, handpay, call };
}

/** An ISO 8601 time in the screen's words: "Aug 1, 2025, 12:00 AM" (as given if unreadable). */
export function formatWhen(iso: string, timeZone?: string): string {
  const t = Date.parse(iso);
  if (!Number.isFinite(t)) return iso;
  return new Date(t).toLocaleString("en-US", { dateStyle: "medium", timeStyle: "short", timeZone });
}

/** The cash-out ticket: "Ticket printed: $200.00, validation 0012…, expires Aug 1, 2025, …". */
export function ticketText(ticket: TicketInfo, timeZone?: string): string {
  return `Ticket printed: ${money(ticket.amount, { cents: true })}, validation ${ticket.validation}, expires ${formatWhen(ticket.expires_at, timeZone)}`;
}

// --- meters (the attendant menu) -------------------------------------------------------------

type MeterKind = "money" | "count" | "bills";

/** The meters the server keeps for a station, in the order an attendant reads them. */
export const METERS: [name: string, label: string, kind: MeterKind][] = [
  ["credits_in", "Credits in", "money"],
  ["credits_out", "Credits out", "money"],
  ["wagered", "Wagered", "money"],
  ["won", "Won", "money"],
  ["games_played", "Games played", "count"],
  ["games_won", "Games won", "count"],
  ["bills_in", "Bills in", "bills"],
  ["bills_in_amount", "Bills in, amount", "money"],
  ["tickets_in", "Tickets in", "count"],
  ["tickets_in_amount", "Tickets in, amount", "money"],
  ["tickets_out", "Tickets out", "count"],
  ["tickets_out_amount", "Tickets out, amount", "money"],
  ["tickets_voided", "Tickets voided", "count"],
  ["tickets_voided_amount", "Tickets voided, amount", "money"],
  ["handpays", "Handpays", "count"],
  ["handpays_amount", "Handpays, amount", "money"],
  ["cancelled_credits", "Cancelled credits", "count"],
  ["cancelled_credits_amount", "Cancelled credits, amount", "money"],
  // Not a counter: the credits now, which the others reconcile with (sent with the meters).
  ["credits", "Credits now", "money"],
];

export interface MeterRow {
  name: string;
  label: string;
  value: string;
}

function humanName(name: string): string {
  const words = name.replace(/_/g, " ").trim();
  return words ? words[0].toUpperCase() + words.slice(1) : name;
}

function count(n: number): string {
  return n.toLocaleString("en-US");
}

/** Bills by denomination (minor units → count): "$20 × 2, $100 × 1 (total $140.00)". */
export function billsText(bills: Record<string, unknown>): string {
  const entries = Object.entries(bills)
    .map(([denomination, n]) => [Number(denomination), Number(n)] as const)
    .filter(([d, n]) => Number.isFinite(d) && Number.isFinite(n))
    .sort((a, b) => a[0] - b[0]);
  if (!entries.length) return "none";
  const total = entries.reduce((t, [d, n]) => t + d * n, 0);
  return `${entries.map(([d, n]) => `${money(d)} × ${count(n)}`).join(", ")} (total ${money(total, { cents: true })})`;
}

/** A meter the client does not know: numbers as numbers, maps as "key: value" lists. */
function genericValue(value: unknown): string {
  if (value === null || value === undefined) return "—";
  if (typeof value === "number") return count(value);
  if (typeof value === "boolean") return value ? "Yes" : "No";
  if (typeof value === "string") return value;
  if (Array.isArray(value)) return value.map(genericValue).join(", ");
  if (typeof value === "object") {
    const parts = Object.entries(value as Record<string, unknown>).map(([k, v]) => `${k}: ${genericValue(v)}`);
    return parts.length ? parts.join(", ") : "—";
  }
  return String(value);
}

function meterValue(kind: MeterKind, value: unknown): string {
  if (kind === "bills") return value && typeof value === "object" && !Array.isArray(value) ? billsText(value as Record<string, unknown>) : genericValue(value);
  if (typeof value !== "number") return genericValue(value);
  return kind === "money" ? money(value, { cents: true }) : count(value);
}

/**
 * The station's meters as rows for the attendant: the known ones in their order (amounts as
 * money, counts as numbers, bills by denomination), then any other the server sends, shown
 * generically (an `…_amount` one as money).
 */
export function meterRows(meters: StationMeters | null | undefined): MeterRow[] {
  if (!meters) return [];
  const rows: MeterRow[] = [];
  const known = new Set<string>();
  for (const [name, label, kind] of METERS) {
    known.add(name);
    if (name in meters) rows.push({ name, label, value: meterValue(kind, meters[name]) });
  }
  for (const [name, value] of Object.entries(meters)) {
    if (known.has(name)) continue;
    const kind: MeterKind = name.endsWith("_amount") ? "money" : "count";
    rows.push({ name, label: humanName(name), value: meterValue(kind, value) });
  }
  return rows;
}

export interface LockRow {
  cause: string;
  reason: string;
  since: string;
  /** "Present" while the cause is still there (it cannot be cleared), else "Gone — can be cleared". */
  state: string;
  present: boolean;
}

export function lockRows(locks: StationLock[], timeZone?: string): LockRow[] {
  return locks.map((l) => ({
    cause: l.cause,
    reason: lockLine(l),
    since: formatWhen(l.since, timeZone),
    state: l.present ? "Present" : "Gone — can be cleared",
    present: l.present,
  }));
}

// --- errors ----------------------------------------------------------------------------------

/** What a station's touchscreen says for an `error` (the server's message where it says why). */
export const STATION_ERROR_TEXT: Record<string, string> = {
  stations_only: "This table takes bets from its player stations only.",
  not_a_station: "This screen is not signed in as a player station.",
  attendant_key_required: "Turn the attendant key first.",
  fault_present: "A fault is still present — it must be fixed before the lock is cleared.",
  nothing_to_clear: "There is no lock to clear.",
  no_handpay: "There is no handpay pending.",
  nothing_to_cash_out: "There are no credits to cash out.",
  insufficient_funds: "Not enough credits for that bet.",
  bad_token: "This screen's station token was refused. Waiting for the station to open the screen again…",
  token_required: "This screen has no station token. Waiting for the station to open the screen again…",
};

export function stationErrorText(code: string, message: string, fallback: Record<string, string> = {}): string {
  if (code === "station_locked") return message ? `Station locked — ${message}` : "The station is locked.";
  return STATION_ERROR_TEXT[code] ?? fallback[code] ?? message ?? code;
}

// --- the big screen: last winners ------------------------------------------------------------

export interface WinnerEntry {
  round: string;
  seat: number;
  amount: number;
}

export function winnerLine(win: SeatWin): string {
  return `Seat ${win.seat} · ${money(win.amount, { cents: true })}`;
}

/**
 * The last winners, newest round first (within a round, as the server sends them: largest
 * first), at most `max`; a round already listed (a repeat after a reconnect) is not added twice.
 */
export function addWinners(list: WinnerEntry[], message: Pick<Winners, "round" | "wins">, max = 10): WinnerEntry[] {
  if (list.some((w) => w.round === message.round)) return list;
  const fresh = message.wins.filter((w) => w.amount > 0).map((w) => ({ round: message.round, seat: w.seat, amount: w.amount }));
  return [...fresh, ...list].slice(0, max);
}
