// One WebSocket to the server: hello (with the saved token to come back as the same player),
// ping/pong latency, request/reply by `ref`, and automatic reconnect with backoff.
//
// Who says hello depends on the page (see `Identity`): a player keeps the server's token in
// localStorage; a player station's touchscreen says hello with the token in its URL fragment
// (`/station/ID#token=…`) and stores nothing; the big screen above a table says hello by name
// (or with a fragment token under operator auth) and keeps its token in memory only.

import { decodeServer, encodeClient } from "./codec";
import type { ClientMessage, ServerMessage, Welcome } from "./protocol";
import { PROTOCOL_VERSION } from "./protocol";

export type Status = "connecting" | "open" | "reconnecting";

/** What to tell a player while the connection is not open; `null` once it is. */
export type Notice = { title: string; detail: string; failed: boolean };

/**
 * The words for the connection's state, for the lobby (and the header's short form): a first
 * connection still on its way, one that has failed (retrying in `retryInMs`), or one that
 * dropped after working.
 */
export function connectionNotice(status: Status, connectedBefore: boolean, retryInMs: number | null, attempts: number): Notice | null {
  if (status === "open") return null;
  const retry = retryInMs === null || retryInMs <= 0 ? "Retrying now…" : `Retrying in ${Math.ceil(retryInMs / 1000)} s…`;
  if (status === "connecting") {
    return { title: "Connecting to the table server…", detail: "The tables appear as soon as it answers.", failed: false };
  }
  if (!connectedBefore) {
    const tries = attempts === 1 ? "1 attempt has" : `${attempts} attempts have`;
    return { title: "Cannot reach the table server", detail: `${retry} ${tries} failed so far.`, failed: true };
  }
  return { title: "Connection lost — reconnecting…", detail: `${retry} The lobby updates again once it is back.`, failed: true };
}

/**
 * How a page says hello.
 * - `player`: the token saved in localStorage (the server's last `welcome.token`), else a
 *   guest name; a refused saved token is forgotten and the player starts again by name.
 * - `station`: always the token from the URL fragment, never a name, never localStorage.
 * - `display`: the fragment token if there is one, else `name` (demo mode); the server's
 *   token is kept in memory for reconnects only.
 */
export type Identity = { kind: "player" } | { kind: "station"; token: string } | { kind: "display"; name: string; token: string | null };

/** The `key=value&…` pairs of a URL fragment ("#token=abc&x=1"), decoded. */
export function parseFragment(hash: string): Record<string, string> {
  const out: Record<string, string> = {};
  const text = hash.startsWith("#") ? hash.slice(1) : hash;
  for (const part of text.split("&")) {
    if (!part) continue;
    const eq = part.indexOf("=");
    const rawKey = eq < 0 ? part : part.slice(0, eq);
    const rawValue = eq < 0 ? "" : part.slice(eq + 1);
    try {
      out[decodeURIComponent(rawKey)] = decodeURIComponent(rawValue);
    } catch {
      // A malformed %-escape: keep the text as it is.
      out[rawKey] = rawValue;
    }
  }
  return out;
}

/** The `token` of a URL fragment (`#token=…`), or null when there is none or it is empty. */
export function fragmentToken(hash: string): string | null {
  const token = parseFragment(hash).token?.trim();
  return token ? token : null;
}

/**
 * A player page opened by an operator's platform with the player's token (`/#token=…`, the
 * game's launch URL under operator auth): that token is the player's from now on, kept like
 * the server's `welcome.token`. True when there was one (the caller clears the fragment, so
 * the token does not stay in the address bar or the history).
 */
export function adoptLaunchToken(hash: string): boolean {
  const token = fragmentToken(hash);
  if (!token) return false;
  localStorage.setItem(TOKEN_KEY, token);
  return true;
}

type Pending = { resolve: (m: ServerMessage) => void; reject: (e: Error) => void; timer: number };

const TOKEN_KEY = "croupier.token";
const NAME_KEY = "croupier.name";
const PING_EVERY_MS = 2000;
const DEAD_AFTER_MS = 7000;

