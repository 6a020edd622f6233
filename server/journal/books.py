"""What the embedded (SQLite) and shared (PostgreSQL) journals do alike: each write through
the store's writer thread (plain, or awaited), and every read. Each store brings its writes
— functions of a connection, in its SQL dialect — and its reads' parameter style."""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping
from functools import partial
from typing import Any

from server.group_commit import Batched, Prepared
from server.journal.journal import JournalRecord, RoundStatus

__all__ = ["JournalBooks", "SettleMeters"]

SettleMeters = Callable[
    [Mapping[str, dict[str, int] | None]], tuple[dict[str, dict[str, int]], dict[str, Any]]
]


def _settle_meters(
    ph: str,
    lock: str,
    round_id: str,
    keys: Mapping[str, str],
    apply: SettleMeters,
    conn: Any,
) -> dict[str, Any]:
    """``JournalBooks.settle_meters``'s transaction, in either SQL dialect (``ph`` its
    placeholder, ``lock`` its row lock)."""
    done = conn.execute(
        f"SELECT result FROM meter_settlements WHERE round_id = {ph}", (round_id,)
    ).fetchone()
    if done is not None:
        # The round's first result, with the meters as they stand now: other tables of the
        # link may have moved them since, and a caller shows ``states`` to players.
        settled: dict[str, Any] = json.loads(done[0])
        return settled | {"states": {name: _meter(conn, ph, "", key) for name, key in keys.items()}}
    states: dict[str, dict[str, int] | None] = {}
    for name, key in sorted(keys.items(), key=lambda item: item[1]):  # one lock order
        # A new meter's row first, so that two nodes' first rounds queue on it too.
        conn.execute(
            f"INSERT INTO linked_meters(key, state) VALUES ({ph}, NULL) ON CONFLICT DO NOTHING",
            (key,),
        )
        states[name] = _meter(conn, ph, lock, key)
    new, result = apply(states)
    for name, state in new.items():
        conn.execute(
            f"UPDATE linked_meters SET state = {ph} WHERE key = {ph}",
            (json.dumps(state, sort_keys=True), keys[name]),
        )
    result = result | {"states": new}
    conn.execute(
        f"INSERT INTO meter_settlements(round_id, result) VALUES ({ph}, {ph})",
        (round_id, json.dumps(result, sort_keys=True)),
    )
    return result


def _meter(conn: Any, ph: str, lock: str, key: str) -> dict[str, int] | None:
    """A linked meter's state (None: not used yet)."""
    row = conn.execute(f"SELECT state FROM linked_meters WHERE key = {ph}{lock}", (key,))
    found = row.fetchone()
    return None if found is None or found[0] is None else json.loads(found[0])


