"""The embedded ledger: SQLite in WAL mode with durable (``synchronous=FULL``) commits.

One database file holds the accounts (cached balances), the batches (idempotency keys) and
the append-only transfers. A batch is applied inside one ``BEGIN IMMEDIATE`` transaction:
after a crash either all of its transfers and balance changes are there or none is, so the
cached balances always reconcile with the transfers.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

from server.storage import open_durable_sqlite
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


def _row(transfer: Transfer) -> tuple[str, str, int, str, str | None, str | None]:
    t = transfer
    return (t.source, t.destination, t.amount, t.kind, t.round_id, t.bet_id)


class SqliteLedger:
    """A ``Ledger`` in one SQLite file (or ``":memory:"`` for tests)."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        # One connection, serialised by the lock, whichever thread a caller runs on.
        self._db = open_durable_sqlite(path, _SCHEMA)
        self._lock = threading.Lock()

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def open_account(self, account: str, *, may_go_negative: bool = False) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR IGNORE INTO accounts(name, may_go_negative) VALUES (?, ?)",
                (account, int(may_go_negative)),
            )

    def balance(self, account: str) -> int:
        with self._lock:
            row = self._db.execute(
                "SELECT balance FROM accounts WHERE name = ?", (account,)
            ).fetchone()
        if row is None:
            raise LedgerError(f"no account {account!r}")
        return int(row[0])

    def post(self, key: str, transfers: Sequence[Transfer]) -> PostResult:
        if not key:
            raise ValueError("a batch needs an idempotency key")
        if not transfers:
            raise ValueError("an empty batch")
        wanted = [_row(t) for t in transfers]
        with self._lock:
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            try:
                result = self._post_locked(key, wanted)
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
            return result

    def _post_locked(
        self, key: str, wanted: list[tuple[str, str, int, str, str | None, str | None]]
    ) -> PostResult:
        db = self._db
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