export class Connection {
  status: Status = "connecting";
  latencyMs: number | null = null;
  welcome: Welcome | null = null;
  private ws: WebSocket | null = null;
  private nextRef = 1;
  private pending = new Map<number, Pending>();
  private pings = new Map<number, number>();
  private lastPong = 0;
  private pingTimer = 0;
  private retry = 0;
  private listeners = new Set<(m: ServerMessage) => void>();
  private statusListeners = new Set<() => void>();
  private readyListeners = new Set<(w: Welcome, again: boolean) => void>();
  private welcomedBefore = false;
  /** Failed or dropped connections since the last `welcome`. */
  failures = 0;
  /** When the next attempt starts (performance.now() milliseconds), while waiting for it. */
  retryAt: number | null = null;

  /** The last hello was refused (`bad_token`, `token_required`): a station's token is stale. */
  refused: { code: string; message: string } | null = null;
  private memoryToken: string | null = null;

  constructor(
    private url: string,
    readonly identity: Identity = { kind: "player" },
  ) {}

  /** A player page the server refused for want of a token: it admits operator players only. */
  get signedOut(): boolean {
    return this.identity.kind === "player" && this.refused?.code === "token_required";
  }

  /** True once the server has welcomed us at least once (a drop is then a reconnect). */
  get connectedBefore(): boolean {
    return this.welcomedBefore;
  }

  /** What to tell the player now (see `connectionNotice`); a player the server refused for
   * want of a token (operator auth) is told to come through the casino's site, which opens
   * the game with one (`/#token=…`). */
  notice(): Notice | null {
    if (this.status !== "open" && this.signedOut) {
      return {
        title: "Sign in at your casino to play",
        detail: "This table server takes players signed in by their casino: open the game from your casino account.",
        failed: true,
      };
    }
    const retryIn = this.retryAt === null ? null : this.retryAt - performance.now();
    return connectionNotice(this.status, this.welcomedBefore, retryIn, this.failures);
  }

  start(): void {
    this.open();
  }

