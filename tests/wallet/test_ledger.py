"""The ledger, embedded (SQLite) and shared (PostgreSQL), by one suite: double entry,
idempotent batches, atomicity, reconciliation (docs/architecture.md, "Money": a retry or a
crash can never pay twice or lose a cent), and many posters on several connections racing
for one balance — the nodes of a cluster — never taking it below zero."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from server.cli.main import main
from server.wallet import (
    HOUSE,
    OPEN_WAGERS,
    PLAY_MONEY_ISSUER,
    IdempotencyConflict,
    InsufficientFunds,
    Ledger,
    LedgerError,
    PostResult,
    SqliteLedger,
    Transfer,
    player_account,
)
from server.wallet.ledger import MAX_AMOUNT
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


def test_an_accounts_history_after_a_batch_and_a_batch_by_its_key(store: Store) -> None:
    """``history_after``: an account's transfers in the batches after a sequence number, in
    order, with each batch's number (a reader's cursor); ``batch``: one batch by its key."""
    ledger = _ledger(store)
    grant = ledger.history_after(ALICE, 0)
    assert [(key, t.amount) for _, key, t in grant] == [("grant:alice", 10_000)]
    ((first_seq, _, _),) = grant
    bet = ledger.post("bet:r1:alice:b1", [Transfer(ALICE, OPEN_WAGERS, 500, "wager", "r1", "b1")])
    ledger.post("other", [Transfer(PLAY_MONEY_ISSUER, HOUSE, 1, "grant")])  # not Alice's
    win = [
        Transfer(OPEN_WAGERS, ALICE, 500, "stake returned", "r1", "b1"),
        Transfer(HOUSE, ALICE, 475, "winnings", "r1", "b1"),
    ]
    settled = ledger.post("settle:r1:alice:b1", win)
    after = ledger.history_after(ALICE, first_seq)
    assert [(seq, key, t) for seq, key, t in after] == [
        (bet.sequence, "bet:r1:alice:b1", Transfer(ALICE, OPEN_WAGERS, 500, "wager", "r1", "b1")),
        (settled.sequence, "settle:r1:alice:b1", win[0]),
        (settled.sequence, "settle:r1:alice:b1", win[1]),
    ]
    assert ledger.history_after(ALICE, settled.sequence) == []
    assert [t for _, _, t in ledger.history_after(ALICE, 0)] == [t for _, t in ledger.history(ALICE)]  # fmt: skip  # noqa: E501
    assert ledger.batch("settle:r1:alice:b1") == win
    assert ledger.batch("never") == []


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


def test_a_balance_beyond_the_largest_amount_is_refused(store: Store) -> None:
    """The ledger's other rule beside a balance below zero: no account holds more than
    ``MAX_AMOUNT`` either way — alone (``post``), one of a settlement's batches
    (``apost_many``) and a bet's debit written set-based (``apost``; on PostgreSQL the
    schema's ``croupier_post`` applies the rule itself). Nothing of a refused batch moves."""
    ledger = _ledger(store)
    big = player_account("big")
    ledger.open_account(big)
    ledger.post("grant:big", [Transfer(HOUSE, big, MAX_AMOUNT, "grant")])  # house: −MAX
    more = [Transfer(PLAY_MONEY_ISSUER, big, 1, "grant")]
    with pytest.raises(LedgerError, match="beyond"):
        ledger.post("grant:big:2", more)
    with pytest.raises(LedgerError, match="beyond"):
        asyncio.run(ledger.apost_many([("grant:big:3", more)]))
    with pytest.raises(LedgerError, match="beyond"):
        asyncio.run(ledger.apost("grant:big:4", more))
    assert ledger.balance(big) == MAX_AMOUNT
    ledger.post("grant:big:2", [Transfer(big, HOUSE, 1, "wager")])  # the key is still free
    assert ledger.balance(big) == MAX_AMOUNT - 1
    assert ledger.total() == 0 and ledger.reconcile() == {}


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


PLAYERS = (ALICE, player_account("bob"), player_account("carol"))
GRANT = 10_000
Op = tuple[str, list[Transfer]]  # a batch: its key and transfers


def _players(op: Op) -> set[str]:
    return {a for t in op[1] for a in (t.source, t.destination) if a in PLAYERS}


