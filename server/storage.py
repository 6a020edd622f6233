"""Opening the embedded default's SQLite files the one durable way.

WAL mode, ``synchronous=FULL`` (a commit is on disk when it returns: a crash never loses an
acknowledged bet or a journaled card), foreign keys on, and a busy timeout so that another
process (``croupier wallet``, ``croupier replay``) may use the file while the server runs.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

__all__ = ["open_durable_sqlite"]


def open_durable_sqlite(path: str | Path, schema: str) -> sqlite3.Connection:
    """An autocommit connection (callers ``BEGIN IMMEDIATE`` their own transactions),
    usable from the server's threads under the caller's lock, with ``schema`` applied."""
    db = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.execute("PRAGMA busy_timeout=10000")
    db.execute("PRAGMA foreign_keys=ON")
    db.executescript(schema)
    return db
