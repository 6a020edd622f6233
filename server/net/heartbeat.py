"""One keepalive for every connection: a WebSocket ping to each every ``interval`` seconds,
and a connection that has not answered its ping for ``timeout`` seconds closed (1011,
"keepalive ping timeout"), as websockets' own keepalive does — from one task, not one per
connection.

Why not websockets' own: its keepalive is a task per connection that sleeps for the
interval, so each connection holds a sleeping coroutine, its future, a timer handle and
their context, made again every interval. With thousands of connections those objects
live long enough to survive the garbage collector's young passes and make up much of what
its middle-generation passes walk (with 5,000 viewers a probe counted 56,000 fewer objects
in that generation with websockets' keepalive off: 41,000 against 97,000, the probe's own
bookkeeping in both), and each such pass stops every table (docs/architecture.md,
"Garbage collection"). Here the connections are split into ``slices`` groups pinged in
turn, one group every ``interval / slices`` seconds (50 ms by default), so the pings of
thousands of connections are spread over the interval: a ping costs tens of microseconds
of the event loop, and 5,000 connections in twenty groups (250 pings a second at once)
held it for ~10 ms every second, which bench_betack's acknowledgements felt even without
broadcast.

The same task measures the event loop: each of its sleeps should end on time, and how late
it wakes (``on_lag``, ``croupier_event_loop_lag_seconds``) is how long a turn of the loop
held everything else — a frame that arrived then waited that long to be read, before the
server's own timing of it (``croupier_bet_ack_seconds``) began.

A connection whose outgoing buffer is full (the transport paused writing: the client reads
nothing) is not pinged, since sending would wait on it; if it stays so for ``timeout``
seconds it is closed the same way. A slow viewer is normally cut off before that by its
backlog (``ConnectionLimits.max_backlog``, close code 4009).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Callable
from typing import Any, cast

from websockets.asyncio.connection import Connection
from websockets.exceptions import ConnectionClosed
from websockets.protocol import State

__all__ = ["Heartbeat"]

CLOSE_KEEPALIVE = 1011  # websockets' own code for a keepalive ping timeout


def _seen(pong: asyncio.Future[float]) -> None:
    """A pong waiter's outcome, read so that a connection closed before its pong does not
    log "exception was never retrieved"."""
    if not pong.cancelled():
        pong.exception()


class Heartbeat:
    def __init__(
        self,
        interval: float = 20.0,
        timeout: float = 20.0,
        slices: int = 400,
        on_lag: Callable[[float], None] | None = None,
    ) -> None:
        """``on_lag``: given, after each sleep, the seconds it ended late."""
        self.interval, self.timeout, self.slices = interval, timeout, slices
        self.on_lag = on_lag
        self._groups: list[set[Connection]] = [set() for _ in range(slices)]
        self._group_of: dict[Connection, int] = {}
        self._next = itertools.cycle(range(slices))
        self._paused_since: dict[Connection, float] = {}
        self._closing: set[asyncio.Task[None]] = set()
        self._task: asyncio.Task[None] | None = None
        self.closed = 0  # connections closed for not answering

    def add(self, ws: Connection) -> None:
        group = next(self._next)
        self._groups[group].add(ws)
        self._group_of[ws] = group

    def discard(self, ws: Connection) -> None:
        group = self._group_of.pop(ws, None)
        if group is not None:
            self._groups[group].discard(ws)
        self._paused_since.pop(ws, None)

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name="heartbeat")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _run(self) -> None:
        loop, pause = asyncio.get_running_loop(), self.interval / self.slices
        for group in itertools.cycle(range(self.slices)):
            due = loop.time() + pause
            await asyncio.sleep(pause)
            if self.on_lag is not None:
                # the loop wakes a timer up to its clock resolution early: never below 0
                self.on_lag(max(0.0, loop.time() - due))
            await self.beat(group)

    async def beat(self, group: int) -> None:
        """Ping one group's connections; close those whose last ping went unanswered (or
        whose buffer stayed full) for ``timeout`` seconds."""
        now = asyncio.get_running_loop().time()
        for ws in list(self._groups[group]):
            if ws.protocol.state is not State.OPEN:
                continue
            pings: dict[Any, tuple[asyncio.Future[float], float]] = ws.pending_pings
            if pings:
                oldest = min(sent for _, sent in pings.values())
                if now - oldest >= self.timeout:
                    self._close(ws)
                continue  # its ping is still in flight: the next turn looks again
            if ws.paused:
                if now - self._paused_since.setdefault(ws, now) >= self.timeout:
                    self._close(ws)
                continue
            self._paused_since.pop(ws, None)
            with contextlib.suppress(ConnectionClosed):
                pong = await ws.ping()  # a Future (typed as an Awaitable)
                cast("asyncio.Future[float]", pong).add_done_callback(_seen)

    def _close(self, ws: Connection) -> None:
        self.closed += 1
        self.discard(ws)
        task = asyncio.get_running_loop().create_task(
            ws.close(CLOSE_KEEPALIVE, "keepalive ping timeout")
        )
        self._closing.add(task)  # held until done (the loop keeps weak references)
        task.add_done_callback(self._closing.discard)
