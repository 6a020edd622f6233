"""PostgreSQL for the shared stores of a cluster (docs/operations.md, "Running a cluster"):
connections, the schema's versioned migrations, and a writer thread per store.

The driver is psycopg 3: one maintained driver for both the synchronous tools
(``croupier db migrate``, ``croupier wallet``) and the server, whose writes go through the
same group-commit writer as the embedded SQLite stores' (``server.group_commit``) — the table
runtime awaits them without blocking its event loop, in the order they were made.

The schema is the server's own: ``migrate`` applies the numbered ``MIGRATIONS`` it lacks,
each in one transaction under an advisory lock (two nodes starting together migrate once),
and a database whose schema is newer than this server knows is refused (``SchemaTooNew``).
Every failure to reach or write the database is a ``StorageError``, as with SQLite.
"""

from __future__ import annotations

import contextlib
import secrets
import threading
from collections.abc import Callable, Sequence
from typing import Any, Final, NoReturn

import psycopg

from server.group_commit import Backend, GroupCommitWriter, Verdict, check_guards
from server.stores import StorageError

__all__ = [
    "MIGRATIONS",
    "DatabaseInUse",
    "DatabaseLock",
    "PgWriter",
    "SchemaTooNew",
    "connect",
    "fence_moved",
    "fences_among",
    "migrate",
    "schema_version",
    "shared_key",
]

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
    # 5: posting batches in one statement (server.wallet.pg_ledger): the tables' fences
    # checked, the keys claimed, the accounts locked, each batch checked against the
    # balances the batches before it left, the transfers written — one round trip instead of
    # four, each of which the node's one writer thread waited out in turn. Its balance rule
    # is ``server.wallet.books.new_balance``'s, ``MAX_AMOUNT`` written out (2**53); both
    # stores' tests hold them to the same answers (tests/wallet/test_ledger.py)
    r"""
    CREATE FUNCTION croupier_post(
        p_keys TEXT[], p_batch INT[], p_source TEXT[], p_destination TEXT[],
        p_amount BIGINT[], p_kind TEXT[], p_round TEXT[], p_bet TEXT[], p_each BOOLEAN,
        p_fence_tables TEXT[], p_fence_tokens BIGINT[]
    ) RETURNS TABLE (
        o_key TEXT, o_outcome TEXT, o_seq BIGINT, o_names TEXT[], o_figures BIGINT[],
        o_negative BOOLEAN
    ) LANGUAGE plpgsql AS $$
    DECLARE
        seqs BIGINT[];              -- each batch's claimed seq (NULL: claimed before)
        names TEXT[] := '{}';       -- the accounts locked, in the order locked
        held BIGINT[] := '{}';      -- their balances as the batches so far leave them
        negative BOOLEAN[] := '{}'; -- whether each may go negative
        total BIGINT[] := '{}';     -- each one's change under the batches posted
        posted INT[] := '{}';
        refused TEXT[] := '{}';
        mine INT[] := '{}';         -- the batch being checked: its accounts' places,
        after BIGINT[] := '{}';     -- their balances after it,
        change BIGINT[] := '{}';    -- and its changes
        d RECORD;
        at INT := 0;                -- the batch being checked
        ok BOOLEAN := TRUE;
        j INT;
        nb BIGINT;
    BEGIN
        -- The fences first: a table another node owns since writes nothing.
        IF cardinality(p_fence_tables) > 0 THEN
            PERFORM 1 FROM table_fences WHERE table_id = ANY(p_fence_tables)
                ORDER BY table_id FOR SHARE;
            RETURN QUERY SELECT f.t, 'fenced'::TEXT, NULL::BIGINT, NULL::TEXT[],
                    NULL::BIGINT[], NULL::BOOLEAN
                FROM unnest(p_fence_tables, p_fence_tokens) AS f(t, token)
                LEFT JOIN table_fences tf ON tf.table_id = f.t
                WHERE tf.token IS DISTINCT FROM f.token;
            IF FOUND THEN
                RETURN;
            END IF;
        END IF;
        -- The keys: one claimed before (or by another node this instant, whose
        -- transaction the insert waits for) is a replay, whatever the balances say now.
        WITH c AS (
            INSERT INTO batches(key) SELECT u.k FROM unnest(p_keys) WITH ORDINALITY AS u(k, n)
            ORDER BY u.n ON CONFLICT (key) DO NOTHING RETURNING batches.key, batches.seq
        ) SELECT array_agg(c.seq ORDER BY u.n) INTO seqs
            FROM unnest(p_keys) WITH ORDINALITY AS u(k, n) LEFT JOIN c ON c.key = u.k;
        SELECT coalesce(array_agg(a.name), '{}'), coalesce(array_agg(a.balance), '{}'),
                coalesce(array_agg(a.may_go_negative), '{}')
            INTO names, held, negative
            FROM (SELECT a.name, a.balance, a.may_go_negative FROM accounts a
                  WHERE a.name = ANY(ARRAY(
                      SELECT v.x FROM unnest(p_source, p_destination, p_batch) AS r(s, d, b),
                          LATERAL (VALUES (r.s), (r.d)) AS v(x)
                      WHERE seqs[r.b] IS NOT NULL))
                  ORDER BY a.name FOR UPDATE) AS a;
        total := array_fill(0::BIGINT, ARRAY[cardinality(names)]);
        -- Each batch, in order, sees the balances the batches before it left; its accounts
        -- in the order of their names' code points, as the ledger's rules are told. The
        -- row after a batch's last (b = 0) closes it.
        FOR d IN
            SELECT * FROM (
                SELECT x.b, x.name, sum(x.change)::BIGINT AS change FROM (
                    SELECT r.b, r.s AS name, -r.a AS change
                        FROM unnest(p_batch, p_source, p_amount) AS r(b, s, a)
                    UNION ALL
                    SELECT r.b, r.t, r.a
                        FROM unnest(p_batch, p_destination, p_amount) AS r(b, t, a)
                ) AS x WHERE seqs[x.b] IS NOT NULL
                GROUP BY x.b, x.name
                UNION ALL SELECT 0, NULL, NULL
            ) AS q ORDER BY q.b = 0, q.b, q.name COLLATE "C"
        LOOP
            IF d.b IS DISTINCT FROM at AND at > 0 THEN  -- the batch ``at`` is checked
                o_key := p_keys[at]; o_seq := NULL;
                IF ok THEN
                    o_names := '{}';
                    FOR i IN 1 .. cardinality(mine) LOOP
                        held[mine[i]] := after[i];
                        total[mine[i]] := total[mine[i]] + change[i];
                        o_names := o_names || names[mine[i]];
                    END LOOP;
                    posted := posted || at;
                    o_outcome := 'posted'; o_seq := seqs[at]; o_negative := NULL;
                    o_figures := after;
                    RETURN NEXT;
                ELSE  -- as the refusal set it out
                    RETURN NEXT;
                    IF NOT p_each THEN
                        RETURN;  -- the caller raises, and its transaction undoes everything
                    END IF;
                    refused := refused || o_key;
                END IF;
                ok := TRUE; mine := '{}'; after := '{}'; change := '{}';
            END IF;
            at := d.b;
            CONTINUE WHEN NOT ok OR d.b = 0;
            j := array_position(names, d.name);
            IF j IS NULL THEN
                o_outcome := 'no_account'; o_names := ARRAY[d.name]; o_figures := NULL;
                o_negative := NULL; ok := FALSE;
                CONTINUE;
            END IF;
            nb := held[j] + d.change;
            IF (nb < 0 AND NOT negative[j]) OR abs(nb) > 9007199254740992 THEN
                o_outcome := 'refused'; o_names := ARRAY[d.name];
                o_figures := ARRAY[held[j], d.change]; o_negative := negative[j]; ok := FALSE;
                CONTINUE;
            END IF;
            mine := mine || j; after := after || nb; change := change || d.change;
        END LOOP;
        -- The keys claimed before: the caller tells a replay from a conflict.
        RETURN QUERY SELECT p_keys[n], 'before'::TEXT, NULL::BIGINT, NULL::TEXT[],
                NULL::BIGINT[], NULL::BOOLEAN
            FROM generate_subscripts(p_keys, 1) AS n WHERE seqs[n] IS NULL;
        IF cardinality(refused) > 0 THEN  -- their claims go: the keys may be posted later
            DELETE FROM batches WHERE key = ANY(refused);
        END IF;
        IF cardinality(posted) > 0 THEN
            INSERT INTO transfers(batch_seq, idx, source, destination, amount, kind,
                    round_id, bet_id)
                SELECT seqs[r.b], (row_number() OVER (PARTITION BY r.b ORDER BY r.n) - 1)::INT,
                    r.s, r.d, r.a, r.k, r.r, r.t
                FROM unnest(p_batch, p_source, p_destination, p_amount, p_kind, p_round,
                    p_bet) WITH ORDINALITY AS r(b, s, d, a, k, r, t, n)
                WHERE r.b = ANY(posted);
            UPDATE accounts SET balance = balance + t.change
                FROM unnest(names, total) AS t(name, change)
                WHERE accounts.name = t.name AND t.change <> 0;
        END IF;
    END;
    $$;
    """,
    # 6: an operator wallet's outbox of credits and rollbacks, the record of every call and
    # the debits under way (server.wallet.operator: OUTBOX_SCHEMA and DEBITS_SCHEMA are
    # SQLite's copy of these)
    """
    CREATE TABLE wallet_outbox (
        transaction_id TEXT PRIMARY KEY,
        operation TEXT NOT NULL,
        table_id TEXT NOT NULL,
        round_id TEXT NOT NULL,
        player_id TEXT NOT NULL,
        body TEXT NOT NULL,
        queued_at DOUBLE PRECISION NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        last_error TEXT,
        answered_at DOUBLE PRECISION,
        balance BIGINT
    );
    CREATE INDEX wallet_outbox_open ON wallet_outbox(table_id, answered_at);
    CREATE TABLE wallet_calls (
        transaction_id TEXT NOT NULL,
        attempt INTEGER NOT NULL,
        operation TEXT NOT NULL,
        sent_at DOUBLE PRECISION NOT NULL,
        took_ms DOUBLE PRECISION NOT NULL,
        outcome TEXT NOT NULL,
        detail TEXT NOT NULL,
        PRIMARY KEY (transaction_id, attempt)
    );
    CREATE TABLE wallet_debits (
        transaction_id TEXT PRIMARY KEY,
        table_id TEXT NOT NULL,
        round_id TEXT NOT NULL,
        player_id TEXT NOT NULL,
        bet_id TEXT NOT NULL,
        amount BIGINT NOT NULL,
        currency TEXT NOT NULL,
        state TEXT NOT NULL,
        balance BIGINT,
        at DOUBLE PRECISION NOT NULL
    );
    CREATE INDEX wallet_debits_round ON wallet_debits(round_id, player_id);
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


def fences_among(conn: Any, guards: Sequence[Callable[[Any], None]]) -> list[Any]:
    """The tables' fences among ``guards`` (``server.cluster.fencing.Fence``: a table id and
    a token), for a store's statement to read and lock as data; every other guard is run
    here, in the open transaction (``group_commit.Batched``, ``takes_guards``)."""
    fences: list[Any] = [g for g in guards if hasattr(g, "table_id") and hasattr(g, "token")]
    check_guards(conn, [g for g in guards if g not in fences])
    return fences


def fence_moved(conn: Any, fence: Any) -> NoReturn:
    """``fence``'s table has a token other than its own, as a statement read: the fence
    itself says why, in its own words, and raises."""
    fence(conn)
    raise StorageError(f"table {fence.table_id}: its fence moved")  # pragma: no cover


class _PgBackend(Backend[psycopg.Connection[Any]]):
    """PostgreSQL's side of the writer: a connection of its own, made again after it was
    lost, and no savepoints (two round trips a write, on every group, to save work only on
    a rare refusal): a write that raises undoes its group, whose writes are then made one
    transaction each — and a deadlock victim again, up to ``ROLLBACK_RETRIES`` times.

    The transaction is psycopg's own block (``with conn.transaction()``), entered by
    ``begin`` and left by ``commit`` or ``rollback`` as a ``with`` statement would: what it
    does on a broken connection (no rollback sent, a failed one logged) stays psycopg's."""

    thread_name = "pg-writer"
    max_group = MAX_GROUP
    batches = True  # a run of bets' debits or records: three statements, not three each
    attempts = ROLLBACK_RETRIES
    errors = (psycopg.Error,)

    def __init__(self, url: str, name: str) -> None:
        super().__init__(name)
        self.url = url
        self._conn: psycopg.Connection[Any] | None = self._connect()
        self._transaction: contextlib.AbstractContextManager[psycopg.Transaction] | None = None

    def begin(self) -> psycopg.Connection[Any]:
        """When the connection turns out dead before the transaction began (the server
        dropped it while idle: a restart), nothing was sent: it begins once more on a new
        connection."""
        for attempt in (1, 2):
            fresh = self._conn is None or self._conn.closed
            if self._conn is None or self._conn.closed:  # (narrows the type, as ``fresh`` does not)
                self._conn = self._connect()
            transaction = self._conn.transaction()
            try:
                transaction.__enter__()
            except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
                if _rolled_back(exc) or fresh or attempt == 2:
                    raise
                self._drop()
            else:
                self._transaction = transaction
                return self._conn
        raise AssertionError("unreachable")

    def commit(self) -> None:
        transaction, self._transaction = self._transaction, None
        assert transaction is not None
        transaction.__exit__(None, None, None)

    def rollback(self, exc: BaseException) -> None:
        transaction, self._transaction = self._transaction, None
        if transaction is not None:  # (a failed commit or begin has left it already)
            transaction.__exit__(type(exc), exc, exc.__traceback__)
        if self._lost(exc):  # the next write connects again
            self._drop()

    def verdict(self, exc: BaseException) -> Verdict:
        if _rolled_back(exc):
            return Verdict.UNDONE
        if self._lost(exc):
            return Verdict.FAILED
        if isinstance(exc, psycopg.Error):
            return Verdict.BROKE  # the store's own statements never raise one otherwise
        return Verdict.REFUSAL

    def storage_error(self, exc: BaseException, verdict: Verdict) -> StorageError:
        return StorageError(f"the {self.name} write failed: {exc}")

    def close(self) -> None:
        self._drop()

    def _lost(self, exc: BaseException) -> bool:
        """``exc`` took the connection with it (the database ended the session, the link
        broke): not a refusal of the write's own."""
        if _rolled_back(exc):
            return False
        conn = self._conn
        broken = conn is None or conn.closed or conn.broken
        return broken or isinstance(exc, (psycopg.OperationalError, psycopg.InterfaceError))

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


