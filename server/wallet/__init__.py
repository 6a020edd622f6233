"""Balances and the append-only ledger.

Every movement of money is a ``Transfer`` between two accounts in a double-entry ledger,
posted in atomic batches that carry an idempotency key: a retried batch is recognised and
never applied twice. Balances are a cache of the ledger and can be reconciled from it at any
time. ``SqliteLedger`` is the embedded default (WAL, durable commits).
"""

from server.wallet.ledger import (
    HOUSE,
    OPEN_WAGERS,
    PLAY_MONEY_ISSUER,
    IdempotencyConflict,
    InsufficientFunds,
    Ledger,
    LedgerError,
    PostResult,
    Transfer,
    player_account,
)
from server.wallet.sqlite_ledger import SqliteLedger

__all__ = [
    "HOUSE",
    "OPEN_WAGERS",
    "PLAY_MONEY_ISSUER",
    "IdempotencyConflict",
    "InsufficientFunds",
    "Ledger",
    "LedgerError",
    "PostResult",
    "SqliteLedger",
    "Transfer",
    "player_account",
]
