"""The reference operator wallet over HTTP: ``POST /{operation}`` as docs/wallet.md says, and a
few ``/_reference/…`` routes of its own for the tests to set it up and read it back.

Every request must carry ``X-Croupier-Signature: sha256=<hex HMAC-SHA256 of the raw body>``
under the shared secret (HTTP 401 without it); every answer carries the same over its own
body. One asyncio loop serves every connection (HTTP/1.1 keep-alive, parsed by
``httptools``): a caller with many calls in flight keeps as many connections busy, and the
knobs' latency is waited out in parallel, each call answered that long after it came, as an
operator's platform would. (A thread per connection, as ``http.server`` has it, did not:
at a few hundred calls a second its threads queued for the interpreter's lock, and a
20 ms wallet answered in 60 ms at the 99th percentile, more under a load test's CPU.)

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

import asyncio
import hashlib
import hmac
import json
import random
import threading
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any
from urllib.parse import unquote

import httptools

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


class WalletServer:
    """The service (``start`` listens, ``close`` stops): one asyncio loop answers every
    connection, HTTP/1.1 kept alive, each connection's calls answered in the order they
    came (a caller with many calls in flight keeps as many connections busy)."""

    def __init__(
        self,
        books: OperatorBooks,
        secret: bytes,
        knobs: Knobs,
        platform: Platform | None = None,
    ) -> None:
        self.books, self.secret, self.knobs = books, secret, knobs
        self.platform = platform  # the demo's platform pages, where there is one
        self.connections = 0  # accepted since the start
        self._live: dict[asyncio.StreamWriter, bool] = {}  # each open one: whether mid-call
        self._tasks: set[asyncio.Task[None]] = set()  # each connection's
        self._server: asyncio.Server | None = None

    async def start(self, host: str, port: int) -> int:
        """Listen on ``host``:``port`` (0: any free port); the port."""
        self._server = await asyncio.start_server(self._serve, host, port, backlog=1024)
        return int(self._server.sockets[0].getsockname()[1])

    async def close(self) -> None:
        """Stop listening and close every connection."""
        if self._server is not None:
            self._server.close()
            tasks = list(self._tasks)
            for task in tasks:  # a call waiting out its latency or hang ends unanswered
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await self._server.wait_closed()

    def drop_idle(self) -> None:
        """Close every kept-alive connection waiting for its next call, as a server's
        keep-alive timeout does."""
        for writer, busy in list(self._live.items()):
            if not busy:
                writer.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """One connection: its requests in turn until it closes or one asks to."""
        self.connections += 1
        self._live[writer] = False
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        requests: list[_Request] = []
        parsing = _Parsing(requests, self._live, writer)
        parser = parsing.parser = httptools.HttpRequestParser(parsing)
        try:
            while True:
                while not requests:
                    data = await reader.read(1 << 16)
                    if not data:
                        return
                    try:
                        parser.feed_data(data)
                    except httptools.HttpParserError as exc:
                        _write(writer, _error_answer(400, "bad_request", str(exc)), self.secret)
                        return
                request = requests.pop(0)
                try:
                    answer = await self._respond(request)
                except BadCall as bad:
                    answer = _error_answer(bad.status, bad.code, bad.message)
                except Exception as exc:  # a bug: say so, as an operator's 500 would
                    answer = _error_answer(500, "internal", f"{type(exc).__name__}: {exc}")
                if answer is None:  # held and dropped (``timeout_after``): no answer
                    return
                _write(writer, answer, self.secret, keep_alive=request.keep_alive)
                await writer.drain()
                if not request.keep_alive:
                    return
                if not requests:
                    self._live[writer] = False
        except (ConnectionError, OSError):
            return
        except asyncio.CancelledError:  # the service stops (``close``): the connection ends
            return
        finally:
            self._live.pop(writer, None)
            self._tasks.discard(task)
            writer.close()

    async def _respond(self, request: _Request) -> _Answer | None:
        if request.method == "GET":
            return self._get(request.path)
        if request.method != "POST":
            return _error_answer(405, "bad_method", f"{request.method} is not served")
        raw = request.body
        given = request.headers.get(SIGNATURE_HEADER.lower(), "")
        if not hmac.compare_digest(given, sign(self.secret, raw)):
            return _error_answer(401, "bad_signature", f"{SIGNATURE_HEADER} does not match")
        try:
            body = json.loads(raw)
        except ValueError:
            return _error_answer(400, "bad_body", "the body is not JSON")
        if request.path.startswith("/_reference/"):
            return self._admin(request.path.removeprefix("/_reference/"), body)
        return await self._contract(request.path.lstrip("/"), body)

    def _get(self, path: str) -> _Answer:
        books = self.books
        if path == "/_reference/state":
            return _json(200, {**books.state(), "connections": self.connections})
        if path == "/_reference/statement":
            lines = "".join(json.dumps(row, sort_keys=True) + "\n" for row in books.statement())
            return _Answer(200, lines.encode(), "application/x-ndjson")
        if path == "/_reference/health":
            return _json(200, {"status": "ok"})
        if self.platform is not None and (path == "/" or path.startswith("/launch/")):
            return self._platform(self.platform, path)
        return _error_answer(404, "not_found", f"no route {path}")

    def _platform(self, platform: Platform, path: str) -> _Answer:
        """The demo's platform pages (``reference.wallet.platform``)."""
        if path == "/":
            page = platform.page(self.books.state()["players"])
            return _Answer(200, page, "text/html; charset=utf-8", signed=False)
        player = unquote(path.removeprefix("/launch/"))
        if player not in platform.players:
            return _error_answer(404, "unknown_player", f"no demo player {player!r}")
        where = platform.launch(player)
        if where is None:
            return _error_answer(503, "not_ready", "the game server is still starting")
        return _Answer(303, b"", "text/plain", signed=False, location=where)

    def _admin(self, route: str, body: Any) -> _Answer:
        if route == "knobs":
            drop = isinstance(body, dict) and body.pop("drop_idle", False) is True
            self.knobs.update(body, self.books)
            if drop:  # this connection is mid-call: it stays
                self.drop_idle()
            return _json(200, {"status": "ok"})
        if route == "players":
            if not isinstance(body, dict):
                raise BadCall(400, "bad_body", "a player must be a JSON object")
            try:
                self.books.open_player(
                    str(body["player_id"]),
                    str(body["currency"]),
                    int(body["balance"]),
                    blocked=bool(body.get("blocked", False)),
                )
            except (KeyError, TypeError, ValueError) as exc:
                raise BadCall(400, "bad_field", f"player_id, currency, balance: {exc}") from exc
            return _json(200, {"status": "ok"})
        if route == "platform" and self.platform is not None:
            game_url = body.get("game_url") if isinstance(body, dict) else None
            if not isinstance(game_url, str) or not game_url.startswith(("http://", "https://")):
                raise BadCall(400, "bad_field", "game_url: the game's http(s):// URL")
            self.platform.game_url = game_url
            return _json(200, {"status": "ok"})
        raise BadCall(404, "not_found", f"no route /_reference/{route}")

    async def _contract(self, operation: str, body: Any) -> _Answer | None:
        knobs, books = self.knobs, self.books
        if operation not in OPERATIONS:
            raise BadCall(404, "unknown_operation", f"no operation {operation!r}")
        if knobs.down or knobs.take("fail_before", operation):
            return _error_answer(503, "unavailable", "the wallet is unavailable")
        half = knobs.latency_ms / 2000
        if half:
            await asyncio.sleep(half)
        answer = books.call(operation, body)
        if knobs.repeat:
            again = books.call(operation, body)
            if again != answer:  # the books' own promise broken: say so loudly
                raise BadCall(500, "not_idempotent", f"{answer} then {again}")
        if knobs.take("timeout_after", operation):
            await asyncio.sleep(knobs.hang_ms / 1000)
            return None  # applied, never answered
        if half:
            await asyncio.sleep(half)
        return _json(200, answer, signed=not knobs.take("unsigned", operation))