class LedgerMachine(RuleBasedStateMachine):
    """Random bets and settlements of three players, one at a time (``post``, ``apost``),
    several as one write (``apost_many``), several at once from the event loop and another
    thread, and batches posted again (the same: nothing moves; other transfers under the same
    key: ``IdempotencyConflict``). Each outcome — applied, refused for funds (and why), a
    replay — is the model's; after every step the sum of every balance is zero, open wagers
    hold the open stakes, each player holds what the model says (never below zero), nothing
    is left counted as pending, and the cached balances match the transfers."""

    make: Callable[[], Ledger] = staticmethod(lambda: _ledger(Store("sqlite", ":memory:")))  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.ledger = type(self).make()
        self.loop = asyncio.new_event_loop()
        for player in PLAYERS[1:]:
            self.ledger.open_account(player)
            self.ledger.post(f"grant:{player}", [Transfer(PLAY_MONEY_ISSUER, player, GRANT, "grant")])  # fmt: skip  # noqa: E501
        # The model: every balance that moves, the open bets, and each batch applied.
        self.balances = {account: GRANT for account in PLAYERS} | {OPEN_WAGERS: 0, HOUSE: 0}
        self.open: dict[str, tuple[str, int]] = {}  # bet id -> (player, stake)
        self.posted: dict[str, tuple[list[Transfer], int]] = {}  # key -> (transfers, sequence)
        self.counter = 0

    def teardown(self) -> None:
        self.loop.close()
        self.ledger.close()  # type: ignore[attr-defined]

    # --- batches ---------------------------------------------------------------------------

    def _bet(self, player: str, amount: int) -> Op:
        self.counter += 1
        bet_id = f"b{self.counter}"
        return f"bet:{player}:{bet_id}", [
            Transfer(player, OPEN_WAGERS, amount, "wager", "r", bet_id)
        ]

    def _settle(self, bet_id: str, multiplier: int) -> Op:
        player, stake = self.open[bet_id]
        transfers = [
            Transfer(OPEN_WAGERS, player if multiplier else HOUSE, stake, "stake", "r", bet_id)
        ]
        if multiplier > 1:
            transfers.append(Transfer(HOUSE, player, stake * (multiplier - 1), "win", "r", bet_id))
        return f"settle:{bet_id}", transfers

    def _refusal(self, ops: list[Op]) -> tuple[str, int, int] | None:
        """What refuses ``ops`` posted in order as one write — (account, balance, needed) of
        the first that would take a player below zero — or None: all apply."""
        balances = dict(self.balances)
        for _, transfers in ops:
            delta: dict[str, int] = defaultdict(int)
            for t in transfers:
                delta[t.source] -= t.amount
                delta[t.destination] += t.amount
            for account in sorted(delta):
                if account in PLAYERS and balances[account] + delta[account] < 0:
                    return account, balances[account], -delta[account]
            for account, change in delta.items():
                balances[account] += change
        return None

    def _applied(self, op: Op, result: PostResult) -> None:
        """``op`` was applied: the model follows, and the result says the balances just after."""
        key, transfers = op
        assert result.key == key and result.applied
        assert all(result.sequence > sequence for _, sequence in self.posted.values())
        for t in transfers:
            self.balances[t.source] -= t.amount
            self.balances[t.destination] += t.amount
            if t.destination == OPEN_WAGERS:
                self.open[t.bet_id or ""] = (t.source, t.amount)
            else:
                self.open.pop(t.bet_id or "", None)
        moved = {a for t in transfers for a in (t.source, t.destination)}
        assert dict(result.balances) == {a: self.balances[a] for a in moved}
        self.posted[key] = (transfers, result.sequence)

    def _ops(self, data: st.DataObject, size: int) -> list[Op]:
        """``size`` new batches: bets of any player (some beyond their balance) and
        settlements of distinct open bets."""
        ops: list[Op] = []
        settling = sorted(self.open)
        for _ in range(size):
            if settling and data.draw(st.booleans(), label="settle"):
                bet_id = settling.pop(data.draw(st.integers(0, len(settling) - 1)))
                ops.append(self._settle(bet_id, data.draw(st.sampled_from([0, 1, 2, 3, 9, 36]))))
            else:
                player = data.draw(st.sampled_from(PLAYERS))
                ops.append(self._bet(player, data.draw(st.integers(1, 6_000))))
        return ops

    def _run(self, coro: Any) -> Any:
        return self.loop.run_until_complete(coro)

    def _apost(self, key: str, transfers: list[Transfer]) -> PostResult:
        result: PostResult = self._run(self.ledger.apost(key, transfers))
        return result

    # --- rules -------------------------------------------------------------------------------

    @rule(data=st.data(), how=st.sampled_from(["post", "apost"]))
    def one_batch(self, data: st.DataObject, how: str) -> None:
        (op,) = self._ops(data, 1)
        refusal = self._refusal([op])
        try:
            post = self.ledger.post if how == "post" else self._apost
            result = post(*op)
        except InsufficientFunds as exc:
            assert (exc.account, exc.balance, exc.needed) == refusal
            return
        assert refusal is None
        self._applied(op, result)

    @rule(data=st.data(), size=st.integers(1, 5))
    def batches_as_one_write(self, data: st.DataObject, size: int) -> None:
        """``apost_many``: applied in order, each with its balances; or, when one is refused,
        none is."""
        ops = self._ops(data, size)
        refusal = self._refusal(ops)
        try:
            results = self._run(self.ledger.apost_many(ops))
        except InsufficientFunds as exc:
            assert (exc.account, exc.balance, exc.needed) == refusal
            return
        assert refusal is None and len(results) == len(ops)
        for op, result in zip(ops, results, strict=True):
            self._applied(op, result)

    @precondition(lambda self: bool(self.posted))
    @rule(
        data=st.data(),
        how=st.sampled_from(["post", "apost", "apost_many", "apost_many with a new batch"]),
        same=st.booleans(),
    )
    def again(self, data: st.DataObject, how: str, same: bool) -> None:
        """A batch posted before, posted again: with the same transfers it is a replay (not
        applied, the first sequence number); with others, ``IdempotencyConflict`` — and in an
        ``apost_many``, the batches beside it are not applied either."""
        key = data.draw(st.sampled_from(sorted(self.posted)))
        transfers, sequence = self.posted[key]
        if not same:
            t = transfers[0]
            changed = data.draw(st.integers(1, 6_000).filter(lambda n: n != t.amount))
            transfers = [Transfer(t.source, t.destination, changed, t.kind, t.round_id, t.bet_id), *transfers[1:]]  # fmt: skip  # noqa: E501
        new = self._ops(data, 1) if how.endswith("new batch") else []
        try:
            if how == "post":
                results = [self.ledger.post(key, transfers)]
            elif how == "apost":
                results = [self._run(self.ledger.apost(key, transfers))]
            else:
                results = self._run(self.ledger.apost_many([*new, (key, transfers)]))
        except InsufficientFunds as exc:  # the new batch beside it was refused (checked first)
            assert (exc.account, exc.balance, exc.needed) == self._refusal(new)
        except IdempotencyConflict:
            assert not same and self._refusal(new) is None
        else:
            assert same and self._refusal(new) is None
            replay = results[-1]
            assert (replay.key, replay.applied, replay.sequence) == (key, False, sequence)
            assert replay.balances == {}
            for op, result in zip(new, results, strict=False):
                self._applied(op, result)

    @rule(data=st.data(), size=st.integers(2, 4))
    def at_once(self, data: st.DataObject, size: int) -> None:
        """Several batches at the same time — ``apost`` from the event loop and ``post`` from
        another thread — whose outcomes do not depend on their order: a player who bets is in
        none of the others."""
        ops: list[Op] = []
        for op in self._ops(data, size):
            bet = op[0].startswith("bet:")
            if not any(
                _players(op) & _players(other) and (bet or other[0].startswith("bet:"))
                for other in ops
            ):
                ops.append(op)
        refused = {op[0]: self._refusal([op]) for op in ops}
        ways = [data.draw(st.booleans(), label="from another thread") for _ in ops]

        async def together() -> list[Any]:
            return await asyncio.gather(
                *(
                    asyncio.to_thread(self.ledger.post, *op) if thread else self.ledger.apost(*op)
                    for op, thread in zip(ops, ways, strict=True)
                ),
                return_exceptions=True,
            )

        applied = []
        for op, outcome in zip(ops, self._run(together()), strict=True):
            if isinstance(outcome, InsufficientFunds):
                assert (outcome.account, outcome.balance, outcome.needed) == refused[op[0]]
            else:
                assert refused[op[0]] is None, outcome
                applied.append((outcome.sequence, op, outcome))
        for _, op, outcome in sorted(applied):  # in the order the ledger applied them
            self._applied(op, outcome)

    # --- invariants --------------------------------------------------------------------------

    @invariant()
    def conserved(self) -> None:
        ledger = self.ledger
        assert ledger.total() == 0
        assert ledger.balance(OPEN_WAGERS) == sum(stake for _, stake in self.open.values())
        for account, balance in self.balances.items():
            assert ledger.balance(account) == balance, account
            assert ledger.available(account) == balance, account  # nothing left pending
            assert account not in PLAYERS or balance >= 0
        assert ledger.reconcile() == {}


