"""The reference operator wallet over HTTP: ``POST /{operation}`` as docs/wallet.md says, and a
few ``/_reference/…`` routes of its own for the tests to set it up and read it back.

Every request must carry ``X-Croupier-Signature: sha256=<hex HMAC-SHA256 of the raw body>``
under the shared secret (HTTP 401 without it); every answer carries the same over its own
body. One thread per connection (``ThreadingHTTPServer``, HTTP/1.1 keep-alive), so a caller
with many calls in flight keeps as many connections busy and the knobs' latency is waited
out in parallel, as an operator's platform would.

The knobs (``POST /_reference/knobs``, each optional; a new ``POST`` replaces only the knobs
it names; they are the service's, not the books': a restart starts without them):

- ``latency_ms``: each contract call waits half of this before it is applied and half
  after, as a network and a platform would;
- ``down``: every contract call answered 503, nothing applied (an operator down);
- ``fail_before``: ``{operation: n}``, the next n calls of that operation (``"*"``: any)
  answered 503 *before* anything is applied;
- ``timeout_after``: ``{operation: n}``, the next n calls applied, then held ``hang_ms``
  (default 10,000) and the connection closed with no answer — the caller's timeout fires
  first, and it cannot know the call was applied;
- ``unsigned``: ``{operation: n}``, the next n calls applied and answered without the
  signature header;
- ``repeat``: each call applied twice, as a proxy that replays a request would (the second
  must change nothing);
- ``refuse``: ``{player_id: code}``, that player's debits refused with ``code``;
- ``fail_rate``/``timeout_rate``: ``{operation: p}``, the same faults at random with
  probability p (``seed`` makes them repeatable), for load tests;
- ``drop_idle``: ``true`` closes every kept-alive connection waiting for its next call,
  now (an action, not a state), as a server's keep-alive timeout does.

The other routes: ``POST /_reference/players`` (``player_id``, ``currency``, ``balance``,
``blocked``), ``GET /_reference/state`` (balances, open debits, counts, anomalies, and the
connections accepted since the start),
``GET /_reference/statement`` (every call as JSON lines: the operator's export),
``GET /_reference/health``.

With a ``Platform`` (the demo's, ``python -m reference.wallet --platform-secret-file``) it
also plays the operator's platform: ``GET /`` lists the demo players and ``GET
/launch/PLAYER`` opens the game as one (``reference.wallet.platform``); ``POST
/_reference/platform`` (``game_url``) says where the game is served once it is.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import random
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote

from reference.wallet.books import OPERATIONS, REFUSAL_CODES, BadCall, OperatorBooks
from reference.wallet.platform import Platform

__all__ = ["SIGNATURE_HEADER", "Knobs", "WalletServer", "sign"]

SIGNATURE_HEADER = "X-Croupier-Signature"


def sign(secret: bytes, body: bytes) -> str:
    """The signature header's value for ``body``."""
    return "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest()


class Knobs:
    """The faults the service plays, as ``POST /_reference/knobs`` set them (thread-safe: the
    counted ones are used up one call at a time)."""

    _COUNTED = ("fail_before", "timeout_after", "unsigned")
    _RATES = ("fail_rate", "timeout_rate")

    def __init__(self, seed: int | None = None) -> None:
        self._lock = threading.Lock()
        self.latency_ms = 0.0
        self.hang_ms = 10_000.0
        self.down = False
        self.repeat = False
        self.counted: dict[str, dict[str, int]] = {k: {} for k in self._COUNTED}
        self.rates: dict[str, dict[str, float]] = {k: {} for k in self._RATES}
        self._random = random.Random(seed)

    def update(self, body: Any, books: OperatorBooks) -> None:
        """Apply ``body`` (the knobs it names); ``BadCall`` (400) for anything else."""
        if not isinstance(body, dict):
            raise BadCall(400, "bad_body", "the knobs must be a JSON object")
        unknown = set(body) - {
            "latency_ms", "hang_ms", "down", "repeat", "refuse", "seed",
            *self._COUNTED, *self._RATES,
        }  # fmt: skip
        if unknown:
            raise BadCall(400, "bad_field", f"unknown knobs {sorted(unknown)}")
        with self._lock:
            for name in ("latency_ms", "hang_ms"):
                if name in body:
                    setattr(self, name, _number(body[name], name))
            for name in ("down", "repeat"):
                if name in body:
                    if not isinstance(body[name], bool):
                        raise BadCall(400, "bad_field", f"{name} must be true or false")
                    setattr(self, name, body[name])
            for name in self._COUNTED:
                if name in body:
                    self.counted[name] = {op: int(_number(n, name)) for op, n in _ops(body[name])}
            for name in self._RATES:
                if name in body:
                    self.rates[name] = {op: _number(p, name) for op, p in _ops(body[name])}
            if "seed" in body:
                self._random.seed(body["seed"])
            if "refuse" in body:
                refuse = body["refuse"]
                if not isinstance(refuse, dict) or not set(refuse.values()) <= set(REFUSAL_CODES):
                    raise BadCall(
                        400, "bad_field", f"refuse: {{player_id: one of {REFUSAL_CODES}}}"
                    )
                books.refuse = dict(refuse)

    def take(self, fault: str, operation: str) -> bool:
        """Whether this call of ``operation`` plays ``fault`` (a counted one used up)."""
        with self._lock:
            counts = self.counted.get(fault)
            if counts is not None:
                for key in (operation, "*"):
                    if counts.get(key, 0) > 0:
                        counts[key] -= 1
                        return True
            rate_name = {"fail_before": "fail_rate", "timeout_after": "timeout_rate"}.get(fault)
            if rate_name is not None:
                rates = self.rates[rate_name]
                p = rates.get(operation, rates.get("*", 0.0))
                return p > 0 and self._random.random() < p
            return False


