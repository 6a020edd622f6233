"""The player stations' critical memory: ``stations.sqlite`` in the data directory.

It keeps, per station, its meters and its state (locks, a pending handpay) in one row signed
with an HMAC-SHA256 under ``critical-memory.key`` (kept beside it, mode 0600): a row changed by
anything but this code — a disk fault, a hand-edited file — fails its check, and the server
locks the station (``critical_memory``) until an attendant clears it, which rebuilds its
meters from the ledger (docs/electronic-tables.md, "Lockouts"). It also keeps the TITO
tickets (issued, redeemed, voided) and a log of every station and ticket event with who
did it. SQLite in WAL mode with ``synchronous=FULL``, like the ledger and the journal; the
server writes on the store's writer thread, and ``croupier tickets`` and ``croupier
meters`` may read and write it beside a running server.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from server.datadir import load_key
from server.stations.meters import (
    CASH_KINDS,
    empty_meters,
    fold_cash,
    fold_round,
    round_money,
    station_account,
)
from server.storage import SqliteStore
from server.wallet.ledger import Transfer

__all__ = [
    "CriticalMemoryError",
    "Cursor",
    "MissingKey",
    "ReadAfter",
    "StationRow",
    "StationStore",
    "Synced",
    "Ticket",
    "open_station_store",
]

T = TypeVar("T")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS stations (
    id TEXT PRIMARY KEY,
    state TEXT NOT NULL,
    meters TEXT NOT NULL,
    checksum TEXT NOT NULL,
    cursor TEXT
);
CREATE TABLE IF NOT EXISTS metered (
    station TEXT NOT NULL,
    key TEXT NOT NULL,
    PRIMARY KEY (station, key)
);
CREATE TABLE IF NOT EXISTS tickets (
    validation TEXT PRIMARY KEY,
    amount INTEGER NOT NULL CHECK (amount > 0),
    station TEXT NOT NULL,
    issued_at REAL NOT NULL,
    expires_at REAL NOT NULL,
    status TEXT NOT NULL,
    printed INTEGER NOT NULL DEFAULT 0,
    closed_at REAL,
    closed_by TEXT,
    detail TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS log (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    at REAL NOT NULL,
    station TEXT NOT NULL,
    event TEXT NOT NULL,
    actor TEXT NOT NULL DEFAULT '',
    detail TEXT NOT NULL DEFAULT ''
);
"""


_ROW = "id, state, meters, cursor, checksum"


class CriticalMemoryError(Exception):
    """A station's row failed its check: its meters and state cannot be trusted."""


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


@dataclass
class StationRow:
    """A station's critical memory: ``state`` (``locks``, ``handpay``) and ``meters``, and
    how far into the ledger the meters have counted (``cursor``, see ``Cursor``)."""

    station: str
    state: dict[str, Any] = field(default_factory=lambda: {"locks": [], "handpay": None})
    meters: dict[str, Any] = field(default_factory=empty_meters)
    cursor: dict[str, Any] | None = None


# A reader of the station account's transfers after a ledger batch number:
# ``Ledger.history_after`` with the account given.
ReadAfter = Callable[[int], list[tuple[int, str, Transfer]]]


@dataclass
class Cursor:
    """Where the meters stand in the station account's ledger history: every transfer up to
    batch ``seq`` has been read; ``balance`` is the account's balance as of it, and ``open``
    the rounds read but not counted yet (not ended, or ended after they were read), each as
    (staked, paid) so far. Each count reads only the transfers after ``seq`` — a station a
    year old costs what a new one does."""

    seq: int = 0
    balance: int = 0
    open: dict[str, list[int]] = field(default_factory=dict)

    @classmethod
    def of(cls, row: StationRow) -> Cursor:
        c = row.cursor
        return cls(c["seq"], c["balance"], dict(c["open"])) if c else cls()

    def stored(self) -> dict[str, Any]:
        return {"seq": self.seq, "balance": self.balance, "open": self.open}

    def in_round(self, round_id: str, account: str, transfer: Transfer) -> None:
        """Add a transfer of a round not counted yet to what that round staked and paid."""
        staked, paid = round_money(account, [transfer])
        money = self.open.setdefault(round_id, [0, 0])
        money[0] += staked
        money[1] += paid


@dataclass(frozen=True)
class Synced:
    """A station's meters just brought up to date, with what it had in play and its
    balance, both from the same reading of the ledger as the meters."""

    row: StationRow
    in_play: int
    balance: int


@dataclass(frozen=True)
class Ticket:
    validation: str
    amount: int
    station: str
    issued_at: float
    expires_at: float
    status: str  # issued, held (by the station ``closed_by``, until it stacks it), redeemed, voided
    printed: bool
    closed_at: float | None
    closed_by: str | None
    detail: str

    def expired(self, now: float) -> bool:
        return self.status in ("issued", "held") and now >= self.expires_at

    def shown_status(self, now: float) -> str:
        return "expired" if self.expired(now) else self.status


