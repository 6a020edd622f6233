"""Cluster nodes in one process for the tests (``Service`` objects on the run's Redis and
PostgreSQL), and what the tests check of them."""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
import traceback
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from server.app.service import Service
from server.cluster.node import BUS_STOP_SECONDS, LEAVE_SECONDS, place
from server.config import parse_config
from server.journal.pg_journal import PgJournal
from server.wallet.ledger import OPEN_WAGERS
from server.wallet.pg_ledger import PgLedger
from tests.redis_server import RedisServer

TABLE_IDS = ("bac-1", "bac-2", "rou-1", "war-1", "six-1")
TABLES = "".join(
    f"""
[[tables]]
id = "{table}"
name = "{table}"
game = "{game}"
betting_seconds = 0.4
pause_seconds = 0.1
"""
    for table, game in [
        ("bac-1", "baccarat"),
        ("bac-2", "baccarat"),
        ("rou-1", "roulette"),
        ("war-1", "casino_war"),
        ("six-1", "big_six"),
    ]
)
LEASE = 2.0
CONFIG = f"[cluster]\nlease_seconds = {LEASE}\n" + TABLES
# How long a test waits for what the nodes do, in leases: generous (a failover takes about
# two: the lease expires, the table is taken at the next tick and its round recovered), as
# a loaded machine may be several times slower. A bound, never a measure of speed.
PATIENCE = 15 * LEASE


async def until(check: Callable[[], bool], timeout: float = PATIENCE, *, what: str) -> float:
    """Seconds until ``check()`` holds; after ``timeout``, an error saying ``what`` never
    happened."""
    start = time.monotonic()
    while not check():
        if time.monotonic() - start > timeout:
            raise AssertionError(f"never happened in {timeout / LEASE:g} leases: {what}")
        await asyncio.sleep(0.02)
    return time.monotonic() - start


# What a node's stop may take: its rounds finished and handed over, its last events sent
# (server.cluster.node), and a generous margin.
STOP_SECONDS = LEAVE_SECONDS + BUS_STOP_SECONDS + 15


async def stop_node(service: Service) -> None:
    """``service.stop()``; one that has not returned within what leaving may take fails
    the test, with the stack of every task still running on stderr (what it waits on)."""
    stopping = asyncio.ensure_future(service.stop())
    done, _ = await asyncio.wait([stopping], timeout=STOP_SECONDS)
    if stopping in done:
        return stopping.result()
    for task in asyncio.all_tasks():
        if task is not asyncio.current_task():
            print(f"{task!r} waits at:\n{waiting_at(task)}", file=sys.stderr)
    name = service.cluster.node_id if service.cluster is not None else "the service"
    raise AssertionError(f"{name} did not stop within {STOP_SECONDS:g} s (its tasks: stderr)")


def waiting_at(task: asyncio.Task[Any] | None) -> str:
    """Where ``task`` is suspended now, for a failure's message: the whole chain of
    coroutines it awaits, down to the innermost (``Task.get_stack`` shows only the
    outermost coroutine's frame)."""
    if task is None or task.done():
        return f"{task}"
    frames = []
    awaited: Any = task.get_coro()
    while awaited is not None and len(frames) < 60:
        frame = getattr(awaited, "cr_frame", None) or getattr(awaited, "gi_frame", None)
        if frame is None:
            break
        frames.append((frame, frame.f_lineno))
        awaited = getattr(awaited, "cr_await", None) or getattr(awaited, "gi_yieldfrom", None)
    return "".join(traceback.StackSummary.extract(frames).format())


async def stop_ticking(service: Service) -> None:
    """The node's tick — its heartbeat and its lease renewals — stopped for good, as if the
    node were paused or gone. Cancelled until it has ended: Python 3.11's ``wait_for``, in
    which redis-py wraps each command it sends, can drop a cancellation that comes as the
    command completes, and the tick then ran on, renewing (``ClusterNode.leave`` does the
    same)."""
    assert service.cluster is not None and service.cluster._task is not None
    task = service.cluster._task
    while not task.done():
        task.cancel()
        await asyncio.wait([task], timeout=0.1)


async def die(service: Service) -> None:
    """The node dies without a word: its tick stops, its tables stop writing."""
    await stop_ticking(service)
    assert service.cluster is not None
    for table_id in list(service.cluster.owned):
        await service.casino.abandon(table_id)


class Seat:
    """A player's seat without a connection (the frames sent to it are counted)."""

    def __init__(self, player_id: str) -> None:
        self.player_id = player_id
        self.frames = 0

    def deliver(self, frame: bytes) -> None:
        self.frames += 1

    def write_wire(self, wire: bytes) -> bool:
        self.frames += 1
        return True


def node(tmp_path: Path, name: str, redis: RedisServer, database: str) -> Service:
    settings = parse_config(CONFIG, str(tmp_path / "croupier.toml"))
    return Service(
        settings,
        tmp_path / name,
        port=0,
        database_url=database,
        redis_url=redis.url,
        node_id=name,
    )


@contextlib.asynccontextmanager
async def home_and_other(
    tmp_path: Path, redis: RedisServer, database: str, table_id: str
) -> AsyncIterator[tuple[Service, Service]]:
    """Two nodes started: the one ``table_id`` is placed at (its home, where it stays) and
    the other; both stopped afterwards."""
    a = node(tmp_path, "node-a", redis, database)
    b = node(tmp_path, "node-b", redis, database)
    await a.start()
    await b.start()
    try:
        assert a.cluster is not None and b.cluster is not None
        home = place(table_id, sorted([a.cluster.node_id, b.cluster.node_id]))
        yield (a, b) if home == a.cluster.node_id else (b, a)
    finally:
        try:
            await stop_node(b)
        finally:
            await stop_node(a)


def check_books(database: str) -> None:
    """The ledger reconciles to the cent, every round finished but those in play."""
    ledger, journal = PgLedger(database), PgJournal(database)
    try:
        assert ledger.reconcile() == {} and ledger.total() == 0
        open_rounds = journal.open_rounds()
        assert len({t for t, _ in open_rounds}) == len(open_rounds)  # one per table at most
        if not open_rounds:
            assert ledger.balance(OPEN_WAGERS) == 0
    finally:
        ledger.close()
        journal.close()
