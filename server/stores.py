"""What every store speaks, whatever keeps it: the embedded SQLite default (``storage``,
``journal``, ``wallet``) or a cluster's PostgreSQL (``pg_storage``).

The ``Ledger`` and ``Journal`` protocols raise their own errors (``LedgerError`` and
``InsufficientFunds`` for the ledger's rules) and, for a write that could not be made
durable, ``StorageError`` from here — never an exception of the database library behind
them, so a caller (the table runtime) handles every implementation alike.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["RedisUnreachable", "StorageError", "guarded"]

T = TypeVar("T")
S = TypeVar("S")


class StorageError(Exception):
    """A write could not be made durable (the store failed: disk full, I/O error, the store
    closed, a constraint the write broke). Nothing of it was applied."""


class RedisUnreachable(StorageError):
    """A cluster node's Redis did not answer at start (``croupier serve`` names the setting
    it came from)."""


class _GuardedWriter:
    """A store's writer whose every write first runs ``guard`` in the same transaction."""

    def __init__(self, writer: Any, guard: Callable[[Any], None]) -> None:
        self._writer, self._guard = writer, guard
        self.inner = writer  # the store's own writer (the same for two stores sharing it)

    def _batched(self, batched: Any) -> Any:
        """``batched`` (a ``group_commit.Batched``) carrying the guard: the writer checks it
        before the run, and the run stays one call of each kind for every table's writes."""
        return None if batched is None else dataclasses.replace(batched, guard=self._guard)

    def _wrap(self, apply: Callable[[Any], T]) -> Callable[[Any], T]:
        def guarded(conn: Any) -> T:
            # A writer that commits several writes together says what its transaction has
            # checked already (a fence, locked until the commit): checked once per group.
            verified = getattr(self._writer, "verified", None)
            if verified is None or self._guard not in verified:
                self._guard(conn)  # raises, and the transaction applies nothing
                if verified is not None:
                    verified.add(self._guard)
            return apply(conn)

        return guarded

    def call(self, apply: Callable[[Any], T]) -> T:
        result: T = self._writer.call(self._wrap(apply))
        return result

    def _guarded(self, writes: list[Any]) -> list[Any]:
        return [
            dataclasses.replace(w, apply=self._wrap(w.apply), batched=self._batched(w.batched))
            for w in writes
        ]

    async def run(self, apply: Callable[[Any], T], *, batched: Any = None) -> T:
        result: T = await self._writer.run(self._wrap(apply), batched=self._batched(batched))
        return result

    def queue_all(self, writes: list[Any]) -> list[Any]:
        """``queue_all`` of the store's writer, every write guarded."""
        futures: list[Any] = self._writer.queue_all(self._guarded(writes))
        return futures


def guarded(store: S, guard: Callable[[Any], None]) -> S:
    """A view of ``store`` (a ledger or journal of ``server.wallet.books`` /
    ``server.journal.books``) whose writes each run ``guard`` first, in the write's own
    transaction: a cluster table's fencing check (``server.cluster.fencing``). The view
    shares the store's connections and pending debits; only the store itself is closed. A
    ledger in front of another (the operator's wallet) makes its own view (``fenced``)."""
    fenced = getattr(store, "fenced", None)
    if fenced is not None:
        view_of: S = fenced(guard)
        return view_of
    view = copy.copy(store)
    view._writer = _GuardedWriter(store._writer, guard)  # type: ignore[attr-defined]
    meters = getattr(store, "_meters", None)  # a journal's linked meters' own writer
    if meters is not None:
        view._meters = _GuardedWriter(meters, guard)  # type: ignore[attr-defined]
    view.close = lambda: None  # type: ignore[attr-defined]
    return view
