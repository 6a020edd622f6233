"""The embedded default's SQLite files: opening them the one durable way, and writing them
off the event loop with group commit.

Files are opened in WAL mode with ``synchronous=FULL`` (a commit is on disk when it returns:
a crash never loses an acknowledged bet or a journaled card), foreign keys on, and a busy
timeout so that another process (``croupier wallet``, ``croupier replay``) may use the file
while the server runs.

Every write to a file goes through its ``DurableWriter``: one thread that owns the file's
only writing connection. Whatever is queued when it is free is written in **one**
transaction and made durable by **one** commit (one fsync) — group commit — and each write's
future resolves only after that commit returned. The event loop does not wait for a disk:
it ``await``s the future (``run``), or queues a write at once and awaits it later
(``queued``). Writes are applied in the order they were submitted; each
runs inside its own savepoint, so one that raises (an ``InsufficientFunds``, or a
constraint the write breaks: ``StorageError``) is rolled back alone and the others of its
group still commit. A failure of SQLite itself (disk full, I/O error) fails every write of
the group with ``StorageError``: none of them was applied. A waiter that gives up before
its write is taken up (its task cancelled) takes the write with it. The writer also
checkpoints the WAL, in quiet moments, so no commit pays for it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import queue
import sqlite3
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, TypeVar

from server.stores import StorageError

__all__ = [
    "DurableWriter",
    "StorageError",
    "in_flight",
    "open_durable_sqlite",
    "writes_in_flight",
]

log = logging.getLogger("croupier.storage")

T = TypeVar("T")

# Checkpoint the WAL after this many group commits, as soon as the writer has nothing queued
# (SQLite's own automatic checkpoint, every 1000 pages, would run inside some bet's commit).
CHECKPOINT_EVERY: Final = 256
# ... and regardless of the queue once this many groups went by without a quiet moment.
CHECKPOINT_AT_THE_LATEST: Final = 4096


_in_flight = 0  # writes submitted and not yet resolved (see ``writes_in_flight``)
_in_flight_lock = threading.Lock()


def _count_in_flight(change: int) -> None:
    global _in_flight
    with _in_flight_lock:
        _in_flight += change


@contextlib.contextmanager
def in_flight() -> Iterator[None]:
    """Count as one write in flight while the block runs: around awaiting several writes at
    once (``asyncio.gather`` starts them as tasks a loop iteration later and resumes the
    awaiting coroutine a loop iteration after the last), so that ``writes_in_flight`` never
    reads zero between one step's writes and the next's."""
    _count_in_flight(+1)
    try:
        yield
    finally:
        _count_in_flight(-1)


def writes_in_flight() -> int:
    """How many writes are queued, being made, or resolved but not yet taken up by the
    coroutine awaiting them (``run`` and ``in_flight`` count until the coroutine has the
    result, so there is no instant between one write and the next step's write when a
    table looks idle). ``ManualClock.advance`` waits for them, so a test's table has taken
    its step — journal writes included — when time has moved."""
    return _in_flight


def open_durable_sqlite(path: str | Path, schema: str) -> sqlite3.Connection:
    """An autocommit connection (callers ``BEGIN IMMEDIATE`` their own transactions),
    usable from the server's threads under the caller's lock, with ``schema`` applied."""
    db = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.execute("PRAGMA busy_timeout=10000")
    db.execute("PRAGMA foreign_keys=ON")
    if schema:
        db.executescript(schema)
    return db


@dataclass(slots=True)
class _Write:
    apply: Callable[[sqlite3.Connection], Any]
    future: concurrent.futures.Future[Any]


_STOP: Final = object()


class DurableWriter:
    """The one thread writing ``db`` (which nothing else may write). ``lock``, when given, is
    held while a group is applied and committed: for a ``":memory:"`` database, whose single
    connection readers share. With ``owns_db`` the writer closes ``db`` when it stops."""

    def __init__(
        self,
        db: sqlite3.Connection,
        name: str,
        *,
        lock: threading.Lock | None = None,
        owns_db: bool = False,
    ) -> None:
        self.name = name
        self._owns_db = owns_db
        self._db = db
        self._lock = lock
        self._queue: queue.SimpleQueue[_Write | object] = queue.SimpleQueue()
        self._closed = False
        self._close_lock = threading.Lock()
        self.groups = 0  # group commits made (for tests and metrics)
        self.writes = 0  # writes committed or refused in them
        db.execute("PRAGMA wal_autocheckpoint=0")  # the writer checkpoints itself
        self._thread = threading.Thread(target=self._run, name=f"writer:{name}", daemon=True)
        self._thread.start()

    # --- the callers' side ---------------------------------------------------------------------

    def submit(
        self, apply: Callable[[sqlite3.Connection], T], *, counted: bool = True
    ) -> concurrent.futures.Future[T]:
        """Queue ``apply(connection)``; the future resolves once its group is durable, with
        what ``apply`` returned or raised (``StorageError`` when the commit failed). With
        ``counted`` the write is in ``writes_in_flight`` until it resolves (``run`` and
        ``queued`` count it themselves, until the event loop has the result)."""
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        with self._close_lock:
            if self._closed:
                future.set_exception(StorageError(f"the {self.name} writer is closed"))
                return future
            if counted:
                _count_in_flight(+1)
                future.add_done_callback(lambda _: _count_in_flight(-1))
            self._queue.put(_Write(apply, future))
        return future

    def call(self, apply: Callable[[sqlite3.Connection], T]) -> T:
        """``submit`` and wait: for tools, recovery and tests, never on a busy event loop."""
        return self.submit(apply).result()

    async def run(self, apply: Callable[[sqlite3.Connection], T]) -> T:
        """``submit`` and await, without blocking the event loop."""
        _count_in_flight(+1)
        try:
            return await asyncio.wrap_future(self.submit(apply, counted=False))
        finally:
            _count_in_flight(-1)

    def queued(self, apply: Callable[[sqlite3.Connection], T]) -> asyncio.Future[T]:
        """``submit`` now (so the write keeps its place in the order) and return an asyncio
        future to await later, in the running loop (counted in ``writes_in_flight`` until it
        resolves)."""
        return asyncio.wrap_future(self.submit(apply))

    def close(self) -> None:
        """Write and commit everything queued, then stop the thread. Idempotent."""
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
            self._queue.put(_STOP)
        self._thread.join()

    # --- the writer thread ---------------------------------------------------------------------

    def _run(self) -> None:
        since_checkpoint = 0
        stopping = False
        while not stopping:
            group: list[_Write] = []
            item = self._queue.get()
            while True:
                if item is _STOP:
                    stopping = True
                else:
                    assert isinstance(item, _Write)
                    group.append(item)
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
            # A waiter may give up (its task cancelled) until its write is taken up; from
            # here on the future cannot be cancelled, so resolving it cannot fail.
            group = [w for w in group if w.future.set_running_or_notify_cancel()]
            if group:
                try:
                    self._commit(group)
                except BaseException as exc:  # pragma: no cover - a bug: never die silently
                    log.critical("%s writer failed; refusing every write", self.name, exc_info=True)
                    self._fail_everything(group, exc)
                    return
                since_checkpoint += 1
            quiet = self._queue.empty()
            if since_checkpoint >= (CHECKPOINT_EVERY if quiet else CHECKPOINT_AT_THE_LATEST):
                self._checkpoint()
                since_checkpoint = 0
        self._checkpoint()
        if self._owns_db:
            self._db.close()

    def _commit(self, group: list[_Write]) -> None:
        outcomes: list[tuple[bool, Any]] = []
        if self._lock is not None:
            self._lock.acquire()
        try:
            failure = self._apply_group(group, outcomes)
        finally:
            if self._lock is not None:
                self._lock.release()
        self.groups += 1
        self.writes += len(group)
        for n, write in enumerate(group):
            future = write.future
            if failure is not None:
                future.set_exception(failure)
            else:
                ok, value = outcomes[n]
                if ok:
                    future.set_result(value)
                else:
                    future.set_exception(value)

    def _fail_everything(self, group: list[_Write], exc: BaseException) -> None:
        """The writer cannot go on: fail what it holds and everything queued, and refuse
        what comes later (``submit`` on a closed writer)."""
        with self._close_lock:
            self._closed = True
        error = StorageError(f"the {self.name} writer failed: {exc!r}")
        for write in group:
            if not write.future.done():
                write.future.set_exception(error)
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                return
            if isinstance(item, _Write) and item.future.set_running_or_notify_cancel():
                item.future.set_exception(error)

    def _apply_group(
        self, group: list[_Write], outcomes: list[tuple[bool, Any]]
    ) -> StorageError | None:
        """Apply every write and commit once; None, or the failure that undid the group."""
        db = self._db
        try:
            db.execute("BEGIN IMMEDIATE")
            for write in group:
                db.execute("SAVEPOINT write")
                try:
                    value = write.apply(db)
                except sqlite3.IntegrityError as exc:  # this write broke a constraint
                    db.execute("ROLLBACK TO write")
                    db.execute("RELEASE write")
                    error = StorageError(f"the {self.name} refused a write: {exc}")
                    error.__cause__ = exc
                    outcomes.append((False, error))
                except sqlite3.Error:
                    raise  # SQLite itself failed (I/O, disk full): the whole group is undone
                except Exception as exc:  # the write's own refusal: undo it alone
                    db.execute("ROLLBACK TO write")
                    db.execute("RELEASE write")
                    outcomes.append((False, exc))
                else:
                    db.execute("RELEASE write")
                    outcomes.append((True, value))
            db.execute("COMMIT")
        except sqlite3.Error as exc:
            log.error("%s: a group of %d writes failed: %s", self.name, len(group), exc)
            if db.in_transaction:
                try:
                    db.execute("ROLLBACK")
                except sqlite3.Error:
                    log.exception("%s: the rollback failed too", self.name)
            error = StorageError(f"the {self.name} could not be written: {exc}")
            error.__cause__ = exc
            return error
        return None

    def _checkpoint(self) -> None:
        if self._lock is not None:
            return  # an in-memory database has no WAL
        try:
            self._db.execute("PRAGMA wal_checkpoint(PASSIVE)")
        except sqlite3.Error:
            log.exception("%s: WAL checkpoint failed (retried later)", self.name)
