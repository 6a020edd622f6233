"""The shared round journal of a cluster: PostgreSQL, the same records and the same reads as
the embedded SQLite journal (``sqlite_journal``), and the same tests. Writes go through the
journal's writer thread (``server.pg_storage.PgWriter``: group commit, in the order made); a
round's rows are its own, so the nodes' writes for different tables never wait on each
other."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import psycopg

from server.journal.books import JournalBooks
from server.journal.journal import RoundStatus
from server.pg_storage import (
    PgReader,
    PgWriter,
    connect,
    fence_moved,
    fences_among,
    require_schema,
)

__all__ = ["PgJournal"]

_Conn = psycopg.Connection[Any]


def _open_round(table_id: str, round_id: str, payload: dict[str, Any], conn: _Conn) -> None:
    """The round and its ``opened`` record in one statement, then the record's seq on the
    round (a row inserted by a statement cannot be updated by the same statement)."""
    row = conn.execute(
        "WITH r AS (INSERT INTO rounds(round_id, table_id, status, opened_seq) "
        "VALUES (%(r)s, %(t)s, %(open)s, 0) ON CONFLICT (round_id) DO NOTHING "
        "RETURNING round_id) "
        "INSERT INTO records(round_id, kind, payload) SELECT round_id, 'opened', %(j)s "
        "FROM r RETURNING seq",
        {"r": round_id, "t": table_id, "open": RoundStatus.OPEN.value, "j": _json(payload)},
    ).fetchone()
    if row is None:
        raise ValueError(f"round {round_id!r} is already journaled")
    conn.execute("UPDATE rounds SET opened_seq = %s WHERE round_id = %s", (row[0], round_id))


def _json(payload: dict[str, Any]) -> str:
    return json.dumps(payload, separators=(",", ":"), sort_keys=True)


def _append(
    round_id: str, kind: str, payload: dict[str, Any], player: str | None, conn: _Conn
) -> int:
    """One record (and, in the same commit, the player, for recall) in one round trip: the
    round's row is locked and both inserts happen only while it is open."""
    row = conn.execute(
        "WITH r AS (SELECT status FROM rounds WHERE round_id = %(r)s FOR UPDATE), "
        "p AS (INSERT INTO round_players(round_id, player_id) SELECT %(r)s, %(p)s FROM r "
        "WHERE r.status = %(open)s AND %(p)s::text IS NOT NULL ON CONFLICT DO NOTHING), "
        "i AS (INSERT INTO records(round_id, kind, payload) SELECT %(r)s, %(k)s, %(j)s FROM r "
        "WHERE r.status = %(open)s RETURNING seq) "
        "SELECT (SELECT status FROM r), (SELECT seq FROM i)",
        {
            "r": round_id,
            "p": player,
            "k": kind,
            "j": _json(payload),
            "open": RoundStatus.OPEN.value,
        },
    ).fetchone()
    assert row is not None
    status, seq = row
    if status is None:
        raise ValueError(f"round {round_id!r} was never opened")
    if seq is None:
        raise ValueError(f"round {round_id!r} is already {status}")
    return int(seq)


