"""The shared round journal of a cluster: PostgreSQL, the same records and the same reads as
the embedded SQLite journal (``sqlite_journal``), and the same tests. Every write is one
transaction on the journal's writer thread, applied in the order made; a round's rows are
its own, so the nodes' writes for different tables never wait on each other."""

from __future__ import annotations

import json
from functools import partial
from typing import Any

import psycopg

from server.journal.journal import JournalRecord, RoundStatus
from server.pg_storage import PgReader, PgWriter, connect, require_schema

__all__ = ["PgJournal"]

_Conn = psycopg.Connection[Any]


def _insert(conn: _Conn, round_id: str, kind: str, payload: dict[str, Any]) -> int:
    row = conn.execute(
        "INSERT INTO records(round_id, kind, payload) VALUES (%s, %s, %s) RETURNING seq",
        (round_id, kind, json.dumps(payload, separators=(",", ":"), sort_keys=True)),
    ).fetchone()
    assert row is not None
    return int(row[0])


def _require_open(conn: _Conn, round_id: str) -> None:
    row = conn.execute(
        "SELECT status FROM rounds WHERE round_id = %s FOR UPDATE", (round_id,)
    ).fetchone()
    if row is None:
        raise ValueError(f"round {round_id!r} was never opened")
    if row[0] != RoundStatus.OPEN.value:
        raise ValueError(f"round {round_id!r} is already {row[0]}")


def _open_round(table_id: str, round_id: str, payload: dict[str, Any], conn: _Conn) -> None:
    inserted = conn.execute(
        "INSERT INTO rounds(round_id, table_id, status, opened_seq) VALUES (%s, %s, %s, 0) "
        "ON CONFLICT (round_id) DO NOTHING",
        (round_id, table_id, RoundStatus.OPEN.value),
    ).rowcount
    if not inserted:
        raise ValueError(f"round {round_id!r} is already journaled")
    seq = _insert(conn, round_id, "opened", payload)
    conn.execute("UPDATE rounds SET opened_seq = %s WHERE round_id = %s", (seq, round_id))


def _append(
    round_id: str, kind: str, payload: dict[str, Any], player: str | None, conn: _Conn
) -> int:
    _require_open(conn, round_id)
    if player is not None:  # the same commit remembers the player, for recall
        conn.execute(
            "INSERT INTO round_players(round_id, player_id) VALUES (%s, %s) ON CONFLICT DO NOTHING",
            (round_id, player),
        )
    return _insert(conn, round_id, kind, payload)


def _finish_round(round_id: str, status: RoundStatus, payload: dict[str, Any], conn: _Conn) -> None:  # fmt: skip  # noqa: E501
    _require_open(conn, round_id)
    seq = _insert(conn, round_id, status.value, payload)
    conn.execute(
        "UPDATE rounds SET status = %s, finished_seq = %s WHERE round_id = %s",
        (status.value, seq, round_id),
    )


def _save_state(table_id: str, key: str, state: str, conn: _Conn) -> None:
    conn.execute(
        "INSERT INTO table_state(table_id, key, state) VALUES (%s, %s, %s) "
        "ON CONFLICT (table_id, key) DO UPDATE SET state = EXCLUDED.state",
        (table_id, key, state),
    )


class PgJournal:
    """A ``Journal`` in a PostgreSQL database whose schema ``croupier db migrate`` made."""

    def __init__(self, url: str) -> None:
        self.url = url
        with connect(url) as conn:
            require_schema(conn)
        self._reader = PgReader(url)
        self._writer = PgWriter(url, "journal")

    def close(self) -> None:
        self._writer.close()
        self._reader.close()

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
        rows = self._reader.rows(
            "SELECT r.seq, o.table_id, r.round_id, r.kind, r.payload FROM records r "
            "JOIN rounds o ON o.round_id = r.round_id WHERE r.round_id = %s ORDER BY r.seq",
            (round_id,),
        )
        return [JournalRecord(int(s), t, r, k, json.loads(p)) for s, t, r, k, p in rows]

    def status(self, round_id: str) -> RoundStatus | None:
        rows = self._reader.rows("SELECT status FROM rounds WHERE round_id = %s", (round_id,))
        return RoundStatus(rows[0][0]) if rows else None

    def open_rounds(self) -> list[tuple[str, str]]:
        rows = self._reader.rows(
            "SELECT table_id, round_id FROM rounds WHERE status = %s ORDER BY opened_seq",
            (RoundStatus.OPEN.value,),
        )
        return [(t, r) for t, r in rows]

    def player_rounds(self, player_id: str, limit: int = 10) -> list[str]:
        rows = self._reader.rows(
            "SELECT p.round_id FROM round_players p JOIN rounds o ON o.round_id = p.round_id "
            "WHERE p.player_id = %s AND o.status != %s ORDER BY o.finished_seq DESC LIMIT %s",
            (player_id, RoundStatus.OPEN.value, limit),
        )
        return [r for (r,) in rows]

    def last_round(self, table_id: str) -> str | None:
        rows = self._reader.rows(
            "SELECT round_id FROM rounds WHERE table_id = %s ORDER BY opened_seq DESC LIMIT 1",
            (table_id,),
        )
        return str(rows[0][0]) if rows else None

    def load_state(self, table_id: str, key: str) -> dict[str, Any] | None:
        rows = self._reader.rows(
            "SELECT state FROM table_state WHERE table_id = %s AND key = %s", (table_id, key)
        )
        if not rows:
            return None
        state: dict[str, Any] = json.loads(rows[0][0])
        return state
