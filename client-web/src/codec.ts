// Encode client messages and decode server messages: MessagePack maps tagged by `type`.
//
// The server omits fields left at their default (msgspec omit_defaults); `decodeServer` puts
// them back so a decoded message always has every field of its type in protocol.ts, and it
// refuses a frame that is not a map, has an unknown `type` or lacks a required field, so a
// client/server drift shows up as a clear error (and in the codec tests) rather than as
// `undefined` deep in the UI. `encodeClient` drops undefined/null optional fields, as the
// server's own encoder does, so the bytes match msgspec's for the same message.

import { decode, encode } from "@msgpack/msgpack";
import type { ClientMessage, ServerMessage } from "./protocol";
import { CLIENT_TYPES, SERVER_TYPES } from "./protocol";

export class CodecError extends Error {}

type FieldSpec = { required: string[]; defaults: Record<string, unknown> };

const SERVER_FIELDS: Record<ServerMessage["type"], FieldSpec> = {
  welcome: {
    required: ["version", "player_id", "name", "balance", "currency", "play_money", "token"],
    defaults: { station: null, ref: null },
  },
  notice: { required: ["code", "message"], defaults: { table: null, round: null } },
  lobby: { required: ["tables"], defaults: { ref: null } },
  event: { required: ["table", "seq", "round", "event", "data"], defaults: {} },
  joined: { required: ["table", "role", "snapshot"], defaults: { resumed: false, ref: null } },
  left: { required: ["table"], defaults: { ref: null } },
  bet_accepted: {
    required: ["table", "round", "bet_id", "spot", "amount", "balance"],
    defaults: { ref: null },
  },
  bet_cancelled: { required: ["table", "round", "bet_id", "balance"], defaults: { ref: null } },
  balance: { required: ["balance", "reason"], defaults: {} },
  recall: { required: ["rounds"], defaults: { ref: null } },
  rules: {
    required: ["table", "game", "variant", "summary", "paytables", "limits", "spots"],
    defaults: { main_spots: [], spot_limits: {}, boxed: false, seats: 0, ref: null },
  },
  pong: { required: ["nonce"], defaults: { ref: null } },
  error: { required: ["code", "message"], defaults: { value: null, ref: null } },
  station: {
    required: ["station", "seat", "tables", "credits", "enabled"],
    defaults: { locks: [], handpay: null, attendant: null, meters: null, called: false, player_card: null, last_ticket: null, ref: null },
  },
  cashed_out: { required: ["validation", "amount", "expires_at"], defaults: { ref: null } },
  winners: { required: ["table", "round", "wins"], defaults: {} },
};

const SUMMARY_DEFAULTS = { automated: false, boxed: false };
const SNAPSHOT_DEFAULTS = { seat: null };
const LOCK_DEFAULTS = { detail: "", present: false };

function isMap(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array);
}

/** Decode one binary frame from the server into a typed message with every field present. */
export function decodeServer(frame: ArrayBuffer | Uint8Array): ServerMessage {
  let raw: unknown;
  try {
    raw = decode(frame instanceof Uint8Array ? frame : new Uint8Array(frame));
  } catch (exc) {
    throw new CodecError(`not a MessagePack frame: ${(exc as Error).message}`);
  }
  if (!isMap(raw)) throw new CodecError("a frame must be a MessagePack map");
  const type = raw.type;
  if (typeof type !== "string" || !(SERVER_TYPES as readonly string[]).includes(type)) {
    throw new CodecError(`unknown server message type ${JSON.stringify(type)}`);
  }
  const spec = SERVER_FIELDS[type as ServerMessage["type"]];
  for (const field of spec.required) {
    if (!(field in raw)) throw new CodecError(`${type}: missing field ${field}`);
  }
  const message: Record<string, unknown> = { ...spec.defaults, ...raw };
  if (type === "lobby") {
    message.tables = (raw.tables as Record<string, unknown>[]).map((t) => ({ ...SUMMARY_DEFAULTS, ...t }));
  } else if (type === "joined") {
    message.snapshot = { ...SNAPSHOT_DEFAULTS, ...(raw.snapshot as Record<string, unknown>) };
  } else if (type === "station" && Array.isArray(raw.locks)) {
    message.locks = (raw.locks as Record<string, unknown>[]).map((l) => ({ ...LOCK_DEFAULTS, ...l }));
  }
  return message as unknown as ServerMessage;
}

/** Encode one client message; undefined and null optional fields are left out. */
export function encodeClient(message: ClientMessage): Uint8Array {
  if (!(CLIENT_TYPES as readonly string[]).includes(message.type)) {
    throw new CodecError(`unknown client message type ${JSON.stringify(message.type)}`);
  }
  const clean: Record<string, unknown> = {};
  // `type` first, as msgspec writes the tag first.
  clean.type = message.type;
  for (const [key, value] of Object.entries(message)) {
    if (key === "type" || value === undefined || value === null) continue;
    clean[key] = value;
  }
  return encode(clean);
}

/** Decode a client frame (for tests: the server's fixtures of client messages). */
export function decodeClient(frame: Uint8Array): ClientMessage {
  const raw = decode(frame);
  if (!isMap(raw) || typeof raw.type !== "string") throw new CodecError("not a client message");
  return raw as unknown as ClientMessage;
}

/** Encode a server message (for tests only: the client never sends these). */
export function encodeServer(message: ServerMessage): Uint8Array {
  return encode(message);
}
