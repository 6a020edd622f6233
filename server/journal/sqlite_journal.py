"""The embedded journal: SQLite, WAL, ``synchronous=FULL`` — every append is on disk when
``append`` returns (or ``aappend`` resolves), written by the journal's own writer thread with
group commit (``server.storage.SqliteStore``)."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from server.journal.books import JournalBooks
from server.journal.journal import RoundStatus
from server.storage import SqliteStore

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
CREATE TABLE IF NOT EXISTS linked_meters (
    key TEXT PRIMARY KEY,
    state TEXT
);
CREATE TABLE IF NOT EXISTS meter_settlements (
    round_id TEXT PRIMARY KEY,
    result TEXT NOT NULL
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


class SqliteJournal(SqliteStore, JournalBooks):
    """A ``Journal`` in one SQLite file (or ``":memory:"`` for tests).

    Reads use a connection of their own; every write goes to the journal's ``DurableWriter``
    thread (group commit). The plain methods wait for it; the ``a``-prefixed ones await it
    without blocking the event loop."""

    _SCHEMA, _NAME = _SCHEMA, "journal"
    _STYLE = ":{}"
    _PLACEHOLDER, _LOCK = "?", ""  # one writer at a time: SQLite locks the whole database
    _open_round = staticmethod(_open_round)
    _append = staticmethod(_append)
    _finish_round = staticmethod(_finish_round)
    _save_state = staticmethod(_save_state)
