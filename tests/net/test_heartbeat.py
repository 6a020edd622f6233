"""One keepalive for every connection (``server.net.heartbeat``), over real WebSocket
connections: a client that answers pings stays, one that does not is closed with 1011
after the timeout, and the pings are spread over the interval in slices."""

from __future__ import annotations

import asyncio
import base64
import os
import time

from websockets.asyncio.client import connect
from websockets.asyncio.server import ServerConnection, serve

from server.net.heartbeat import CLOSE_KEEPALIVE, Heartbeat

INTERVAL, TIMEOUT, SLICES = 0.2, 0.5, 2


async def _silent_client(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A WebSocket client that completes the handshake and then never answers anything."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    key = base64.b64encode(os.urandom(16)).decode()
    writer.write(
        (
            f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )
    assert b" 101 " in await reader.readuntil(b"\r\n\r\n")
    return reader, writer


async def _close_code(reader: asyncio.StreamReader) -> int:
    """Read server frames (pings, then a close) until the close frame: its code."""
    while True:
        head = await reader.readexactly(2)
        length = head[1] & 0x7F
        payload = await reader.readexactly(length)
        if head[0] & 0x0F == 0x8:
            return int.from_bytes(payload[:2], "big")


def test_answering_clients_stay_and_a_silent_one_is_closed_after_the_timeout() -> None:
    async def go() -> None:
        heartbeat = Heartbeat(interval=INTERVAL, timeout=TIMEOUT, slices=SLICES)
        members: list[ServerConnection] = []

        async def handler(ws: ServerConnection) -> None:
            heartbeat.add(ws)
            members.append(ws)
            try:
                await ws.wait_closed()
            finally:
                heartbeat.discard(ws)

        async with serve(handler, "127.0.0.1", 0, ping_interval=None) as server:
            port = server.sockets[0].getsockname()[1]
            heartbeat.start()
            try:
                async with connect(f"ws://127.0.0.1:{port}", ping_interval=None) as good:
                    reader, writer = await _silent_client(port)
                    code = await asyncio.wait_for(_close_code(reader), 10 * TIMEOUT)
                    assert code == CLOSE_KEEPALIVE
                    assert heartbeat.closed == 1
                    # the client that answered is still open, its pongs seen (latency set)
                    answered = next(ws for ws in members if ws.remote_address[1] == good.local_address[1])  # fmt: skip  # noqa: E501
                    assert answered.latency > 0.0
                    await good.send("still here")  # the connection is open
                    writer.close()
            finally:
                await heartbeat.stop()

    asyncio.run(go())


def test_the_connections_are_pinged_a_slice_at_a_time() -> None:
    async def go() -> None:
        heartbeat = Heartbeat(interval=10.0, timeout=10.0, slices=SLICES)
        members: list[ServerConnection] = []

        async def handler(ws: ServerConnection) -> None:
            heartbeat.add(ws)
            members.append(ws)
            await ws.wait_closed()

        async with serve(handler, "127.0.0.1", 0, ping_interval=None) as server:
            port = server.sockets[0].getsockname()[1]
            clients = [await connect(f"ws://127.0.0.1:{port}", ping_interval=None) for _ in range(6)]  # fmt: skip  # noqa: E501
            while len(members) < 6:
                await asyncio.sleep(0.01)
            await heartbeat.beat(0)  # no task: one slice pinged by hand
            pinged = [ws for ws in members if ws.pending_pings or ws.latency > 0.0]
            assert len(pinged) == 6 // SLICES
            await heartbeat.beat(1)
            await asyncio.sleep(0.1)  # the pongs come back
            assert all(ws.latency > 0.0 for ws in members)
            for client in clients:
                await client.close()

    asyncio.run(go())


def test_the_heartbeat_measures_how_late_the_event_loop_wakes() -> None:
    """Each of the task's sleeps (20 ms here) reports how late it ended (``on_lag``): a
    turn that holds the loop for 80 ms shows as a wake-up at least 60 ms late, an idle
    loop's as on time."""

    async def go() -> tuple[list[float], list[float]]:
        lags: list[float] = []
        heartbeat = Heartbeat(interval=0.2, timeout=1.0, slices=10, on_lag=lags.append)
        heartbeat.start()
        try:
            while len(lags) < 5:  # idle
                await asyncio.sleep(0.01)
            idle = list(lags)
            time.sleep(0.08)  # a long turn: the loop runs nothing else meanwhile
            while len(lags) < len(idle) + 2:
                await asyncio.sleep(0.001)
        finally:
            await heartbeat.stop()
        return idle, lags[len(idle) :]

    idle, after = asyncio.run(go())
    assert all(lag >= 0.0 for lag in idle + after)
    assert min(idle) < 0.01, idle
    # the sleep under way when the turn began (or, had it just ended, the next one) ended
    # within 20 ms of the turn's start, and woke at its end
    assert 0.06 <= max(after) < 1.0, after
