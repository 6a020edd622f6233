// The wire messages, version 1 — a mirror of server/protocol/messages.py and docs/protocol.md.
//
// Every frame is one MessagePack map tagged by `type`. Fields left at their default are not
// sent (msgspec omit_defaults), so optional fields here are optional; `codec.ts` fills in the
// defaults on decode so the rest of the client can rely on them. Amounts are integers in
// minor units (cents).

export const PROTOCOL_VERSION = 1;
export const MAX_AMOUNT = 1e12;

// --- client → server -------------------------------------------------------------------------

export interface Hello {
  type: "hello";
  version: number;
  name?: string;
  token?: string;
  ref?: number;
}
export interface ListTables {
  type: "list_tables";
  ref?: number;
}
export type Role = "player" | "spectator";
export interface Join {
  type: "join";
  table: string;
  role?: Role;
  ref?: number;
}
export interface Resume {
  type: "resume";
  table: string;
  last_seq: number;
  role?: Role;
  ref?: number;
}
export interface Leave {
  type: "leave";
  table: string;
  ref?: number;
}
export interface PlaceBet {
  type: "place_bet";
  table: string;
  round: string;
  bet_id: string;
  spot: string;
  amount: number;
  ref?: number;
}
export interface CancelBet {
  type: "cancel_bet";
  table: string;
  round: string;
  bet_id: string;
  ref?: number;
}
export interface RepeatBets {
  type: "repeat_bets";
  table: string;
  round: string;
  bet_id_prefix: string;
  ref?: number;
}
export interface Decide {
  type: "decide";
  table: string;
  round: string;
  spot: string;
  decision: string;
  ref?: number;
}
export interface GetRecall {
  type: "get_recall";
  table?: string;
  ref?: number;
}
export interface GetRules {
  type: "get_rules";
  table: string;
  ref?: number;
}
export interface Ping {
  type: "ping";
  nonce: number;
  ref?: number;
}
// A player station's touchscreen (docs/protocol.md, "Player stations").
/** Cash out every credit: a ticket (`cashed_out`), or a handpay above the ticket limit. */
export interface CashOut {
  type: "cash_out";
  ref?: number;
}
/** The attendant call button: the tower light on (default) or off. */
export interface CallAttendant {
  type: "call_attendant";
  on?: boolean;
  ref?: number;
}
/** From the attendant menu, while the attendant key is turned. */
export interface AttendantAction {
  type: "attendant_action";
  action: "clear" | "handpay";
  ref?: number;
}

export type ClientMessage =
  | Hello
  | ListTables
  | Join
  | Resume
  | Leave
  | PlaceBet
  | CancelBet
  | RepeatBets
  | Decide
  | GetRecall
  | GetRules
  | Ping
  | CashOut
  | CallAttendant
  | AttendantAction;

export const CLIENT_TYPES = [
  "hello",
  "list_tables",
  "join",
  "resume",
  "leave",
  "place_bet",
  "cancel_bet",
  "repeat_bets",
  "decide",
  "get_recall",
  "get_rules",
  "ping",
  "cash_out",
  "call_attendant",
  "attendant_action",
] as const;

// --- server → client -------------------------------------------------------------------------

