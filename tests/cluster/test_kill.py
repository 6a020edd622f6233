"""Three real ``croupier serve`` nodes behind the real nginx (deploy/nginx/croupier.conf), on
a real Redis and PostgreSQL, players at every game connected through nginx — and the owner of
a busy table killed with SIGKILL at random moments, twenty-one times over three clusters of
their own (one test each, so that parallel workers share them out; docs/operations.md,
"Running a cluster"). Each kill comes once the players are back at the table, a bet of theirs
acknowledged since the last; after it the table runs again on another node under a newer
lease, and a supervisor restarts the killed node at once. At the end every game is played on,
every acknowledged bet was settled or returned exactly once, no round finished twice, and
the ledger reconciles to the cent with every balance summing to zero. How long a failover
takes is measured by loadtests/bench_cluster.py, not here.

And the partition: a node paused with SIGSTOP past its lease finds, when it resumes, that it
may write nothing more for its tables (the fence refuses it), and says so in its log."""

from __future__ import annotations

import asyncio
import random
import re
import signal
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest
from redis import Redis

from server.cluster.node import place
from server.config import demo_config_text
from tests.cluster import state
from tests.cluster.books import check_books, check_linked_meters
from tests.cluster.nodes import Node, nginx_for, start_node
from tests.cluster.players import Acked, ChaosPlayer, check_running, each_bets, stop_players
from tests.cluster.state import fence_of, finish, lease_of, owner_of, rounds_opened
from tests.redis_server import RedisServer

T = TypeVar("T")

# Two seconds, not one: with several of these clusters at once on a loaded two-core
# machine, a node's renewal (every sixth of the lease) came late often enough that leases
# of live nodes expired and their tables bounced from node to node.
LEASE = 2.0
# Every wait below is bounded in leases, generously: a failover takes one or two (the lease
# expires, the table is taken at the next tick and its round recovered); a loaded machine
# may be several times slower, and a node a supervisor is restarting takes longer still.
PATIENCE = 15 * LEASE
STARTUP = 60.0  # seconds a node may take to become ready: three start at once, loaded
BUSY = "baccarat"
KILLS = 20  # at least, over the runs
RUNS = {"seed-18": 18, "seed-27": 27, "seed-36": 36}
KILLS_PER_RUN = 7
assert len(RUNS) * KILLS_PER_RUN >= KILLS
LINK = "floor"
LINKED = "baccarat-linked"
LINKED_TABLE = f"""
[[tables]]
id = "{LINKED}"
name = "Baccarat, linked progressives"
game = "baccarat"
betting_seconds = 0.8
pause_seconds = 0.2
[tables.options]
progressive_link = "{LINK}"
[tables.options.side_wagers]
heavenly_9_progressive = ""
harmony_progressive = "A"
"""
# 631b.2(i): Heavenly 9 seeded at $10,000; Harmony (631b.10(j)) sets no seed: $0.
SEEDS = {f"{LINK}/heavenly_9_progressive": 1_000_000, f"{LINK}/harmony_progressive": 0}
PROGRESSIVES = ("heavenly_9_progressive", "harmony_progressive")


def cluster_config(tmp_path: Path) -> Path:
    """The demo lobby — a table of every game — with short rounds and a two-second lease."""
    text = re.sub(
        r"betting_seconds = \d+", "betting_seconds = 0.8\npause_seconds = 0.2", demo_config_text()
    )
    # The busy table and one more share their progressive meters (a link across nodes).
    text = text.replace('variant = "standard"\n', f'variant = "standard"\nprogressive_link = "{LINK}"\n', 1)  # fmt: skip  # noqa: E501
    config = tmp_path / "cluster.toml"
    config.write_text(f"[cluster]\nlease_seconds = {LEASE}\n\n{text}{LINKED_TABLE}")
    return config


@pytest.fixture
def cluster(tmp_path: Path, redis_server: RedisServer, postgres_url: str) -> Iterator[list[Node]]:
    config = cluster_config(tmp_path)
    nodes = [
        start_node(tmp_path, f"node-{n}", config, redis_server.url, postgres_url) for n in (1, 2, 3)
    ]
    try:
        for node in nodes:
            node.wait_ready(STARTUP)
        yield nodes
    finally:
        for node in nodes:
            node.kill()


def waited(check: Callable[[], T | None], what: str, timeout: float = PATIENCE) -> T:
    return state.waited(check, what, timeout, LEASE)


async def awaited(check: Callable[[], Awaitable[T | None]], what: str) -> T:
    return await state.awaited(check, what, PATIENCE, LEASE)