_MAX_BODY = 1 << 20  # a call is a few hundred bytes; a megabyte is not a call


@dataclass(slots=True)
class _Request:
    method: str = ""
    path: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    keep_alive: bool = True


@dataclass(frozen=True, slots=True)
class _Answer:
    status: int
    raw: bytes
    kind: str
    signed: bool = True
    location: str | None = None


class _Parsing:
    """httptools' callbacks for one connection: each whole request appended to
    ``requests``; the connection is mid-call from the first byte of a request."""

    def __init__(
        self,
        requests: list[_Request],
        live: dict[asyncio.StreamWriter, bool],
        writer: asyncio.StreamWriter,
    ) -> None:
        self._requests, self._live, self._writer = requests, live, writer
        self.parser: httptools.HttpRequestParser | None = None
        self._url = bytearray()
        self._body = bytearray()
        self._request = _Request()

    def on_message_begin(self) -> None:
        if self._writer in self._live:
            self._live[self._writer] = True
        self._url.clear()
        self._body.clear()
        self._request = _Request()

    def on_url(self, url: bytes) -> None:
        self._url += url

    def on_header(self, name: bytes, value: bytes) -> None:
        self._request.headers[name.decode("latin-1").lower()] = value.decode("latin-1")

    def on_headers_complete(self) -> None:
        assert self.parser is not None
        self._request.method = self.parser.get_method().decode("latin-1")
        self._request.keep_alive = self.parser.should_keep_alive()

    def on_body(self, body: bytes) -> None:
        self._body += body
        if len(self._body) > _MAX_BODY:  # the parser fails: answered 400, closed
            raise ValueError("a call's body is a few hundred bytes")

    def on_message_complete(self) -> None:
        request = self._request
        request.path = httptools.parse_url(bytes(self._url)).path.decode("latin-1")
        request.body = bytes(self._body)
        self._requests.append(request)


def _json(status: int, body: dict[str, Any], *, signed: bool = True) -> _Answer:
    return _Answer(status, json.dumps(body).encode(), "application/json", signed)


def _error_answer(status: int, code: str, message: str) -> _Answer:
    return _json(status, _error(code, message))


def _write(
    writer: asyncio.StreamWriter, answer: _Answer, secret: bytes, *, keep_alive: bool = False
) -> None:
    """``answer``'s status line, headers and body in one write (one segment where it fits:
    headers and body apart would wait on the caller's delayed ACK)."""
    head = [
        f"HTTP/1.1 {answer.status} {HTTPStatus(answer.status).phrase}",
        f"Content-Type: {answer.kind}",
        f"Content-Length: {len(answer.raw)}",
    ]
    if answer.signed:
        head.append(f"{SIGNATURE_HEADER}: {sign(secret, answer.raw)}")
    if answer.location is not None:
        head.append(f"Location: {answer.location}")
    if not keep_alive:
        head.append("Connection: close")
    writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + answer.raw)


def _error(code: str, message: str) -> dict[str, Any]:
    return {"status": "error", "code": code, "message": message}
