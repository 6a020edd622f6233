// The app shell: header (balance, play-money label, connection with latency), routing between
// the lobby (/) and a table (/table/ID, ?watch=1 to watch as a spectator).

import "./style.css";
import { Connection } from "./connection";
import { el, money } from "./format";
import { LobbyView } from "./lobby";
import { TableView } from "./table";

const wsUrl = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws`;
const conn = new Connection(wsUrl);

const balanceEl = el("strong", { class: "balance", "data-testid": "balance", "aria-live": "polite", text: "—" });
const deltaEl = el("span", { class: "balance-delta", "aria-hidden": "true" });
const playMoney = el("span", { class: "play-money", hidden: true, text: "Play money" });
const who = el("span", { class: "who" });
const connDot = el("span", { class: "dot", "aria-hidden": "true" });
const connText = el("span", { class: "conn-text", "data-testid": "connection", text: "Connecting…" });
const connEl = el("div", { class: "connection connecting", role: "status", "aria-live": "polite" }, connDot, connText);

const header = el(
  "header",
  { class: "app-header" },
  el("a", { class: "skip", href: "#main", text: "Skip to content" }),
  el("a", { class: "brand", href: "/", "aria-label": "Croupier — lobby" }, el("span", { class: "brand-mark", "aria-hidden": "true", text: "♠" }), "Croupier"),
  el("div", { class: "account" }, who, el("span", { class: "balance-wrap" }, el("span", { class: "muted", text: "Balance " }), balanceEl, deltaEl), playMoney),
  connEl,
);
const outlet = el("div", { class: "outlet" });
document.body.append(header, outlet);

let balance: number | null = null;
function setBalance(value: number, _delta?: number): void {
  if (balance !== null && value !== balance) {
    const d = value - balance;
    deltaEl.textContent = money(d, { sign: true });
    deltaEl.className = `balance-delta show ${d > 0 ? "up" : "down"}`;
    window.setTimeout(() => (deltaEl.className = "balance-delta"), 1800);
  }
  balance = value;
  balanceEl.textContent = money(value);
}

function renderConnection(): void {
  const s = conn.status;
  connEl.className = `connection ${s}`;
  const short = s === "connecting" ? "Connecting…" : conn.connectedBefore ? "Reconnecting…" : "Cannot connect · retrying";
  connText.textContent = s === "open" ? `Connected${conn.latencyMs !== null ? ` · ${conn.latencyMs} ms` : ""}` : short;
  connEl.title = s === "open" ? "Round-trip latency to the table server" : (conn.notice()?.title ?? "");
}
conn.onStatus(renderConnection);
conn.onReady((w) => {
  setBalance(w.balance);
  playMoney.hidden = !w.play_money;
  who.textContent = w.name;
});
conn.onMessage((m) => {
  if (m.type === "balance") setBalance(m.balance);
});

type View = { root: HTMLElement; mount(): void; unmount(): void };
let current: View | null = null;

function route(): void {
  current?.unmount();
  const path = location.pathname;
  const m = /^\/table\/([^/]+)\/?$/.exec(path);
  if (m) {
    const watch = new URLSearchParams(location.search).get("watch") === "1";
    current = new TableView(conn, decodeURIComponent(m[1]), watch, go, setBalance);
  } else {
    document.title = "Lobby · Croupier";
    current = new LobbyView(conn, go);
  }
  outlet.replaceChildren(current.root);
  current.mount();
  window.scrollTo(0, 0);
}

function go(path: string): void {
  history.pushState(null, "", path);
  route();
}

header.querySelector(".brand")!.addEventListener("click", (ev) => {
  ev.preventDefault();
  go("/");
});
window.addEventListener("popstate", route);

// For the end-to-end tests and support: the connection, read-only.
(window as unknown as { croupier: unknown }).croupier = { conn };

route();
conn.start();