@pytest.mark.slow
@pytest.mark.parametrize("seed", RUNS.values(), ids=list(RUNS))
def test_the_owner_of_a_busy_table_is_killed_again_and_again(
    seed: int, cluster: list[Node], tmp_path: Path, redis_server: RedisServer, postgres_url: str
) -> None:
    nodes = {node.node_id: node for node in cluster}
    redis = Redis.from_url(redis_server.url)
    rng = random.Random(seed)
    tables = re.findall(r'^id = "([^"]+)"', cluster[0].config.read_text(), re.M)
    failovers: list[float] = []  # in leases, shown with -s

    async def play() -> list[ChaosPlayer]:
        with nginx_for(cluster) as nginx:
            players = [ChaosPlayer(nginx.url, t, random.Random(seed + n)) for n, t in enumerate(tables)]  # fmt: skip  # noqa: E501
            players.append(ChaosPlayer(nginx.url, BUSY, random.Random(seed + 99)))  # busier
            for n, table in enumerate((BUSY, LINKED, LINKED)):  # the linked meters grow
                players.append(ChaosPlayer(nginx.url, table, random.Random(seed + 200 + n), side=PROGRESSIVES))  # fmt: skip  # noqa: E501
            stop = asyncio.Event()
            tasks = [
                asyncio.create_task(p.run(stop), name=f"player {n} at {p.table}")
                for n, p in enumerate(players)
            ]

            async def everyone_bet(since: list[int], what: str) -> None:
                try:
                    await each_bets(players, tasks, since, what=what, timeout=PATIENCE)
                except AssertionError as exc:
                    logs = ", ".join(str(n.log) for n in cluster)
                    raise AssertionError(f"{exc} (the nodes' logs: {logs})") from None

            def acked_at(table: str) -> list[Acked]:
                return [bet for p in players if p.table == table for bet in p.acked]

            async def bet_at(table: str, rounds: set[str]) -> None:
                """Until a bet is acknowledged at ``table`` in a round not in ``rounds``."""

                async def new_round() -> bool:
                    check_running(tasks)
                    return any(b.round_id not in rounds for b in acked_at(table))

                await awaited(new_round, f"a bet acknowledged at {table} since the last kill")

            async def every_table_bets(rounds: dict[str, set[str]]) -> None:
                """Until a bet is acknowledged at every table in a round not in ``rounds``."""

                def idle() -> list[str]:
                    check_running(tasks)
                    return [t for t in tables if all(b.round_id in rounds[t] for b in acked_at(t))]

                async def played() -> bool:
                    return not idle()

                try:
                    await awaited(played, "a bet acknowledged at every table after the kills")
                except AssertionError as exc:
                    logs = ", ".join(str(n.log) for n in cluster)
                    raise AssertionError(f"{exc}; not at {idle()} (logs: {logs})") from None

            async def kill_the_owner() -> None:
                """Kill the busy table's owner; once the table runs again on another node,
                the supervisor restarts the killed one (without waiting for it)."""

                async def held() -> tuple[str, int] | None:
                    return lease_of(redis, BUSY)

                victim, token = await awaited(held, f"{BUSY} has a node")  # not mid-move
                assert victim in nodes
                opened = await asyncio.to_thread(rounds_opened, postgres_url, BUSY)
                nodes[victim].kill()
                killed_at = time.monotonic()

                async def back() -> int | None:  # another owner, and a new round opened
                    lease = lease_of(redis, BUSY)
                    if lease is None or lease[0] == victim:
                        return None
                    more = await asyncio.to_thread(rounds_opened, postgres_url, BUSY)
                    return lease[1] if more > opened else None

                newer = await awaited(back, f"{BUSY} ran again after {victim} was killed")
                assert newer > token, "the new owner's fencing token is above the dead one's"
                failovers.append((time.monotonic() - killed_at) / LEASE)
                nodes[victim].start()  # the operator's supervisor restarts it, at once

            try:
                await everyone_bet([0] * len(players), "every player had a bet acknowledged")
                for _ in range(KILLS_PER_RUN):
                    # The players are back at the busy table: a bet of theirs acknowledged
                    # in a round since the last kill; then a random moment of a round.
                    await bet_at(BUSY, {b.round_id for b in acked_at(BUSY)})
                    await asyncio.sleep(rng.uniform(0.3, 1.5))
                    await kill_the_owner()
                    check_running(tasks)
                # The restarted nodes come back, and every game is played on after the kills
                # (each table's bet: a player of its own may be refused a while longer, its
                # bets late for a window the churn of kills left it slow to see).
                await asyncio.gather(*(asyncio.to_thread(n.wait_ready, STARTUP) for n in cluster))  # fmt: skip  # noqa: E501
                await every_table_bets({t: {b.round_id for b in acked_at(t)} for t in tables})
            finally:
                await stop_players(stop, tasks)
            return players

    players = asyncio.run(play())
    redis.close()
    finish(cluster, tmp_path, redis_server.url, postgres_url, startup=STARTUP, patience=PATIENCE, lease=LEASE)  # fmt: skip  # noqa: E501
    acked = [bet for p in players for bet in p.acked]
    report = sorted(failovers)
    print(f"failover leases over {len(report)} kills: min {report[0]:.2f}, "
          f"median {report[len(report) // 2]:.2f}, max {report[-1]:.2f}")  # fmt: skip
    for p in players:  # shown with -s: what each player got through
        print(f"{p.table}: {len(p.acked)} bets acknowledged, errors {p.errors}, {p.connections} connections")  # fmt: skip  # noqa: E501
    check_books(postgres_url, acked)
    contributions = check_linked_meters(postgres_url, SEEDS)
    assert all(contributions.values()), f"every linked meter grew: {contributions}"


