"""The stations' work in flight on the event loop.

A device message or a round's end is handled at once, on the loop, by code that may not
wait (the hub's listener, the table's hook); what must wait — a write to critical memory, a
ledger post — runs as a task kept here, so that none is lost unseen (a failure is logged)
and a clean stop, or a test, can wait for all of it (``drain``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from typing import Any

__all__ = ["Work"]

log = logging.getLogger("croupier.stations")


class Work:
    """Tasks started for the stations and not yet done."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Future[Any]] = set()

    def spawn(self, work: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Future[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("station work failed", exc_info=task.exception())

    async def drain(self) -> None:
        """Wait for the work in flight (tests, and a clean stop)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
