"""What the multi-node tests read of a cluster from outside: its leases in Redis, its rounds
and fences in PostgreSQL, and waits bounded in leases."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

from redis import Redis

from server.pg_storage import connect
from tests.cluster.nodes import Node, start_node

__all__ = [
    "awaited",
    "fence_of",
    "finish",
    "lease_of",
    "owner_of",
    "rounds_opened",
    "tables_of",
    "voided",
    "waited",
]

T = TypeVar("T")


def lease_of(redis: Redis, table_id: str) -> tuple[str, int] | None:
    """The node holding ``table_id``'s lease and its token (None while nobody holds it)."""
    value = redis.get(f"croupier:lease:{table_id}")
    if not value:
        return None
    node, _, token = value.decode().rpartition("|")
    return node, int(token)


def tables_of(config: Path) -> list[str]:
    """The table ids of a configuration file."""
    return re.findall(r'^id = "([^"]+)"', config.read_text(), re.M)


def owner_of(redis: Redis, table_id: str) -> str | None:
    lease = lease_of(redis, table_id)
    return lease[0] if lease else None


def rounds_opened(database: str, table_id: str) -> int:
    with connect(database) as conn:
        row = conn.execute("SELECT count(*) FROM rounds WHERE table_id = %s", (table_id,)).fetchone()  # fmt: skip  # noqa: E501
    return int(row[0]) if row else 0


def voided(database: str) -> list[str]:
    """Every round voided so far (recovered by a node that took the table mid-round)."""
    with connect(database) as conn:
        rows = conn.execute("SELECT round_id FROM records WHERE kind = 'voided'").fetchall()
    return sorted(str(row[0]) for row in rows)


def fence_of(postgres_url: str, table_id: str) -> tuple[int, str]:
    """The fencing token and node the shared database holds for ``table_id`` (0 if none yet)."""
    with connect(postgres_url) as conn:
        row = conn.execute(
            "SELECT token, node_id FROM table_fences WHERE table_id = %s", (table_id,)
        ).fetchone()
    return (int(row[0]), str(row[1])) if row else (0, "")


def waited(check: Callable[[], T | None], what: str, timeout: float, lease: float) -> T:
    """``check()``'s first true value, asked every 50 ms; an error naming ``what`` never
    happened after ``timeout`` seconds (said in leases)."""
    deadline = time.monotonic() + timeout
    while not (value := check()):
        assert time.monotonic() < deadline, f"{what}: not after {timeout / lease:g} leases"
        time.sleep(0.05)
    return value


async def awaited(
    check: Callable[[], Awaitable[T | None]], what: str, timeout: float, lease: float
) -> T:
    """``waited`` in a coroutine: ``check`` is awaited (what blocks runs in a thread)."""
    deadline = time.monotonic() + timeout
    while not (value := await check()):
        assert time.monotonic() < deadline, f"{what}: not after {timeout / lease:g} leases"
        await asyncio.sleep(0.02)
    return value


def finish(
    nodes: list[Node],
    tmp_path: Path,
    redis_url: str,
    database: str,
    *,
    startup: float,
    patience: float,
    lease: float,
) -> None:
    """Stop every node cleanly (together: each finishes its rounds); a last node recovers
    whatever a kill left open, then stops too (its tables finish their rounds): nothing is
    left in play."""
    with ThreadPoolExecutor(len(nodes)) as pool:
        list(pool.map(Node.stop, nodes))
    last = start_node(tmp_path, "node-last", nodes[0].config, redis_url, database)
    try:
        last.wait_ready(startup)
        redis = Redis.from_url(redis_url)
        try:
            tables = tables_of(nodes[0].config)
            waited(
                lambda: all(owner_of(redis, t) == last.node_id for t in tables),
                "the last node took every table",
                patience,
                lease,
            )
        finally:
            redis.close()
    finally:
        last.stop()
