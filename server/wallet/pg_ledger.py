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
"""

from __future__ import annotations

from typing import Any

import psycopg

from server.pg_storage import PgReader, PgWriter, connect, require_schema
from server.wallet.books import Books, Row, net_changes, new_balance, posted_before
from server.wallet.ledger import (
    LedgerError,
    PostResult,
)

__all__ = ["PgLedger"]


def _apply(key: str, wanted: list[Row], conn: psycopg.Connection[Any]) -> PostResult:
    """Post one batch inside the writer's transaction (see ``Ledger.post``)."""
    return _apply_many([(key, wanted)], conn)[0]


def _apply_many(
    batches: list[tuple[str, list[Row]]], conn: psycopg.Connection[Any]
) -> list[PostResult]:
    """Post ``batches`` (distinct keys) in order inside the writer's transaction, in three
    round trips however many they are: claim the keys, lock the accounts, write the
    transfers and balances. A round's settlement is one such call, not a queue of batches
    at three round trips each that bets would wait behind. One refused: it raises, and the
    transaction undoes them all."""
    results = []
    for ok, value in _post(conn, batches, each=False):
        assert ok
        results.append(value)
    return results


def _post_each(
    conn: psycopg.Connection[Any], batches: list[tuple[str, list[Row]]]
) -> list[tuple[bool, Any]]:
    """Post ``batches`` — the bets' debits queued together from every table of the node —
    each on its own: the same three round trips for all of them, and a batch refused (the
    player's balance, an unknown account, a key posted with other transfers) is refused
    alone, its outcome the exception, the others posted (``group_commit.Batched``)."""
    if len({key for key, _ in batches}) != len(batches):
        raise ValueError("a batch key twice in one group")  # made one by one instead
    return _post(conn, batches, each=True)


def _post(
    conn: psycopg.Connection[Any], batches: list[tuple[str, list[Row]]], *, each: bool
) -> list[tuple[bool, Any]]:
    # The keys first: a batch posted before (or being posted by another node this instant,
    # whose transaction the insert waits for) is a replay, whatever the balances say now.
    claimed = {
        key: int(seq)
        for key, seq in conn.execute(
            "INSERT INTO batches(key) SELECT k FROM unnest(%s::text[]) WITH ORDINALITY "
            "AS u(k, n) ORDER BY n ON CONFLICT (key) DO NOTHING RETURNING key, seq",
            ([key for key, _ in batches],),
        ).fetchall()
    }
    new = [(key, wanted, claimed[key]) for key, wanted in batches if key in claimed]
    names = sorted({account for _, wanted, _ in new for r in wanted for account in r[:2]})
    locked = {
        name: (int(balance), bool(negative))
        for name, balance, negative in (
            conn.execute(
                "SELECT name, balance, may_go_negative FROM accounts WHERE name = ANY(%s) "
                "ORDER BY name FOR UPDATE",
                (names,),
            ).fetchall()
            if names
            else ()
        )
    }
    held = {name: balance for name, (balance, _) in locked.items()}
    total: dict[str, int] = {}
    rows: list[tuple[Any, ...]] = []
    results: dict[str, tuple[bool, Any]] = {}
    for key, wanted, seq in new:  # in order: each batch sees the balances the last left
        delta = net_changes(wanted)
        balances: dict[str, int] = {}
        try:
            for account in sorted(delta):
                if account not in locked:
                    raise LedgerError(f"no account {account!r}")
                balances[account] = new_balance(
                    account, held[account], locked[account][1], delta[account]
                )
        except LedgerError as exc:
            if not each:  # a refusal raises: the transaction undoes it all
                raise
            results[key] = (False, exc)
            continue
        for account, balance in balances.items():
            held[account] = balance
            total[account] = total.get(account, 0) + delta[account]
        rows += [(seq, idx, *r) for idx, r in enumerate(wanted)]
        results[key] = (True, PostResult(key, True, seq, balances))
    refused = [key for key, (ok, _) in results.items() if not ok]
    if refused:  # their claims go: the keys may be posted later
        conn.execute("DELETE FROM batches WHERE key = ANY(%s)", (refused,))
    if rows:
        columns = list(zip(*rows, strict=True))
        changed = [(account, change) for account, change in total.items() if change]
        conn.execute(
            "WITH moved AS (INSERT INTO transfers(batch_seq, idx, source, destination, "
            "amount, kind, round_id, bet_id) SELECT * FROM unnest(%s::bigint[], %s::int[], "
            "%s::text[], %s::text[], %s::bigint[], %s::text[], %s::text[], %s::text[])) "
            "UPDATE accounts SET balance = balance + c.change FROM unnest(%s::text[], "
            "%s::bigint[]) AS c(name, change) WHERE accounts.name = c.name",
            (
                *(list(column) for column in columns),
                [name for name, _ in changed],
                [change for _, change in changed],
            ),
        )
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
