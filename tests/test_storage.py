"""The durable writer: group commit, order, durability, errors, and a clean shutdown."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from concurrent.futures import Future
from pathlib import Path

import pytest

from server.storage import DurableWriter, StorageError, open_durable_sqlite
from server.wallet import OPEN_WAGERS, PLAY_MONEY_ISSUER, SqliteLedger, Transfer
from server.wallet.ledger import InsufficientFunds, player_account

SCHEMA = """
CREATE TABLE IF NOT EXISTS parent (id INTEGER PRIMARY KEY);
CREATE TABLE IF NOT EXISTS items (
    n INTEGER PRIMARY KEY AUTOINCREMENT,
    value TEXT NOT NULL,
    parent INTEGER REFERENCES parent(id)
);
"""


def _writer(path: Path) -> DurableWriter:
    open_durable_sqlite(path, SCHEMA).close()
    return DurableWriter(open_durable_sqlite(path, ""), "test store", owns_db=True)


def _insert(value: str) -> object:
    def apply(db: sqlite3.Connection) -> int:
        row = db.execute("INSERT INTO items(value) VALUES (?)", (value,)).lastrowid
        assert row is not None
        return row

    return apply


def _values(path: Path) -> list[str]:
    """What another connection — another process — finds in the file."""
    with sqlite3.connect(path) as db:
        return [v for (v,) in db.execute("SELECT value FROM items ORDER BY n")]


def _blocker(started: threading.Event, release: threading.Event) -> object:
    def apply(db: sqlite3.Connection) -> None:
        started.set()
        assert release.wait(10)

    return apply


def _hold(writer: DurableWriter) -> tuple[threading.Event, Future[None]]:
    """Keep the writer inside a group until the returned event is set, so the next writes
    queue up behind it; also the held write's future."""
    started, release = threading.Event(), threading.Event()
    held = writer.submit(_blocker(started, release))  # type: ignore[arg-type]
    assert started.wait(10)  # the writer is inside its first group
    return release, held