TestLedgerMachine = LedgerMachine.TestCase
TestLedgerMachine.settings = settings(max_examples=60, stateful_step_count=30, deadline=None)


def test_the_random_walk_conserves_money_in_postgresql(postgres_url: str) -> None:
    """The same machine on the shared ledger (each example on an emptied database)."""
    from tests.postgres import empty

    def make() -> Ledger:
        return _ledger(Store("postgres", empty(postgres_url)))

    machine = type("PgLedgerMachine", (LedgerMachine,), {"make": staticmethod(make)})
    run_state_machine_as_test(
        machine, settings=settings(max_examples=15, stateful_step_count=20, deadline=None)
    )


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


def test_debits_written_together_are_each_answered_alone(store: Store) -> None:
    """Bets' debits queued behind a busy writer are one group (on PostgreSQL one set-based
    write): a debit the balance does not cover, a key posted before (a replay), the same key
    with other transfers and an unknown account are each refused or answered alone, and the
    others are posted; the refused debit's key may be posted later."""
    ledger = _ledger(store)
    bob = player_account("bob")
    ledger.open_account(bob)
    ledger.post("grant:bob", [Transfer(PLAY_MONEY_ISSUER, bob, 1_000, "grant")])
    ledger.post("bet:r1:bob:b0", [Transfer(bob, OPEN_WAGERS, 100, "wager", "r1", "b0")])
    ledger.post("bet:r1:alice:b0", [Transfer(ALICE, OPEN_WAGERS, 500, "wager", "r1", "b0")])
    release = threading.Event()
    writer = ledger._writer  # type: ignore[attr-defined]

    def bet(player: str, bet_id: str, amount: int) -> tuple[str, list[Transfer]]:
        key = f"bet:r1:{player.split(':')[1]}:{bet_id}"
        return key, [Transfer(player, OPEN_WAGERS, amount, "wager", "r1", bet_id)]

    batches = [
        bet(ALICE, "b1", 4_000),
        bet(bob, "b1", 5_000),  # bob holds 900
        bet(bob, "b0", 100),  # posted before: a replay
        bet(ALICE, "b2", 4_000),
        ("bet:r1:alice:b0", [Transfer(ALICE, OPEN_WAGERS, 300, "wager", "r1", "b0")]),  # conflict
        ("bet:r1:nobody:b1", [Transfer("player:nobody", OPEN_WAGERS, 1, "wager")]),
        bet(ALICE, "b3", 4_000),  # alice holds 1,500 by now
        bet(bob, "b2", 900),
    ]

    async def together() -> list[Any]:
        started = threading.Event()
        blocker = writer.submit(lambda conn: started.set() or release.wait(10))
        assert started.wait(10)  # the writer is busy: what comes next queues behind it
        posts = [asyncio.ensure_future(ledger.apost(key, t)) for key, t in batches]
        await asyncio.sleep(0.1)
        release.set()
        results = await asyncio.gather(*posts, return_exceptions=True)
        assert blocker.result() is True
        return results

    groups = writer.groups
    results = asyncio.run(together())
    assert writer.groups - groups == 2  # the blocker, then all eight: none undid the group
    assert [r.applied for r in (results[0], results[3], results[7])] == [True, True, True]
    assert results[0].balances[ALICE] == 5_500 and results[3].balances[ALICE] == 1_500
    assert isinstance(results[1], InsufficientFunds) and results[1].balance == 900
    assert results[2].applied is False  # the replay: nothing moved again
    assert isinstance(results[4], IdempotencyConflict)
    assert isinstance(results[5], LedgerError) and "no account" in str(results[5])
    assert isinstance(results[6], InsufficientFunds) and results[6].balance == 1_500
    assert ledger.balance(ALICE) == 1_500 and ledger.balance(bob) == 0
    assert ledger.balance(OPEN_WAGERS) == 100 + 500 + 8_000 + 900
    assert ledger.available(ALICE) == 1_500  # nothing left pending
    ledger.post("grant:bob:2", [Transfer(PLAY_MONEY_ISSUER, bob, 5_000, "grant")])
    assert ledger.post(*bet(bob, "b1", 5_000)).applied  # the refused key was not used up
    assert ledger.total() == 0 and ledger.reconcile() == {}
