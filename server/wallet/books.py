"""What the embedded (SQLite) and shared (PostgreSQL) ledgers do alike: the reads of the
books, posting through the store's writer thread, and the debits posted with ``apost`` that
are not durable yet (``available``). Each store brings its SQL dialect's parameters, its
reads and the function that applies a batch in its writer's transaction."""

from __future__ import annotations

import contextlib
import threading
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from typing import Any

from server.group_commit import Batched, Prepared
from server.wallet.ledger import (
    MAX_AMOUNT,
    IdempotencyConflict,
    InsufficientFunds,
    LedgerError,
    PostResult,
    Transfer,
)

__all__ = ["Books", "Row", "net_changes", "new_balance", "posted_before", "row"]

Row = tuple[str, str, int, str, str | None, str | None]


def row(transfer: Transfer) -> Row:
    t = transfer
    return (t.source, t.destination, t.amount, t.kind, t.round_id, t.bet_id)


def net_changes(wanted: Sequence[Row]) -> dict[str, int]:
    """Each account's net change under a batch's transfers."""
    delta: dict[str, int] = {}
    for source, destination, amount, *_ in wanted:
        delta[source] = delta.get(source, 0) - amount
        delta[destination] = delta.get(destination, 0) + amount
    return delta


def posted_before(conn: Any, ph: str, key: str, wanted: list[Row]) -> PostResult | None:
    """The batch posted before under ``key`` (a replay: nothing moves again), or None if
    none was; ``IdempotencyConflict`` when it was posted with other transfers. ``conn`` is
    the store's connection in the writer's transaction, ``ph`` its SQL placeholder."""
    found = conn.execute(f"SELECT seq FROM batches WHERE key = {ph}", (key,)).fetchone()
    if found is None:
        return None
    stored = conn.execute(
        "SELECT source, destination, amount, kind, round_id, bet_id FROM transfers "
        f"WHERE batch_seq = {ph} ORDER BY idx",
        (found[0],),
    ).fetchall()
    if [tuple(r) for r in stored] != wanted:
        raise IdempotencyConflict(f"batch {key!r} was posted with other transfers")
    return PostResult(key, False, int(found[0]))


def new_balance(account: str, balance: int, may_go_negative: bool, change: int) -> int:
    """``account``'s balance after ``change``, by the ledger's rules: ``InsufficientFunds``
    below zero for an account that may not go negative, ``LedgerError`` beyond
    ``MAX_AMOUNT`` either way."""
    new = balance + change
    if new < 0 and not may_go_negative:
        raise InsufficientFunds(account, balance, -change)
    if abs(new) > MAX_AMOUNT:
        raise LedgerError(f"{account} would hold {new}, beyond {MAX_AMOUNT}")
    return new


