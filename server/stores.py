"""What every store speaks, whatever keeps it: the embedded SQLite default (``storage``,
``journal``, ``wallet``) or a server database later.

The ``Ledger`` and ``Journal`` protocols raise their own errors (``LedgerError`` and
``InsufficientFunds`` for the ledger's rules) and, for a write that could not be made
durable, ``StorageError`` from here — never an exception of the database library behind
them, so a caller (the table runtime) handles every implementation alike.
"""

from __future__ import annotations

__all__ = ["StorageError"]


class StorageError(Exception):
    """A write could not be made durable (the store failed: disk full, I/O error, the store
    closed, a constraint the write broke). Nothing of it was applied."""
