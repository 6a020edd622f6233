"""The ledger, embedded (SQLite) and shared (PostgreSQL), by one suite: double entry,
idempotent batches, atomicity, reconciliation (DESIGN.md "Money and wagers": a retry or a
crash can never pay twice or lose a cent), and many posters on several connections racing
for one balance — the nodes of a cluster — never taking it below zero."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg
import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from server.cli.main import main
from server.wallet import (
    HOUSE,
    OPEN_WAGERS,
    PLAY_MONEY_ISSUER,
    IdempotencyConflict,
    InsufficientFunds,
    Ledger,
    LedgerError,
    SqliteLedger,
    Transfer,
    player_account,
)
from server.wallet.pg_ledger import PgLedger

ALICE = player_account("alice")


class Store:
    """Where a ledger keeps its books: ``open`` gives a ledger on it (another process's, a
    node's), ``tamper`` changes a cached balance behind the ledger's back."""

    def __init__(self, kind: str, where: str) -> None:
        self.kind, self.where = kind, where
        self.opened: list[Ledger] = []

    def open(self) -> Ledger:
        ledger: Ledger = SqliteLedger(self.where) if self.kind == "sqlite" else PgLedger(self.where)
        self.opened.append(ledger)
        return ledger

    def tamper(self, account: str, delta: int) -> None:
        if self.kind == "sqlite":
            with sqlite3.connect(self.where) as db:
                db.execute("UPDATE accounts SET balance = balance + ? WHERE name = ?", (delta, account))  # fmt: skip  # noqa: E501
        else:
            with psycopg.connect(self.where, autocommit=True) as conn:
                conn.execute("UPDATE accounts SET balance = balance + %s WHERE name = %s", (delta, account))  # fmt: skip  # noqa: E501

    def close(self) -> None:
        for ledger in self.opened:
            ledger.close()  # type: ignore[attr-defined]


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    if request.param == "sqlite":
        made = Store("sqlite", str(tmp_path / "ledger.sqlite"))
    else:
        made = Store("postgres", request.getfixturevalue("postgres_url"))
    yield made
    made.close()


def _ledger(store: Store) -> Ledger:
    ledger = store.open()
    ledger.open_account(PLAY_MONEY_ISSUER, may_go_negative=True)
    ledger.open_account(HOUSE, may_go_negative=True)
    ledger.open_account(OPEN_WAGERS)
    ledger.open_account(ALICE)
    ledger.post("grant:alice", [Transfer(PLAY_MONEY_ISSUER, ALICE, 10_000, "grant")])
    return ledger


def test_a_wager_is_debited_when_accepted_and_credited_at_settlement(store: Store) -> None:
    ledger = _ledger(store)
    ledger.post("bet:r1:alice:b1", [Transfer(ALICE, OPEN_WAGERS, 500, "wager", "r1", "b1")])
    assert ledger.balance(ALICE) == 9_500 and ledger.balance(OPEN_WAGERS) == 500
    ledger.post(
        "settle:r1:alice:b1",
        [
            Transfer(OPEN_WAGERS, ALICE, 500, "stake returned", "r1", "b1"),
            Transfer(HOUSE, ALICE, 475, "winnings", "r1", "b1"),  # banker less 5%
        ],
    )
    assert ledger.balance(ALICE) == 10_475
    assert ledger.balance(OPEN_WAGERS) == 0 and ledger.balance(HOUSE) == -475
    assert ledger.total() == 0 and ledger.reconcile() == {}
    assert [key for key, _ in ledger.history(ALICE)] == [
        "grant:alice",
        "bet:r1:alice:b1",
        "settle:r1:alice:b1",
        "settle:r1:alice:b1",
    ]


def test_a_retried_batch_is_never_applied_twice(store: Store) -> None:
    ledger = _ledger(store)
    bet = [Transfer(ALICE, OPEN_WAGERS, 500, "wager", "r1", "b1")]
    first = ledger.post("bet:r1:alice:b1", bet)
    again = ledger.post("bet:r1:alice:b1", bet)
    assert first.applied and not again.applied and again.sequence == first.sequence
    assert ledger.balance(ALICE) == 9_500


def test_a_reused_key_with_other_transfers_is_a_conflict(store: Store) -> None:
    ledger = _ledger(store)
    ledger.post("bet:r1:alice:b1", [Transfer(ALICE, OPEN_WAGERS, 500, "wager", "r1", "b1")])
    with pytest.raises(IdempotencyConflict):
        ledger.post("bet:r1:alice:b1", [Transfer(ALICE, OPEN_WAGERS, 900, "wager", "r1", "b1")])
    assert ledger.balance(ALICE) == 9_500


def test_insufficient_funds_applies_nothing_of_the_batch(store: Store) -> None:
    ledger = _ledger(store)
    with pytest.raises(InsufficientFunds) as info:
        ledger.post(
            "bet:r1:alice:many",
            [
                Transfer(ALICE, OPEN_WAGERS, 6_000, "wager", "r1", "b1"),
                Transfer(ALICE, OPEN_WAGERS, 6_000, "wager", "r1", "b2"),
            ],
        )
    assert (info.value.account, info.value.balance, info.value.needed) == (ALICE, 10_000, 12_000)
    assert ledger.balance(ALICE) == 10_000 and ledger.balance(OPEN_WAGERS) == 0
    # The key was not consumed: the caller may post it again once it is valid.
    ledger.post("bet:r1:alice:many", [Transfer(ALICE, OPEN_WAGERS, 6_000, "wager", "r1", "b1")])


def test_several_batches_as_one_write_apply_in_order_each_once(store: Store) -> None:
    """A round's settlements (``apost_many``): one write, applied in order, each batch with
    its balances just after it, each idempotent by its key — a batch posted before (a
    recovery) comes back unapplied while the others apply."""
    import asyncio

    ledger = _ledger(store)
    for n in (1, 2):
        ledger.post(f"bet:r1:alice:b{n}", [Transfer(ALICE, OPEN_WAGERS, 500, "wager", "r1", f"b{n}")])  # fmt: skip  # noqa: E501
    win = [
        Transfer(OPEN_WAGERS, ALICE, 500, "stake returned", "r1", "b1"),
        Transfer(HOUSE, ALICE, 500, "winnings", "r1", "b1"),
    ]
    loss = [Transfer(OPEN_WAGERS, HOUSE, 500, "lost", "r1", "b2")]
    ledger.post("settle:r1:alice:b2", loss)  # posted before the crash
    batches = [("settle:r1:alice:b1", win), ("settle:r1:alice:b2", loss)]
    first = asyncio.run(ledger.apost_many(batches))
    assert [(r.key, r.applied) for r in first] == [
        ("settle:r1:alice:b1", True),
        ("settle:r1:alice:b2", False),
    ]
    # (b2 lost before: the house held its 500; b1 paid 500 of it back)
    assert first[0].balances == {ALICE: 10_000, OPEN_WAGERS: 0, HOUSE: 0}
    again = asyncio.run(ledger.apost_many(batches))
    assert [r.applied for r in again] == [False, False]
    assert [r.sequence for r in again] == [r.sequence for r in first]
    assert ledger.balance(ALICE) == 10_000 and ledger.balance(OPEN_WAGERS) == 0
    assert ledger.balance(HOUSE) == 0
    assert ledger.total() == 0 and ledger.reconcile() == {}
    keys = [key for key, _ in ledger.history(ALICE)]
    assert keys == ["grant:alice", "bet:r1:alice:b1", "bet:r1:alice:b2", "settle:r1:alice:b1", "settle:r1:alice:b1"]  # fmt: skip  # noqa: E501


def test_several_batches_as_one_write_are_refused_together(store: Store) -> None:
    """A batch of ``apost_many`` refused refuses them all: nothing moves, no key is used;
    a key twice, or a key posted before with other transfers, is refused outright."""
    import asyncio

    ledger = _ledger(store)
    bob = player_account("bob")
    ledger.open_account(bob)
    pay = [("pay:1", [Transfer(ALICE, bob, 6_000, "gift")]), ("pay:2", [Transfer(ALICE, bob, 6_000, "gift")])]  # fmt: skip  # noqa: E501
    with pytest.raises(InsufficientFunds) as info:
        asyncio.run(ledger.apost_many(pay))
    assert (info.value.account, info.value.balance, info.value.needed) == (ALICE, 4_000, 6_000)
    assert ledger.balance(ALICE) == 10_000 and ledger.balance(bob) == 0
    assert ledger.available(ALICE) == 10_000  # nothing left pending
    assert [r.applied for r in asyncio.run(ledger.apost_many(pay[:1]))] == [True]
    with pytest.raises(ValueError, match="twice"):
        asyncio.run(ledger.apost_many([pay[1], pay[1]]))
    with pytest.raises(IdempotencyConflict):
        asyncio.run(ledger.apost_many([("pay:1", [Transfer(ALICE, bob, 1, "gift")])]))
    with pytest.raises(LedgerError, match="no account"):
        asyncio.run(ledger.apost_many([("pay:3", [Transfer(ALICE, "player:nobody", 1, "gift")])]))  # fmt: skip  # noqa: E501
    assert ledger.balance(ALICE) == 4_000 and ledger.balance(bob) == 6_000
    assert ledger.total() == 0 and ledger.reconcile() == {}


@pytest.mark.parametrize("amount", [0, -1, 2**60])
def test_amounts_out_of_range_are_refused(amount: int) -> None:
    with pytest.raises(ValueError):
        Transfer(ALICE, OPEN_WAGERS, amount, "wager")


@pytest.mark.parametrize("amount", [1.5, "5", True])
def test_amounts_that_are_not_whole_minor_units_are_refused(amount: object) -> None:
    with pytest.raises(TypeError):
        Transfer(ALICE, OPEN_WAGERS, amount, "wager")  # type: ignore[arg-type]


def test_unknown_accounts_and_empty_batches_are_refused(store: Store) -> None:
    ledger = _ledger(store)
    with pytest.raises(LedgerError, match="no account"):
        ledger.post("x", [Transfer(ALICE, "player:nobody", 1, "gift")])
    with pytest.raises(ValueError):
        ledger.post("y", [])
    with pytest.raises(LedgerError):
        ledger.balance("player:nobody")


def test_balances_survive_reopening_and_reconcile(store: Store) -> None:
    ledger = _ledger(store)
    ledger.post("bet:r1:alice:b1", [Transfer(ALICE, OPEN_WAGERS, 500, "wager", "r1", "b1")])
    ledger.close()  # type: ignore[attr-defined]
    reopened = store.open()
    assert reopened.balance(ALICE) == 9_500
    assert reopened.reconcile() == {} and reopened.total() == 0


def test_reconcile_reports_a_tampered_balance(store: Store) -> None:
    _ledger(store)
    store.tamper(ALICE, +1)
    assert store.open().reconcile() == {ALICE: (10_001, 10_000)}


def test_racing_debits_from_many_connections_never_overdraw(store: Store) -> None:
    """Sixteen posters, each with its own ledger (connections, writer: a node of a cluster),
    race to take 1,000 at a time from a balance of 10,000: exactly ten succeed, the rest
    are refused, and the balance ends at zero — never below."""
    _ledger(store)
    ledgers = [store.open() for _ in range(4)]
    start = threading.Barrier(16)
    outcomes: list[str] = []
    lock = threading.Lock()

    def debit(n: int) -> None:
        ledger = ledgers[n % len(ledgers)]
        start.wait()
        for k in range(3):
            try:
                ledger.post(f"bet:r:{n}:{k}", [Transfer(ALICE, OPEN_WAGERS, 1_000, "wager", "r", f"{n}-{k}")])  # fmt: skip  # noqa: E501
                result = "taken"
            except InsufficientFunds:
                result = "refused"
            with lock:
                outcomes.append(result)

    threads = [threading.Thread(target=debit, args=(n,)) for n in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    check = store.open()
    assert outcomes.count("taken") == 10 and outcomes.count("refused") == 38
    assert check.balance(ALICE) == 0 and check.balance(OPEN_WAGERS) == 10_000
    assert check.reconcile() == {} and check.total() == 0


def test_the_same_batch_from_many_connections_at_once_is_applied_once(store: Store) -> None:
    """A bet retried through several nodes at the same instant: one application, the others
    see a replay (idempotent bet ids across nodes)."""
    _ledger(store)
    ledgers = [store.open() for _ in range(6)]
    start = threading.Barrier(len(ledgers))
    applied: list[bool] = []
    bet = [Transfer(ALICE, OPEN_WAGERS, 2_500, "wager", "r7", "b1")]

    def post(ledger: Ledger) -> None:
        start.wait()
        applied.append(ledger.post("bet:r7:alice:b1", bet).applied)

    threads = [threading.Thread(target=post, args=(ledger,)) for ledger in ledgers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(applied) == [False] * 5 + [True]
    assert store.open().balance(ALICE) == 7_500


class LedgerMachine(RuleBasedStateMachine):
    """Random bets, settlements and retries: the sum of every balance stays zero, no player
    goes negative, and the cached balances always match the transfers."""

    make: Callable[[], Ledger] = staticmethod(lambda: _ledger(Store("sqlite", ":memory:")))  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.ledger = type(self).make()
        self.open: dict[str, int] = {}
        self.counter = 0

    @rule(amount=st.integers(1, 4_000))
    def bet(self, amount: int) -> None:
        self.counter += 1
        bet_id = f"b{self.counter}"
        try:
            self.ledger.post(
                f"bet:{bet_id}", [Transfer(ALICE, OPEN_WAGERS, amount, "wager", "r", bet_id)]
            )
        except InsufficientFunds:
            return
        self.open[bet_id] = amount

    @rule(data=st.data(), multiplier=st.sampled_from([0, 1, 2, 3, 9, 36]))
    def settle(self, data: st.DataObject, multiplier: int) -> None:
        if not self.open:
            return
        bet_id = data.draw(st.sampled_from(sorted(self.open)))
        stake = self.open.pop(bet_id)
        transfers = [
            Transfer(OPEN_WAGERS, ALICE if multiplier else HOUSE, stake, "stake", "r", bet_id)
        ]
        if multiplier > 1:
            transfers.append(Transfer(HOUSE, ALICE, stake * (multiplier - 1), "win", "r", bet_id))
        batch = f"settle:{bet_id}"
        self.ledger.post(batch, transfers)
        assert not self.ledger.post(batch, transfers).applied  # a retry changes nothing

    @invariant()
    def conserved(self) -> None:
        assert self.ledger.total() == 0
        assert self.ledger.balance(OPEN_WAGERS) == sum(self.open.values())
        assert self.ledger.balance(ALICE) >= 0
        assert self.ledger.reconcile() == {}


TestLedgerMachine = LedgerMachine.TestCase
TestLedgerMachine.settings = settings(max_examples=60, stateful_step_count=30, deadline=None)


def test_the_random_walk_conserves_money_in_postgresql(postgres_url: str) -> None:
    """The same machine on the shared ledger (each example on an emptied database)."""
    opened: list[Ledger] = []

    def make() -> Ledger:
        for ledger in opened:
            ledger.close()  # type: ignore[attr-defined]
        opened.clear()
        from tests.postgres import empty

        ledger = _ledger(Store("postgres", empty(postgres_url)))
        opened.append(ledger)
        return ledger

    machine = type("PgLedgerMachine", (LedgerMachine,), {"make": staticmethod(make)})
    try:
        run_state_machine_as_test(
            machine, settings=settings(max_examples=15, stateful_step_count=20, deadline=None)
        )
    finally:
        for ledger in opened:
            ledger.close()  # type: ignore[attr-defined]


def test_croupier_wallet_works_on_either_store_and_reconcile_finds_a_mismatch(
    store: Store, capsys: pytest.CaptureFixture[str]
) -> None:
    where = (
        ["--data-dir", str(Path(store.where).parent)]
        if store.kind == "sqlite"
        else ["--database", store.where]
    )
    assert main(["wallet", "credit", "ann", "5000", "--reference", "dep-1", *where]) == 0
    assert main(["wallet", "debit", "ann", "1200", "--reference", "wd-1", *where]) == 0
    assert main(["wallet", "balance", "ann", *where]) == 0
    assert "ann: 3800" in capsys.readouterr().out
    assert main(["wallet", "reconcile", *where]) == 0
    assert capsys.readouterr().out.strip() == "ledger reconciles"
    store.tamper(player_account("ann"), +7)
    assert main(["wallet", "reconcile", *where]) == 1
    out = capsys.readouterr().out
    assert "MISMATCH player:ann: balance 3807, its transfers say 3800" in out
    assert "the balances sum to 7, not 0" in out
