"""The shared ledger of a cluster: PostgreSQL, with the same double entry, idempotent batches
and atomic posting as the embedded SQLite ledger (``sqlite_ledger``), and the same tests.

Many nodes post at once. A batch first claims its key (the key is unique: a batch posted
twice at the same instant from two nodes is applied once — the second insert waits for the
first transaction and then finds the key, and the batch is checked as a replay or a
conflict), then locks the rows of every account it touches (``SELECT … FOR UPDATE``, in
name order), checks each account's rule against the locked balance, and writes: two debits
racing for one balance, from any nodes, are serialised by the row lock and the second sees
the first — a balance that may not go negative never does. A refusal raises, and the
transaction (``server.pg_storage.PgWriter``'s) undoes the key's claim with the rest.

All of that is one statement, ``croupier_post`` (a function of the schema's fifth
migration), for every batch the writer's group holds — with the fences of the tables whose
bets they are: the node's one writer thread waits out one round trip for them, not four.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import psycopg

from server.pg_storage import (
    PgReader,
    PgWriter,
    connect,
    fence_moved,
    fences_among,
    require_schema,
)
from server.wallet.books import Books, Row, new_balance, posted_before
from server.wallet.ledger import LedgerError, PostResult

__all__ = ["PgLedger"]


def _apply(key: str, wanted: list[Row], conn: psycopg.Connection[Any]) -> PostResult:
    """Post one batch inside the writer's transaction (see ``Ledger.post``)."""
    return _apply_many([(key, wanted)], conn)[0]


def _apply_many(
    batches: list[tuple[str, list[Row]]], conn: psycopg.Connection[Any]
) -> list[PostResult]:
    """Post ``batches`` (distinct keys) in order inside the writer's transaction, in one
    round trip however many they are (``croupier_post``, the schema's fifth migration). A
    round's settlement is one such call, not a queue of batches that bets would wait
    behind. One refused: it raises, and the transaction undoes them all."""
    results = []
    for ok, value in _post(conn, batches, each=False):
        assert ok
        results.append(value)
    return results


def _post_each(
    conn: psycopg.Connection[Any],
    batches: list[tuple[str, list[Row]]],
    guards: list[Callable[[Any], None]] | None = None,
) -> list[tuple[bool, Any]]:
    """Post ``batches`` — the bets' debits queued together from every table of the node —
    each on its own, in one round trip: a batch refused (the player's balance, an unknown
    account, a key posted with other transfers) is refused alone, its outcome the exception,
    the others posted (``group_commit.Batched``). ``guards``: the run's checks not made yet
    in this transaction (``takes_guards``); the tables' fences among them are checked in the
    same statement, any other guard first, as the writer would."""
    if len({key for key, _ in batches}) != len(batches):
        raise ValueError("a batch key twice in one group")  # made one by one instead
    return _post(conn, batches, each=True, guards=guards or [])


_post_each.takes_guards = True  # type: ignore[attr-defined]
# Every bet of every node credits ``wagers:open``: locked last, held only until the commit.
_post_each.locks_shared_rows = True  # type: ignore[attr-defined]


def _post(
    conn: psycopg.Connection[Any],
    batches: list[tuple[str, list[Row]]],
    *,
    each: bool,
    guards: Sequence[Callable[[Any], None]] = (),
) -> list[tuple[bool, Any]]:
    fences = {(f.table_id, f.token): f for f in fences_among(conn, guards)}
    rows = [(n, *r) for n, (_, wanted) in enumerate(batches, 1) for r in wanted]
    columns: list[list[Any]] = [list(c) for c in zip(*rows, strict=True)] if rows else [[]] * 7
    answered = conn.execute(
        "SELECT * FROM croupier_post(%s::text[], %s::int[], %s::text[], %s::text[], "
        "%s::bigint[], %s::text[], %s::text[], %s::text[], %s, %s::text[], %s::bigint[])",
        (
            [key for key, _ in batches],
            *columns,
            each,
            [table for table, _ in fences],
            [token for _, token in fences],
        ),
    ).fetchall()
    results: dict[str, tuple[bool, Any]] = {}
    for key, outcome, seq, names, figures, negative in answered:
        if outcome == "fenced":
            fence_moved(conn, next(f for (table, _), f in fences.items() if table == key))
        if outcome == "posted":
            balances = dict(zip(names, (int(b) for b in figures), strict=True))
            results[key] = (True, PostResult(key, True, int(seq), balances))
            continue
        if outcome == "before":
            continue  # below: a replay, or a conflict
        try:
            if outcome == "no_account":
                raise LedgerError(f"no account {names[0]!r}")
            held, change = (int(f) for f in figures)
            new_balance(names[0], held, bool(negative), change)  # raises what it broke
            raise AssertionError(f"croupier_post refused {key!r} for no reason")
        except LedgerError as exc:
            if not each:  # a refusal raises: the transaction undoes it all
                raise
            results[key] = (False, exc)
    for key, wanted in batches:
        if key not in results:
            try:
                existing = posted_before(conn, "%s", key, wanted)
            except LedgerError as exc:
                if not each:
                    raise
                results[key] = (False, exc)
                continue
            assert existing is not None
            results[key] = (True, existing)
    return [results[key] for key, _ in batches]


class PgLedger(Books):
    """A ``Ledger`` in a PostgreSQL database whose schema ``croupier db migrate`` made."""

    _A = "%(a)s"
    _S = "%(s)s"
    _apply = staticmethod(_apply)
    _apply_many = staticmethod(_apply_many)
    _post_each = staticmethod(_post_each)

    def __init__(self, url: str, *, writer: PgWriter | None = None) -> None:
        """``writer``: one shared with the journal of the same database (``PgWriter.shared``),
        so that a bet's debit and record commit in one transaction."""
        super().__init__()
        self.url = url
        with connect(url) as conn:
            require_schema(conn)
        self._reader = PgReader(url)
        self._writer = writer or PgWriter(url, "ledger")
        self._closed = False

    def _rows(self, sql: str, params: dict[str, Any]) -> list[Any]:
        return self._reader.rows(sql, params)

    def close(self) -> None:
        if self._closed:  # once: a writer shared with another store counts its closes
            return
        self._closed = True
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
