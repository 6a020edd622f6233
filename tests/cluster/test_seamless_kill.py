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
import contextlib
import random
import re
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import jwt
import pytest
from redis import Redis
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake

from server.cli.main import main
from server.protocol.codec import decode_server, encode
from server.protocol.messages import (
    PROTOCOL_VERSION,
    Decide,
    Hello,
    Join,
    Joined,
    PlaceBet,
    TableEvent,
)
from server.wallet.pg_ledger import PgLedger
from tests.cluster import state
from tests.cluster.nodes import nginx_for, start_node
from tests.cluster.state import lease_of, rounds_opened
from tests.operator_wallet import OperatorWallet
from tests.redis_server import RedisServer

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
    path.write_text(f"""
[cluster]
lease_seconds = {LEASE}

[auth]
mode = "jwt"
jwt_secret = "{JWT_SECRET}"

[wallet]
mode = "seamless"
url = "{wallet.url}"
secret_file = "{wallet.secret_file}"
timeout_ms = 1000

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
""")
    return path


def token(player: str) -> str:
    return jwt.encode({"sub": player, "exp": int(time.time()) + 3600}, JWT_SECRET, "HS256")


async def _player(url: str, player: str, rng: random.Random, stop: asyncio.Event) -> int:
    """Bet on every round of both tables, taking Down Under's decisions (a Double Down or a
    split half the time), connecting again whenever the connection drops, until ``stop``:
    how many bets it sent."""
    sent = 0
    while not stop.is_set():
        seats: dict[str, int | None] = {}
        with contextlib.suppress(ConnectionClosed, OSError, InvalidHandshake, asyncio.TimeoutError):
            async with connect(url, open_timeout=2) as ws:
                await ws.send(encode(Hello(version=PROTOCOL_VERSION, token=token(player))))
                for table in SPOTS:
                    await ws.send(encode(Join(table=table)))
                while not stop.is_set():
                    async with asyncio.timeout(1):
                        message = decode_server(await ws.recv(decode=False))
                    if isinstance(message, Joined):
                        seats[message.table] = message.snapshot.seat
                    if not isinstance(message, TableEvent):
                        continue
                    data = message.data
                    if message.event == "betting_opened":
                        for n in range(rng.randint(1, 2)):
                            spot = rng.choice(SPOTS[message.table])
                            await ws.send(
                                encode(
                                    PlaceBet(
                                        table=message.table, round=message.round,
                                        bet_id=f"b{n}",
                                        spot=spot.format(seat=seats.get(message.table)),
                                        amount=100 * rng.randint(1, 20),
                                    )
                                )
                            )  # fmt: skip
                            sent += 1
                    elif message.event == "decision_requested" and data["player_id"] == player:
                        options = list(data["options"])
                        staked = [o for o in options if o in ("double", "split")]
                        choice = rng.choice(staked if staked and rng.random() < 0.5 else options)
                        await ws.send(
                            encode(
                                Decide(table=message.table, round=message.round,
                                       spot=data["spot"], decision=choice)
                            )
                        )  # fmt: skip
        await asyncio.sleep(0.2)
    return sent


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

    async def play() -> None:
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
                asyncio.create_task(_player(nginx.url, p, random.Random(n), stop))
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

    asyncio.run(play())

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
    assert snapshot["anomalies"] == [] and snapshot["open_debits"] == []
    moves: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    ledger = PgLedger(postgres_url)
    try:
        assert ledger.reconcile() == {} and ledger.total() == 0
        assert ledger.balance("wagers:open") == 0
        for player in PLAYERS:
            for _, t in ledger.history(f"player:{player}"):
                moves[player][t.kind] += t.amount
            assert ledger.balance(f"player:{player}") == 0  # a transit account, at rest
    finally:
        ledger.close()
    for player in PLAYERS:
        m = moves[player]
        expected = START - m["wallet-debit"] + m["wallet-rollback"] + m["wallet-credit"]
        assert snapshot["players"][player]["balance"] == expected, (player, dict(m))
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
