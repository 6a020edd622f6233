"""A cluster whose players' money is the operator's (``[wallet] mode = "seamless"``,
docs/wallet.md): two real ``croupier serve`` nodes on a real Redis and PostgreSQL behind the
real nginx, the reference operator wallet as a process of its own, JWT players betting at a
roulette table and a Down Under Blackjack table (Double Downs and splits: decisions'
stakes) — and the owner of the roulette table killed with SIGKILL mid-round, again and
again, its stakes' debits and its rounds' credits in flight. The node that takes the table
over rolls back the debits the dead one left unanswered, recovers its round, credits the
rounds that ended and sends what was left in the outbox.

Afterwards, for every player, the operator's balance is start − stakes taken + stakes
returned + credits (each side read from the shared ledger); the operator holds no open
debit and saw no anomaly (no transaction applied twice, no credit of a debit not open);
nothing is left to send (``croupier wallet pending``); and the operator's own statement
agrees with the record of every call (``croupier wallet reconcile``)."""

from __future__ import annotations

import asyncio
import random
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from redis import Redis

from server.cli.main import main
from server.wallet.pg_ledger import PgLedger
from tests.cluster import state
from tests.cluster.nodes import nginx_for, start_node
from tests.cluster.state import lease_of, rounds_opened
from tests.operator_wallet import OperatorWallet
from tests.redis_server import RedisServer
from tests.seamless_play import books_agree, play, seamless_sections

LEASE = 2.0
PATIENCE = 15 * LEASE
STARTUP = 60.0
KILLS = 5
BUSY = "rt"
PLAYERS = ("p-0", "p-1", "p-2")
START = 10**9
JWT_SECRET = "seamless-cluster-jwt-secret-0123456789"
SPOTS = {"rt": ["red", "black", "straight:7"], "du": ["bet:{seat}"]}


def config(tmp_path: Path, wallet: OperatorWallet) -> Path:
    path = tmp_path / "cluster.toml"
    path.write_text(
        f"[cluster]\nlease_seconds = {LEASE}\n"
        + seamless_sections(wallet, JWT_SECRET)
        + """
[[tables]]
id = "rt"
name = "Roulette"
game = "roulette"
betting_seconds = 0.8
pause_seconds = 0.2

[[tables]]
id = "du"
name = "Down Under Blackjack"
game = "down_under_blackjack"
betting_seconds = 0.8
pause_seconds = 0.2
decision_seconds = 1
"""
    )
    return path


@pytest.fixture
def operator(tmp_path: Path) -> Iterator[OperatorWallet]:
    (tmp_path / "operator").mkdir()
    wallet = OperatorWallet(tmp_path / "operator", auto_create=START)
    wallet.start()
    try:
        yield wallet
    finally:
        wallet.stop()


@pytest.mark.slow
def test_a_cluster_owner_killed_mid_round_leaves_the_operator_s_books_and_ours_agreeing(
    tmp_path: Path,
    redis_server: RedisServer,
    postgres_url: str,
    operator: OperatorWallet,
    capsys: pytest.CaptureFixture[str],
) -> None:
    rng = random.Random(2026_11_29)
    path = config(tmp_path, operator)
    nodes = [
        start_node(tmp_path, f"node-{n}", path, redis_server.url, postgres_url) for n in (1, 2)
    ]
    by_id = {node.node_id: node for node in nodes}
    redis = Redis.from_url(redis_server.url)
    bets = 0

    async def kill_the_owner() -> None:
        """Kill the busy table's owner; once the table runs again on the other node, the
        supervisor restarts the killed one."""

        async def held() -> tuple[str, int] | None:
            return lease_of(redis, BUSY)

        victim, _ = await state.awaited(held, f"{BUSY} has a node", PATIENCE, LEASE)
        opened = await asyncio.to_thread(rounds_opened, postgres_url, BUSY)
        by_id[victim].kill()

        async def back() -> bool:
            lease = lease_of(redis, BUSY)
            if lease is None or lease[0] == victim:
                return False
            return await asyncio.to_thread(rounds_opened, postgres_url, BUSY) > opened

        await state.awaited(back, f"{BUSY} ran again after {victim} was killed", PATIENCE, LEASE)
        by_id[victim].start()
        await asyncio.to_thread(by_id[victim].wait_ready, STARTUP)

    async def run() -> None:
        nonlocal bets
        for node in nodes:
            await asyncio.to_thread(node.wait_ready, STARTUP)
        with nginx_for(nodes) as nginx:
            # The operator fails now and then as well: answers lost after applying a call,
            # 503s before applying one — unknown to Croupier either way.
            operator.knobs(fail_rate={"*": 0.03}, timeout_rate={"*": 0.03}, hang_ms=1500,
                           latency_ms=10, seed=7)  # fmt: skip
            stop = asyncio.Event()
            tasks = [
                asyncio.create_task(play(nginx.url, p, JWT_SECRET, SPOTS, random.Random(n), stop))
                for n, p in enumerate(PLAYERS)
            ]
            try:
                for _ in range(KILLS):
                    await asyncio.sleep(rng.uniform(1.5, 3.0))  # a moment of some round
                    await kill_the_owner()
            finally:
                stop.set()
                bets = sum(await asyncio.gather(*tasks))
            operator.knobs(fail_rate={}, timeout_rate={}, latency_ms=0)

    asyncio.run(run())

    def drained() -> bool:
        assert main(["wallet", "pending", "--database", postgres_url]) == 0
        return "nothing pending" in capsys.readouterr().out

    # The players' last rounds end, and their credits go out: every node has loaded the
    # calls of the tables it took, and sends them until the operator says ok.
    time.sleep(5)
    state.waited(drained, "the outbox sent everything", PATIENCE, LEASE)
    for node in nodes:
        node.stop()
    redis.close()
    assert drained(), "nothing is left to send once the nodes have stopped"

    snapshot = operator.state()
    books_agree(PgLedger(postgres_url), snapshot, PLAYERS, START)
    statement = tmp_path / "statement.jsonl"
    statement.write_bytes(operator.get("/_reference/statement").raw)
    args = ["wallet", "reconcile", "--database", postgres_url, "--operator-statement"]
    assert main([*args, str(statement)]) == 0, capsys.readouterr().out
    # The players did bet, the kills and faults landed: debits settled and rolled back.
    assert bets > 10 * KILLS
    assert snapshot["debits"].get("settled", 0) > 5 * KILLS
    assert snapshot["debits"].get("rolled_back", 0) > 0
    logs = "".join(node.log.read_text() for node in nodes)
    assert len(re.findall(rf"took table {BUSY}\b", logs)) >= KILLS, "the table moved each time"
