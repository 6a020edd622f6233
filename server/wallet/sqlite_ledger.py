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
import threading
from collections import defaultdict
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

from server.storage import DurableWriter, open_durable_sqlite
from server.wallet.ledger import (
    MAX_AMOUNT,
    IdempotencyConflict,
    InsufficientFunds,
    LedgerError,
    PostResult,
    Transfer,
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
CREATE INDEX IF NOT EXISTS transfers_source ON transfers(source);
CREATE INDEX IF NOT EXISTS transfers_destination ON transfers(destination);
CREATE INDEX IF NOT EXISTS transfers_round ON transfers(round_id);
"""


_Row = tuple[str, str, int, str, str | None, str | None]


def _row(transfer: Transfer) -> _Row:
    t = transfer
    return (t.source, t.destination, t.amount, t.kind, t.round_id, t.bet_id)


def _apply(key: str, wanted: list[_Row], db: sqlite3.Connection) -> PostResult:
    """Post one batch inside the writer's transaction (see ``Ledger.post``)."""
    existing = db.execute("SELECT seq FROM batches WHERE key = ?", (key,)).fetchone()
    if existing is not None:
        stored = db.execute(
            "SELECT source, destination, amount, kind, round_id, bet_id FROM transfers "
            "WHERE batch_seq = ? ORDER BY idx",
            (existing[0],),
        ).fetchall()
        if [tuple(r) for r in stored] != wanted:
            raise IdempotencyConflict(f"batch {key!r} was posted with other transfers")
        return PostResult(key, False, int(existing[0]))
    # Net change per account, checked against the accounts' rules before anything is written.
    delta: dict[str, int] = {}
    for source, destination, amount, *_ in wanted:
        delta[source] = delta.get(source, 0) - amount
        delta[destination] = delta.get(destination, 0) + amount
    for account, change in delta.items():
        row = db.execute(
            "SELECT balance, may_go_negative FROM accounts WHERE name = ?", (account,)
        ).fetchone()
        if row is None:
            raise LedgerError(f"no account {account!r}")
        balance, may_go_negative = int(row[0]), bool(row[1])
        new = balance + change
        if new < 0 and not may_go_negative:
            raise InsufficientFunds(account, balance, -change)
        if abs(new) > MAX_AMOUNT:
            raise LedgerError(f"{account} would hold {new}, beyond {MAX_AMOUNT}")
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
    return PostResult(key, True, seq)


class SqliteLedger:
    """A ``Ledger`` in one SQLite file (or ``":memory:"`` for tests).

    Reads use a connection of their own (serialised by a lock, whichever thread calls);
    every write goes to the ledger's ``DurableWriter`` thread. ``post`` waits for it;
    ``apost`` awaits it without blocking the event loop."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self._lock = threading.Lock()
        self._db = open_durable_sqlite(path, _SCHEMA)
        if self.path == ":memory:":  # one private database: readers share the writer's
            self._writer = DurableWriter(self._db, "ledger", lock=self._lock)
        else:
            self._writer = DurableWriter(open_durable_sqlite(path, ""), "ledger", owns_db=True)
        # Debits posted with ``apost`` and not yet committed (or refused), per account.
        self._pending_debits: dict[str, int] = defaultdict(int)
        self._pending_lock = threading.Lock()

    def close(self) -> None:
        """Commit every write still queued, then close the files."""
        self._writer.close()
        with self._lock:
            self._db.close()

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
        with self._lock:
            row = self._db.execute("SELECT 1 FROM accounts WHERE name = ?", (account,)).fetchone()
        return row is not None

    def balance(self, account: str) -> int:
        with self._lock:
            row = self._db.execute(
                "SELECT balance FROM accounts WHERE name = ?", (account,)
            ).fetchone()
        if row is None:
            raise LedgerError(f"no account {account!r}")
        return int(row[0])

    def available(self, account: str) -> int:
        """The balance less every debit posted with ``apost`` and not yet durable: what a
        further debit may take without being refused."""
        with self._pending_lock:  # read first: a debit committing meanwhile counts twice
            pending = self._pending_debits.get(account, 0)
        return self.balance(account) - pending

    def post(self, key: str, transfers: Sequence[Transfer]) -> PostResult:
        return self._writer.call(self._batch(key, transfers))

    async def apost(self, key: str, transfers: Sequence[Transfer]) -> PostResult:
        apply = self._batch(key, transfers)
        debits: dict[str, int] = defaultdict(int)
        for t in transfers:
            debits[t.source] += t.amount
        with self._pending_lock:
            for account, amount in debits.items():
                self._pending_debits[account] += amount
        try:
            return await self._writer.run(apply)
        finally:
            with self._pending_lock:
                for account, amount in debits.items():
                    left = self._pending_debits[account] - amount
                    if left:
                        self._pending_debits[account] = left
                    else:
                        del self._pending_debits[account]

    @staticmethod
    def _batch(
        key: str, transfers: Sequence[Transfer]
    ) -> Callable[[sqlite3.Connection], PostResult]:
        if not key:
            raise ValueError("a batch needs an idempotency key")
        if not transfers:
            raise ValueError("an empty batch")
        return partial(_apply, key, [_row(t) for t in transfers])

    def _select(self, where: str, arg: str) -> list[tuple[str, Transfer]]:
        with self._lock:
            rows = self._db.execute(
                "SELECT b.key, t.source, t.destination, t.amount, t.kind, t.round_id, t.bet_id "
                f"FROM transfers t JOIN batches b ON b.seq = t.batch_seq WHERE {where} "
                "ORDER BY t.batch_seq, t.idx",
                (arg,),
            ).fetchall()
        return [(r[0], Transfer(r[1], r[2], int(r[3]), r[4], r[5], r[6])) for r in rows]

    def history(self, account: str) -> list[tuple[str, Transfer]]:
        return self._select("t.source = ?1 OR t.destination = ?1", account)

    def round_transfers(self, round_id: str) -> list[tuple[str, Transfer]]:
        return self._select("t.round_id = ?1", round_id)

    def reconcile(self) -> dict[str, tuple[int, int]]:
        with self._lock:
            rows = self._db.execute(
                """
                SELECT a.name, a.balance,
                    COALESCE((SELECT SUM(amount) FROM transfers WHERE destination = a.name), 0)
                  - COALESCE((SELECT SUM(amount) FROM transfers WHERE source = a.name), 0)
                FROM accounts a
                """
            ).fetchall()
        return {r[0]: (int(r[1]), int(r[2])) for r in rows if int(r[1]) != int(r[2])}

    def total(self) -> int:
        with self._lock:
            row = self._db.execute("SELECT COALESCE(SUM(balance), 0) FROM accounts").fetchone()
        return int(row[0])
