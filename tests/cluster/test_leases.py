"""Table leases in Redis and fencing tokens in PostgreSQL (docs/operations.md, "Running a
cluster"): one owner per table, tokens that only grow, and a fence that refuses the writes
of a node that lost its lease — in the write's own transaction, nothing of it applied."""

from __future__ import annotations

import asyncio

import pytest
from redis.asyncio import Redis

from server.cluster.fencing import Fence, Fenced, StaleToken, fence_of, raise_fence
from server.cluster.leases import LeaseStore, Owner
from server.cluster.node import place
from server.journal.pg_journal import PgJournal
from server.pg_storage import connect
from server.stores import guarded
from server.wallet.ledger import PLAY_MONEY_ISSUER, Transfer
from server.wallet.pg_ledger import PgLedger
from tests.redis_server import RedisServer

LONG_MS = 600_000  # a lease no test outlives: what holds while it runs cannot expire
SHORT_MS = 50  # a lease that expires, once nothing renews it


def _leases(redis_server: RedisServer) -> tuple[Redis, LeaseStore, LeaseStore]:
    """The cluster's leases with a long lease time, and the same with a short one."""
    redis = Redis.from_url(redis_server.url)
    return redis, LeaseStore(redis, lease_ms=LONG_MS), LeaseStore(redis, lease_ms=SHORT_MS)


async def _gone(redis: Redis, key: str) -> None:
    """Until ``key`` has expired (a generous bound: a hundred times its expiry)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 100 * SHORT_MS / 1000
    while await redis.exists(key):
        assert loop.time() < deadline, f"{key} never expired"
        await asyncio.sleep(SHORT_MS / 1000 / 5)


def test_one_owner_per_table_and_tokens_that_only_grow(redis_server: RedisServer) -> None:
    async def go() -> None:
        redis, leases, short = _leases(redis_server)
        lease = "croupier:lease:bac"
        try:
            first = await leases.acquire("bac", "a")
            assert first == 1
            assert 0 < await redis.pttl(lease) <= LONG_MS  # it expires, a lease time on
            assert await leases.acquire("bac", "b") is None  # held: nobody else gets it
            assert await leases.renew([("bac", Owner("a", 1))]) == [True]
            assert await leases.renew([("bac", Owner("b", 1))]) == [False]  # not b's to renew
            assert await leases.owners() == {"bac": Owner("a", 1)}
            # a's last renewal, with a short lease time: it expires that long after
            assert await short.renew([("bac", Owner("a", 1))]) == [True]
            assert await redis.pttl(lease) <= SHORT_MS  # (-2: already expired)
            await _gone(redis, lease)  # a stops renewing: the lease expires
            assert await leases.owners() == {}
            assert await leases.acquire("bac", "b") == 2
            assert await leases.renew([("bac", Owner("a", 1))]) == [False]  # a lost it
            # many at once, each on its own: b's held, a's lost, none for "nope"
            assert await leases.acquire("war", "b") == 1
            renewed = [("bac", Owner("a", 1)), ("war", Owner("b", 1)), ("nope", Owner("a", 1))]
            assert await leases.renew(renewed) == [False, True, False]
            assert await leases.renew([]) == []
            assert not await leases.release("bac", Owner("a", 1))  # and cannot free it
            assert await leases.release("bac", Owner("b", 2))
            assert await leases.acquire("bac", "a") == 3
            # Redis lost its data: the counter is raised to the fence PostgreSQL holds
            await redis.flushall()
            await leases.raise_counter("bac", 7)
            assert await leases.acquire("bac", "a") == 8
        finally:
            await redis.aclose()

    asyncio.run(go())


def test_the_node_records_expire_with_the_lease(redis_server: RedisServer) -> None:
    async def go() -> None:
        redis, leases, short = _leases(redis_server)
        try:
            await leases.heartbeat("a", {"address": "127.0.0.1:1"})
            await leases.heartbeat("b", {"address": "127.0.0.1:2"})
            assert set(await leases.nodes()) == {"a", "b"}
            assert 0 < await redis.pttl("croupier:node:a") <= LONG_MS
            await leases.leave("b")
            assert await leases.nodes() == {"a": {"address": "127.0.0.1:1"}}
            await short.heartbeat("a", {"address": "127.0.0.1:1"})  # its last, a short lease
            assert await redis.pttl("croupier:node:a") <= SHORT_MS  # (-2: already expired)
            await _gone(redis, "croupier:node:a")
            assert await leases.nodes() == {}
        finally:
            await redis.aclose()

    asyncio.run(go())


def test_placement_moves_only_the_leaving_nodes_tables() -> None:
    tables = [f"t{i}" for i in range(200)]
    three = {t: place(t, ["a", "b", "c"]) for t in tables}
    two = {t: place(t, ["a", "b"]) for t in tables}
    assert {t for t in tables if three[t] != two[t]} == {t for t in tables if three[t] == "c"}
    counts = [list(three.values()).count(n) for n in "abc"]
    assert min(counts) > 40  # spread over every node (200 tables, ~67 each)
    assert place("t1", []) is None


def test_a_fence_refuses_the_writes_of_a_node_that_lost_the_table(postgres_url: str) -> None:
    ledger, journal = PgLedger(postgres_url), PgJournal(postgres_url)
    try:
        ledger.open_account(PLAY_MONEY_ISSUER, may_go_negative=True)
        ledger.open_account("player:p")
        with connect(postgres_url) as conn:
            raise_fence(conn, "bac", 1, "node-a")
        a_ledger = guarded(ledger, Fence("bac", 1, "node-a"))
        a_journal = guarded(journal, Fence("bac", 1, "node-a"))
        a_ledger.post("grant:1", [Transfer(PLAY_MONEY_ISSUER, "player:p", 500, "grant")])
        a_journal.open_round("bac", "bac.1", {"game": "baccarat"})
        with connect(postgres_url) as conn:  # node b takes the table
            raise_fence(conn, "bac", 2, "node-b")
            assert fence_of(conn, "bac") == (2, "node-b")
            with pytest.raises(StaleToken):  # a fence never goes down
                raise_fence(conn, "bac", 2, "node-a")
        with pytest.raises(Fenced, match="fencing token refused: node node-a"):
            a_ledger.post("grant:2", [Transfer(PLAY_MONEY_ISSUER, "player:p", 500, "grant")])
        with pytest.raises(Fenced):
            a_journal.append("bac.1", "bet", {"player": "p"})
        with pytest.raises(Fenced):
            asyncio.run(a_journal.asave_state("bac", "meters", {"x": 1}))
        # Nothing of the refused writes was applied; node b writes.
        assert ledger.balance("player:p") == 500
        assert [r.kind for r in journal.records("bac.1")] == ["opened"]
        b_journal = guarded(journal, Fence("bac", 2, "node-b"))
        b_journal.append("bac.1", "bet", {"player": "p"})
        assert [r.kind for r in journal.records("bac.1")] == ["opened", "bet"]
        a_journal.close()  # a view's close leaves the store open
        assert journal.status("bac.1") is not None
    finally:
        ledger.close()
        journal.close()
