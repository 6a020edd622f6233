"""Redis or PostgreSQL in trouble under a running cluster (docs/operations.md, "Running a
cluster"): the nodes say they are not ready while they cannot reach either, tables that
cannot write refuse bets with ``storage_failed``, and when the server comes back the nodes
reconnect, take their tables again (recovering the rounds left open) and play on — with
every acknowledged bet settled or returned and the ledger reconciling to the cent."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from pathlib import Path

import psycopg

from server.app.service import Service
from tests.cluster.books import check_books
from tests.cluster.local import LEASE, PATIENCE, TABLE_IDS, node, stop_node, until, waiting_at
from tests.cluster.players import ChaosPlayer, each_bets, stop_players
from tests.net.processes import http_get
from tests.postgres import ADMIN_URL
from tests.redis_server import RedisServer

Trouble = Callable[[Service, Service], Awaitable[None]]


def ready(service: Service) -> bool:
    return http_get(f"http://127.0.0.1:{service.port}/readyz")[0] == 200


async def eventually(check: Callable[[], bool], *, what: str) -> None:
    """``until`` for a check that blocks (it runs in a thread)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + PATIENCE
    while not await asyncio.to_thread(check):
        assert loop.time() < deadline, f"never happened in {PATIENCE / LEASE:g} leases: {what}"
        await asyncio.sleep(0.05)


def owned(a: Service, b: Service) -> int:
    """How many tables the two nodes hold the leases of."""
    assert a.cluster is not None and b.cluster is not None
    return len(a.cluster.owned) + len(b.cluster.owned)


async def play_through(
    tmp_path: Path, redis_server: RedisServer, database: str, trouble: Trouble
) -> list[ChaosPlayer]:
    """Two nodes, a player at every table on each node, each with a bet acknowledged;
    ``trouble`` in the middle; afterwards every table runs again and each player has a bet
    acknowledged again."""
    a = node(tmp_path, "node-a", redis_server, database)
    b = node(tmp_path, "node-b", redis_server, database)
    await a.start()
    await b.start()
    stop = asyncio.Event()
    players = [
        ChaosPlayer(f"ws://127.0.0.1:{s.port}/ws", t, random.Random(n))
        for n, (s, t) in enumerate((s, t) for s in (a, b) for t in TABLE_IDS)
    ]
    tasks = [
        asyncio.create_task(p.run(stop), name=f"player {n} at {p.table}")
        for n, p in enumerate(players)
    ]
    try:
        try:
            await until(lambda: owned(a, b) == len(TABLE_IDS), what="the nodes took every table")
            before = [0] * len(players)
            await each_bets(players, tasks, before, what="each player bet", timeout=PATIENCE)
            await trouble(a, b)
            await until(
                lambda: owned(a, b) == len(TABLE_IDS), what="the nodes took every table again"
            )
            for s in (a, b):
                try:
                    await eventually(lambda s=s: ready(s), what="the node is ready again")  # type: ignore[misc]
                except AssertionError as exc:
                    c = s.cluster
                    assert c is not None
                    raise AssertionError(
                        f"{exc}: {c.node_id}: casino {s.casino.ready} "
                        f"{[(t.get_name(), t.done()) for t in s.casino._tasks]}, "
                        f"redis {c.redis_ok}, database {c.database_ok}, loop {c._task}"
                    ) from None
            since = [len(p.acked) for p in players]
            try:
                await each_bets(players, tasks, since, what="each player bet again", timeout=PATIENCE)  # fmt: skip  # noqa: E501
            except AssertionError as exc:
                urls = {s.port: s.cluster.node_id for s in (a, b) if s.cluster}
                stuck = [
                    (p.player_id, p.table, urls.get(_port(p.url)), len(p.rounds_seen))
                    for p, n in zip(players, since, strict=True)
                    if len(p.acked) <= n
                ]
                raise AssertionError(f"{exc}\n{stuck}\n{where_the_nodes_are(a, b)}") from None
        finally:
            await stop_players(stop, tasks)
    finally:
        try:
            await stop_node(b)
        finally:
            await stop_node(a)
    return players


def _port(url: str) -> int:
    return int(url.split(":")[2].split("/")[0])


def where_the_nodes_are(*nodes: Service) -> str:
    """For a failure's message: each node's tables, the owners it last read, and where its
    tick and its takes and hand-overs are waiting."""
    lines = []
    for s in nodes:
        c = s.cluster
        assert c is not None
        lines.append(
            f"{c.node_id}: owned {sorted(c.owned)}, runs {sorted(s.casino.tables)}, "
            f"owners {c.owners}, redis {c.redis_ok}, database {c.database_ok}"
        )
        lines.append(f"  tick at:\n{waiting_at(c._task)}")
        for table_id, door in c.doors.items():
            table = s.casino.tables.get(table_id)
            lines.append(
                f"  door {table_id}: viewers {[(v.player_id, r) for v, r in door.viewers.items()]}, "  # noqa: E501
                f"held {[v.player_id for v in door._held]}, floor "
                f"{[(v.player_id, f) for v, f in door._floor.items()]}, runtime "
                f"{None if table is None else (table.round_id, table.phase, table.viewers is door.viewers)}"  # noqa: E501
            )
        for table_id, task in c._busy.items():
            lines.append(f"  busy with {table_id} at:\n{waiting_at(task)}")
    return "\n".join(lines)


async def stopped_every_table(a: Service, b: Service) -> None:
    """Until neither node holds a table: each stopped every one it ran."""
    try:
        await until(lambda: owned(a, b) == 0, what="the nodes stopped every table")
    except AssertionError as exc:
        held = {s.cluster.node_id: sorted(s.cluster.owned) for s in (a, b) if s.cluster}
        ticks = "\n".join(f"{s.cluster.node_id}'s tick at:\n{waiting_at(s.cluster._task)}" for s in (a, b) if s.cluster and s.cluster.owned)  # fmt: skip  # noqa: E501
        raise AssertionError(f"{exc}; still held: {held}\n{ticks}") from None


def test_redis_restarting_under_the_cluster_loses_nothing(
    tmp_path: Path, redis_server: RedisServer, postgres_url: str
) -> None:
    async def restart_redis(a: Service, b: Service) -> None:
        redis_server.stop()  # every lease, record and history goes with it
        await eventually(lambda: not ready(a) and not ready(b), what="the nodes not ready")
        # Away past the lease: each node stopped its tables (another could hold them now).
        await stopped_every_table(a, b)
        await asyncio.to_thread(redis_server.start)

    players = asyncio.run(play_through(tmp_path, redis_server, postgres_url, restart_redis))
    check_books(postgres_url, [bet for p in players for bet in p.acked])


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
                await eventually(lambda: not ready(a) and not ready(b), what="the nodes not ready")
                # Away until every table felt it: a write refused, the table stopped.
                await stopped_every_table(a, b)
            finally:
                admin.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true')

    players = asyncio.run(play_through(tmp_path, redis_server, postgres_url, drop_database))
    refused = {code for p in players for code in p.errors}
    print("refused while the database was away:", sorted(refused))
    check_books(postgres_url, [bet for p in players for bet in p.acked])
