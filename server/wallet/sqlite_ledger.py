"""The embedded ledger: SQLite in WAL mode with durable (``synchronous=FULL``) commits.

One database file holds the accounts (cached balances), the batches (idempotency keys) and
the append-only transfers. A batch is applied inside one transaction (a savepoint of its
writer's group commit, ``server.storage``): after a crash either all of its transfers and
balance changes are there or none is, so the cached balances always reconcile with the
transfers. Batches are checked and applied one after another by the writer thread, in the
order they were posted, so two quick bets can never overdraw an account.
"""

from __future__ import annotations

import sqlite3

from server.storage import SqliteStore
from server.wallet.books import Books, Row, net_changes, new_balance, posted_before
from server.wallet.ledger import (
    LedgerError,
    PostResult,
)

__all__ = ["SqliteLedger"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS accounts (
    name TEXT PRIMARY KEY,
    balance INTEGER NOT NULL DEFAULT 0,
    may_go_negative INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS batches (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    key TEXT NOT NULL UNIQUE
);
CREATE TABLE IF NOT EXISTS transfers (
    batch_seq INTEGER NOT NULL REFERENCES batches(seq),
    idx INTEGER NOT NULL,
    source TEXT NOT NULL REFERENCES accounts(name),
    destination TEXT NOT NULL REFERENCES accounts(name),
    amount INTEGER NOT NULL CHECK (amount > 0),
    kind TEXT NOT NULL,
    round_id TEXT,
    bet_id TEXT,
    PRIMARY KEY (batch_seq, idx)
);
CREATE INDEX IF NOT EXISTS transfers_round ON transfers(round_id);
-- An account's transfers by batch: its whole history, or only what is new since a batch
-- (history_after). They replace the indexes on the account alone of earlier versions.
CREATE INDEX IF NOT EXISTS transfers_source_batch ON transfers(source, batch_seq);
CREATE INDEX IF NOT EXISTS transfers_destination_batch ON transfers(destination, batch_seq);
DROP INDEX IF EXISTS transfers_source;
DROP INDEX IF EXISTS transfers_destination;
"""


def _apply(key: str, wanted: list[Row], db: sqlite3.Connection) -> PostResult:
    """Post one batch inside the writer's transaction (see ``Ledger.post``)."""
    existing = posted_before(db, "?", key, wanted)
    if existing is not None:
        return existing
    # Net change per account, checked against the accounts' rules before anything is written.
    delta = net_changes(wanted)
    balances: dict[str, int] = {}
    for account, change in delta.items():
        row = db.execute(
            "SELECT balance, may_go_negative FROM accounts WHERE name = ?", (account,)
        ).fetchone()
        if row is None:
            raise LedgerError(f"no account {account!r}")
        balances[account] = new_balance(account, int(row[0]), bool(row[1]), change)
    seq = db.execute("INSERT INTO batches(key) VALUES (?)", (key,)).lastrowid
    assert seq is not None
    db.executemany(
        "INSERT INTO transfers(batch_seq, idx, source, destination, amount, kind, round_id, "
        "bet_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [(seq, i, *row) for i, row in enumerate(wanted)],
    )
    db.executemany(
        "UPDATE accounts SET balance = balance + ? WHERE name = ?",
        [(change, account) for account, change in delta.items() if change],
    )
    return PostResult(key, True, seq, balances)


def _apply_many(batches: list[tuple[str, list[Row]]], db: sqlite3.Connection) -> list[PostResult]:
    """Post ``batches`` in order inside the writer's transaction (see ``Ledger.apost_many``):
    SQLite's statements cost no round trip, so one by one."""
    return [_apply(key, wanted, db) for key, wanted in batches]


class SqliteLedger(SqliteStore, Books):
    """A ``Ledger`` in one SQLite file (or ``":memory:"`` for tests).

    Reads use a connection of their own (serialised by a lock, whichever thread calls);
    every write goes to the ledger's ``DurableWriter`` thread. ``post`` waits for it;
    ``apost`` awaits it without blocking the event loop."""

    _SCHEMA, _NAME = _SCHEMA, "ledger"
    _apply = staticmethod(_apply)
    _apply_many = staticmethod(_apply_many)

    def open_account(self, account: str, *, may_go_negative: bool = False) -> None:
        if self._exists(account):
            return  # the common case (a player logging in again) writes nothing
        self._writer.call(
            lambda db: db.execute(
                "INSERT OR IGNORE INTO accounts(name, may_go_negative) VALUES (?, ?)",
                (account, int(may_go_negative)),
            )
        )

    def _exists(self, account: str) -> bool:
        return bool(self._rows("SELECT 1 FROM accounts WHERE name = :a", {"a": account}))
