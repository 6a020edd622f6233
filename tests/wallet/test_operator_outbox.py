"""The outbox of credits and rollbacks: written before it is sent, sent again until the
operator answers ok, across an operator that is down, an answer lost after the call was
applied, and a restart of Croupier — against the reference operator wallet as a real
process, on the embedded store (SQLite) and a cluster's (PostgreSQL). Afterwards the
operator applied each call once, and nothing is pending."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from server.pg_storage import PgReader, PgWriter
from server.storage import SqliteStore
from server.wallet.operator import contract as c
from server.wallet.operator.client import OperatorWalletClient
from server.wallet.operator.outbox import OUTBOX_SCHEMA, Outbox, OutboxCall, queue_calls
from tests.operator_wallet import OperatorWallet, running

NS = "test"


class _Store(SqliteStore):
    _SCHEMA: ClassVar[str] = OUTBOX_SCHEMA
    _NAME: ClassVar[str] = "wallet"


class Place:
    """Where a Croupier keeps its outbox: a SQLite file, or a shared PostgreSQL database.
    ``open`` gives (write, read, parameter mark, close), as a store would."""

    def __init__(self, kind: str, where: str) -> None:
        self.kind, self.where = kind, where

    def open(self) -> tuple[Any, Any, str, Any]:
        if self.kind == "sqlite":
            store = _Store(self.where)
            return (
                lambda apply: store._writer.run(apply),
                lambda sql, params: store._rows(sql, params),
                "?",
                store.close,
            )
        writer, reader = PgWriter(self.where, "wallet"), PgReader(self.where)

        def close() -> None:
            writer.close()
            reader.close()

        return (lambda apply: writer.run(apply), reader.rows, "%s", close)

    def rows(self, sql: str) -> list[Any]:
        _, read, _, close = self.open()
        try:
            return list(read(sql, ()))
        finally:
            close()

    def write(self, apply: Any) -> None:
        write, _, _, close = self.open()
        try:
            asyncio.run(write(apply))
        finally:
            close()


@pytest.fixture(params=["sqlite", "postgres"])
def place(request: pytest.FixtureRequest, tmp_path: Path) -> Place:
    if request.param == "sqlite":
        return Place("sqlite", str(tmp_path / "croupier.sqlite"))
    return Place("postgres", request.getfixturevalue("postgres_url"))


@pytest.fixture
def wallet(tmp_path: Path) -> Iterator[OperatorWallet]:
    with running(tmp_path, "alice", "bob") as w:
        yield w


def credit(player: str, amount: int, round_id: str = "t1.1", table: str = "t1") -> OutboxCall:
    txid = c.credit_id(NS, round_id, player)
    return OutboxCall("credit", c.credit_body(txid, player, "USD", amount, round_id, table, []))


def rollback(player: str, bet: str, amount: int) -> OutboxCall:
    debit = c.debit_id(NS, "t1.1", player, bet)
    body = c.rollback_body(c.rollback_id(debit), debit, player, "USD", amount, "t1.1", "t1")
    return OutboxCall("rollback", body)


@contextlib.asynccontextmanager
async def outbox(wallet: OperatorWallet, place: Place, **options: Any) -> AsyncIterator[Outbox]:
    """An outbox on the store at ``place``, its sender running, as one Croupier process."""
    write, read, ph, close = place.open()
    client = OperatorWalletClient(wallet.url, wallet.secret, timeout=options.pop("timeout", 2))
    box = Outbox(client, write, read, ph, first_pause=0.05, **options)
    task = asyncio.create_task(box.run())
    try:
        yield box
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await client.close()
        close()


def calls_of(place: Place) -> list[tuple[str, int, str]]:
    rows = place.rows("SELECT transaction_id, attempt, outcome FROM wallet_calls ORDER BY 1, 2")
    return [(str(t), int(a), str(o)) for t, a, o in rows]


def test_calls_wait_out_an_operator_that_is_down(wallet: OperatorWallet, place: Place) -> None:
    wallet.knobs(down=True)
    answered: list[tuple[str, int]] = []

    async def go() -> None:
        async with outbox(
            wallet, place, on_answered=lambda call, b: answered.append((call.body["player_id"], b))
        ) as box:
            await box.queue([credit("alice", 1_500), credit("bob", 0)])
            await asyncio.sleep(0.5)  # a few attempts, all answered 503
            pending = box.pending()
            assert sorted(p.player_id for p in pending) == ["alice", "bob"]
            assert all(p.attempts >= 2 and p.last_error == "HTTP 503" for p in pending)
            assert wallet.balance_of("alice") == 10_000
            wallet.knobs(down=False)
            await asyncio.wait_for(box.drained(), 10)
            assert box.pending() == []

    asyncio.run(go())
    assert sorted(answered) == [("alice", 11_500), ("bob", 10_000)]
    assert wallet.balance_of("alice") == 11_500 and wallet.state()["calls"] == {"credit": 2}
    attempts = calls_of(place)
    assert {o for _, _, o in attempts} == {"unknown", "ok"}
    # Every attempt recorded, numbered from 1, the last of each call the ok one.
    for txid in {t for t, _, _ in attempts}:
        mine = [(a, o) for t, a, o in attempts if t == txid]
        assert [a for a, _ in mine] == list(range(1, len(mine) + 1)) and mine[-1][1] == "ok"


def test_an_answer_lost_after_the_call_was_applied_is_applied_once(
    wallet: OperatorWallet, place: Place
) -> None:
    wallet.post(
        "/debit",
        c.debit_body(
            c.debit_id(NS, "t1.1", "alice", "b1"), "alice", "USD", 500, "t1.1", "t1", "b1"
        ),
    )
    wallet.knobs(timeout_after={"rollback": 2}, hang_ms=1_500)

    async def go() -> None:
        async with outbox(wallet, place, timeout=0.3) as box:
            await box.queue([rollback("alice", "b1", 500)])
            await asyncio.wait_for(box.drained(), 20)

    asyncio.run(go())
    assert wallet.balance_of("alice") == 10_000  # returned once, though applied "three times"
    assert wallet.state()["debits"] == {"rolled_back": 1}
    assert [o for _, _, o in calls_of(place)] == [
        "unknown",
        "unknown",
        "ok",
    ]


def test_a_restart_sends_what_was_left(wallet: OperatorWallet, place: Place) -> None:
    """Croupier stops with calls unanswered; the next process on the same store sends
    them (``load``), and only the table it takes when told one."""
    wallet.knobs(down=True)

    async def first() -> None:
        async with outbox(wallet, place) as box:
            await box.queue([credit("alice", 700), credit("bob", 300, "t2.5", "t2")])
            await asyncio.sleep(0.2)

    async def second() -> tuple[int, int]:
        async with outbox(wallet, place) as box:
            loaded_t1 = box.load("t1")
            await asyncio.wait_for(box.drained(), 10)
            assert [p.table_id for p in box.pending()] == ["t2"]
            loaded_rest = box.load()  # t1's is answered: only t2's is left
            await asyncio.wait_for(box.drained(), 10)
            assert box.pending() == []
            return loaded_t1, loaded_rest

    asyncio.run(first())
    assert wallet.balance_of("alice") == 10_000
    wallet.knobs(down=False)
    assert asyncio.run(second()) == (1, 1)
    assert wallet.balance_of("alice") == 10_700 and wallet.balance_of("bob") == 10_300
    assert wallet.state()["anomalies"] == []


def test_queueing_a_call_twice_keeps_one(wallet: OperatorWallet, place: Place) -> None:
    """A settlement written again (after a crash) queues the same transaction ids again:
    the outbox keeps the first, and the operator is credited once."""
    ph = "?" if place.kind == "sqlite" else "%s"
    place.write(lambda conn: queue_calls(conn, ph, [credit("alice", 900)], 1.0))
    place.write(lambda conn: queue_calls(conn, ph, [credit("alice", 900)], 2.0))
    rows = place.rows("SELECT COUNT(*), MIN(queued_at) FROM wallet_outbox")
    assert [tuple(r) for r in rows] == [(1, 1.0)]

    async def go() -> None:
        async with outbox(wallet, place) as box:
            assert box.load() == 1
            box.take([credit("alice", 900)])  # already held: not sent twice
            await asyncio.wait_for(box.drained(), 10)

    asyncio.run(go())
    assert wallet.balance_of("alice") == 10_900 and wallet.state()["calls"] == {"credit": 1}


def test_only_credits_and_rollbacks_wait_in_the_outbox() -> None:
    body = c.debit_body("d", "alice", "USD", 5, "t1.1", "t1", "b1")
    with pytest.raises(ValueError, match="only credits and rollbacks"):
        OutboxCall("debit", body)
    with pytest.raises(ValueError, match="lacks"):
        OutboxCall("credit", {"transaction_id": "c"})


def test_a_call_tried_a_thousand_times_is_tried_again(wallet: OperatorWallet, place: Place) -> None:
    """The attempts count on across restarts and outages: a call that has failed more than
    a thousand times (its pause's exponent capped) goes back in line after another failure
    instead of being dropped from this process's sending."""
    wallet.knobs(down=True)

    async def go() -> None:
        async with outbox(wallet, place) as box:
            await box.queue([])  # nothing: the sender is running
            call = credit("alice", 100)
            ph = "?" if place.kind == "sqlite" else "%s"
            await box._write(lambda conn: queue_calls(conn, ph, [call], 0.0))
            box.take([call], attempts=2_000)
            for _ in range(100):
                await asyncio.sleep(0.02)
                if box.pending()[0].attempts >= 1:
                    break
            await asyncio.sleep(0.05)
            assert box.holds(call.transaction_id) and box._due, "dropped after a failure"

    asyncio.run(go())
