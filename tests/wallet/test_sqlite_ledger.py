"""The embedded ledger: double entry, idempotent batches, atomicity, reconciliation
(DESIGN.md "Money and wagers": a retry or a crash can never pay twice or lose a cent)."""

from pathlib import Path

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from server.wallet import (
    HOUSE,
    OPEN_WAGERS,
    PLAY_MONEY_ISSUER,
    IdempotencyConflict,
    InsufficientFunds,
    LedgerError,
    SqliteLedger,
    Transfer,
    player_account,
)

ALICE = player_account("alice")


def _ledger(path: str | Path = ":memory:") -> SqliteLedger:
    ledger = SqliteLedger(path)
    ledger.open_account(PLAY_MONEY_ISSUER, may_go_negative=True)
    ledger.open_account(HOUSE, may_go_negative=True)
    ledger.open_account(OPEN_WAGERS)
    ledger.open_account(ALICE)
    ledger.post("grant:alice", [Transfer(PLAY_MONEY_ISSUER, ALICE, 10_000, "grant")])
    return ledger


def test_a_wager_is_debited_when_accepted_and_credited_at_settlement() -> None:
    ledger = _ledger()
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


def test_a_retried_batch_is_never_applied_twice() -> None:
    ledger = _ledger()
    bet = [Transfer(ALICE, OPEN_WAGERS, 500, "wager", "r1", "b1")]
    first = ledger.post("bet:r1:alice:b1", bet)
    again = ledger.post("bet:r1:alice:b1", bet)
    assert first.applied and not again.applied and again.sequence == first.sequence
    assert ledger.balance(ALICE) == 9_500


def test_a_reused_key_with_other_transfers_is_a_conflict() -> None:
    ledger = _ledger()
    ledger.post("bet:r1:alice:b1", [Transfer(ALICE, OPEN_WAGERS, 500, "wager", "r1", "b1")])
    with pytest.raises(IdempotencyConflict):
        ledger.post("bet:r1:alice:b1", [Transfer(ALICE, OPEN_WAGERS, 900, "wager", "r1", "b1")])
    assert ledger.balance(ALICE) == 9_500


def test_insufficient_funds_applies_nothing_of_the_batch() -> None:
    ledger = _ledger()
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


@pytest.mark.parametrize("amount", [0, -1, 2**60])
def test_amounts_out_of_range_are_refused(amount: int) -> None:
    with pytest.raises(ValueError):
        Transfer(ALICE, OPEN_WAGERS, amount, "wager")


@pytest.mark.parametrize("amount", [1.5, "5", True])
def test_amounts_that_are_not_whole_minor_units_are_refused(amount: object) -> None:
    with pytest.raises(TypeError):
        Transfer(ALICE, OPEN_WAGERS, amount, "wager")  # type: ignore[arg-type]


def test_unknown_accounts_and_empty_batches_are_refused() -> None:
    ledger = _ledger()
    with pytest.raises(LedgerError, match="no account"):
        ledger.post("x", [Transfer(ALICE, "player:nobody", 1, "gift")])
    with pytest.raises(ValueError):
        ledger.post("y", [])
    with pytest.raises(LedgerError):
        ledger.balance("player:nobody")


def test_balances_survive_reopening_and_reconcile(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite"
    ledger = _ledger(path)
    ledger.post("bet:r1:alice:b1", [Transfer(ALICE, OPEN_WAGERS, 500, "wager", "r1", "b1")])
    ledger.close()
    reopened = SqliteLedger(path)
    assert reopened.balance(ALICE) == 9_500
    assert reopened.reconcile() == {} and reopened.total() == 0


def test_reconcile_reports_a_tampered_balance(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "ledger.sqlite"
    _ledger(path).close()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE accounts SET balance = balance + 1 WHERE name = ?", (ALICE,))
    assert SqliteLedger(path).reconcile() == {ALICE: (10_001, 10_000)}


class LedgerMachine(RuleBasedStateMachine):
    """Random bets, settlements and retries: the sum of every balance stays zero, no player
    goes negative, and the cached balances always match the transfers."""

    def __init__(self) -> None:
        super().__init__()
        self.ledger = _ledger()
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