class PgWriter(GroupCommitWriter[psycopg.Connection[Any]]):
    """The one thread writing a store's tables from this process: the group-commit writer
    (``server.group_commit``) on PostgreSQL.

    Whatever is queued when the thread is free (up to ``MAX_GROUP`` writes) is applied in
    **one** transaction and made durable by one commit: a node whose tables all bet at the
    same moment pays one round of commit latency for all of them, not one each in a queue.
    When one write of a group raises — the store's own refusal (an ``InsufficientFunds``, a
    fencing token refused) or the database breaking a deadlock with another node's
    transaction — the group is rolled back, nothing of it applied, and its writes are made
    again one transaction each, in order: the others commit, the refused one raises what it
    raised alone, and a deadlock victim is retried. A lost connection fails the writes with
    ``StorageError`` (nothing was applied: the transaction never committed) and the next
    write connects again. ``verified`` spares the other writes of a group a guard's check."""

    def __init__(self, url: str, name: str) -> None:
        self.url = url
        self._users = 1
        super().__init__(_PgBackend(url, name))

    def shared(self) -> PgWriter:
        """The writer for one more store (the ledger and the journal of one database share
        one, so a bet's debit and its record commit together); each store ``close``s it
        once, and the last close ends it."""
        self._users += 1
        return self

    def close(self) -> None:
        self._users -= 1
        if self._users <= 0:
            super().close()


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
