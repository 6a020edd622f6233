"""A WebSocket connection that hands each message to a callback as websockets parses it.

websockets' ``recv()`` delivers a message to a task awaiting it: the message is queued when
its bytes are read, and the task takes it a turn of the event loop later. Between messages
every connection keeps that task's pending read — a chain of coroutines and futures under
``recv`` — alive until its client next sends something, seconds later: at 4,000
connections the garbage collector's middle generation held 17,000 such coroutines, and its
passes over them took 45–118 ms every few seconds (docs/capacity.md). ``FrameConnection``
hands each message to ``on_message`` in the turn that read it instead; between messages a
connection keeps nothing but its handler, which waits for the connection to close.

Messages that arrive before a handler is attached are kept and handed over when it is
(``attach``); a message in fragments is joined first (websockets' protocol has already
checked its total size against ``max_size``, and more than ``MAX_FRAGMENTS`` fragments —
empty ones add nothing to the size — fail the connection with 1009, as websockets' own
reader does). A text message is handed over as ``str``.
Pings, pongs and the closing handshake go on as websockets does them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Final

from websockets.asyncio.messages import MAX_FRAGMENTS
from websockets.asyncio.server import ServerConnection
from websockets.frames import BINARY, CONT, TEXT, CloseCode, Frame
from websockets.protocol import Event

__all__ = ["READ_BYTES", "FrameConnection", "OnMessage"]

OnMessage = Callable[[bytes | str], None]

# The most a connection's socket is read at once. asyncio's socket transport reads with
# ``recv(256 KiB)``: CPython allocates that much for every read and hands almost all of it
# back, 18–22 µs a read on this machine against 2–4 µs at 64 KiB (a message of 120 bytes,
# over TCP and over a Unix socket). A client's messages are small, and the largest frame
# the server takes (``server.net.edge.MAX_FRAME``, 64 KiB) still comes in one or two reads.
READ_BYTES: Final = 64 * 1024


class FrameConnection(ServerConnection):
    """A server connection whose messages go to ``on_message`` (``attach``), not ``recv``."""

    on_message: OnMessage | None = None
    _early: list[bytes | str] | None = None  # messages before ``attach``
    _fragments: list[bytes | bytearray | memoryview] | None = None  # a fragmented message
    _fragmented_text = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        if hasattr(transport, "max_size"):  # asyncio's socket transport (TLS's reads its own)
            transport.max_size = READ_BYTES

    def attach(self, on_message: OnMessage) -> None:
        """Hand every message to ``on_message`` from now on, those already here first."""
        self.on_message = on_message
        early, self._early = self._early, None
        for message in early or ():
            on_message(message)

    def process_event(self, event: Event) -> None:
        if not isinstance(event, Frame) or event.opcode not in (TEXT, BINARY, CONT):
            super().process_event(event)  # the handshake's request, a ping, a pong, a close
            return
        if event.opcode is CONT:
            if self._fragments is None:  # pragma: no cover - the protocol refuses it
                return
            self._fragments.append(event.data)
            if len(self._fragments) > MAX_FRAGMENTS:
                self._fragments = None
                self.protocol.fail(CloseCode.MESSAGE_TOO_BIG, "too many fragments")
                self.send_data()
                return
            if not event.fin:
                return
            data: bytes | bytearray | memoryview = b"".join(self._fragments)
            text = self._fragmented_text
            self._fragments = None
        elif not event.fin:
            self._fragments = [event.data]
            self._fragmented_text = event.opcode is TEXT
            return
        else:
            data, text = event.data, event.opcode is TEXT
        message: bytes | str
        if text:
            message = bytes(data).decode(errors="replace")
        else:
            message = data if isinstance(data, bytes) else bytes(data)
        if self.on_message is not None:
            self.on_message(message)
        elif self._early is None:
            self._early = [message]
        else:
            self._early.append(message)
