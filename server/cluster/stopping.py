"""Stopping a cluster node's background tasks for certain.

A cancellation can be lost: Python 3.11's ``asyncio.wait_for`` (which redis-py uses around
every command) drops one that arrives just as its awaitable finishes, and a task looping on
``BLMPOP`` then reads on as if nothing happened — and a node waiting for it never stops on
SIGTERM. So a task is cancelled again until it has ended.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

__all__ = ["cancel_and_wait"]


async def cancel_and_wait(tasks: Iterable[asyncio.Task[Any]], every: float = 1.0) -> None:
    """Cancel ``tasks`` and wait until each has ended, cancelling again every ``every``
    seconds until it does. What they raised is retrieved and dropped, as
    ``gather(..., return_exceptions=True)`` would: stopping goes on whatever they did."""
    every_task = list(tasks)
    pending = {task for task in every_task if not task.done()}
    while pending:
        for task in pending:
            task.cancel()
        _, pending = await asyncio.wait(pending, timeout=every)
    for task in every_task:
        if not task.cancelled():
            task.exception()
