"""The PostgreSQL writer of a cluster's stores: group commit, a refusal undone alone, a
deadlock with another node's writer broken and both sides' writes made, and a guard (a
table's fence) checked once per transaction."""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import Future
from typing import Any

import psycopg
import pytest

from server.group_commit import writes_in_flight
from server.pg_storage import IDLE_IN_TRANSACTION_MS, PgWriter
from server.stores import StorageError, guarded
from server.wallet.ledger import InsufficientFunds, Transfer
from server.wallet.pg_ledger import PgLedger

Conn = psycopg.Connection[Any]


def _accounts(url: str, *names: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        for name in names:
            conn.execute("INSERT INTO accounts(name, balance) VALUES (%s, 0)", (name,))


def _balances(url: str) -> dict[str, int]:
    with psycopg.connect(url, autocommit=True) as conn:
        return {n: int(b) for n, b in conn.execute("SELECT name, balance FROM accounts")}


def _add(name: str, amount: int = 1) -> Any:
    def apply(conn: Conn) -> int:
        row = conn.execute(
            "UPDATE accounts SET balance = balance + %s WHERE name = %s RETURNING balance",
            (amount, name),
        ).fetchone()
        assert row is not None
        return int(row[0])

    return apply


def _hold(writer: PgWriter) -> tuple[threading.Event, Future[None]]:
    """Keep the writer inside a transaction until the returned event is set, so the next
    writes queue up behind it and make one group."""
    started, release = threading.Event(), threading.Event()

    def blocker(conn: Conn) -> None:
        started.set()
        assert release.wait(10)

    held = writer.submit(blocker)
    assert started.wait(10)
    return release, held


def test_writes_queued_behind_a_transaction_share_the_next_commit(postgres_url: str) -> None:
    _accounts(postgres_url, "a")
    writer = PgWriter(postgres_url, "test")
    release, first = _hold(writer)
    futures = [writer.submit(_add("a")) for _ in range(50)]
    release.set()
    first.result(10)
    assert [f.result(10) for f in futures] == list(range(1, 51))  # in the order submitted
    assert writer.groups == 2 and writer.writes == 51  # 50 writes, one transaction
    assert _balances(postgres_url) == {"a": 50}
    writer.close()


def test_a_write_counts_in_flight_until_it_resolves_as_on_sqlite(postgres_url: str) -> None:
    """A manual clock waits for the cluster's writes as for the embedded stores'."""
    _accounts(postgres_url, "a")
    writer = PgWriter(postgres_url, "test")
    before = writes_in_flight()
    release, held = _hold(writer)
    queued = writer.submit(_add("a"))
    assert writes_in_flight() == before + 2
    release.set()
    assert (held.result(10), queued.result(10)) == (None, 1)
    deadline = time.monotonic() + 10  # a future's callbacks run just after its waiters wake
    while writes_in_flight() != before and time.monotonic() < deadline:
        time.sleep(0.001)
    assert writes_in_flight() == before
    writer.close()


def test_a_refused_write_fails_alone_and_the_rest_of_its_group_commits(postgres_url: str) -> None:
    _accounts(postgres_url, "a")
    writer = PgWriter(postgres_url, "test")
    release, _ = _hold(writer)

    def refused(conn: Conn) -> None:
        conn.execute("UPDATE accounts SET balance = balance + 1000 WHERE name = 'a'")
        raise ValueError("the caller's own refusal")

    before = writer.submit(_add("a"))
    bad = writer.submit(refused)
    after = writer.submit(_add("a", 10))
    release.set()
    with pytest.raises(ValueError, match="own refusal"):
        bad.result(10)
    assert (before.result(10), after.result(10)) == (1, 11)
    assert _balances(postgres_url) == {"a": 11}  # nothing of the refused write
    writer.close()


def test_a_deadlock_between_two_nodes_groups_loses_no_write(postgres_url: str) -> None:
    """Two writers (two nodes) lock the same two rows in opposite orders inside their
    groups: PostgreSQL breaks the deadlock by rolling one transaction back, and that
    writer makes its writes again one by one — every write is applied exactly once."""
    _accounts(postgres_url, "x", "y")
    one, two = PgWriter(postgres_url, "one"), PgWriter(postgres_url, "two")
    one_locked, two_locked = threading.Event(), threading.Event()

    def first(name: str, mine: threading.Event, theirs: threading.Event) -> Any:
        def apply(conn: Conn) -> int:
            result: int = _add(name)(conn)
            mine.set()
            assert theirs.wait(10)  # both hold their first row before either goes on
            return result

        return apply

    release_one, held_one = _hold(one)
    release_two, held_two = _hold(two)
    futures = [
        one.submit(first("x", one_locked, two_locked)),
        one.submit(_add("y")),
        two.submit(first("y", two_locked, one_locked)),
        two.submit(_add("x")),
    ]
    release_one.set()
    release_two.set()
    held_one.result(10), held_two.result(10)
    for future in futures:
        future.result(30)  # none failed
    assert _balances(postgres_url) == {"x": 2, "y": 2}
    assert one.writes == two.writes == 3
    one.close()
    two.close()


class _CountingGuard:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, conn: Conn) -> None:
        self.calls += 1
        conn.execute("SELECT 1")


