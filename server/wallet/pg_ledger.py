"""The shared ledger of a cluster: PostgreSQL, with the same double entry, idempotent batches
and atomic posting as the embedded SQLite ledger (``sqlite_ledger``), and the same tests.

Many nodes post at once. A batch is one transaction that first locks the rows of every
account it touches (``SELECT … FOR UPDATE``, in name order, so two batches never wait on
each other in a cycle), checks each account's rule against the locked balance, then writes:
two debits racing for one balance, from any nodes, are serialised by the row lock and the
second sees the first — a balance that may not go negative never does. The batch key is
unique: a batch posted twice at the same instant from two nodes is applied once; the loser's
transaction fails on the key and is checked again as a replay (or a conflict).
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import psycopg
from psycopg import errors

from server.pg_storage import PgReader, PgWriter, connect, require_schema
from server.wallet.ledger import (
    MAX_AMOUNT,
    IdempotencyConflict,
    InsufficientFunds,
    LedgerError,
    PostResult,
    Transfer,
)

__all__ = ["PgLedger"]

_Row = tuple[str, str, int, str, str | None, str | None]


def _row(transfer: Transfer) -> _Row:
    t = transfer
    return (t.source, t.destination, t.amount, t.kind, t.round_id, t.bet_id)


def _existing(key: str, wanted: list[_Row], conn: psycopg.Connection[Any]) -> PostResult | None:
    row = conn.execute("SELECT seq FROM batches WHERE key = %s", (key,)).fetchone()
    if row is None:
        return None
    stored = conn.execute(
        "SELECT source, destination, amount, kind, round_id, bet_id FROM transfers "
        "WHERE batch_seq = %s ORDER BY idx",
        (row[0],),
    ).fetchall()
    if [tuple(r) for r in stored] != wanted:
        raise IdempotencyConflict(f"batch {key!r} was posted with other transfers")
    return PostResult(key, False, int(row[0]))


def _apply(key: str, wanted: list[_Row], conn: psycopg.Connection[Any]) -> PostResult:
    """Post one batch inside the writer's transaction (see ``Ledger.post``)."""
    existing = _existing(key, wanted, conn)
    if existing is not None:
        return existing
    delta: dict[str, int] = {}
    for source, destination, amount, *_ in wanted:
        delta[source] = delta.get(source, 0) - amount
        delta[destination] = delta.get(destination, 0) + amount
    names = sorted(delta)
    locked = {
        name: (int(balance), bool(negative))
        for name, balance, negative in conn.execute(
            "SELECT name, balance, may_go_negative FROM accounts WHERE name = ANY(%s) "
            "ORDER BY name FOR UPDATE",
            (names,),
        ).fetchall()
    }
    # The same batch may have been posted by another node while this one waited for the
    # locks: it is a replay then, whatever the balances say now.
    existing = _existing(key, wanted, conn)
    if existing is not None:
        return existing
    for account in names:
        if account not in locked:
            raise LedgerError(f"no account {account!r}")
        balance, may_go_negative = locked[account]
        new = balance + delta[account]
        if new < 0 and not may_go_negative:
            raise InsufficientFunds(account, balance, -delta[account])
        if abs(new) > MAX_AMOUNT:
            raise LedgerError(f"{account} would hold {new}, beyond {MAX_AMOUNT}")
    try:
        with conn.transaction():  # a savepoint: a key posted meanwhile is checked as a replay
            row = conn.execute(
                "INSERT INTO batches(key) VALUES (%s) RETURNING seq", (key,)
            ).fetchone()
    except errors.UniqueViolation:
        existing = _existing(key, wanted, conn)
        assert existing is not None
        return existing
    assert row is not None
    seq = int(row[0])
    with conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO transfers(batch_seq, idx, source, destination, amount, kind, round_id, "
            "bet_id) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
            [(seq, i, *r) for i, r in enumerate(wanted)],
        )
        cur.executemany(
            "UPDATE accounts SET balance = balance + %s WHERE name = %s",
            [(change, account) for account, change in delta.items() if change],
        )
    return PostResult(key, True, seq)


class PgLedger:
    """A ``Ledger`` in a PostgreSQL database whose schema ``croupier db migrate`` made."""

    def __init__(self, url: str) -> None:
        self.url = url
        with connect(url) as conn:
            require_schema(conn)
        self._reader = PgReader(url)
        self._writer = PgWriter(url, "ledger")
        self._pending_debits: dict[str, int] = defaultdict(int)
        self._pending_lock = threading.Lock()

    def close(self) -> None:
        self._writer.close()
        self._reader.close()

    def open_account(self, account: str, *, may_go_negative: bool = False) -> None:
        if self._reader.rows("SELECT 1 FROM accounts WHERE name = %s", (account,)):
            return
        self._writer.call(
            lambda conn: conn.execute(
                "INSERT INTO accounts(name, may_go_negative) VALUES (%s, %s) "
                "ON CONFLICT (name) DO NOTHING",
                (account, may_go_negative),
            )
        )

    def balance(self, account: str) -> int:
        rows = self._reader.rows("SELECT balance FROM accounts WHERE name = %s", (account,))
        if not rows:
            raise LedgerError(f"no account {account!r}")
        return int(rows[0][0])

    def available(self, account: str) -> int:
        with self._pending_lock:
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
    ) -> Callable[[psycopg.Connection[Any]], PostResult]:
        if not key:
            raise ValueError("a batch needs an idempotency key")
        if not transfers:
            raise ValueError("an empty batch")
        return partial(_apply, key, [_row(t) for t in transfers])

    def _select(self, where: str, arg: str) -> list[tuple[str, Transfer]]:
        rows = self._reader.rows(
            "SELECT b.key, t.source, t.destination, t.amount, t.kind, t.round_id, t.bet_id "
            f"FROM transfers t JOIN batches b ON b.seq = t.batch_seq WHERE {where} "
            "ORDER BY t.batch_seq, t.idx",
            {"a": arg},
        )
        return [(r[0], Transfer(r[1], r[2], int(r[3]), r[4], r[5], r[6])) for r in rows]

    def history(self, account: str) -> list[tuple[str, Transfer]]:
        return self._select("t.source = %(a)s OR t.destination = %(a)s", account)

    def round_transfers(self, round_id: str) -> list[tuple[str, Transfer]]:
        return self._select("t.round_id = %(a)s", round_id)

    def reconcile(self) -> dict[str, tuple[int, int]]:
        rows = self._reader.rows(
            """
            SELECT a.name, a.balance,
                COALESCE((SELECT SUM(amount) FROM transfers WHERE destination = a.name), 0)
              - COALESCE((SELECT SUM(amount) FROM transfers WHERE source = a.name), 0)
            FROM accounts a
            """
        )
        return {r[0]: (int(r[1]), int(r[2])) for r in rows if int(r[1]) != int(r[2])}

    def total(self) -> int:
        rows = self._reader.rows("SELECT COALESCE(SUM(balance), 0) FROM accounts")
        return int(rows[0][0])
