"""The embedded default's SQLite files: opening them the one durable way, writing them off
the event loop with group commit, and the store every file of the data directory is.

Files are opened in WAL mode with ``synchronous=FULL`` (a commit is on disk when it returns:
a crash never loses an acknowledged bet or a journaled card), foreign keys on, and a busy
timeout so that another process (``croupier wallet``, ``croupier replay``) may use the file
while the server runs.

Every write to a file goes through its ``DurableWriter``: the one group-commit writer
(``server.group_commit``) on SQLite. Whatever is queued when it is free is written in one
``BEGIN IMMEDIATE`` transaction, each write in its own savepoint (free: SQLite has no round
trip), and made durable by one commit — one fsync. A write that raises is rolled back to its
savepoint alone; one that breaks a constraint fails alone with ``StorageError``; any other
error of SQLite (disk full, I/O error) fails the whole group. The writer also checkpoints
the WAL, in quiet moments, so no commit pays for it.

``SqliteStore`` is what the ledger, the journal and the stations' store share: the file
opened with its schema, a read connection, the writer, and closing them.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from pathlib import Path
from typing import Any, ClassVar, Final

from server.group_commit import (
    Backend,
    GroupCommitWriter,
    Verdict,
    hold_in_flight,
    in_flight,
    joined,
    writes_in_flight,
)
from server.stores import StorageError

__all__ = [
    "DurableWriter",
    "SqliteStore",
    "StorageError",
    "hold_in_flight",
    "in_flight",
    "joined",
    "open_durable_sqlite",
    "writes_in_flight",
]

log = logging.getLogger("croupier.storage")

# Checkpoint the WAL after this many group commits, as soon as the writer has nothing queued
# (SQLite's own automatic checkpoint, every 1000 pages, would run inside some bet's commit).
CHECKPOINT_EVERY: Final = 256
# ... and regardless of the queue once this many groups went by without a quiet moment.
CHECKPOINT_AT_THE_LATEST: Final = 4096
MEMORY: Final = ":memory:"  # a private database, for tests: gone when closed


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


class _SqliteBackend(Backend[sqlite3.Connection]):
    """SQLite's side of the writer: ``BEGIN IMMEDIATE`` (the file's write lock, taken at
    once), a savepoint per write, and the WAL checkpoints SQLite would otherwise run inside
    some commit."""

    savepoints = True
    errors = (sqlite3.Error,)

    def __init__(
        self, db: sqlite3.Connection, name: str, lock: threading.Lock | None, owns_db: bool
    ) -> None:
        super().__init__(name)
        self._db, self._owns_db = db, owns_db
        self._wal = lock is None  # an in-memory database, shared under a lock, has no WAL
        if lock is not None:
            self.lock = lock
        self._groups_unchecked = 0  # groups written since the last checkpoint
        db.execute("PRAGMA wal_autocheckpoint=0")  # the writer checkpoints itself

    def begin(self) -> sqlite3.Connection:
        self._db.execute("BEGIN IMMEDIATE")
        return self._db

    def savepoint(self) -> None:
        self._db.execute("SAVEPOINT write")

    def release(self) -> None:
        self._db.execute("RELEASE write")

    def rollback_to(self) -> None:
        self._db.execute("ROLLBACK TO write")
        self._db.execute("RELEASE write")

    def commit(self) -> None:
        self._db.execute("COMMIT")

    def rollback(self, exc: BaseException) -> None:
        if self._db.in_transaction:
            try:
                self._db.execute("ROLLBACK")
            except sqlite3.Error:
                log.exception("%s: the rollback failed too", self.name)

    def verdict(self, exc: BaseException) -> Verdict:
        if isinstance(exc, sqlite3.IntegrityError):
            return Verdict.BROKE  # this write broke a constraint
        if isinstance(exc, sqlite3.Error):
            return Verdict.FAILED  # SQLite itself failed (I/O, disk full)
        return Verdict.REFUSAL

    def storage_error(self, exc: BaseException, verdict: Verdict) -> StorageError:
        what = "refused a write" if verdict is Verdict.BROKE else "could not be written"
        error = StorageError(f"the {self.name} {what}: {exc}")
        error.__cause__ = exc
        return error

    def upkeep(self, *, wrote: bool, quiet: bool) -> None:
        if wrote:
            self._groups_unchecked += 1
        if self._groups_unchecked >= (CHECKPOINT_EVERY if quiet else CHECKPOINT_AT_THE_LATEST):
            self._checkpoint()
            self._groups_unchecked = 0

    def close(self) -> None:
        self._checkpoint()
        if self._owns_db:
            self._db.close()

    def _checkpoint(self) -> None:
        if not self._wal:
            return
        try:
            self._db.execute("PRAGMA wal_checkpoint(PASSIVE)")
        except sqlite3.Error:
            log.exception("%s: WAL checkpoint failed (retried later)", self.name)


class DurableWriter(GroupCommitWriter[sqlite3.Connection]):
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
        super().__init__(_SqliteBackend(db, name, lock, owns_db))


class SqliteStore:
    """A store in one SQLite file (or ``":memory:"`` for tests), with ``_SCHEMA`` applied
    when it opens (``CREATE … IF NOT EXISTS``: a new file is made, an existing one kept).

    Reads use a connection of their own, serialised by ``_lock`` whichever thread calls
    (``_rows``); every write goes to the store's ``DurableWriter`` thread (``_writer``,
    named ``_NAME`` in errors and logs), on a connection of its own. A ``":memory:"``
    database is private to its connection, so there the writer shares the readers'
    connection, under the same lock. Subclasses call ``super().__init__(path)`` (it goes on
    to the next base's ``__init__``) and upgrade an older file in ``_upgrade``."""

    _SCHEMA: ClassVar[str] = ""
    _NAME: ClassVar[str]

    def __init__(self, path: str | Path) -> None:
        super().__init__()
        self.path = str(path)
        self._lock = threading.Lock()
        self._db = open_durable_sqlite(path, self._SCHEMA)
        self._upgrade(self._db)
        if self.path == MEMORY:  # one private database: readers share the writer's
            self._writer = DurableWriter(self._db, self._NAME, lock=self._lock)
        else:
            self._writer = DurableWriter(open_durable_sqlite(path, ""), self._NAME, owns_db=True)

    def _upgrade(self, db: sqlite3.Connection) -> None:
        """Bring a file made by an older version up to ``_SCHEMA`` (before any write)."""

    def close(self) -> None:
        """Commit every write still queued, then close the files."""
        self._writer.close()
        with self._lock:
            self._db.close()

    def _rows(self, sql: str, params: Any = ()) -> list[Any]:
        """The rows of one query on the read connection (``params`` a sequence or a dict)."""
        with self._lock:
            return self._db.execute(sql, params).fetchall()
