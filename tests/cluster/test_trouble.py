"""Redis or PostgreSQL in trouble under a running cluster (docs/operations.md, "Running a
cluster"): the nodes say they are not ready while they cannot reach either, tables that
cannot write refuse bets with ``storage_failed``, and when the server comes back the nodes
reconnect, take their tables again (recovering the rounds left open) and play on — with
every acknowledged bet settled or returned and the ledger reconciling to the cent."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from pathlib import Path

import psycopg

from server.net.app import Service
from tests.cluster.books import check_books
from tests.cluster.local import TABLE_IDS, node, until
from tests.cluster.players import ChaosPlayer
from tests.net.processes import http_get
from tests.postgres import ADMIN_URL
from tests.redis_server import RedisServer


def ready(service: Service) -> bool:
    return http_get(f"http://127.0.0.1:{service.port}/readyz")[0] == 200


async def eventually(check: Callable[[], bool], timeout: float = 20.0) -> None:
    async def holds() -> bool:
        return await asyncio.to_thread(check)

    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not await holds():
        assert loop.time() < deadline, "timed out waiting"
        await asyncio.sleep(0.05)


async def play_through(
    tmp_path: Path, redis_server: RedisServer, database: str, trouble: Callable[[], object]
) -> list[ChaosPlayer]:
    """Two nodes, a player at every table on each node; ``trouble()`` (a coroutine) in the
    middle; afterwards every table runs again and the players play on."""
    a = node(tmp_path, "node-a", redis_server, database)
    b = node(tmp_path, "node-b", redis_server, database)
    await a.start()
    await b.start()
    assert a.cluster is not None and b.cluster is not None
    stop = asyncio.Event()
    players = [
        ChaosPlayer(f"ws://127.0.0.1:{s.port}/ws", t, random.Random(n))
        for n, (s, t) in enumerate((s, t) for s in (a, b) for t in TABLE_IDS)
    ]
    tasks = [asyncio.create_task(p.run(stop)) for p in players]
    try:
        await until(lambda: len(a.cluster.owned) + len(b.cluster.owned) == len(TABLE_IDS))
        await asyncio.sleep(1.5)
        await trouble(a, b)  # type: ignore[operator]
        await until(
            lambda: len(a.cluster.owned) + len(b.cluster.owned) == len(TABLE_IDS), timeout=20
        )
        for s in (a, b):
            try:
                await eventually(lambda s=s: ready(s))  # type: ignore[misc]
            except AssertionError:
                c = s.cluster
                assert c is not None
                raise AssertionError(
                    f"{c.node_id} not ready: casino {s.casino.ready} "
                    f"{[(t.get_name(), t.done()) for t in s.casino._tasks]}, "
                    f"redis {c.redis_ok}, database {c.database_ok}, loop {c._task}"
                ) from None
        seen = {p.table: len(p.rounds_seen) for p in players}
        await until(lambda: all(len(p.rounds_seen) > seen[p.table] + 1 for p in players), 20)
    finally:
        stop.set()
        await asyncio.gather(*tasks, return_exceptions=True)
        await b.stop()
        await a.stop()
    return players


def test_redis_restarting_under_the_cluster_loses_nothing(
    tmp_path: Path, redis_server: RedisServer, postgres_url: str
) -> None:
    async def restart_redis(a: Service, b: Service) -> None:
        redis_server.stop()  # every lease, record and history goes with it
        await eventually(lambda: not ready(a) and not ready(b))
        await asyncio.sleep(1.5)
        redis_server.start()

    players = asyncio.run(play_through(tmp_path, redis_server, postgres_url, restart_redis))
    acked = [bet for p in players for bet in p.acked]
    assert acked
    check_books(postgres_url, acked)


def test_the_database_dropping_every_connection_loses_nothing(
    tmp_path: Path, redis_server: RedisServer, postgres_url: str
) -> None:
    name = postgres_url.rsplit("/", 1)[1]

    async def drop_database(a: Service, b: Service) -> None:
        with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
            # as a restart looks from the nodes: every connection cut, none taken meanwhile
            admin.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false')
            try:
                admin.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE datname = %s AND pid <> pg_backend_pid()",
                    (name,),
                )
                await eventually(lambda: not ready(a) and not ready(b))
                await asyncio.sleep(1.0)
            finally:
                admin.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true')

    players = asyncio.run(play_through(tmp_path, redis_server, postgres_url, drop_database))
    refused = {code for p in players for code in p.errors}
    print("refused while the database was away:", sorted(refused))
    acked = [bet for p in players for bet in p.acked]
    assert acked
    check_books(postgres_url, acked)
