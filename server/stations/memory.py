"""A station's row in critical memory: its state and its meters (docs/electronic-tables.md,
"Meters" and "Lockouts").

The row (``store.StationRow``) holds what restricts the station — its locks and the
handpays waiting for an attendant — and its meters, counted from the ledger once each
(``StationStore.sync``); it is checked whenever it is read or written. A row that fails its
check locks the station (``critical_memory``) and is left as found: the meters are not
trusted again until an attendant clears the lock and they are counted afresh from the
ledger, the reference (``rebuild``). Every change is logged in the station's event log and
then shown (``StatusBoard.changed``).
"""

from __future__ import annotations

import asyncio
import copy
import logging
from collections.abc import Callable
from functools import partial
from typing import Any

from server.config import DeviceSettings
from server.journal.journal import Journal, RoundStatus
from server.stations.meters import station_account
from server.stations.station import CRITICAL_MEMORY, Station, new_lock
from server.stations.status import StatusBoard
from server.stations.store import CriticalMemoryError, ReadAfter, StationRow, StationStore, Synced
from server.stations.work import Work
from server.wallet.ledger import Ledger

__all__ = ["CriticalMemory"]

log = logging.getLogger("croupier.stations")


class CriticalMemory:
    """Each station's row kept, checked and counted, and its event log written."""

    def __init__(
        self,
        store: StationStore,
        ledger: Ledger,
        journal: Journal,
        board: StatusBoard,
        work: Work,
    ) -> None:
        self.store, self.ledger, self.journal = store, ledger, journal
        self.board, self.work = board, work

    def load(self, device: DeviceSettings) -> Station:
        """The station as its row left it (at start, before the event loop runs)."""
        station = Station(device, StationRow(device.id))
        try:
            station.row = self.store.load(device.id)
        except CriticalMemoryError as exc:
            self.failed(station, str(exc), self.store.load_unchecked(device.id))
        else:  # what ``croupier meters --table`` reads
            station.row.state.update(tables=list(device.tables), seat=device.seat)
            self.store.write(self.store.save_state(device.id, station.row.state))
        return station

    def failed(self, s: Station, detail: str, found: dict[str, Any] | None = None) -> None:
        """The station's row failed its check: its meters are not trusted (they are counted
        again from the ledger when an attendant clears the lock). What restricts the station
        is kept, the most restrictive reading: the locks and handpays this server holds, and
        those the failed row holds (``found``, at start)."""
        s.memory_ok = False
        locks = [lock for lock in s.locks if lock["cause"] != CRITICAL_MEMORY]
        handpays = list(s.handpays)
        for lock in (found or {}).get("locks", []):
            if isinstance(lock, dict) and lock.get("cause") not in {x["cause"] for x in locks}:
                locks.append(lock)
        for handpay in (found or {}).get("handpays", []):
            if isinstance(handpay, dict) and handpay not in handpays:
                handpays.append(handpay)
        s.row = StationRow(s.id)
        s.row.state.update(
            locks=locks, handpays=handpays, tables=list(s.settings.tables), seat=s.settings.seat
        )
        s.locks.append(new_lock(CRITICAL_MEMORY, detail, present=False))
        log.error("station critical memory failed", extra={"station": s.id, "detail": detail})
        self._spawn_or_write(self.store.log(s.id, "critical_memory_failed", detail=detail))

    async def save(self, s: Station, event: str, actor: str = "", detail: str = "") -> None:
        """Keep the station's state in critical memory (not while it failed its check: the
        failed row stays as found, and the lock with it, until an attendant clears it) and
        log ``event``; then tell the agent and the touchscreens."""
        if s.memory_ok:
            try:  # a copy: the writer thread serialises it while the loop goes on
                await self.store.awrite(self.store.save_state(s.id, copy.deepcopy(s.row.state)))
            except CriticalMemoryError as exc:
                self.failed(s, str(exc))
        await self.log(s, event, actor, detail)
        self.board.changed(s)

    async def log(self, s: Station, event: str, actor: str = "", detail: str = "") -> None:
        await self.store.awrite(self.store.log(s.id, event, actor, detail))

    async def money_moved(self, s: Station) -> None:
        """Count what the ledger moved into the meters, then show it."""
        await self.count(s)
        self.board.changed(s)

    def count_now(self, s: Station) -> None:
        """``count`` at start, before the event loop runs the tables."""
        if s.memory_ok:
            try:
                s.row.meters = self.store.write(self._counted(s)).row.meters
            except CriticalMemoryError as exc:
                self.failed(s, str(exc))

    async def count(self, s: Station) -> None:
        """Count into the meters what the ledger holds for the station and they do not yet."""
        if not s.memory_ok:
            return
        try:
            s.row.meters = (await self.store.awrite(self._counted(s))).row.meters
        except CriticalMemoryError as exc:
            self.failed(s, str(exc))
            await self.save(s, f"locked:{CRITICAL_MEMORY}", detail=str(exc))

    async def rebuild(self, s: Station) -> None:
        """The meters counted again from the ledger, the reference: an attendant cleared a
        failed check."""
        await self.store.awrite(self.store.rebuild(s.id, copy.deepcopy(s.row.state)))
        s.memory_ok = True
        await self.count(s)

    def in_play(self, s: Station) -> bool:
        """Whether the station bet in a round that has not ended (or whose end its meters
        have not counted yet)."""
        return bool(self.store.open_rounds(s.id, self._read_after(s)))

    def _counted(self, s: Station) -> Callable[[Any], Synced]:
        """The write that counts what the ledger holds for the station and its meters do
        not yet."""
        return self.store.sync(s.id, self._read_after(s), self._ended)

    def _read_after(self, s: Station) -> ReadAfter:
        """The station account's transfers after a ledger batch (only what is new since
        its meters' last count is ever read)."""
        return partial(self.ledger.history_after, station_account(s.id))

    def _ended(self, round_id: str) -> bool:
        status = self.journal.status(round_id)
        return status is not None and status is not RoundStatus.OPEN

    def _spawn_or_write(self, write: Callable[[Any], None]) -> None:
        """A store write: on the writer thread, awaited in a task when the loop runs (not
        at start)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            self.store.write(write)
            return
        self.work.spawn(self.store.awrite(write))