def test_a_guard_is_checked_once_per_transaction(postgres_url: str) -> None:
    """A table's fence, locked by its check until the commit, is asked once per group. A
    debit refused in a group of bets' debits (set-based, ``Batched``) is refused alone; a
    refusal that undoes its group (a settlement's ``apost_many``) has each write made alone
    after it, each asking again."""
    ledger = PgLedger(postgres_url)
    ledger.open_account("house", may_go_negative=True)
    ledger.open_account("p")
    guard = _CountingGuard()
    view = guarded(ledger, guard)

    async def together(*batches: tuple[str, Transfer], many: bool = False) -> list[Any]:
        release, _ = _hold(ledger._writer)  # the batches queue up and make one group
        posts = [
            asyncio.ensure_future(
                view.apost_many([(key, [t])]) if many and key == "big" else view.apost(key, [t])
            )
            for key, t in batches
        ]
        await asyncio.sleep(0.2)
        release.set()
        return await asyncio.gather(*posts, return_exceptions=True)

    deposits = [(f"d{n}", Transfer("house", "p", 10, "deposit")) for n in range(5)]
    assert all(r.applied for r in asyncio.run(together(*deposits)))
    assert guard.calls == 1
    overdraft = ("big", Transfer("p", "house", 1000, "bet"))
    results = asyncio.run(together(("d5", deposits[0][1]), overdraft, ("d6", deposits[0][1])))
    assert isinstance(results[1], InsufficientFunds)
    assert guard.calls == 1 + 1  # refused alone: the group committed the others
    assert ledger.balance("p") == 70
    results = asyncio.run(
        together(("d7", deposits[0][1]), overdraft, ("d8", deposits[0][1]), many=True)
    )
    assert isinstance(results[1], InsufficientFunds)
    assert guard.calls == 2 + 1 + 3  # the undone group's check, then each write's own
    assert ledger.balance("p") == 90
    ledger.close()


def test_a_writer_stalled_inside_its_transaction_lets_go_of_its_rows(postgres_url: str) -> None:
    """A node paused (SIGSTOP, a partition, a starved thread) in the middle of a group holds
    the rows it wrote — a table's fence among them. The database ends such a transaction
    (``IDLE_IN_TRANSACTION_MS``): another node's write goes through, and nothing of the
    stalled one is applied; its writer carries on with the next write."""
    _accounts(postgres_url, "a")
    writer = PgWriter(postgres_url, "test")
    locked = threading.Event()

    def stalled(conn: Conn) -> None:
        _add("a")(conn)  # the row is locked by this transaction
        locked.set()
        time.sleep(IDLE_IN_TRANSACTION_MS / 1000 + 1.5)  # the process stops here a while
        conn.execute("SELECT 1")

    future = writer.submit(stalled)
    assert locked.wait(10)
    with psycopg.connect(postgres_url, autocommit=True) as other:  # waits for the row
        other.execute("UPDATE accounts SET balance = balance + 10 WHERE name = 'a'")
    with pytest.raises(StorageError, match="test write failed"):
        future.result(10)
    assert _balances(postgres_url) == {"a": 10}  # the stalled write never committed
    assert writer.call(_add("a")) == 11  # a new connection, and on
    writer.close()


