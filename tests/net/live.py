"""A real ``croupier`` service on a loopback port with a manual clock, and a small client."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

from server.app.service import Service
from server.config import parse_config
from server.net.connection import ConnectionLimits
from server.protocol.codec import decode_server, encode
from server.protocol.messages import PROTOCOL_VERSION, Hello, ServerMessage, TableEvent, Welcome
from server.storage import writes_in_flight
from server.tables.clock import ManualClock

TABLES = """
[server]
starting_balance = 100000

[[tables]]
id = "rt"
name = "Roulette"
game = "roulette"
betting_seconds = 10
pause_seconds = 1
seats = 2
minimum = 100
maximum = 100000
[tables.options]
wheel = "double_zero"

[[tables]]
id = "b6"
name = "Big Six"
game = "big_six"
betting_seconds = 10
pause_seconds = 1
"""


@contextlib.asynccontextmanager
async def live_service(
    tmp: Path, config: str = TABLES, limits: ConnectionLimits | None = None
) -> AsyncIterator[Service]:
    clock = ManualClock(drain=writes_in_flight)
    service = Service(parse_config(config, "test.toml"), tmp, port=0, clock=clock, limits=limits)
    await service.start(stagger=False)  # tests drive every table from the same instant
    await clock.advance(0)
    try:
        yield service
    finally:
        await service.stop()


class Client:
    """A test client that keeps every message it receives, in order."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.inbox: list[ServerMessage] = []
        self.raw: list[bytes] = []

    @classmethod
    @contextlib.asynccontextmanager
    async def connect(cls, service: Service, name: str = "tester") -> AsyncIterator[Client]:
        async with connect(f"ws://127.0.0.1:{service.port}/ws", compression=None) as ws:
            client = cls(ws)
            await client.send(Hello(version=PROTOCOL_VERSION, name=name))
            client.welcome = await client.expect(Welcome)
            yield client

    async def send(self, message: Any) -> None:
        await self.ws.send(encode(message))

    async def next(self, timeout: float = 5) -> ServerMessage:
        frame = await asyncio.wait_for(self.ws.recv(decode=False), timeout)
        self.raw.append(frame)
        message = decode_server(frame)
        self.inbox.append(message)
        return message

    async def expect(self, kind: type, timeout: float = 5) -> Any:
        while True:
            message = await self.next(timeout)
            if isinstance(message, kind):
                return message

    async def event(self, name: str, timeout: float = 5) -> TableEvent:
        while True:
            message = await self.next(timeout)
            if isinstance(message, TableEvent) and message.event == name:
                return message

    async def drain(self, idle: float = 0.2) -> list[ServerMessage]:
        """Everything that arrives until the line is quiet for ``idle`` seconds."""
        got = []
        with contextlib.suppress(TimeoutError):
            while True:
                got.append(await self.next(idle))
        return got

    def events(self, name: str | None = None) -> list[TableEvent]:
        return [m for m in self.inbox if isinstance(m, TableEvent) and name in (None, m.event)]


async def advance(service: Service, seconds: float) -> None:
    clock = service.casino.clock
    assert isinstance(clock, ManualClock)
    await clock.advance(seconds)
    await asyncio.sleep(0.05)  # let frames cross the loopback