def _append_each(
    conn: _Conn,
    items: list[tuple[str, str, dict[str, Any], str | None]],
    guards: list[Callable[[Any], None]] | None = None,
) -> list[tuple[bool, Any]]:
    """Append the records queued together — the bets of every table of the node — in one
    round trip however many they are: their rounds' rows locked, then the players and the
    records of the rounds still open inserted, in the order given (their ``seq`` follows
    it). A record for a round not open is refused alone (``group_commit.Batched``).
    ``guards``: the run's checks not made yet in this transaction (``takes_guards``): the
    tables' fences are read, and locked, by the same statement — one that moved raises, and
    the transaction undoes what the statement wrote — any other guard is run first."""
    fences = fences_among(conn, guards or [])
    rows = conn.execute(
        "WITH f AS (SELECT table_id, token FROM table_fences WHERE table_id = ANY(%(f)s) "
        "ORDER BY table_id FOR SHARE), "
        "r AS (SELECT round_id, status FROM rounds WHERE round_id = ANY(%(rounds)s) "
        "ORDER BY round_id FOR UPDATE), "
        "u AS (SELECT * FROM unnest(%(r)s::text[], %(k)s::text[], %(j)s::text[], "
        "%(p)s::text[]) WITH ORDINALITY AS u(r, k, j, p, n)), "
        "ok AS (SELECT u.* FROM u JOIN r ON r.round_id = u.r WHERE r.status = %(open)s), "
        "pl AS (INSERT INTO round_players(round_id, player_id) SELECT DISTINCT r, p FROM ok "
        "WHERE p IS NOT NULL ON CONFLICT DO NOTHING), "
        "i AS (INSERT INTO records(round_id, kind, payload) SELECT r, k, j FROM ok "
        "ORDER BY n RETURNING seq) "
        "SELECT 'round', round_id, status, NULL::bigint FROM r "
        "UNION ALL SELECT 'record', NULL, NULL, seq FROM i "
        "UNION ALL SELECT 'fence', table_id, NULL, token FROM f",
        {
            "f": sorted({fence.table_id for fence in fences}),
            "rounds": sorted({round_id for round_id, *_ in items}),
            "r": [round_id for round_id, *_ in items],
            "k": [kind for _, kind, _, _ in items],
            "j": [_json(payload) for _, _, payload, _ in items],
            "p": [player for *_, player in items],
            "open": RoundStatus.OPEN.value,
        },
    ).fetchall()
    tokens = {table: int(token) for what, table, _, token in rows if what == "fence"}
    for fence in fences:
        if tokens.get(fence.table_id) != fence.token:
            fence_moved(conn, fence)
    status = {round_id: now for what, round_id, now, _ in rows if what == "round"}
    # Assigned in the order inserted, which is the order given.
    numbers = iter(sorted(int(seq) for what, _, _, seq in rows if what == "record"))
    outcomes: list[tuple[bool, Any]] = []
    for round_id, *_ in items:
        now = status.get(round_id)
        if now != RoundStatus.OPEN.value:
            said = "was never opened" if now is None else f"is already {now}"
            outcomes.append((False, ValueError(f"round {round_id!r} {said}")))
        else:
            outcomes.append((True, next(numbers)))
    return outcomes


_append_each.takes_guards = True  # type: ignore[attr-defined]


def _finish_round(round_id: str, status: RoundStatus, payload: dict[str, Any], conn: _Conn) -> None:  # fmt: skip  # noqa: E501
    """The last record and the round's status in one statement, while the round is open."""
    row = conn.execute(
        "WITH r AS (SELECT status FROM rounds WHERE round_id = %(r)s FOR UPDATE), "
        "i AS (INSERT INTO records(round_id, kind, payload) SELECT %(r)s, %(k)s, %(j)s "
        "FROM r WHERE r.status = %(open)s RETURNING seq), "
        "u AS (UPDATE rounds SET status = %(k)s, finished_seq = i.seq FROM i "
        "WHERE rounds.round_id = %(r)s) "
        "SELECT (SELECT status FROM r), (SELECT seq FROM i)",
        {"r": round_id, "k": status.value, "j": _json(payload), "open": RoundStatus.OPEN.value},
    ).fetchone()
    assert row is not None
    if row[0] is None:
        raise ValueError(f"round {round_id!r} was never opened")
    if row[1] is None:
        raise ValueError(f"round {round_id!r} is already {row[0]}")


def _save_state(table_id: str, key: str, state: str, conn: _Conn) -> None:
    conn.execute(
        "INSERT INTO table_state(table_id, key, state) VALUES (%s, %s, %s) "
        "ON CONFLICT (table_id, key) DO UPDATE SET state = EXCLUDED.state",
        (table_id, key, state),
    )


class PgJournal(JournalBooks):
    """A ``Journal`` in a PostgreSQL database whose schema ``croupier db migrate`` made."""

    _STYLE = "%({})s"
    _PLACEHOLDER, _LOCK = "%s", " FOR UPDATE"  # nodes settling one link queue on its rows
    _open_round = staticmethod(_open_round)
    _append = staticmethod(_append)
    _append_each = staticmethod(_append_each)
    _finish_round = staticmethod(_finish_round)
    _save_state = staticmethod(_save_state)

    def __init__(self, url: str, *, writer: PgWriter | None = None) -> None:
        """``writer``: one shared with the ledger of the same database (``PgWriter.shared``),
        so that a bet's debit and record commit in one transaction."""
        self.url = url
        with connect(url) as conn:
            require_schema(conn)
        self._reader = PgReader(url)
        self._writer = writer or PgWriter(url, "journal")
        # The linked meters' settlements on a connection of their own: a table of another
        # node waiting for their rows never holds up this node's bets (``JournalBooks``).
        self._meters = PgWriter(url, "meters")
        self._closed = False

    def close(self) -> None:
        if self._closed:  # once: a writer shared with another store counts its closes
            return
        self._closed = True
        self._writer.close()
        self._meters.close()
        self._reader.close()

    def _rows(self, sql: str, params: dict[str, Any]) -> list[Any]:
        return self._reader.rows(sql, params)