def _shared_stores(url: str) -> tuple[PgWriter, PgLedger, Any]:
    """A ledger and a journal of one database sharing one writer (``server.app.stores``),
    with the house's account and the open wagers'."""
    from server.journal.pg_journal import PgJournal
    from server.wallet.ledger import OPEN_WAGERS

    writer = PgWriter(url, "store")
    ledger = PgLedger(url, writer=writer)
    journal = PgJournal(url, writer=writer.shared())
    for account, negative in (("house", True), (OPEN_WAGERS, False)):
        ledger.open_account(account, may_go_negative=negative)
    return writer, ledger, journal


def _bet(round_id: str, player: str) -> tuple[Any, ...]:
    """A bet of 100 on red as a table core waits for it: its record and its debit."""
    from server.core import effects as fx
    from server.journal import records as rec
    from server.wallet.ledger import OPEN_WAGERS

    record = rec.Bet(player=player, bet_id="b", spot="red", amount=100)
    debit = Transfer(f"player:{player}", OPEN_WAGERS, 100, "wager", round_id, "b")
    return fx.AppendRecord(round_id, record, player), fx.Post(
        f"bet:{round_id}:{player}:b", (debit,)
    )


def test_a_bets_record_and_debit_commit_together_where_one_database_keeps_both(
    postgres_url: str,
) -> None:
    """The ledger and the journal of one database share a writer (``server.app.stores``):
    a bet's journal record and its debit (a table's ``Wait``) are applied in the same
    transaction, a burst of them in one group; a debit the balance does not cover is
    refused alone (its record stands, for the core to follow with ``bet_refused``); a
    cluster table's guarded views take the same path, the fence checked once; the writer
    ends with the last of its stores."""
    from server.core import effects as fx
    from server.tables.waits import TableStores
    from server.wallet.ledger import OPEN_WAGERS, PostResult

    writer, ledger, journal = _shared_stores(postgres_url)
    players = [f"player:p{n}" for n in range(10)]
    for player in players:
        ledger.open_account(player)
        grant = 50 if player.endswith("p3") else 500  # p3 cannot cover a bet of 100
        ledger.post(f"grant:{player}", [Transfer("house", player, grant, "grant")])
    journal.open_round("t", "t.1", {})
    stores = TableStores("t", ledger, journal, None)  # type: ignore[arg-type]

    def bet(player: str) -> tuple[Any, ...]:
        return _bet("t.1", player.split(":")[1])

    async def burst(on: TableStores) -> list[tuple[Any, ...]]:
        release, _ = _hold(writer)
        waits = [asyncio.ensure_future(on.results(bet(p))) for p in players]
        await asyncio.sleep(0.2)
        release.set()
        return list(await asyncio.gather(*waits))

    groups = writer.groups
    results = asyncio.run(burst(stores))
    assert writer.groups - groups == 2  # the held write, then the ten bets: one transaction
    for player, (journaled, debited) in zip(players, results, strict=True):
        assert isinstance(journaled, int)
        if player.endswith("p3"):  # 50 does not cover 100
            assert isinstance(debited, fx.Refused) and debited.balance == 50
        else:
            assert isinstance(debited, PostResult) and debited.balances[player] == 400
    assert len([r for r in journal.records("t.1") if r.kind == "bet"]) == 10
    assert ledger.balance(OPEN_WAGERS) == 900 and ledger.available("player:p0") == 400

    guard = _CountingGuard()
    view = TableStores("t", guarded(ledger, guard), guarded(journal, guard), None)  # type: ignore[arg-type]
    journaled, debited = asyncio.run(view.results(bet("player:p3")))  # p3 again: still 50
    assert isinstance(debited, fx.Refused) and guard.calls == 1

    ledger.close()  # the journal still writes through the shared writer
    journal.append("t.1", "closed", {})
    journal.close()
    with pytest.raises(StorageError, match="closed"):
        writer.call(_add("house"))