class JournalBooks:
    """A journal's common part. A store sets ``_writer`` (``call``/``run``), the write
    functions ``_open_round``, ``_append``, ``_finish_round``, ``_save_state`` (each taking
    the connection last) and implements ``_rows(sql, params)``, its SQL naming a parameter
    ``x`` as ``_param("x")``."""

    _writer: Any
    # Where the linked meters are settled, when not through ``_writer``: their rows are
    # shared by every table of the link on every node, and a row lock taken in a group of
    # other writes would hold them all — and every bet queued behind them — until its
    # commit (PostgreSQL: a writer of their own, ``pg_journal``).
    _meters: Any = None
    _open_round: Callable[..., None]
    _append: Callable[..., int]
    # ``(connection, [(round_id, kind, payload, player), ...]) -> [(ok, seq or exception)]``:
    # where the store appends the records queued together set-based (``group_commit.Batched``).
    _append_each: Callable[..., list[tuple[bool, Any]]] | None = None
    _finish_round: Callable[..., None]
    _save_state: Callable[..., None]
    _STYLE = ":{}"
    _PLACEHOLDER = "?"  # positional, for the linked meters' writes
    _LOCK = ""  # how a read locks a row until the transaction ends

    def _param(self, name: str) -> str:
        return self._STYLE.format(name)

    def _rows(self, sql: str, params: dict[str, Any]) -> list[Any]:
        raise NotImplementedError

    # --- writes ----------------------------------------------------------------------------

    def open_round(self, table_id: str, round_id: str, payload: dict[str, Any]) -> None:
        self._writer.call(partial(type(self)._open_round, table_id, round_id, payload))

    async def aopen_round(self, table_id: str, round_id: str, payload: dict[str, Any]) -> None:
        await self._writer.run(partial(type(self)._open_round, table_id, round_id, payload))

    def append(
        self, round_id: str, kind: str, payload: dict[str, Any], *, player: str | None = None
    ) -> int:
        seq: int = self._writer.call(partial(type(self)._append, round_id, kind, payload, player))
        return seq

    async def aappend(
        self, round_id: str, kind: str, payload: dict[str, Any], *, player: str | None = None
    ) -> int:
        write = self.append_write(round_id, kind, payload, player=player)
        seq: int = await self._writer.run(write.apply, batched=write.batched)
        return seq

    def append_write(
        self, round_id: str, kind: str, payload: dict[str, Any], *, player: str | None = None
    ) -> Prepared:
        """``append``'s write, made ready for the store's writer to apply with others in one
        transaction (``writer.queue_all``)."""
        each = type(self)._append_each
        batched = None if each is None else Batched(each, (round_id, kind, payload, player))
        return Prepared(partial(type(self)._append, round_id, kind, payload, player), batched)

    @property
    def writer(self) -> Any:
        """The writer this store's writes go through (a cluster's view: guarded)."""
        return self._writer

    def finish_round(self, round_id: str, status: RoundStatus, payload: dict[str, Any]) -> None:
        if status is RoundStatus.OPEN:
            raise ValueError("a round finishes settled or voided")
        self._writer.call(partial(type(self)._finish_round, round_id, status, payload))

    async def afinish_round(
        self, round_id: str, status: RoundStatus, payload: dict[str, Any]
    ) -> None:
        if status is RoundStatus.OPEN:
            raise ValueError("a round finishes settled or voided")
        await self._writer.run(partial(type(self)._finish_round, round_id, status, payload))

    def save_state(self, table_id: str, key: str, state: dict[str, Any]) -> None:
        text = json.dumps(state, sort_keys=True)
        self._writer.call(partial(type(self)._save_state, table_id, key, text))

    async def asave_state(self, table_id: str, key: str, state: dict[str, Any]) -> None:
        text = json.dumps(state, sort_keys=True)
        await self._writer.run(partial(type(self)._save_state, table_id, key, text))

    def settle_meters(
        self, round_id: str, keys: Mapping[str, str], apply: SettleMeters
    ) -> dict[str, Any]:
        """Apply one round to the linked meters at ``keys`` (meter name → key), once:
        ``apply(states)`` takes the shared meters' states by name (None: a new meter) and
        returns the new states and the round's result, written in the same transaction. A
        round already settled gets its first result back, with the meters' ``states`` as they
        stand now, and changes nothing (recovery)."""
        write = partial(_settle_meters, self._PLACEHOLDER, self._LOCK, round_id, keys, apply)
        result: dict[str, Any] = (self._meters or self._writer).call(write)
        return result

    async def asettle_meters(
        self, round_id: str, keys: Mapping[str, str], apply: SettleMeters
    ) -> dict[str, Any]:
        write = partial(_settle_meters, self._PLACEHOLDER, self._LOCK, round_id, keys, apply)
        result: dict[str, Any] = await (self._meters or self._writer).run(write)
        return result

    # --- reads -----------------------------------------------------------------------------

    def linked_meters(self, keys: Collection[str]) -> dict[str, dict[str, int] | None]:
        """The linked meters' states by key (None: not used yet)."""
        states: dict[str, dict[str, int] | None] = dict.fromkeys(keys)
        for key in keys:
            rows = self._rows(
                f"SELECT state FROM linked_meters WHERE key = {self._param('k')}", {"k": key}
            )
            if rows and rows[0][0] is not None:
                states[key] = json.loads(rows[0][0])
        return states

    def meter_settlement(self, round_id: str) -> dict[str, Any] | None:
        """One round's result on its linked meters (None: it moved none)."""
        rows = self._rows(
            f"SELECT result FROM meter_settlements WHERE round_id = {self._param('r')}",
            {"r": round_id},
        )
        return json.loads(rows[0][0]) if rows else None

    def meter_settlements(self) -> list[tuple[str, dict[str, Any]]]:
        """Every round's result on its linked meters (for the books' check), in round order."""
        rows = self._rows("SELECT round_id, result FROM meter_settlements ORDER BY round_id", {})
        return [(r, json.loads(t)) for r, t in rows]

    def records(self, round_id: str) -> list[JournalRecord]:
        rows = self._rows(
            "SELECT r.seq, o.table_id, r.round_id, r.kind, r.payload FROM records r "
            "JOIN rounds o ON o.round_id = r.round_id "
            f"WHERE r.round_id = {self._param('r')} ORDER BY r.seq",
            {"r": round_id},
        )
        return [JournalRecord(int(s), t, r, k, json.loads(p)) for s, t, r, k, p in rows]

    def status(self, round_id: str) -> RoundStatus | None:
        rows = self._rows(
            f"SELECT status FROM rounds WHERE round_id = {self._param('r')}", {"r": round_id}
        )
        return RoundStatus(rows[0][0]) if rows else None

    def open_rounds(self) -> list[tuple[str, str]]:
        rows = self._rows(
            "SELECT table_id, round_id FROM rounds "
            f"WHERE status = {self._param('s')} ORDER BY opened_seq",
            {"s": RoundStatus.OPEN.value},
        )
        return [(t, r) for t, r in rows]

    def player_rounds(self, player_id: str, limit: int = 10) -> list[str]:
        rows = self._rows(
            "SELECT p.round_id FROM round_players p JOIN rounds o ON o.round_id = p.round_id "
            f"WHERE p.player_id = {self._param('p')} AND o.status != {self._param('s')} "
            f"ORDER BY o.finished_seq DESC LIMIT {self._param('n')}",
            {"p": player_id, "s": RoundStatus.OPEN.value, "n": limit},
        )
        return [r for (r,) in rows]

    def last_round(self, table_id: str) -> str | None:
        rows = self._rows(
            f"SELECT round_id FROM rounds WHERE table_id = {self._param('t')} "
            "ORDER BY opened_seq DESC LIMIT 1",
            {"t": table_id},
        )
        return str(rows[0][0]) if rows else None

    def load_state(self, table_id: str, key: str) -> dict[str, Any] | None:
        rows = self._rows(
            "SELECT state FROM table_state "
            f"WHERE table_id = {self._param('t')} AND key = {self._param('k')}",
            {"t": table_id, "k": key},
        )
        if not rows:
            return None
        state: dict[str, Any] = json.loads(rows[0][0])
        return state