class StationStore(SqliteStore):
    """``stations.sqlite``: the stations' signed rows, the tickets and the log. The
    methods that change something return a write (a function of the writer's connection),
    made by ``write`` (waiting) or ``awrite`` (awaiting) on the store's writer thread."""

    _SCHEMA, _NAME = _SCHEMA, "stations"

    def __init__(self, path: str | Path, key: bytes) -> None:
        self._key = key
        super().__init__(path)

    def _upgrade(self, db: sqlite3.Connection) -> None:
        columns = {r[1] for r in db.execute("PRAGMA table_info(stations)")}
        if "cursor" not in columns:  # a store from before cursors: its rows count from 0
            with db:
                db.execute("ALTER TABLE stations ADD COLUMN cursor TEXT")

    def write(self, apply: Callable[[sqlite3.Connection], T]) -> T:
        return self._writer.call(apply)

    async def awrite(self, apply: Callable[[sqlite3.Connection], T]) -> T:
        return await self._writer.run(apply)

    # --- station rows -------------------------------------------------------------------------

    def _checksum(self, station: str, state: str, meters: str, cursor: str | None) -> str:
        body = f"{station}\n{state}\n{meters}" + ("" if cursor is None else f"\n{cursor}")
        return hmac.new(self._key, body.encode(), hashlib.sha256).hexdigest()

    def _decode(self, row: Any) -> StationRow:
        station, state, meters, cursor, checksum = row
        if not hmac.compare_digest(checksum, self._checksum(station, state, meters, cursor)):
            raise CriticalMemoryError(f"station {station}: its critical memory fails its check")
        read = None if cursor is None else json.loads(cursor)
        return StationRow(station, json.loads(state), json.loads(meters), read)

    def load(self, station: str) -> StationRow:
        """The station's row (a fresh one if it has none); ``CriticalMemoryError`` when it
        fails its check."""
        rows = self._rows(f"SELECT {_ROW} FROM stations WHERE id = ?", (station,))
        return self._decode(rows[0]) if rows else StationRow(station)

    def load_unchecked(self, station: str) -> dict[str, Any]:
        """The station's state as stored, without its check (to find which tables it plays
        even when its row failed)."""
        rows = self._rows("SELECT state FROM stations WHERE id = ?", (station,))
        state: dict[str, Any] = json.loads(rows[0][0]) if rows else {}
        return state

    def stations(self) -> list[str]:
        return [r[0] for r in self._rows("SELECT id FROM stations ORDER BY id")]

    def _put(self, db: sqlite3.Connection, row: StationRow) -> None:
        state, meters = _dumps(row.state), _dumps(row.meters)
        cursor = None if row.cursor is None else _dumps(row.cursor)
        checksum = self._checksum(row.station, state, meters, cursor)
        db.execute(
            "INSERT INTO stations(id, state, meters, cursor, checksum) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT(id) DO UPDATE SET state = excluded.state, meters = excluded.meters, "
            "cursor = excluded.cursor, checksum = excluded.checksum",
            (row.station, state, meters, cursor, checksum),
        )

    def _get(self, db: sqlite3.Connection, station: str) -> StationRow:
        row = db.execute(f"SELECT {_ROW} FROM stations WHERE id = ?", (station,)).fetchone()
        return self._decode(row) if row is not None else StationRow(station)

    def save_state(self, station: str, state: dict[str, Any]) -> Callable[[sqlite3.Connection], None]:  # fmt: skip  # noqa: E501
        """A write that replaces the station's state (its meters kept, checked first)."""

        def apply(db: sqlite3.Connection) -> None:
            row = self._get(db, station)
            row.state = state
            self._put(db, row)

        return apply

    def rebuild(self, station: str, state: dict[str, Any]) -> Callable[[sqlite3.Connection], None]:  # fmt: skip  # noqa: E501
        """A write that forgets the station's meters (an attendant's clear after a critical
        memory failure): the next ``sync`` counts them again from the ledger."""

        def apply(db: sqlite3.Connection) -> None:
            db.execute("DELETE FROM metered WHERE station = ?", (station,))
            self._put(db, StationRow(station, state, empty_meters()))

        return apply

    # --- meters -------------------------------------------------------------------------------

    def sync(
        self, station: str, read_after: ReadAfter, ended: Callable[[str], bool]
    ) -> Callable[[sqlite3.Connection], Synced]:
        """A write that counts into the station's meters what its ledger account holds and
        they do not yet: cash movements by their batch, rounds once ``ended(round_id)``.
        Only the transfers after the row's cursor are read (``Cursor``), and each is
        counted once, in the same transaction as the meters it changes and the cursor.

        Which rounds have ended is asked first, then the ledger read inside the transaction
        (which holds the store's write lock, so nobody else counts meanwhile): a round's
        settlement is posted before its end is journaled, so every transfer of a round that
        had ended is read by then, and everything any process ever counted was read before.
        The in-play amount and the balance derived from that same reading reconcile with
        the meters exactly, whatever runs beside it."""
        account = station_account(station)
        before = Cursor.of(self.load(station))
        seen = set(before.open) | {t.round_id for _, _, t in read_after(before.seq) if t.round_id}
        ended_rounds = {r for r in seen if ended(r)}

        def apply(db: sqlite3.Connection) -> Synced:
            row = self._get(db, station)
            cursor = Cursor.of(row)
            fresh = read_after(cursor.seq)
            # Counted already: what an older version counted before cursors (its first
            # reading starts from the beginning), or a round's transfer posted after the
            # round was counted.
            done = self._metered(
                db,
                station,
                [key for _, key, t in fresh if t.round_id is None]
                + [f"round:{t.round_id}" for _, _, t in fresh if t.round_id is not None],
            )
            counted: list[str] = []
            for seq, key, transfer in fresh:
                cursor.seq = max(cursor.seq, seq)
                cursor.balance += (
                    transfer.amount if transfer.destination == account else -transfer.amount
                )
                if transfer.round_id is not None:
                    if f"round:{transfer.round_id}" not in done:
                        cursor.in_round(transfer.round_id, account, transfer)
                elif transfer.kind in CASH_KINDS and key not in done:
                    fold_cash(row.meters, transfer)
                    counted.append(key)
                    done.add(key)
            in_play = 0
            for round_id, (staked, paid) in list(cursor.open.items()):
                if round_id in ended_rounds:
                    fold_round(row.meters, staked, paid)
                    counted.append(f"round:{round_id}")
                    del cursor.open[round_id]
                else:
                    in_play += staked - paid
            if counted:
                db.executemany(
                    "INSERT INTO metered(station, key) VALUES (?, ?)",
                    [(station, k) for k in counted],
                )
            if counted or fresh or row.cursor is None:
                row.cursor = cursor.stored()
                self._put(db, row)
            return Synced(row, in_play, cursor.balance)

        return apply

    @staticmethod
    def _metered(db: sqlite3.Connection, station: str, keys: list[str]) -> set[str]:
        """Which of ``keys`` the station's meters have counted (looked up one by one on the
        table's key: as many as are asked, whatever the station's age)."""
        found: set[str] = set()
        wanted = sorted(set(keys))
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ", ".join("?" * len(chunk))
            found.update(
                r[0]
                for r in db.execute(
                    f"SELECT key FROM metered WHERE station = ? AND key IN ({marks})",
                    (station, *chunk),
                )
            )
        return found

    def open_rounds(self, station: str, read_after: ReadAfter) -> dict[str, list[int]]:
        """The rounds the station's meters have not counted yet (in play, or ended and not
        counted), each as [staked, paid]: the cursor's, and those read after it."""
        account = station_account(station)
        cursor = Cursor.of(self.load(station))
        fresh = [t for _, _, t in read_after(cursor.seq) if t.round_id is not None]
        with self._lock:
            done = self._metered(self._db, station, [f"round:{t.round_id}" for t in fresh])
        for transfer in fresh:
            if f"round:{transfer.round_id}" not in done:
                cursor.in_round(str(transfer.round_id), account, transfer)
        return cursor.open

    def in_play(self, station: str, read_after: ReadAfter) -> int:
        """What the station has staked in rounds its meters have not counted yet."""
        return sum(staked - paid for staked, paid in self.open_rounds(station, read_after).values())

    # --- tickets ------------------------------------------------------------------------------

    def ticket(self, validation: str) -> Ticket | None:
        rows = self._rows(
            "SELECT validation, amount, station, issued_at, expires_at, status, printed, "
            "closed_at, closed_by, detail FROM tickets WHERE validation = ?",
            (validation,),
        )
        return _ticket(rows[0]) if rows else None

    def tickets(self, status: str | None = None, now: float | None = None) -> list[Ticket]:
        rows = self._rows(
            "SELECT validation, amount, station, issued_at, expires_at, status, printed, "
            "closed_at, closed_by, detail FROM tickets ORDER BY issued_at"
        )
        found = [_ticket(r) for r in rows]
        if status is None:
            return found
        moment = time.time() if now is None else now
        return [t for t in found if t.shown_status(moment) == status]

    @staticmethod
    def issue(ticket: Ticket) -> Callable[[sqlite3.Connection], None]:
        def apply(db: sqlite3.Connection) -> None:
            db.execute(
                "INSERT INTO tickets(validation, amount, station, issued_at, expires_at, status) "
                "VALUES (?, ?, ?, ?, ?, 'issued')",
                (ticket.validation, ticket.amount, ticket.station, ticket.issued_at,
                 ticket.expires_at),
            )  # fmt: skip

        return apply

    @staticmethod
    def close_ticket(
        validation: str, status: str, by: str, detail: str = "", *, printed: bool | None = None
    ) -> Callable[[sqlite3.Connection], bool]:
        """A write that ends an issued ticket (``redeemed`` or ``voided``); False when it was
        not issued any more (redeemed or voided meanwhile)."""

        def apply(db: sqlite3.Connection) -> bool:
            changed = db.execute(
                "UPDATE tickets SET status = ?, closed_at = ?, closed_by = ?, detail = ? "
                "WHERE validation = ? AND status IN ('issued', 'held')",
                (status, time.time(), by, detail, validation),
            ).rowcount
            return bool(changed)

        return apply

    @staticmethod
    def hold_ticket(validation: str, station: str) -> Callable[[sqlite3.Connection], bool]:
        """A write that holds an issued ticket for the station whose reader holds it (until
        it is stacked or given back); False when it was not issued any more."""

        def apply(db: sqlite3.Connection) -> bool:
            return bool(
                db.execute(
                    "UPDATE tickets SET status = 'held', closed_by = ?, closed_at = ? "
                    "WHERE validation = ? AND status = 'issued'",
                    (station, time.time(), validation),
                ).rowcount
            )

        return apply

    @staticmethod
    def release_ticket(validation: str, station: str | None = None) -> Callable[[sqlite3.Connection], bool]:  # fmt: skip  # noqa: E501
        """A write that makes a held ticket issued again (given back to the player)."""

        def apply(db: sqlite3.Connection) -> bool:
            return bool(
                db.execute(
                    "UPDATE tickets SET status = 'issued', closed_by = NULL, closed_at = NULL "
                    "WHERE validation = :v AND status = 'held' AND (:s IS NULL OR closed_by = :s)",
                    {"v": validation, "s": station},
                ).rowcount
            )

        return apply

    @staticmethod
    def mark_printed(validation: str) -> Callable[[sqlite3.Connection], None]:
        def apply(db: sqlite3.Connection) -> None:
            db.execute("UPDATE tickets SET printed = 1 WHERE validation = ?", (validation,))

        return apply

    # --- the log ------------------------------------------------------------------------------

    @staticmethod
    def log(station: str, event: str, actor: str = "", detail: str = "") -> Callable[[sqlite3.Connection], None]:  # fmt: skip  # noqa: E501
        def apply(db: sqlite3.Connection) -> None:
            db.execute(
                "INSERT INTO log(at, station, event, actor, detail) VALUES (?, ?, ?, ?, ?)",
                (time.time(), station, event, actor, detail[:500]),
            )

        return apply

    def logged(self, station: str | None = None, limit: int = 100) -> list[dict[str, Any]]:
        sql = "SELECT seq, at, station, event, actor, detail FROM log"
        args: tuple[Any, ...] = ()
        if station is not None:
            sql += " WHERE station = ?"
            args = (station,)
        rows = self._rows(sql + " ORDER BY seq DESC LIMIT ?", (*args, limit))
        keys = ("seq", "at", "station", "event", "actor", "detail")
        return [dict(zip(keys, r, strict=True)) for r in reversed(rows)]


def _ticket(row: Any) -> Ticket:
    v, amount, station, issued, expires, status, printed, closed_at, closed_by, detail = row
    return Ticket(
        v, int(amount), station, float(issued), float(expires), status, bool(printed),
        closed_at, closed_by, detail,
    )  # fmt: skip


class MissingKey(Exception):
    """A key the stations' data needs is not in the data directory (a partial restore)."""


def open_station_store(data_dir: Path, *, create: bool = True) -> tuple[StationStore, bytes]:
    """The data directory's ``stations.sqlite`` (its rows signed with ``critical-memory.key``)
    and the key of its tickets' check digits (``ticket.key``): made on the server's first
    use. Without ``create`` (the operator's commands), a missing key is ``MissingKey``: a
    new one would make every meter fail its check and every ticket look forged."""
    keys = [data_dir / "critical-memory.key", data_dir / "ticket.key"]
    if not create:
        for path in [data_dir / "stations.sqlite", *keys]:
            if not path.exists():
                raise MissingKey(f"{path} is missing (no player stations have run on this data directory, or restore it from the backup)")  # fmt: skip  # noqa: E501
    store = StationStore(data_dir / "stations.sqlite", load_key(keys[0]))
    return store, load_key(keys[1])
