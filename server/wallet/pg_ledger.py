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

from typing import Any

import psycopg
from psycopg import errors

from server.pg_storage import PgReader, PgWriter, connect, require_schema
from server.wallet.books import Books, Row
from server.wallet.ledger import (
    MAX_AMOUNT,
    IdempotencyConflict,
    InsufficientFunds,
    LedgerError,
    PostResult,
)

__all__ = ["PgLedger"]


def _existing(key: str, wanted: list[Row], conn: psycopg.Connection[Any]) -> PostResult | None:
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


def _apply(key: str, wanted: list[Row], conn: psycopg.Connection[Any]) -> PostResult:
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


class PgLedger(Books):
    """A ``Ledger`` in a PostgreSQL database whose schema ``croupier db migrate`` made."""

    _A = "%(a)s"
    _apply = staticmethod(_apply)

    def __init__(self, url: str) -> None:
        super().__init__()
        self.url = url
        with connect(url) as conn:
            require_schema(conn)
        self._reader = PgReader(url)
        self._writer = PgWriter(url, "ledger")

    def _rows(self, sql: str, params: dict[str, Any]) -> list[Any]:
        return self._reader.rows(sql, params)

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
