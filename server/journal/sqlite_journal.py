"""The embedded journal: SQLite, WAL, ``synchronous=FULL`` — every append is on disk when
``append`` returns (or ``aappend`` resolves), written by the journal's own writer thread with
group commit (``server.storage``)."""

from __future__ import annotations

import json
import sqlite3
import threading
from functools import partial
from pathlib import Path
from typing import Any

from server.journal.journal import JournalRecord, RoundStatus
from server.storage import DurableWriter, open_durable_sqlite

__all__ = ["SqliteJournal"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS rounds (
    round_id TEXT PRIMARY KEY,
    table_id TEXT NOT NULL,
    status TEXT NOT NULL,
    opened_seq INTEGER NOT NULL,
    finished_seq INTEGER
);
CREATE INDEX IF NOT EXISTS rounds_status ON rounds(status);
CREATE INDEX IF NOT EXISTS rounds_table ON rounds(table_id, opened_seq);
CREATE TABLE IF NOT EXISTS records (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    round_id TEXT NOT NULL REFERENCES rounds(round_id),
    kind TEXT NOT NULL,
    payload TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS records_round ON records(round_id, seq);
CREATE TABLE IF NOT EXISTS table_state (
    table_id TEXT NOT NULL,
    key TEXT NOT NULL,
    state TEXT NOT NULL,
    PRIMARY KEY (table_id, key)
);
CREATE TABLE IF NOT EXISTS round_players (
    round_id TEXT NOT NULL REFERENCES rounds(round_id),
    player_id TEXT NOT NULL,
    PRIMARY KEY (player_id, round_id)
);
"""


def _insert(db: sqlite3.Connection, round_id: str, kind: str, payload: dict[str, Any]) -> int:
    cursor = db.execute(
        "INSERT INTO records(round_id, kind, payload) VALUES (?, ?, ?)",
        (round_id, kind, json.dumps(payload, separators=(",", ":"), sort_keys=True)),
    )
    assert cursor.lastrowid is not None
    return cursor.lastrowid


def _require_open(db: sqlite3.Connection, round_id: str) -> None:
    row = db.execute("SELECT status FROM rounds WHERE round_id = ?", (round_id,)).fetchone()
    if row is None:
        raise ValueError(f"round {round_id!r} was never opened")
    if row[0] != RoundStatus.OPEN.value:
        raise ValueError(f"round {round_id!r} is already {row[0]}")


def _open_round(
    table_id: str, round_id: str, payload: dict[str, Any], db: sqlite3.Connection
) -> None:
    if db.execute("SELECT 1 FROM rounds WHERE round_id = ?", (round_id,)).fetchone():
        raise ValueError(f"round {round_id!r} is already journaled")
    db.execute(
        "INSERT INTO rounds(round_id, table_id, status, opened_seq) VALUES (?, ?, ?, 0)",
        (round_id, table_id, RoundStatus.OPEN.value),
    )
    seq = _insert(db, round_id, "opened", payload)
    db.execute("UPDATE rounds SET opened_seq = ? WHERE round_id = ?", (seq, round_id))


def _append(
    round_id: str, kind: str, payload: dict[str, Any], player: str | None, db: sqlite3.Connection
) -> int:
    _require_open(db, round_id)
    if player is not None:  # the same commit remembers the player, for recall
        db.execute(
            "INSERT OR IGNORE INTO round_players(round_id, player_id) VALUES (?, ?)",
            (round_id, player),
        )
    return _insert(db, round_id, kind, payload)


def _finish_round(
    round_id: str, status: RoundStatus, payload: dict[str, Any], db: sqlite3.Connection
) -> None:
    _require_open(db, round_id)
    seq = _insert(db, round_id, status.value, payload)
    db.execute(
        "UPDATE rounds SET status = ?, finished_seq = ? WHERE round_id = ?",
        (status.value, seq, round_id),
    )


def _save_state(table_id: str, key: str, state: str, db: sqlite3.Connection) -> None:
    db.execute(
        "INSERT INTO table_state(table_id, key, state) VALUES (?, ?, ?) "
        "ON CONFLICT(table_id, key) DO UPDATE SET state = excluded.state",
        (table_id, key, state),
    )


class SqliteJournal:
    """A ``Journal`` in one SQLite file (or ``":memory:"`` for tests).

    Reads use a connection of their own; every write goes to the journal's ``DurableWriter``
    thread (group commit). The plain methods wait for it; the ``a``-prefixed ones await it
    without blocking the event loop."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self._lock = threading.Lock()
        self._db = open_durable_sqlite(path, _SCHEMA)
        if self.path == ":memory:":  # one private database: readers share the writer's
            self._writer = DurableWriter(self._db, "journal", lock=self._lock)
        else:
            self._writer = DurableWriter(open_durable_sqlite(path, ""), "journal", owns_db=True)

    def close(self) -> None:
        """Commit every write still queued, then close the files."""
        self._writer.close()
        with self._lock:
            self._db.close()

    def open_round(self, table_id: str, round_id: str, payload: dict[str, Any]) -> None:
        self._writer.call(partial(_open_round, table_id, round_id, payload))

    async def aopen_round(self, table_id: str, round_id: str, payload: dict[str, Any]) -> None:
        await self._writer.run(partial(_open_round, table_id, round_id, payload))

    def append(
        self, round_id: str, kind: str, payload: dict[str, Any], *, player: str | None = None
    ) -> int:
        return self._writer.call(partial(_append, round_id, kind, payload, player))

    async def aappend(
        self, round_id: str, kind: str, payload: dict[str, Any], *, player: str | None = None
    ) -> int:
        return await self._writer.run(partial(_append, round_id, kind, payload, player))

    def finish_round(self, round_id: str, status: RoundStatus, payload: dict[str, Any]) -> None:
        if status is RoundStatus.OPEN:
            raise ValueError("a round finishes settled or voided")
        self._writer.call(partial(_finish_round, round_id, status, payload))

    async def afinish_round(
        self, round_id: str, status: RoundStatus, payload: dict[str, Any]
    ) -> None:
        if status is RoundStatus.OPEN:
            raise ValueError("a round finishes settled or voided")
        await self._writer.run(partial(_finish_round, round_id, status, payload))

    def save_state(self, table_id: str, key: str, state: dict[str, Any]) -> None:
        self._writer.call(partial(_save_state, table_id, key, json.dumps(state, sort_keys=True)))

    async def asave_state(self, table_id: str, key: str, state: dict[str, Any]) -> None:
        text = json.dumps(state, sort_keys=True)
        await self._writer.run(partial(_save_state, table_id, key, text))

    def records(self, round_id: str) -> list[JournalRecord]:
        with self._lock:
            rows = self._db.execute(
                "SELECT r.seq, o.table_id, r.round_id, r.kind, r.payload FROM records r "
                "JOIN rounds o ON o.round_id = r.round_id WHERE r.round_id = ? ORDER BY r.seq",
                (round_id,),
            ).fetchall()
        return [JournalRecord(s, t, r, k, json.loads(p)) for s, t, r, k, p in rows]

    def status(self, round_id: str) -> RoundStatus | None:
        with self._lock:
            row = self._db.execute(
                "SELECT status FROM rounds WHERE round_id = ?", (round_id,)
            ).fetchone()
        return None if row is None else RoundStatus(row[0])

    def open_rounds(self) -> list[tuple[str, str]]:
        with self._lock:
            rows = self._db.execute(
                "SELECT table_id, round_id FROM rounds WHERE status = ? ORDER BY opened_seq",
                (RoundStatus.OPEN.value,),
            ).fetchall()
        return [(t, r) for t, r in rows]

    def player_rounds(self, player_id: str, limit: int = 10) -> list[str]:
        with self._lock:
            rows = self._db.execute(
                "SELECT p.round_id FROM round_players p JOIN rounds o ON o.round_id = p.round_id "
                "WHERE p.player_id = ? AND o.status != ? ORDER BY o.finished_seq DESC LIMIT ?",
                (player_id, RoundStatus.OPEN.value, limit),
            ).fetchall()
        return [r for (r,) in rows]

    def last_round(self, table_id: str) -> str | None:
        with self._lock:
            row = self._db.execute(
                "SELECT round_id FROM rounds WHERE table_id = ? ORDER BY opened_seq DESC LIMIT 1",
                (table_id,),
            ).fetchone()
        return None if row is None else str(row[0])

    def load_state(self, table_id: str, key: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._db.execute(
                "SELECT state FROM table_state WHERE table_id = ? AND key = ?", (table_id, key)
            ).fetchone()
        if row is None:
            return None
        state: dict[str, Any] = json.loads(row[0])
        return state