def test_writes_queued_while_a_commit_is_under_way_share_the_next_commit(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite"
    writer = _writer(path)
    release, first = _hold(writer)
    futures = [writer.submit(_insert(f"v{n}")) for n in range(50)]  # type: ignore[arg-type]
    release.set()
    first.result(10)
    rows = [f.result(10) for f in futures]
    assert writer.groups == 2 and writer.writes == 51  # 50 writes, one transaction, one fsync
    assert rows == sorted(rows)  # applied in the order they were submitted
    assert _values(path) == [f"v{n}" for n in range(50)]
    writer.close()


def test_an_awaited_write_is_in_the_file_when_it_resolves(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite"
    writer = _writer(path)

    async def scenario() -> None:
        for n in range(5):
            await writer.run(_insert(f"v{n}"))  # type: ignore[arg-type]
            assert _values(path)[-1] == f"v{n}"  # committed: another connection sees it

    asyncio.run(scenario())
    writer.close()


def test_a_write_that_raises_is_undone_alone_and_its_error_reaches_the_caller(
    tmp_path: Path,
) -> None:
    path = tmp_path / "store.sqlite"
    writer = _writer(path)
    release, _ = _hold(writer)

    def refused(db: sqlite3.Connection) -> None:
        db.execute("INSERT INTO items(value) VALUES ('half-done')")
        raise ValueError("the caller's own refusal")

    before = writer.submit(_insert("before"))  # type: ignore[arg-type]
    bad = writer.submit(refused)
    after = writer.submit(_insert("after"))  # type: ignore[arg-type]
    release.set()
    with pytest.raises(ValueError, match="own refusal"):
        bad.result(10)
    before.result(10), after.result(10)
    assert _values(path) == ["before", "after"]
    writer.close()


def test_a_failed_commit_fails_every_write_of_its_group_and_applies_none(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite"
    writer = _writer(path)
    release, _ = _hold(writer)

    def breaks_the_commit(db: sqlite3.Connection) -> None:
        # A deferred foreign key is checked by COMMIT itself: the commit fails.
        db.execute("PRAGMA defer_foreign_keys=ON")
        db.execute("INSERT INTO items(value, parent) VALUES ('orphan', 42)")

    group = [
        writer.submit(_insert("a")),  # type: ignore[arg-type]
        writer.submit(breaks_the_commit),
        writer.submit(_insert("b")),  # type: ignore[arg-type]
    ]
    release.set()
    for future in group:
        with pytest.raises(StorageError, match="test store could not be written"):
            future.result(10)
    assert _values(path) == []
    assert writer.call(_insert("later")) is not None  # type: ignore[arg-type]
    assert _values(path) == ["later"]  # the writer carries on
    writer.close()


def test_close_commits_everything_queued_then_refuses_writes(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite"
    writer = _writer(path)
    futures = [writer.submit(_insert(f"v{n}")) for n in range(200)]  # type: ignore[arg-type]
    writer.close()
    assert all(f.done() and f.exception() is None for f in futures)
    assert _values(path) == [f"v{n}" for n in range(200)]
    with pytest.raises(StorageError, match="closed"):
        writer.call(_insert("too late"))  # type: ignore[arg-type]
    writer.close()  # idempotent


def test_two_quick_bets_never_overdraw_and_pending_debits_count(tmp_path: Path) -> None:
    ledger = SqliteLedger(tmp_path / "ledger.sqlite")
    ledger.open_account(PLAY_MONEY_ISSUER, may_go_negative=True)
    ledger.open_account(OPEN_WAGERS)
    alice = player_account("alice")
    ledger.open_account(alice)
    ledger.post("grant", [Transfer(PLAY_MONEY_ISSUER, alice, 150, "grant")])

    async def scenario() -> None:
        bets = [
            asyncio.ensure_future(
                ledger.apost(f"bet:{n}", [Transfer(alice, OPEN_WAGERS, 100, "wager")])
            )
            for n in range(2)
        ]
        await asyncio.sleep(0)  # both are on their way to the writer
        assert ledger.available(alice) <= 150 - 200
        results = await asyncio.gather(*bets, return_exceptions=True)
        assert results[0].applied  # type: ignore[union-attr]
        assert isinstance(results[1], InsufficientFunds)
        assert ledger.available(alice) == ledger.balance(alice) == 50

    asyncio.run(scenario())
    assert ledger.reconcile() == {} and ledger.total() == 0
    ledger.close()
    reopened = SqliteLedger(tmp_path / "ledger.sqlite")
    assert reopened.balance(alice) == 50
    reopened.close()


def test_a_queued_write_keeps_its_place_and_counts_as_in_flight_until_durable(
    tmp_path: Path,
) -> None:
    """``queued`` submits at once (a bet's journal record, ahead of everything later in its
    round) and is awaited later; ``writes_in_flight`` counts it until it resolves."""
    from server.storage import writes_in_flight

    path = tmp_path / "store.sqlite"
    writer = _writer(path)

    async def scenario() -> None:
        started, release = threading.Event(), threading.Event()
        blocked = writer.queued(_blocker(started, release))  # type: ignore[arg-type]
        early = writer.queued(_insert("bet"))  # type: ignore[arg-type]
        assert await asyncio.to_thread(started.wait, 10)
        assert writes_in_flight() >= 2
        late = asyncio.ensure_future(writer.run(_insert("closed")))  # type: ignore[arg-type]
        release.set()
        await blocked
        assert await late > await early  # the record queued first is applied first
        assert _values(path) == ["bet", "closed"]

    asyncio.run(scenario())
    assert writes_in_flight() == 0
    writer.close()


def test_a_waiter_that_gives_up_takes_its_write_with_it_and_the_writer_goes_on(
    tmp_path: Path,
) -> None:
    """A table task cancelled while its write waits in the queue cancels the write; the
    writer must skip it, not die resolving a cancelled future."""
    path = tmp_path / "store.sqlite"
    writer = _writer(path)
    release, first = _hold(writer)
    abandoned = writer.submit(_insert("abandoned"))  # type: ignore[arg-type]
    assert abandoned.cancel()
    kept = writer.submit(_insert("kept"))  # type: ignore[arg-type]
    release.set()
    first.result(10)
    kept.result(10)
    assert writer.call(_insert("later")) > 0  # type: ignore[arg-type]
    assert _values(path) == ["kept", "later"]
    writer.close()


def test_a_write_that_breaks_a_constraint_fails_alone(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite"
    writer = _writer(path)

    def orphan(db: sqlite3.Connection) -> None:
        db.execute("INSERT INTO items(value, parent) VALUES ('orphan', 42)")  # no parent 42

    release, first = _hold(writer)
    before = writer.submit(_insert("before"))  # type: ignore[arg-type]
    bad = writer.submit(orphan)
    after = writer.submit(_insert("after"))  # type: ignore[arg-type]
    release.set()
    first.result(10)
    with pytest.raises(StorageError, match="refused a write"):
        bad.result(10)
    assert before.result(10) and after.result(10)
    assert _values(path) == ["before", "after"]
    writer.close()