def test_a_linked_meter_waiting_for_its_rows_holds_up_no_other_write(postgres_url: str) -> None:
    """The linked meters' rows are shared by every table of the link on every node: while
    another node's transaction holds them, this node's settlement waits — on a writer of
    its own, so a bet's record queued meanwhile commits at once. A cluster table's guarded
    view checks its fence on that writer too."""
    from server.journal.pg_journal import PgJournal

    journal = PgJournal(postgres_url)
    journal.open_round("t", "t.1", {})
    journal.open_round("t", "t.2", {})
    assert journal._meters is not journal._writer

    def apply(states: Any) -> tuple[dict[str, dict[str, int]], dict[str, Any]]:
        return {"jackpot": {"amount": 7}}, {"hit": False}

    async def scenario() -> tuple[int, bool, dict[str, Any]]:
        with psycopg.connect(postgres_url) as other:  # another node, mid-transaction
            other.execute("INSERT INTO linked_meters(key, state) VALUES ('link:j', NULL)")
            other.commit()
            other.execute("SELECT state FROM linked_meters WHERE key = 'link:j' FOR UPDATE")
            settling = asyncio.ensure_future(
                journal.asettle_meters("t.1", {"jackpot": "link:j"}, apply)
            )
            await asyncio.sleep(0.3)
            waiting = not settling.done()  # the rows are the other node's
            seq = await asyncio.wait_for(journal.aappend("t.2", "bet", {"n": 1}), 5)
            other.rollback()
            return seq, waiting, await asyncio.wait_for(settling, 5)

    seq, waiting, result = asyncio.run(scenario())
    assert waiting and seq > 0 and result["states"] == {"jackpot": {"amount": 7}}
    guard = _CountingGuard()
    view = guarded(journal, guard)
    asyncio.run(view.asettle_meters("t.2", {"jackpot": "link:j"}, apply))
    assert guard.calls == 1
    journal.close()