  onMessage(listener: (m: ServerMessage) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  onStatus(listener: () => void): () => void {
    this.statusListeners.add(listener);
    return () => this.statusListeners.delete(listener);
  }
  /** Called after each `welcome`; `again` is true after a reconnect. */
  onReady(listener: (w: Welcome, again: boolean) => void): () => void {
    this.readyListeners.add(listener);
    return () => this.readyListeners.delete(listener);
  }

  get ready(): boolean {
    return this.status === "open" && this.welcome !== null;
  }

  send(message: ClientMessage): number {
    const ref = this.nextRef++;
    const framed = { ...message, ref };
    if (this.ws && this.ws.readyState === WebSocket.OPEN) this.ws.send(encodeClient(framed));
    return ref;
  }

  /** Send and wait for the reply with the same `ref` (an `error` reply resolves too). */
  request(message: ClientMessage, timeoutMs = 8000): Promise<ServerMessage> {
    return new Promise((resolve, reject) => {
      const ref = this.send(message);
      const timer = window.setTimeout(() => {
        this.pending.delete(ref);
        reject(new Error(`no reply to ${message.type}`));
      }, timeoutMs);
      this.pending.set(ref, { resolve, reject, timer });
    });
  }

  /** Close the socket as if the network dropped (used by the "reconnect" control). */
  drop(): void {
    this.ws?.close();
  }

  private setStatus(status: Status): void {
    this.status = status;
    for (const l of this.statusListeners) l();
  }

  private open(): void {
    this.retryAt = null;
    const ws = new WebSocket(this.url);
    ws.binaryType = "arraybuffer";
    this.ws = ws;
    ws.onopen = () => {
      ws.send(encodeClient({ ...this.hello(), ref: 0 }));
    };
    ws.onmessage = (ev) => {
      if (!(ev.data instanceof ArrayBuffer)) return;
      let message: ServerMessage;
      try {
        message = decodeServer(ev.data);
      } catch (exc) {
        console.error("bad frame from server", exc);
        return;
      }
      this.dispatch(message, ws);
    };
    ws.onclose = () => {
      if (this.ws !== ws) return;
      this.ws = null;
      this.welcome = null;
      window.clearInterval(this.pingTimer);
      this.latencyMs = null;
      for (const [, p] of this.pending) {
        window.clearTimeout(p.timer);
        p.reject(new Error("connection closed"));
      }
      this.pending.clear();
      const delay = Math.min(3000, 250 * 2 ** this.retry) * (0.75 + Math.random() * 0.5);
      this.retry += 1;
      this.failures += 1;
      this.retryAt = performance.now() + delay;
      this.setStatus("reconnecting");
      window.setTimeout(() => this.open(), delay);
    };
  }

  private dispatch(message: ServerMessage, ws: WebSocket): void {
    if (message.type === "welcome") {
      this.welcome = message;
      this.refused = null;
      this.remember(message.token);
      this.retry = 0;
      this.failures = 0;
      this.setStatus("open");
      this.startPings(ws);
      const again = this.welcomedBefore;
      this.welcomedBefore = true;
      for (const l of this.readyListeners) l(message, again);
      return;
    }
    if (message.type === "error" && !this.welcome && (message.code === "bad_token" || message.code === "token_required")) {
      this.refused = { code: message.code, message: message.message };
      if (this.identity.kind === "player") {
        // The saved token is from another server (or a reset one): start as a new player.
        localStorage.removeItem(TOKEN_KEY);
      } else if (this.identity.kind === "display") {
        this.memoryToken = null;
      } else {
        // A station's token is for one session of the station: say so, and keep trying (the
        // station's agent opens the screen again with a new token after a restart).
        for (const l of this.listeners) l(message);
      }
      ws.close();
      return;
    }
    if (message.type === "pong") {
      const sent = this.pings.get(message.nonce);
      if (sent !== undefined) {
        this.pings.delete(message.nonce);
        this.latencyMs = Math.round(performance.now() - sent);
        this.lastPong = performance.now();
        for (const l of this.statusListeners) l();
      }
      return;
    }
    const ref = "ref" in message ? message.ref : null;
    if (typeof ref === "number" && this.pending.has(ref)) {
      const p = this.pending.get(ref)!;
      this.pending.delete(ref);
      window.clearTimeout(p.timer);
      p.resolve(message);
    }
    for (const l of this.listeners) l(message);
  }

  private startPings(ws: WebSocket): void {
    window.clearInterval(this.pingTimer);
    this.lastPong = performance.now();
    const ping = () => {
      if (ws.readyState !== WebSocket.OPEN) return;
      if (performance.now() - this.lastPong > DEAD_AFTER_MS) {
        ws.close(); // no answer: treat the connection as dead and reconnect
        return;
      }
      const nonce = Math.floor(Date.now() * 1000 + Math.random() * 1000) % 2 ** 53;
      this.pings.set(nonce, performance.now());
      ws.send(encodeClient({ type: "ping", nonce }));
    };
    ping();
    this.pingTimer = window.setInterval(ping, PING_EVERY_MS);
  }

  /** The hello for this page (see `Identity`). */
  private hello(): ClientMessage {
    const id = this.identity;
    if (id.kind === "station") return { type: "hello", version: PROTOCOL_VERSION, token: id.token };
    if (id.kind === "display") {
      const token = id.token ?? this.memoryToken;
      return token ? { type: "hello", version: PROTOCOL_VERSION, token } : { type: "hello", version: PROTOCOL_VERSION, name: id.name };
    }
    const token = localStorage.getItem(TOKEN_KEY);
    return token ? { type: "hello", version: PROTOCOL_VERSION, token } : { type: "hello", version: PROTOCOL_VERSION, name: this.playerName() };
  }

  /** Keep the server's token for the next hello: a player's in localStorage, a display's in
   * memory; a station's never (it always uses the token its agent gave the screen). */
  private remember(token: string): void {
    if (this.identity.kind === "player") localStorage.setItem(TOKEN_KEY, token);
    else if (this.identity.kind === "display") this.memoryToken = token;
  }

  private playerName(): string {
    let name = localStorage.getItem(NAME_KEY);
    if (!name) {
      name = `Guest ${Math.floor(1000 + Math.random() * 9000)}`;
      localStorage.setItem(NAME_KEY, name);
    }
    return name;
  }
}
