"""Time, injected (docs/architecture.md, principle 8): the runtime never reads the wall clock
directly. The ``Clock`` it is given is declared in ``server/core/clock.py``.

``SystemClock`` uses the event loop's monotonic clock. ``ManualClock`` only moves when a test
calls ``advance``, so tests of betting windows and decision deadlines never sleep.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from collections.abc import Callable

from server.core.clock import Clock

__all__ = ["Clock", "ManualClock", "SystemClock"]


class SystemClock:
    def now(self) -> float:
        return asyncio.get_running_loop().time()

    async def sleep_until(self, deadline: float) -> None:
        delay = deadline - self.now()
        if delay > 0:
            await asyncio.sleep(delay)


class ManualClock:
    """A clock that stands still until ``advance`` is called.

    ``drain`` says how much work the woken tasks still wait for outside the event loop (the
    stores' writes on their writer threads: ``server.storage.writes_in_flight``); ``advance``
    returns only once it says none, so a test's table has taken its whole step."""

    def __init__(self, start: float = 0.0, *, drain: Callable[[], int] = lambda: 0) -> None:
        self._drain = drain
        self._now = start
        self._sleepers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._ids = itertools.count()

    def now(self) -> float:
        return self._now

    async def sleep_until(self, deadline: float) -> None:
        if deadline <= self._now:
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._sleepers, (deadline, next(self._ids), future))
        await future

    async def advance(self, seconds: float) -> None:
        """Move time forward, waking every sleeper whose deadline has come, then let the
        woken tasks run."""
        self._now += seconds
        while self._sleepers and self._sleepers[0][0] <= self._now:
            _, _, future = heapq.heappop(self._sleepers)
            if not future.done():
                future.set_result(None)
        # Let the woken tasks run to their next wait (a table's step takes a few hops of the
        # event loop: cancelled helpers, deliveries) — and wait for the work outside the loop
        # they await (``drain``), such as writes on the stores' writer threads.
        give_up = time.monotonic() + 60  # real seconds: a write that never ends is a bug
        while True:
            for _ in range(100):
                await asyncio.sleep(0)
            if not self._drain():
                return
            if time.monotonic() > give_up:
                raise RuntimeError(f"{self._drain()} pieces of work never finished")
            await asyncio.sleep(0.0005)

    @property
    def sleepers(self) -> int:
        return sum(1 for _, _, f in self._sleepers if not f.done())
