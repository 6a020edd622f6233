"""Time, injected (docs/architecture.md, principle 8): what a table's runtime and its devices
are given to read the time and wait for a deadline. The core itself never reads it — time
reaches the core as a ``Tick`` command — and this module needs no event loop to declare it;
the clocks that keep it (the event loop's, a test's manual one) are in
``server/tables/clock.py``."""

from __future__ import annotations

from typing import Protocol

__all__ = ["Clock"]


class Clock(Protocol):
    def now(self) -> float:
        """Seconds on a monotonic scale."""

    async def sleep_until(self, deadline: float) -> None: ...
