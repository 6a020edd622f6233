"""A WebSocket client cheap enough for thousands of Locust users on two cores.

websockets' Sans-I/O ``ClientProtocol`` (the same library as the server, no new
dependency) on a plain socket, which Locust's gevent patching makes cooperative: one greenlet
per user, no thread and no event loop of its own. ``recv`` hands back each binary message's
raw bytes, so a user decodes only the frames it reads (a spectator that counts frames never
decodes one: MessagePack carries an event's name as plain bytes, so ``b"round_settled" in
frame`` finds it without decoding). ``source`` binds the connection to a loopback source
address (127.0.0.2 …) when one address's ephemeral ports are not enough."""

from __future__ import annotations

import socket
from collections import deque

from websockets.client import ClientProtocol
from websockets.frames import Opcode
from websockets.protocol import State
from websockets.uri import parse_uri

__all__ = ["Closed", "WsClient"]

_READ = 1 << 16


class Closed(Exception):
    """The connection closed (the server's close code and reason, or the socket's error)."""


class WsClient:
    def __init__(self, url: str, *, timeout: float = 30.0, source: str | None = None) -> None:
        uri = parse_uri(url)
        self.sock = socket.create_connection(
            (uri.host, uri.port), timeout, source_address=(source, 0) if source else None
        )
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.protocol = ClientProtocol(uri, max_size=1 << 22)
        self._messages: deque[bytes] = deque()
        self.protocol.send_request(self.protocol.connect())
        self._flush()
        while self.protocol.state is State.CONNECTING:
            self._read()
        if self.protocol.handshake_exc is not None:
            self.sock.close()
            raise Closed(f"handshake refused: {self.protocol.handshake_exc}")

    def send(self, data: bytes) -> None:
        try:
            self.protocol.send_binary(data)
        except Exception as exc:  # the connection is closing or closed
            raise Closed(str(exc)) from None
        self._flush()

    def recv(self, timeout: float | None = None) -> bytes:
        """The next binary message; ``TimeoutError`` after ``timeout`` seconds (the socket's
        own when None); ``Closed`` when the connection ends."""
        if timeout is not None:
            self.sock.settimeout(timeout)
        while not self._messages:
            self._read()
        return self._messages.popleft()

    def close(self) -> None:
        try:
            if self.protocol.state is State.OPEN:
                self.protocol.send_close()
                self._flush()
        except OSError:
            pass
        finally:
            self.sock.close()

    def _read(self) -> None:
        try:
            data = self.sock.recv(_READ)
        except TimeoutError:
            raise
        except OSError as exc:
            raise Closed(str(exc)) from None
        if data:
            self.protocol.receive_data(data)
        else:
            self.protocol.receive_eof()
        for event in self.protocol.events_received():
            opcode = getattr(event, "opcode", None)
            if opcode is Opcode.BINARY:
                self._messages.append(event.data)
            elif opcode is Opcode.TEXT:
                self._messages.append(bytes(event.data))
        self._flush()  # pongs and the closing handshake's answer
        if (self.protocol.state is State.CLOSED or not data) and not self._messages:
            self.sock.close()
            raise Closed(f"closed: {self.protocol.close_code} {self.protocol.close_reason}")

    def _flush(self) -> None:
        for data in self.protocol.data_to_send():
            if data:
                self.sock.sendall(data)
