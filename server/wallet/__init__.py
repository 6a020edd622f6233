"""Balances and the append-only ledger.

Every movement of money is a ``Transfer`` between two accounts in a double-entry ledger,
posted in atomic batches that carry an idempotency key: a retried batch is recognised and
never applied twice. Balances are a cache of the ledger and can be reconciled from it at any
time. ``SqliteLedger`` is the embedded default (WAL, durable commits).

The names below are loaded on first use (``server/exports.py``): importing the
ledger's types loads no store.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from server.exports import lazy

if TYPE_CHECKING:
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

__getattr__ = lazy(
    __name__,
    {
        "HOUSE": "server.wallet.ledger",
        "OPEN_WAGERS": "server.wallet.ledger",
        "PLAY_MONEY_ISSUER": "server.wallet.ledger",
        "IdempotencyConflict": "server.wallet.ledger",
        "InsufficientFunds": "server.wallet.ledger",
        "Ledger": "server.wallet.ledger",
        "LedgerError": "server.wallet.ledger",
        "PostResult": "server.wallet.ledger",
        "Transfer": "server.wallet.ledger",
        "player_account": "server.wallet.ledger",
        "SqliteLedger": "server.wallet.sqlite_ledger",
    },
)