export interface Welcome {
  type: "welcome";
  version: number;
  player_id: string;
  name: string;
  balance: number;
  currency: string;
  play_money: boolean;
  token: string;
  /** A player station's touchscreen: the station's id (its `player_id` is `station:ID`). */
  station: string | null;
  ref?: number | null;
}
export interface Notice {
  type: "notice";
  code: string;
  message: string;
  table: string | null;
  round: string | null;
}
export interface TableSummary {
  table: string;
  name: string;
  game: string;
  variant: string;
  minimum: number;
  maximum: number;
  seats: number;
  seated: number;
  phase: string;
  closes_in_ms: number | null;
  last_results: string[];
  automated: boolean;
  /** Each seat is a betting box: `seats` boxes, one per player. */
  boxed: boolean;
  /** Its player stations only play it: anyone else may watch (absent from older servers). */
  stations_only?: boolean;
}
export interface Lobby {
  type: "lobby";
  tables: TableSummary[];
  ref?: number | null;
}
export interface TableEvent {
  type: "event";
  table: string;
  seq: number;
  round: string;
  event: string;
  data: Record<string, unknown>;
}
export interface BetRecord {
  bet_id: string;
  spot: string;
  amount: number;
}
export interface PendingDecision {
  spot: string;
  options: string[];
  default: string;
  closes_in_ms: number;
}
export interface TableSnapshot {
  table: string;
  seq: number;
  round: string | null;
  phase: string;
  closes_in_ms: number | null;
  cards: Record<string, string[]>;
  my_bets: BetRecord[];
  pending_decision: PendingDecision | null;
  meters: Record<string, number>;
  last_results: string[];
  seat: number | null;
  held?: { reason: string; options: string[] } | null;
}
export interface Joined {
  type: "joined";
  table: string;
  role: string;
  snapshot: TableSnapshot;
  resumed: boolean;
  ref?: number | null;
}
export interface Left {
  type: "left";
  table: string;
  ref?: number | null;
}
export interface BetAccepted {
  type: "bet_accepted";
  table: string;
  round: string;
  bet_id: string;
  spot: string;
  amount: number;
  balance: number;
  ref?: number | null;
}
export interface BetCancelled {
  type: "bet_cancelled";
  table: string;
  round: string;
  bet_id: string;
  balance: number;
  ref?: number | null;
}
export interface BalanceChanged {
  type: "balance";
  balance: number;
  reason: string;
}
export interface RecalledWager {
  bet_id: string;
  spot: string;
  amount: number;
  result?: string;
  returned?: number;
}
export interface RecalledRound {
  table: string;
  round: string;
  game: string;
  result: string;
  cards: Record<string, string[]>;
  wagers: RecalledWager[];
  wagered: number;
  returned: number;
  balance_after: number | null;
  awarded: number;
}
export interface Recall {
  type: "recall";
  rounds: RecalledRound[];
  ref?: number | null;
}
export interface Rules {
  type: "rules";
  table: string;
  game: string;
  variant: string;
  summary: string;
  paytables: Record<string, unknown>;
  limits: Record<string, number>;
  spots: string[];
  main_spots: string[];
  spot_limits: Record<string, Record<string, number>>;
  /** Each seat is a betting box; a player bets in their own box only. */
  boxed: boolean;
  /** The table's seats (boxes, where `boxed`). */
  seats: number;
  ref?: number | null;
}
export interface Pong {
  type: "pong";
  nonce: number;
  ref?: number | null;
}
export interface ErrorMessage {
  type: "error";
  code: string;
  message: string;
  value: unknown;
  ref?: number | null;
}

/** Why a station is locked; `since` is ISO 8601 (UTC); `present`: the cause is still there. */
export interface StationLock {
  cause: string;
  since: string;
  detail: string;
  present: boolean;
}
/** A handpay waiting for an attendant: a jackpot, or credits above the ticket limit. */
export interface Handpay {
  amount: number;
  kind: "jackpot" | "cancelled_credits" | string;
  round?: string | null;
}
export interface TicketInfo {
  validation: string;
  amount: number;
  expires_at: string;
}
/** Meter name → amount (minor units) or count; `bills_in` is denomination → count. */
export type StationMeters = Record<string, number | Record<string, number> | unknown>;
/** A player station's state: after the welcome and whenever any of it changes. */
export interface StationStatus {
  type: "station";
  station: string;
  seat: number;
  tables: string[];
  credits: number;
  enabled: boolean;
  locks: StationLock[];
  handpay: Handpay | null;
  /** The attendant's id while the attendant key is turned (the attendant menu is open). */
  attendant: string | null;
  /** Only while the attendant key is turned. */
  meters: StationMeters | null;
  /** The attendant call (tower light) is on. */
  called: boolean;
  player_card: string | null;
  last_ticket: TicketInfo | null;
  ref?: number | null;
}
/** A cash-out ticket was issued (the station's printer prints it). */
export interface CashedOut {
  type: "cashed_out";
  validation: string;
  amount: number;
  expires_at: string;
  ref?: number | null;
}
export interface SeatWin {
  seat: number;
  amount: number;
}
/** After each round at a table with stations: what each seat was paid back, largest first. */
export interface Winners {
  type: "winners";
  table: string;
  round: string;
  wins: SeatWin[];
}

export type ServerMessage =
  | Welcome
  | Notice
  | Lobby
  | TableEvent
  | Joined
  | Left
  | BetAccepted
  | BetCancelled
  | BalanceChanged
  | Recall
  | Rules
  | Pong
  | ErrorMessage
  | StationStatus
  | CashedOut
  | Winners;

export const SERVER_TYPES = [
  "welcome",
  "notice",
  "lobby",
  "event",
  "joined",
  "left",
  "bet_accepted",
  "bet_cancelled",
  "balance",
  "recall",
  "rules",
  "pong",
  "error",
  "station",
  "cashed_out",
  "winners",
] as const;

// --- table event payloads (the `data` of an `event`) -----------------------------------------

export interface WagerData {
  bet_id: string;
  player_id: string;
  spot: string;
  amount: number;
}
export interface Settlement {
  wager: WagerData;
  outcome: { result: string; net: string };
  returned: number;
}