class Books:
    """A ledger's common part. A store sets ``_writer`` (``call``/``run`` a write in its
    transaction, in order), ``_apply`` (``(key, rows, connection) -> PostResult``),
    ``_apply_many`` (``([(key, rows), ...], connection) -> [PostResult, ...]``) and
    implements ``_rows(sql, params)``, its SQL naming parameters ``a`` and ``s`` as ``_A``
    and ``_S``."""

    _A = ":a"
    _S = ":s"
    _writer: Any
    _apply: Callable[..., PostResult]
    _apply_many: Callable[..., list[PostResult]]
    # ``(connection, [(key, rows), ...]) -> [(ok, PostResult or exception), ...]``: where the
    # store posts the batches queued together set-based (``group_commit.Batched``).
    _post_each: Callable[..., list[tuple[bool, Any]]] | None = None

    def __init__(self) -> None:
        # Debits posted with ``apost`` and not yet committed (or refused), per account.
        self._pending_debits: dict[str, int] = defaultdict(int)
        self._pending_lock = threading.Lock()

    def _rows(self, sql: str, params: dict[str, Any]) -> list[Any]:
        raise NotImplementedError

    def balance(self, account: str) -> int:
        rows = self._rows(f"SELECT balance FROM accounts WHERE name = {self._A}", {"a": account})
        if not rows:
            raise LedgerError(f"no account {account!r}")
        return int(rows[0][0])

    def available(self, account: str) -> int:
        """The balance less every debit posted with ``apost`` and not yet durable: what a
        further debit may take without being refused."""
        with self._pending_lock:  # read first: a debit committing meanwhile counts twice
            pending = self._pending_debits.get(account, 0)
        return self.balance(account) - pending

    def post(self, key: str, transfers: Sequence[Transfer]) -> PostResult:
        result: PostResult = self._writer.call(self._batch(key, transfers))
        return result

    async def apost(self, key: str, transfers: Sequence[Transfer]) -> PostResult:
        write = self.post_write(key, transfers)
        with self.pending(transfers):
            result: PostResult = await self._writer.run(write.apply, batched=write.batched)
        return result

    def post_write(self, key: str, transfers: Sequence[Transfer]) -> Prepared:
        """``post``'s write, made ready for the store's writer to apply with others in one
        transaction (``writer.queue_all``; the caller counts its debits as ``pending``)."""
        each = type(self)._post_each
        batched = None if each is None else Batched(each, self._rows_of(key, transfers))
        return Prepared(self._batch(key, transfers), batched)

    @property
    def writer(self) -> Any:
        """The writer this store's writes go through (a cluster's view: guarded)."""
        return self._writer

    async def apost_many(
        self, batches: Sequence[tuple[str, Sequence[Transfer]]]
    ) -> list[PostResult]:
        rows = [self._rows_of(key, transfers) for key, transfers in batches]
        if len({key for key, _ in rows}) != len(rows):
            raise ValueError("a batch key given twice in one apost_many")
        apply = partial(type(self)._apply_many, rows)
        with self.pending([t for _, transfers in batches for t in transfers]):
            results: list[PostResult] = await self._writer.run(apply)
        return results

    @contextlib.contextmanager
    def pending(self, transfers: Sequence[Transfer]) -> Iterator[None]:
        """The transfers' debits count as pending (``available``) until the write ends."""
        debits: dict[str, int] = defaultdict(int)
        for t in transfers:
            debits[t.source] += t.amount
        with self._pending_lock:
            for account, amount in debits.items():
                self._pending_debits[account] += amount
        try:
            yield
        finally:
            with self._pending_lock:
                for account, amount in debits.items():
                    left = self._pending_debits[account] - amount
                    if left:
                        self._pending_debits[account] = left
                    else:
                        del self._pending_debits[account]

    def _batch(self, key: str, transfers: Sequence[Transfer]) -> Callable[[Any], PostResult]:
        return partial(type(self)._apply, *self._rows_of(key, transfers))

    @staticmethod
    def _rows_of(key: str, transfers: Sequence[Transfer]) -> tuple[str, list[Row]]:
        if not key:
            raise ValueError("a batch needs an idempotency key")
        if not transfers:
            raise ValueError("an empty batch")
        return key, [row(t) for t in transfers]

    def _select(self, where: str, arg: str) -> list[tuple[str, Transfer]]:
        rows = self._rows(
            "SELECT b.key, t.source, t.destination, t.amount, t.kind, t.round_id, t.bet_id "
            f"FROM transfers t JOIN batches b ON b.seq = t.batch_seq WHERE {where} "
            "ORDER BY t.batch_seq, t.idx",
            {"a": arg},
        )
        return [(r[0], Transfer(r[1], r[2], int(r[3]), r[4], r[5], r[6])) for r in rows]

    def history(self, account: str) -> list[tuple[str, Transfer]]:
        return self._select(f"t.source = {self._A} OR t.destination = {self._A}", account)

    def round_transfers(self, round_id: str) -> list[tuple[str, Transfer]]:
        return self._select(f"t.round_id = {self._A}", round_id)

    def history_after(self, account: str, after: int) -> list[tuple[int, str, Transfer]]:
        # Each side on its own index of (account, batch): what it costs grows with what is
        # new since ``after``, never with the account's whole life.
        columns = (
            "t.batch_seq, t.idx, b.key, t.source, t.destination, t.amount, t.kind, t.round_id, "
            "t.bet_id FROM transfers t JOIN batches b ON b.seq = t.batch_seq"
        )
        a, s = self._A, self._S
        rows = self._rows(
            f"SELECT {columns} WHERE t.source = {a} AND t.batch_seq > {s} UNION ALL "
            f"SELECT {columns} WHERE t.destination = {a} AND t.batch_seq > {s} "
            f"AND t.source <> {a} ORDER BY 1, 2",
            {"a": account, "s": after},
        )
        return [(int(r[0]), r[2], Transfer(r[3], r[4], int(r[5]), r[6], r[7], r[8])) for r in rows]

    def batch(self, key: str) -> list[Transfer]:
        return [t for _, t in self._select(f"b.key = {self._A}", key)]

    def reconcile(self) -> dict[str, tuple[int, int]]:
        rows = self._rows(
            """
            SELECT a.name, a.balance,
                COALESCE((SELECT SUM(amount) FROM transfers WHERE destination = a.name), 0)
              - COALESCE((SELECT SUM(amount) FROM transfers WHERE source = a.name), 0)
            FROM accounts a
            """,
            {},
        )
        return {r[0]: (int(r[1]), int(r[2])) for r in rows if int(r[1]) != int(r[2])}

    def total(self) -> int:
        rows = self._rows("SELECT COALESCE(SUM(balance), 0) FROM accounts", {})
        return int(rows[0][0])
