"""The operator's wallet over HTTP/1.1: many calls in flight, each on a kept-alive connection
of a bounded pool, each answered as ``Ok``, ``Refused`` or ``Unknown`` (``contract``).

Why not one call at a time: an operator answers in 50–300 ms, and a table's bets are debited
as they come — 80 players betting at once must not wait 80 answers in turn. Up to
``connections`` calls are in flight at once (one per connection: HTTP/1.1 answers in order,
so a connection carries one call at a time); the rest wait for a connection. The pool keeps
the connections open between calls, so a call costs one round trip, not a TCP (and TLS)
handshake each.

Answers are parsed by ``httptools`` (bindings to llhttp, Node.js's HTTP parser, in C): a
call cost the caller 115 µs of CPU with it, send and receive included, against 172 µs
with a pure-Python parser (h11; ``loadtests/bench_wallet.py``), and a busy table makes
one call per bet. A request is four fixed headers this module writes itself, from values
it checked when the client was made.

A call never raises for what the network or the operator did: a timeout, a refused or
dropped connection, a malformed answer are all ``Unknown``, with the reason.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Awaitable
from typing import Any
from urllib.parse import urlsplit

import httptools

from server.wallet.operator.contract import (
    OPERATIONS,
    SIGNATURE_HEADER,
    Answer,
    Unknown,
    encode,
    read_answer,
    sign,
    url_problem,
)

__all__ = ["OperatorWalletClient"]

_SIGNATURE = SIGNATURE_HEADER.lower().encode()
_MAX_ANSWER = 1 << 20  # an answer is a few dozen bytes; a megabyte is not an answer


class OperatorWalletClient:
    """Calls to the operator's wallet at ``url`` (``http://`` or ``https://``, with the
    contract's operations under its path), signed with ``secret``. ``timeout``: seconds
    from sending a call (its connection made, if it needed one) to its whole answer."""

    def __init__(
        self,
        url: str,
        secret: bytes,
        *,
        timeout: float = 3.0,
        connections: int = 256,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        problem = url_problem(url)
        if problem is not None:
            raise ValueError(f"the wallet's url: {problem}")
        parts = urlsplit(url)
        if not secret:
            raise ValueError("the wallet's shared secret is empty")
        if timeout <= 0 or connections < 1:
            raise ValueError("timeout > 0 and connections >= 1")
        self.url, self._secret, self.timeout = url, secret, timeout
        self.connections = connections
        self._host = parts.hostname or ""  # url_problem: never empty
        self._port = parts.port or (443 if parts.scheme == "https" else 80)
        self._ssl = (
            (ssl_context or ssl.create_default_context()) if parts.scheme == "https" else None
        )
        # Each operation's request line and fixed headers, ready to send.
        self._heads = {
            op: (
                f"POST {parts.path.rstrip('/')}/{op} HTTP/1.1\r\nHost: {parts.netloc}\r\n"
                "Content-Type: application/json\r\n"
            ).encode()
            for op in OPERATIONS
        }
        self._slots = asyncio.Semaphore(connections)
        self._idle: list[_Connection] = []
        self._closed = False
        self.calls = 0
        self.unknown = 0

    async def call(self, operation: str, body: dict[str, Any]) -> Answer:
        """Send one call and read its answer; never raises for the network's or the
        operator's doing (``Unknown``). ``ValueError`` for an operation not in the
        contract, ``RuntimeError`` once closed."""
        if operation not in OPERATIONS:
            raise ValueError(f"no operation {operation!r} in the wallet contract")
        if self._closed:
            raise RuntimeError("the operator wallet client is closed")
        raw = encode(body)
        self.calls += 1
        async with self._slots:
            answer = await self._exchange(operation, raw)
        if isinstance(answer, Unknown):
            self.unknown += 1
        return answer

    async def _exchange(self, operation: str, raw: bytes) -> Answer:
        request = b"%sContent-Length: %d\r\n%s: %s\r\n\r\n%s" % (
            self._heads[operation],
            len(raw),
            SIGNATURE_HEADER.encode(),
            sign(self._secret, raw).encode(),
            raw,
        )
        try:
            async with asyncio.timeout(self.timeout):
                while self._idle:  # a kept connection, unless the operator closed it since
                    connection = self._idle.pop()
                    if connection.open:
                        try:
                            status, signature, body = await self._on(connection, request)
                            break
                        except _Broken as exc:
                            if exc.answered:
                                raise
                            # Closed by the operator as the call left, before any answer:
                            # sent again on a new connection. The same transaction id makes
                            # that safe, whether or not the first one was applied.
                else:
                    connection = await self._connect()
                    status, signature, body = await self._on(connection, request)
        except TimeoutError:
            return Unknown(f"no answer within {self.timeout:g} s")
        except (OSError, _Broken) as exc:  # refused, reset, dropped, not HTTP
            return Unknown(f"{type(exc).__name__}: {exc}")
        return read_answer(operation, status, signature, body, self._secret)

    async def _on(self, connection: _Connection, request: bytes) -> tuple[int, str | None, bytes]:
        """One call on ``connection``, kept for the next call if it can carry one."""
        try:
            return await connection.request(request)
        finally:
            if connection.reusable() and not self._closed:
                self._idle.append(connection)
            else:
                connection.close()

    async def _connect(self) -> _Connection:
        loop = asyncio.get_running_loop()
        _, protocol = await loop.create_connection(
            _Connection, self._host, self._port, ssl=self._ssl
        )
        return protocol

    async def close(self) -> None:
        """Close the idle connections; calls in flight end as they end."""
        self._closed = True
        idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()


class _Broken(Exception):
    """The connection ended, or spoke something that is not HTTP, before the whole answer;
    ``answered``: after some of the answer had come."""

    def __init__(self, message: str, *, answered: bool = False) -> None:
        super().__init__(message)
        self.answered = answered


class _Connection(asyncio.Protocol):
    """One HTTP/1.1 connection carrying one call at a time; also the parser's callbacks."""

    def __init__(self) -> None:
        self._parser = httptools.HttpResponseParser(self)
        self._transport: asyncio.Transport | None = None
        self._answer: asyncio.Future[tuple[int, str | None, bytes]] | None = None
        self._signature: str | None = None
        self._body: list[bytes] = []
        self._size = 0
        self._began = False  # some of this call's answer has come
        self._keep = False  # the last answer leaves the connection open for another call
        self._lost = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport

    def request(self, request: bytes) -> Awaitable[tuple[int, str | None, bytes]]:
        """Send ``request`` (the whole of it): its answer's status, signature and body."""
        assert self._transport is not None and self._answer is None
        self._answer = asyncio.get_running_loop().create_future()
        self._signature, self._body, self._size = None, [], 0
        self._began = self._keep = False
        if self._lost:
            self._answer.set_exception(_Broken("the connection was closed"))
        else:
            self._transport.write(request)
        return self._answer

    # --- the parser's callbacks ---------------------------------------------------------------

    def on_message_begin(self) -> None:
        self._began = True

    def on_header(self, name: bytes, value: bytes) -> None:
        if name.lower() == _SIGNATURE:
            self._signature = value.decode("latin-1")

    def on_body(self, body: bytes) -> None:
        self._size += len(body)
        if self._size <= _MAX_ANSWER:  # past it, the answer fails once parsed (below)
            self._body.append(body)

    def on_message_complete(self) -> None:
        status = self._parser.get_status_code()
        if status < 200:  # an informational answer: the real one follows
            return
        self._keep = self._parser.should_keep_alive()
        answer, self._answer = self._answer, None
        if answer is None or answer.done():
            return
        if self._size > _MAX_ANSWER:
            answer.set_exception(
                _Broken(f"an answer of more than {_MAX_ANSWER} bytes", answered=True)
            )
            self._keep = False
        else:
            answer.set_result((status, self._signature, b"".join(self._body)))

    # --- the transport's ---------------------------------------------------------------------

    def data_received(self, data: bytes) -> None:
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserError as exc:
            self._fail(_Broken(f"not HTTP: {exc}", answered=True))
            self.close()

    def eof_received(self) -> bool | None:
        if self._answer is not None:
            message = "the operator closed the connection " + (
                "in the middle of its answer" if self._began else "before answering"
            )
            self._fail(_Broken(message, answered=self._began))
        return None  # close the transport

    def connection_lost(self, exc: Exception | None) -> None:
        self._lost = True
        self._fail(_Broken(f"the connection was lost ({exc or 'closed'})", answered=self._began))

    @property
    def open(self) -> bool:
        return not self._lost

    def _fail(self, exc: Exception) -> None:
        answer, self._answer = self._answer, None
        if answer is not None and not answer.done():
            answer.set_exception(exc)

    def reusable(self) -> bool:
        """Whether the call is over and the connection may carry another."""
        return not self._lost and self._answer is None and self._keep

    def close(self) -> None:
        self._lost = True
        if self._transport is not None:
            self._transport.close()
