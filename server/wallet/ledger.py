"""The ledger's vocabulary: accounts, transfers, batches, and the protocol implementations keep.

Accounts are named strings. Players hold ``player:<id>``; a wager accepted at a table moves
its stake to ``wagers:open`` (debited when accepted, docs/architecture.md, "Money"); at
settlement the stake and any winnings move from there and from ``house`` back to the player,
and a losing stake moves to ``house``. Demo play money is issued by ``issuer:play-money``.
Only the house and issuers may go negative, so the sum of every balance is always zero —
the invariant "balances + house result + open wagers is constant" in double-entry form.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, Protocol

__all__ = [
    "HOUSE",
    "MAX_AMOUNT",
    "OPEN_WAGERS",
    "OPERATOR_ISSUER",
    "PLAY_MONEY_ISSUER",
    "IdempotencyConflict",
    "InsufficientFunds",
    "Ledger",
    "LedgerError",
    "OperatorRefused",
    "OperatorUnavailable",
    "PostResult",
    "Transfer",
    "player_account",
]

HOUSE: Final = "house"
OPEN_WAGERS: Final = "wagers:open"
PLAY_MONEY_ISSUER: Final = "issuer:play-money"
OPERATOR_ISSUER: Final = "issuer:operator"  # real-money deposits and withdrawals
# SQLite integers are signed 64-bit; keep every amount and balance well inside them.
MAX_AMOUNT: Final = 2**53


def player_account(player_id: str) -> str:
    return f"player:{player_id}"


class LedgerError(Exception):
    """A batch could not be posted; nothing was applied."""


class InsufficientFunds(LedgerError):
    """A batch would take an account that may not go negative below zero."""

    def __init__(self, account: str, balance: int, needed: int) -> None:
        super().__init__(f"{account} holds {balance}, needs {needed}")
        self.account = account
        self.balance = balance
        self.needed = needed


class IdempotencyConflict(LedgerError):
    """A batch key was reused for different transfers: a bug of the caller, never retried."""


class OperatorRefused(LedgerError):
    """An operator's wallet refused a debit (``code``: ``player_blocked``,
    ``limit_reached``, ``session_expired``, ``insufficient_funds``; docs/wallet.md);
    nothing was taken."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code, self.message = code, message


class OperatorUnavailable(LedgerError):
    """A debit's outcome at the operator is unknown (``reason``): it is being rolled back,
    and the bet must not stand."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"the operator's wallet did not answer: {reason}")
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Transfer:
    """``amount`` minor units from ``source`` to ``destination``, with what it was for."""

    source: str
    destination: str
    amount: int
    kind: str
    round_id: str | None = None
    bet_id: str | None = None

    def __post_init__(self) -> None:
        if isinstance(self.amount, bool) or not isinstance(self.amount, int):
            raise TypeError(f"amount must be an int of minor units, not {self.amount!r}")
        if not 0 < self.amount <= MAX_AMOUNT:
            raise ValueError(f"transfer amount {self.amount} is out of range 1..{MAX_AMOUNT}")
        if self.source == self.destination:
            raise ValueError(f"a transfer from {self.source} to itself")


@dataclass(frozen=True, slots=True)
class PostResult:
    """``applied`` is False when the batch had been posted before (an idempotent replay).
    ``balances``: the accounts the batch moved, as they stood just after it (empty for a
    replay) — what a reply shows without asking the store again."""

    key: str
    applied: bool
    sequence: int
    balances: Mapping[str, int] = field(default_factory=dict)


class Ledger(Protocol):
    """What the table runtime needs from a ledger.

    Writes are durable when they return. ``apost`` is ``post`` for the event loop: it
    resolves once the batch is durable, without blocking the loop while it is written
    (a commit failure raises ``server.stores.StorageError``: nothing was applied)."""

    def open_account(self, account: str, *, may_go_negative: bool = False) -> None:
        """Create ``account`` with a zero balance if it does not exist."""

    def balance(self, account: str) -> int: ...

    def post(self, key: str, transfers: Sequence[Transfer]) -> PostResult:
        """Apply every transfer or none. Posting the same ``key`` again with the same
        transfers does nothing and says so; with different transfers it raises
        ``IdempotencyConflict``."""

    async def apost(self, key: str, transfers: Sequence[Transfer]) -> PostResult:
        """``post``, awaited: the batch is applied in the order it was posted."""
        ...

    async def apost_many(
        self, batches: Sequence[tuple[str, Sequence[Transfer]]]
    ) -> list[PostResult]:
        """Several batches (``(key, transfers)``, distinct keys) as one write, applied in
        order, each idempotent by its key as with ``post``: a round's settlements, which
        thus cost the store one write and not one each. They are durable together, or
        none is: a refusal of one (``InsufficientFunds``, ``LedgerError``) refuses all."""
        ...

    def available(self, account: str) -> int:
        """``balance`` less the debits posted with ``apost`` that are not yet durable."""
        ...

    def history(self, account: str) -> list[tuple[str, Transfer]]:
        """(batch key, transfer) for every transfer touching ``account``, oldest first."""

    def round_transfers(self, round_id: str) -> list[tuple[str, Transfer]]:
        """(batch key, transfer) for every transfer of ``round_id``, oldest first."""

    def history_after(self, account: str, after: int) -> list[tuple[int, str, Transfer]]:
        """(batch sequence, batch key, transfer) for every transfer touching ``account`` in
        a batch after sequence number ``after``, oldest first: what is new since a reader's
        last look. Batches are numbered in the order they commit where one writer posts
        to the account (a server's own ledger writer), so nothing commits behind a number
        already read."""

    def batch(self, key: str) -> list[Transfer]:
        """The transfers of the batch posted under ``key``, in order; [] if none was."""

    def reconcile(self) -> dict[str, tuple[int, int]]:
        """Accounts whose cached balance differs from the ledger: {account: (cached, derived)}."""

    def total(self) -> int:
        """The sum of every balance: zero, always."""

    def close(self) -> None:
        """Finish every write still queued, then let the store go."""