def test_the_bets_of_many_tables_make_one_group_of_a_few_statements(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A node's tables each write through a view guarded by its own fence
    (``server.cluster.fencing``); their bets queued together still make one transaction of
    two statements — the records in one, which reads every fence, the debits in the other
    (``croupier_post``) — not a set per table; records alone are one statement. A table
    whose fence another node has raised since is refused alone: nothing of its bets is
    applied, and every other table's bets commit."""
    from server.cluster.fencing import Fence, Fenced, raise_fence
    from server.core import effects as fx
    from server.tables.waits import TableStores
    from server.wallet.ledger import OPEN_WAGERS, PostResult

    writer, ledger, journal = _shared_stores(postgres_url)
    tables = [f"t{n}" for n in range(8)]
    views = {}
    with psycopg.connect(postgres_url) as conn:
        for table in tables:
            raise_fence(conn, table, 1, "node-a")
    for table in tables:
        journal.open_round(table, f"{table}.1", {})
        fence = Fence(table, 1, "node-a")
        views[table] = TableStores(table, guarded(ledger, fence), guarded(journal, fence), None)  # type: ignore[arg-type]
    players = [f"p{n}" for n in range(3)]
    for player in players:
        ledger.open_account(f"player:{player}")
        ledger.post(f"grant:{player}", [Transfer("house", f"player:{player}", 5000, "grant")])

    statements: list[str] = []
    execute = psycopg.Connection.execute

    def counted(self: Conn, query: Any, *args: Any, **kwargs: Any) -> Any:
        if threading.current_thread().name == "pg-writer:store":
            statements.append(str(query).split()[0])
        return execute(self, query, *args, **kwargs)

    monkeypatch.setattr(psycopg.Connection, "execute", counted)

    async def burst(betting: list[str]) -> tuple[list[Any], int]:
        groups = writer.groups
        release, _ = _hold(writer)
        waits = [
            asyncio.ensure_future(views[t].results(_bet(f"{t}.1", p)))
            for t in betting
            for p in players
        ]
        await asyncio.sleep(0.2)
        statements.clear()
        release.set()
        results = list(await asyncio.gather(*waits, return_exceptions=True))
        return results, writer.groups - groups

    results, groups = asyncio.run(burst(tables[:4]))
    assert groups == 2  # the held write's, then the bets'
    for journaled, debited in results:
        assert isinstance(journaled, int) and isinstance(debited, PostResult)
    # One transaction: the fences with the records (1), then the debits' keys, accounts and
    # transfers (1) — for 4 tables' 12 bets.
    assert len(statements) == 2, statements
    assert ledger.balance(OPEN_WAGERS) == 1200

    with psycopg.connect(postgres_url) as conn:  # node b takes table t5
        raise_fence(conn, "t5", 2, "node-b")
    results, _ = asyncio.run(burst(tables[4:]))
    for n, table in enumerate(tables[4:]):
        for journaled, debited in results[n * len(players) : (n + 1) * len(players)]:
            if table == "t5":  # both halves of each bet refused (the table's core voids)
                for half in (journaled, debited):
                    assert isinstance(half, fx.Failed), half
                    assert half.message.startswith(f"{Fenced.__name__}: fencing token refused")
            else:
                assert isinstance(journaled, int) and isinstance(debited, PostResult)
    assert ledger.balance(OPEN_WAGERS) == 1200 + 3 * 3 * 100  # t4, t6, t7: three bets each
    assert [r.kind for r in journal.records("t5.1")] == ["opened"]
    assert {r.kind for r in journal.records("t6.1")} == {"opened", "bet"}

    # Records alone (a round's own, no debit): one statement, the fences read in it.
    async def records(tables_: list[str]) -> list[Any]:
        release, _ = _hold(writer)
        waits = [asyncio.ensure_future(views[t].result(_bet(f"{t}.1", "p0")[0])) for t in tables_]
        await asyncio.sleep(0.2)
        statements.clear()
        release.set()
        return list(await asyncio.gather(*waits))

    assert all(isinstance(r, int) for r in asyncio.run(records(["t0", "t1", "t6"])))
    assert statements == ["WITH"]
    answers = asyncio.run(records(["t0", "t5"]))  # t5's fence moved: t0's record goes alone
    assert isinstance(answers[0], int) and isinstance(answers[1], fx.Failed)
    assert answers[1].message.startswith(f"{Fenced.__name__}: fencing token refused")
    assert [r.kind for r in journal.records("t5.1")] == ["opened"]
    assert [r.kind for r in journal.records("t0.1")].count("bet") == 3 + 2

    # A run that begins with a debit still locks the accounts last, after the records.
    async def debit_first() -> list[Any]:
        release, _ = _hold(writer)
        record, post = _bet("t6.1", "p1")
        waits = [
            asyncio.ensure_future(views["t7"].ledger.apost("grant:t7", [post.transfers[0]])),
            asyncio.ensure_future(views["t6"].result(record)),
        ]
        await asyncio.sleep(0.2)
        statements.clear()
        release.set()
        return list(await asyncio.gather(*waits))

    posted, journaled = asyncio.run(debit_first())
    assert isinstance(posted, PostResult) and isinstance(journaled, int)
    assert statements == ["WITH", "SELECT"], statements
    monkeypatch.undo()
    ledger.close()
    journal.close()