def _number(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise BadCall(400, "bad_field", f"{name}: a number >= 0")
    return float(value)


def _ops(value: Any) -> list[tuple[str, Any]]:
    if not isinstance(value, dict) or not set(value) <= {*OPERATIONS, "*"}:
        raise BadCall(400, "bad_field", f"{{operation: value}}, operations {OPERATIONS} or '*'")
    return list(value.items())


class WalletServer(ThreadingHTTPServer):
    """The service on ``address``; ``serve_forever`` answers until ``shutdown``."""

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 1024  # a burst of connections from a node that just started

    def __init__(
        self,
        address: tuple[str, int],
        books: OperatorBooks,
        secret: bytes,
        knobs: Knobs,
        platform: Platform | None = None,
    ) -> None:
        super().__init__(address, _Handler)
        self.books, self.secret, self.knobs = books, secret, knobs
        self.platform = platform  # the demo's platform pages, where there is one
        self._lock = threading.Lock()
        self.connections = 0  # accepted since the start
        self._live: dict[_Handler, bool] = {}  # each open connection: whether mid-call

    def track(self, handler: _Handler, *, busy: bool | None) -> None:
        """``handler``'s connection is open and mid-call (``busy``) or idle; None: closed."""
        with self._lock:
            if busy is None:
                self._live.pop(handler, None)
            else:
                if handler not in self._live:
                    self.connections += 1
                self._live[handler] = busy

    def drop_idle(self) -> None:
        """Close every kept-alive connection waiting for its next call, as a server's
        keep-alive timeout does."""
        with self._lock:
            idle = [h for h, busy in self._live.items() if not busy]
        for handler in idle:
            with contextlib.suppress(OSError):
                handler.connection.shutdown(socket.SHUT_RDWR)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: a caller's pool reuses its connections
    # An answer's headers and body leave in one segment: written apart, with Nagle's
    # algorithm on, the body would wait for the caller's delayed ACK of the headers (40 ms
    # on Linux) — a latency no operator's platform has. The base class flushes the buffer
    # after each request.
    wbufsize = 1 << 16
    disable_nagle_algorithm = True
    server: WalletServer

    def log_message(self, format: str, *args: Any) -> None:
        pass  # one line per request would drown a load test's output

    def setup(self) -> None:
        super().setup()
        self.server.track(self, busy=False)

    def finish(self) -> None:
        self.server.track(self, busy=None)
        super().finish()

    def handle_one_request(self) -> None:
        try:
            super().handle_one_request()
        finally:
            self.server.track(self, busy=False)

    def parse_request(self) -> bool:
        self.server.track(self, busy=True)  # a request line came: mid-call from here
        return super().parse_request()

    def do_GET(self) -> None:
        books = self.server.books
        if self.path == "/_reference/state":
            self._answer(200, {**books.state(), "connections": self.server.connections})
        elif self.path == "/_reference/statement":
            lines = "".join(json.dumps(row, sort_keys=True) + "\n" for row in books.statement())
            self._send(200, lines.encode(), "application/x-ndjson")
        elif self.path == "/_reference/health":
            self._answer(200, {"status": "ok"})
        elif self.server.platform is not None and (
            self.path == "/" or self.path.startswith("/launch/")
        ):
            self._platform(self.server.platform)
        else:
            self._answer(404, _error("not_found", f"no route {self.path}"))

    def _platform(self, platform: Platform) -> None:
        """The demo's platform pages (``reference.wallet.platform``)."""
        if self.path == "/":
            page = platform.page(self.server.books.state()["players"])
            self._send(200, page, "text/html; charset=utf-8", signed=False)
            return
        player = unquote(self.path.removeprefix("/launch/"))
        if player not in platform.players:
            self._answer(404, _error("unknown_player", f"no demo player {player!r}"))
            return
        where = platform.launch(player)
        if where is None:
            self._answer(503, _error("not_ready", "the game server is still starting"))
            return
        self.send_response(303)
        self.send_header("Location", where)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        server = self.server
        given = self.headers.get(SIGNATURE_HEADER, "")
        if not hmac.compare_digest(given, sign(server.secret, raw)):
            self._answer(401, _error("bad_signature", f"{SIGNATURE_HEADER} does not match"))
            return
        try:
            body = json.loads(raw)
        except ValueError:
            self._answer(400, _error("bad_body", "the body is not JSON"))
            return
        try:
            if self.path.startswith("/_reference/"):
                self._admin(self.path.removeprefix("/_reference/"), body)
            else:
                self._contract(self.path.lstrip("/"), body)
        except BadCall as bad:
            self._answer(bad.status, _error(bad.code, bad.message))

    def _admin(self, route: str, body: Any) -> None:
        server = self.server
        if route == "knobs":
            drop = isinstance(body, dict) and body.pop("drop_idle", False) is True
            server.knobs.update(body, server.books)
            self._answer(200, {"status": "ok"})
            if drop:
                server.drop_idle()
        elif route == "players":
            if not isinstance(body, dict):
                raise BadCall(400, "bad_body", "a player must be a JSON object")
            try:
                server.books.open_player(
                    str(body["player_id"]),
                    str(body["currency"]),
                    int(body["balance"]),
                    blocked=bool(body.get("blocked", False)),
                )
            except (KeyError, TypeError, ValueError) as exc:
                raise BadCall(400, "bad_field", f"player_id, currency, balance: {exc}") from exc
            self._answer(200, {"status": "ok"})
        elif route == "platform" and server.platform is not None:
            game_url = body.get("game_url") if isinstance(body, dict) else None
            if not isinstance(game_url, str) or not game_url.startswith(("http://", "https://")):
                raise BadCall(400, "bad_field", "game_url: the game's http(s):// URL")
            server.platform.game_url = game_url
            self._answer(200, {"status": "ok"})
        else:
            raise BadCall(404, "not_found", f"no route /_reference/{route}")

    def _contract(self, operation: str, body: Any) -> None:
        server = self.server
        knobs, books = server.knobs, server.books
        if operation not in OPERATIONS:
            raise BadCall(404, "unknown_operation", f"no operation {operation!r}")
        if knobs.down or knobs.take("fail_before", operation):
            self._answer(503, _error("unavailable", "the wallet is unavailable"))
            return
        half = knobs.latency_ms / 2000
        if half:
            time.sleep(half)
        answer = books.call(operation, body)
        if knobs.repeat:
            again = books.call(operation, body)
            if again != answer:  # the books' own promise broken: say so loudly
                raise BadCall(500, "not_idempotent", f"{answer} then {again}")
        if knobs.take("timeout_after", operation):
            time.sleep(knobs.hang_ms / 1000)
            self.close_connection = True  # applied, never answered
            return
        if half:
            time.sleep(half)
        self._answer(200, answer, signed=not knobs.take("unsigned", operation))

    def _answer(self, status: int, body: dict[str, Any], *, signed: bool = True) -> None:
        self._send(status, json.dumps(body).encode(), "application/json", signed=signed)

    def _send(self, status: int, raw: bytes, kind: str, *, signed: bool = True) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(raw)))
        if signed:
            self.send_header(SIGNATURE_HEADER, sign(self.server.secret, raw))
        self.end_headers()
        self.wfile.write(raw)


def _error(code: str, message: str) -> dict[str, Any]:
    return {"status": "error", "code": code, "message": message}
