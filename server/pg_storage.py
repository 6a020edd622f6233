"""PostgreSQL for the shared stores of a cluster (docs/operations.md, "Running a cluster"):
connections, the schema's versioned migrations, and a writer thread per store.

The driver is psycopg 3: one maintained driver for both the synchronous tools
(``croupier db migrate``, ``croupier wallet``) and the server, whose writes go through a
writer thread exactly as the embedded SQLite stores' do (``server.storage``) — the table
runtime awaits them without blocking its event loop, in the order they were made.

The schema is the server's own: ``migrate`` applies the numbered ``MIGRATIONS`` it lacks,
each in one transaction under an advisory lock (two nodes starting together migrate once),
and a database whose schema is newer than this server knows is refused (``SchemaTooNew``).
Every failure to reach or write the database is a ``StorageError``, as with SQLite.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import queue
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, TypeVar

import psycopg

from server.stores import StorageError

__all__ = [
    "MIGRATIONS",
    "DatabaseInUse",
    "DatabaseLock",
    "PgWriter",
    "SchemaTooNew",
    "connect",
    "migrate",
    "schema_version",
    "shared_key",
]

T = TypeVar("T")

# The schema, version by version: never edit one that has shipped; add the next.
MIGRATIONS: Final[tuple[str, ...]] = (
    # 1: the ledger (server.wallet.pg_ledger) and the round journal (server.journal.pg_journal)
    """
    CREATE TABLE accounts (
        name TEXT PRIMARY KEY,
        balance BIGINT NOT NULL DEFAULT 0,
        may_go_negative BOOLEAN NOT NULL DEFAULT FALSE
    );
    CREATE TABLE batches (
        seq BIGSERIAL PRIMARY KEY,
        key TEXT NOT NULL UNIQUE
    );
    CREATE TABLE transfers (
        batch_seq BIGINT NOT NULL REFERENCES batches(seq),
        idx INTEGER NOT NULL,
        source TEXT NOT NULL REFERENCES accounts(name),
        destination TEXT NOT NULL REFERENCES accounts(name),
        amount BIGINT NOT NULL CHECK (amount > 0),
        kind TEXT NOT NULL,
        round_id TEXT,
        bet_id TEXT,
        PRIMARY KEY (batch_seq, idx)
    );
    CREATE INDEX transfers_source ON transfers(source);
    CREATE INDEX transfers_destination ON transfers(destination);
    CREATE INDEX transfers_round ON transfers(round_id);
    CREATE TABLE rounds (
        round_id TEXT PRIMARY KEY,
        table_id TEXT NOT NULL,
        status TEXT NOT NULL,
        opened_seq BIGINT NOT NULL,
        finished_seq BIGINT
    );
    CREATE INDEX rounds_status ON rounds(status);
    CREATE INDEX rounds_table ON rounds(table_id, opened_seq);
    CREATE TABLE records (
        seq BIGSERIAL PRIMARY KEY,
        round_id TEXT NOT NULL REFERENCES rounds(round_id),
        kind TEXT NOT NULL,
        payload TEXT NOT NULL
    );
    CREATE INDEX records_round ON records(round_id, seq);
    CREATE TABLE table_state (
        table_id TEXT NOT NULL,
        key TEXT NOT NULL,
        state TEXT NOT NULL,
        PRIMARY KEY (table_id, key)
    );
    CREATE TABLE round_players (
        round_id TEXT NOT NULL REFERENCES rounds(round_id),
        player_id TEXT NOT NULL,
        PRIMARY KEY (player_id, round_id)
    );
    """,
    # 2: a cluster's table ownership (server.cluster.fencing) and the keys its nodes share
    """
    CREATE TABLE table_fences (
        table_id TEXT PRIMARY KEY,
        token BIGINT NOT NULL,
        node_id TEXT NOT NULL,
        since TIMESTAMPTZ NOT NULL DEFAULT now()
    );
    CREATE TABLE cluster_keys (
        name TEXT PRIMARY KEY,
        key BYTEA NOT NULL
    );
    """,
    # 3: linked progressive meters (server.games.baccarat.linked), shared by many tables
    """
    CREATE TABLE linked_meters (
        key TEXT PRIMARY KEY,
        state TEXT
    );
    CREATE TABLE meter_settlements (
        round_id TEXT PRIMARY KEY,
        result TEXT NOT NULL
    );
    """,
    # 4: an account's transfers by batch (server.wallet.books, history_after): a reader
    # takes only what is new since its last look; they replace the indexes on the account
    # alone
    """
    CREATE INDEX transfers_source_batch ON transfers(source, batch_seq);
    CREATE INDEX transfers_destination_batch ON transfers(destination, batch_seq);
    DROP INDEX transfers_source;
    DROP INDEX transfers_destination;
    """,
)
_MIGRATION_LOCK: Final = 0x63726F75  # "crou": the advisory lock two starting nodes share


class DatabaseInUse(StorageError):
    """Another server process holds the database (without Redis leases, one node only)."""


class DatabaseLock:
    """The database belongs to one ``croupier serve`` at a time while no Redis leases share
    its tables out: a session advisory lock, held for the process's life (released by the
    database when the process dies, however it dies)."""

    _KEY: Final = 0x63726F76  # "crov"

    def __init__(self, url: str) -> None:
        self._conn: psycopg.Connection[Any] | None = connect(url)
        row = self._conn.execute("SELECT pg_try_advisory_lock(%s)", (self._KEY,)).fetchone()
        if not (row and row[0]):
            self._conn.close()
            self._conn = None
            raise DatabaseInUse(
                "another croupier serve uses this database: one node per database until "
                "[cluster] redis_url shares its tables out"
            )

    def release(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(psycopg.Error):
                self._conn.close()
            self._conn = None


def shared_key(url: str, name: str) -> bytes:
    """The secret ``name`` every node of a cluster uses (the demo players' token key): made
    by the first node that asks, read by the others. Never logged."""
    with connect(url) as conn:
        conn.execute(
            "INSERT INTO cluster_keys(name, key) VALUES (%s, %s) ON CONFLICT (name) DO NOTHING",
            (name, secrets.token_bytes(32)),
        )
        row = conn.execute("SELECT key FROM cluster_keys WHERE name = %s", (name,)).fetchone()
    assert row is not None
    return bytes(row[0])


class SchemaTooNew(StorageError):
    """The database was migrated by a newer server than this one."""


def connect(url: str) -> psycopg.Connection[Any]:
    """An autocommit connection to ``url`` (``postgresql://…``); ``StorageError`` saying why
    when it cannot be made."""
    try:
        return psycopg.connect(url, autocommit=True, connect_timeout=10)
    except psycopg.Error as exc:
        raise StorageError(f"cannot connect to the database: {exc}".strip()) from None


def schema_version(conn: psycopg.Connection[Any]) -> int:
    """The database's schema version (0: never migrated)."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS croupier_schema (version INTEGER NOT NULL, "
        "applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
    )
    row = conn.execute("SELECT COALESCE(MAX(version), 0) FROM croupier_schema").fetchone()
    return int(row[0]) if row else 0


def migrate(url: str) -> tuple[int, int]:
    """Bring the database's schema up to this server's; (version before, version after).
    ``SchemaTooNew`` for a database a newer server migrated."""
    with connect(url) as conn:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
            before = schema_version(conn)
            if before > len(MIGRATIONS):
                raise SchemaTooNew(
                    f"the database's schema is version {before}; this server knows up to "
                    f"{len(MIGRATIONS)}: upgrade the server"
                )
            for version in range(before + 1, len(MIGRATIONS) + 1):
                conn.execute(MIGRATIONS[version - 1])
                conn.execute("INSERT INTO croupier_schema(version) VALUES (%s)", (version,))
        return before, len(MIGRATIONS)


def require_schema(conn: psycopg.Connection[Any]) -> None:
    """Refuse a database whose schema is not this server's (run ``croupier db migrate``)."""
    version = schema_version(conn)
    if version > len(MIGRATIONS):
        raise SchemaTooNew(
            f"the database's schema is version {version}; this server knows up to "
            f"{len(MIGRATIONS)}: upgrade the server"
        )
    if version < len(MIGRATIONS):
        raise StorageError(
            f"the database's schema is version {version}, this server needs "
            f"{len(MIGRATIONS)}: run croupier db migrate"
        )


@dataclass(slots=True)
class _Write:
    apply: Callable[[psycopg.Connection[Any]], Any]
    future: concurrent.futures.Future[Any]


_STOP: Final = object()
# At most this many queued writes share one transaction: a group's row locks are held
# until its commit, and another node's writes may be waiting for them.
MAX_GROUP: Final = 64
# A write the database rolled back to break a deadlock (or a serialisation failure) is
# made again, alone, this many times before it fails.
ROLLBACK_RETRIES: Final = 3
# A writer's transaction left waiting on its own process this long is ended by the
# database (``idle_in_transaction_session_timeout``): a node paused or starved mid-group
# would otherwise hold its rows — the table's fence among them — and the node taking the
# table over could not raise the fence until it woke. Its writes then fail (nothing of them
# committed), as for a lost connection.
IDLE_IN_TRANSACTION_MS: Final = 2000


def _rolled_back(exc: BaseException) -> bool:
    """The database rolled the transaction back itself (SQLSTATE class 40: a deadlock broken,
    a serialisation failure): nothing of it was applied and it may simply be made again."""
    return isinstance(exc, psycopg.Error) and (exc.sqlstate or "").startswith("40")


class _Undone(Exception):
    """A group's transaction was rolled back, nothing of it applied: one of its writes raised
    ``error`` (its own refusal, or the database's deadlock breaking)."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(error)
        self.error = error


class PgWriter:
    """The one thread writing a store's tables from this process, with group commit.

    Whatever is queued when the thread is free (up to ``MAX_GROUP`` writes) is applied in
    **one** transaction and made durable by one commit: a node whose tables all bet at the
    same moment pays one round of commit latency for all of them, not one each in a queue.
    Writes are applied in the order submitted and each future resolves only after the
    commit. When one write of a group raises — the store's own refusal (an
    ``InsufficientFunds``, a fencing token refused) or the database breaking a deadlock
    with another node's transaction — the group is rolled back, nothing of it applied, and
    its writes are made again one transaction each, in order: the others commit, the
    refused one raises what it raised alone, and a deadlock victim is retried. (Savepoints
    would keep the group, but cost two round trips per write on every group to save work
    only on a rare refusal.) A lost connection fails the writes with ``StorageError``
    (nothing was applied: the transaction never committed) and the next write connects
    again. ``verified`` holds what a guard checked in the current transaction (a table's
    fence, locked until the commit): the other writes of the group need not ask again."""

    def __init__(self, url: str, name: str) -> None:
        self.url, self.name = url, name
        self._conn: psycopg.Connection[Any] | None = self._connect()
        self._queue: queue.SimpleQueue[_Write | object] = queue.SimpleQueue()
        self._closed = False
        self._close_lock = threading.Lock()
        self.verified: set[Any] = set()
        self.groups = 0  # transactions committed (for tests and metrics)
        self.writes = 0  # writes resolved
        self._thread = threading.Thread(target=self._run, name=f"pg-writer:{name}", daemon=True)
        self._thread.start()

    def submit(self, apply: Callable[[psycopg.Connection[Any]], T]) -> concurrent.futures.Future[T]:  # fmt: skip  # noqa: E501
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        with self._close_lock:
            if self._closed:
                future.set_exception(StorageError(f"the {self.name} writer is closed"))
                return future
            self._queue.put(_Write(apply, future))
        return future

    def call(self, apply: Callable[[psycopg.Connection[Any]], T]) -> T:
        return self.submit(apply).result()

    async def run(self, apply: Callable[[psycopg.Connection[Any]], T]) -> T:
        return await asyncio.wrap_future(self.submit(apply))

    def close(self) -> None:
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
            self._queue.put(_STOP)
        self._thread.join()

    def _run(self) -> None:
        stopping = False
        while not stopping:
            group: list[_Write] = []
            item = self._queue.get()
            while True:
                if item is _STOP:
                    stopping = True
                    break
                assert isinstance(item, _Write)
                group.append(item)
                if len(group) >= MAX_GROUP:
                    break
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
            # A waiter may give up (its future cancelled) until its write is taken up.
            group = [w for w in group if w.future.set_running_or_notify_cancel()]
            if len(group) > 1 and self._group(group):
                continue
            for write in group:
                self._alone(write)
        self._drop()

    def _group(self, group: list[_Write]) -> bool:
        """Apply ``group`` in one transaction and resolve it; False when it was rolled back
        (nothing applied) and its writes are to be made one by one."""

        def apply_all(conn: psycopg.Connection[Any]) -> list[Any]:
            results = []
            for write in group:
                try:
                    results.append(write.apply(conn))
                except Exception as exc:  # the transaction is rolled back whole
                    raise _Undone(exc) from exc
            return results

        try:
            results = self._transaction(apply_all)
        except _Undone as undone:
            if not self._lost(undone.error):
                return False  # a refusal or a deadlock victim: one by one
            self._fail(group, undone.error)  # the connection went: as for a single write
        except psycopg.Error as exc:
            if _rolled_back(exc):
                return False
            self._fail(group, exc)
        except BaseException as exc:  # no connection could be made (StorageError), or a bug
            for write in group:
                write.future.set_exception(exc)
        else:
            for write, result in zip(group, results, strict=True):
                write.future.set_result(result)
        self.writes += len(group)
        return True

    def _lost(self, exc: BaseException) -> bool:
        """``exc`` took the connection with it (the database ended the session, the link
        broke): not a refusal of the write's own."""
        if _rolled_back(exc):
            return False
        conn = self._conn
        broken = conn is None or conn.closed or conn.broken
        return broken or isinstance(exc, (psycopg.OperationalError, psycopg.InterfaceError))

    def _fail(self, group: list[_Write], exc: BaseException) -> None:
        """``group`` failed on the database's side: ``StorageError`` for each write."""
        if self._lost(exc):  # the next write connects again
            self._drop()
        for write in group:
            write.future.set_exception(StorageError(f"the {self.name} write failed: {exc}"))

    def _alone(self, write: _Write) -> None:
        """One write in its own transaction (made again when the database rolled it back
        to break a deadlock), resolved."""
        for attempt in range(1, ROLLBACK_RETRIES + 1):
            try:
                result = self._transaction(write.apply)
            except psycopg.Error as exc:  # the store's own statements never leak one
                if _rolled_back(exc) and attempt < ROLLBACK_RETRIES:
                    continue
                self._fail([write], exc)
            except BaseException as exc:  # the store's own refusal (InsufficientFunds …)
                write.future.set_exception(exc)
            else:
                write.future.set_result(result)
            break
        self.writes += 1

    def _transaction(self, apply: Callable[[psycopg.Connection[Any]], T]) -> T:
        """``apply`` in one transaction, committed. When the connection turns out dead
        before the write began (the server dropped it while idle: a restart), nothing was
        sent: the transaction is made once more on a new connection."""
        for attempt in (1, 2):
            fresh = self._conn is None or self._conn.closed
            if self._conn is None or self._conn.closed:  # (narrows the type, as ``fresh`` does not)
                self._conn = self._connect()
            began = False

            def write(conn: psycopg.Connection[Any]) -> T:
                nonlocal began
                began = True
                return apply(conn)

            self.verified.clear()  # what a guard checked held in the last transaction only
            try:
                with self._conn.transaction():
                    result = write(self._conn)
            except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
                if _rolled_back(exc):
                    raise  # the database undid it; the caller decides
                if began or fresh or attempt == 2:
                    raise
                self._drop()
            else:
                self.groups += 1
                return result
        raise AssertionError("unreachable")

    def _connect(self) -> psycopg.Connection[Any]:
        conn = connect(self.url)
        try:
            conn.execute(f"SET idle_in_transaction_session_timeout = {IDLE_IN_TRANSACTION_MS}")
        except psycopg.Error as exc:
            conn.close()
            raise StorageError(f"cannot set up the {self.name} writer: {exc}") from None
        return conn

    def _drop(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(psycopg.Error):
                self._conn.close()
            self._conn = None


class PgReader:
    """A connection for reads, serialised by a lock (whichever thread calls); connected
    again after a failure."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._lock = threading.Lock()
        self._conn: psycopg.Connection[Any] | None = connect(url)

    def rows(self, sql: str, args: Any = ()) -> list[Any]:
        """The rows of one query. A connection the server dropped while it was idle (a
        restart) is made again and the query asked once more: a read changes nothing."""
        with self._lock:
            for attempt in (1, 2):
                fresh = self._conn is None or self._conn.closed
                try:
                    if self._conn is None or self._conn.closed:
                        self._conn = connect(self.url)
                    return self._conn.execute(sql, args).fetchall()
                except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
                    if self._conn is not None:
                        self._conn.close()
                    self._conn = None
                    if fresh or attempt == 2:
                        raise StorageError(f"the database read failed: {exc}") from None
            raise AssertionError("unreachable")

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
