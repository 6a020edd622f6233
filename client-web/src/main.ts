// The app shell. Three kinds of page, chosen once from the URL (routes.ts):
// - the web client: header (balance, play-money label, connection with latency) and routing
//   between the lobby (/) and a table (/table/ID, ?watch=1 to watch as a spectator); an
//   operator's platform opens it with the player's token in the fragment (/#token=JWT);
// - a player station's touchscreen (/station/ID#token=TOKEN): full screen, no header, bound
//   to the station (station.ts);
// - the big screen above a table (/display/ID): full screen, a spectator (display.ts).

import "./style.css";
import { adoptLaunchToken, Connection, fragmentToken } from "./connection";
import type { Identity } from "./connection";
import { DisplayView } from "./display";
import { el, money, setCurrency } from "./format";
import { LobbyView } from "./lobby";
import { parseRoute } from "./routes";
import { StationView } from "./station";
import { TableView } from "./table";

const wsUrl = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws`;
const first = parseRoute(location.pathname);

type View = { root: HTMLElement; mount(): void; unmount(): void };

function expose(conn: Connection): void {
  // For the end-to-end tests and support: the connection, read-only.
  (window as unknown as { croupier: unknown }).croupier = { conn };
}

/** A page with no header and no navigation: the station's touchscreen or the big screen. */
function startKiosk(identity: Identity, view: (conn: Connection) => View): void {
  const conn = new Connection(wsUrl, identity);
  const current = view(conn);
  document.body.append(current.root);
  current.mount();
  expose(conn);
  conn.start();
}

function startStation(station: string): void {
  const token = fragmentToken(location.hash);
  if (!token) {
    document.title = `Station ${station} · Croupier`;
    document.body.classList.add("kiosk");
    document.body.append(
      el(
        "main",
        { class: "station-view station-no-token", id: "main" },
        el(
          "div",
          { class: "lock-overlay" },
          el(
            "div",
            { class: "lock-card" },
            el("h2", { class: "lock-headline", text: "Station screen not signed in" }),
            el("p", { text: `This screen was opened without the station's token (/station/${station}#token=…).` }),
            el("p", { class: "lock-call", text: "Call attendant" }),
          ),
        ),
      ),
    );
    return;
  }
  // The token stays in the fragment (never sent over HTTP) and in memory; never in localStorage.
  startKiosk({ kind: "station", token }, (conn) => new StationView(conn, station));
}

function startDisplay(table: string): void {
  const identity: Identity = { kind: "display", name: "Display", token: fragmentToken(location.hash) };
  startKiosk(identity, (conn) => new DisplayView(conn, table));
}

function startApp(): void {
  if (adoptLaunchToken(location.hash)) history.replaceState(null, "", location.pathname + location.search);
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
    const short = conn.signedOut ? "Not signed in" : s === "connecting" ? "Connecting…" : conn.connectedBefore ? "Reconnecting…" : "Cannot connect · retrying";
    connText.textContent = s === "open" ? `Connected${conn.latencyMs !== null ? ` · ${conn.latencyMs} ms` : ""}` : short;
    connEl.title = s === "open" ? "Round-trip latency to the table server" : (conn.notice()?.title ?? "");
  }
  conn.onStatus(renderConnection);
  conn.onReady((w) => {
    setCurrency(w.currency);
    setBalance(w.balance);
    playMoney.hidden = !w.play_money;
    who.textContent = w.name;
  });
  conn.onMessage((m) => {
    if (m.type === "balance") setBalance(m.balance);
  });

  let current: View | null = null;

  function route(): void {
    current?.unmount();
    const r = parseRoute(location.pathname);
    if (r.kind === "station" || r.kind === "display") {
      // A kiosk page is a page of its own (its own hello): load it, never route into it.
      location.reload();
      return;
    }
    if (r.kind === "table") {
      const watch = new URLSearchParams(location.search).get("watch") === "1";
      current = new TableView(conn, r.table, watch, go, setBalance);
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

  expose(conn);
  route();
  conn.start();
}

if (first.kind === "station") startStation(first.station);
else if (first.kind === "display") startDisplay(first.table);
else startApp();