def test_a_node_paused_past_its_lease_writes_nothing_when_it_resumes(
    cluster: list[Node], tmp_path: Path, redis_server: RedisServer, postgres_url: str
) -> None:
    nodes = {node.node_id: node for node in cluster}
    redis = Redis.from_url(redis_server.url)
    tables = re.findall(r'^id = "([^"]+)"', cluster[0].config.read_text(), re.M)
    # Settled first: every table at its placed node, none being handed over (a table moving
    # when the node stops would end its move, not lose its lease).
    waited(
        lambda: all(owner_of(redis, t) == place(t, sorted(nodes)) for t in tables),
        "every table runs at its placed node",
    )
    paused = owner_of(redis, BUSY)
    assert paused is not None
    node = nodes[paused]
    opened = rounds_opened(postgres_url, BUSY)

    def raised() -> tuple[int, str] | None:  # just after the lease
        fence = fence_of(postgres_url, BUSY)
        return fence if fence[1] == paused else None

    held = waited(raised, f"{paused} raised the fence of {BUSY}")
    before = node.log.stat().st_size  # what it says from now on counts
    node.signal(signal.SIGSTOP)  # paused mid-round: its tables' rounds stay open
    try:
        # Its tables now: stopped, it can neither take nor give back any (they only expire).
        mine = {t for t in tables if owner_of(redis, t) == paused}
        waited(
            lambda: (
                owner_of(redis, BUSY) not in (None, paused)
                and rounds_opened(postgres_url, BUSY) > opened
            ),
            "another node took the paused node's table and opened a round",
        )
    finally:
        node.signal(signal.SIGCONT)

    def said(table_id: str, log: str) -> bool:
        """It stopped the table, saying why: it lost the lease (another node holds it; or,
        its first reply from Redis overdue once it resumed, the lease expired while Redis
        was away); or its write was refused, by the fence or, paused mid-transaction, by
        the database having ended that transaction (server/pg_storage.py,
        IDLE_IN_TRANSACTION_MS), the table closed; or, paused while taking the table, it
        could not take it."""
        return (
            f"lost table {table_id}: " in log
            or f"fencing token refused: node {paused} no longer owns table {table_id}" in log
            or f"gave table {table_id} back (the table closed)" in log
            or f"table {table_id} could not be taken; lease given back" in log
        )

    def since_paused() -> str:
        with node.log.open("rb") as log:
            log.seek(before)
            return log.read().decode(errors="replace")

    # It resumes, finds its leases gone, and stops its tables.
    try:
        waited(
            lambda: all(said(t, since_paused()) for t in mine),
            f"{paused} said it lost each of its tables",
        )
    except AssertionError as exc:
        log = since_paused()
        missing = [t for t in mine if not said(t, log)]
        raise AssertionError(f"{exc}; not {missing}; its log since the pause:\n{log}") from None
    # Another node raised the fence past the paused node's token; the table may since have
    # been handed back to its placed node, but only under a newer token still.
    assert fence_of(postgres_url, BUSY)[0] > held[0]
    redis.close()
    finish(cluster, tmp_path, redis_server.url, postgres_url, startup=STARTUP, patience=PATIENCE, lease=LEASE)  # fmt: skip  # noqa: E501
    check_books(postgres_url, [])
