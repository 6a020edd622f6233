"""A station's lock: set at once, cleared by an attendant (docs/electronic-tables.md,
"Lockouts").

Lockout (AGCO 11.1.2–11.1.3, NJAC 13:69E-1.28P, 25 CFR 547.10): a door open, a tilt, a lost
or silent link, a failed self-test or a failed check of the station's critical memory locks
it at once — no bet, bill, ticket or cash-out is taken from it; bets it placed before stand
— and the lock stays, across restarts of the station and of the server, until an attendant
clears it with the attendant key once its cause is gone. Each lock records whether its
cause is still ``present``: a lock whose cause is present cannot be cleared.
"""

from __future__ import annotations

import logging

from server.stations.memory import CriticalMemory
from server.stations.station import CRITICAL_MEMORY, Station, StationRefused, new_lock
from server.stations.status import StatusBoard
from server.stations.work import Work

__all__ = ["Lockout"]

log = logging.getLogger("croupier.stations")


class Lockout:
    """Locks set when their cause appears, marked when it is gone, cleared by hand."""

    def __init__(self, memory: CriticalMemory, board: StatusBoard, work: Work) -> None:
        self.memory, self.board, self.work = memory, board, work

    def lock(self, s: Station, cause: str, detail: str, *, present: bool) -> None:
        for lock in s.locks:
            if lock["cause"] == cause:
                lock["present"] = present
                break
        else:
            s.locks.append(new_lock(cause, detail, present=present))
        log.warning("station locked", extra={"station": s.id, "cause": cause, "detail": detail})
        self.work.spawn(self.memory.save(s, f"locked:{cause}", detail=detail))

    def cause_gone(self, s: Station, cause: str) -> None:
        """The cause of a lock is gone: the lock stays until an attendant clears it."""
        for lock in s.locks:
            if lock["cause"] == cause and lock.get("present"):
                lock["present"] = False
                self.work.spawn(self.memory.save(s, f"cause_gone:{cause}"))
        self.board.changed(s)

    async def clear(self, s: Station, attendant: str) -> None:
        """An attendant with the key clears every lock, once no cause is present."""
        if not s.locks:
            raise StationRefused("nothing_to_clear", "the station has no lock to clear")
        present = [lock["cause"] for lock in s.locks if lock.get("present")]
        if present:
            raise StationRefused("fault_present", f"fix these first: {', '.join(present)}")
        causes = [lock["cause"] for lock in s.locks]
        s.locks.clear()
        if CRITICAL_MEMORY in causes:
            await self.memory.rebuild(s)
            await self.memory.log(s, "critical_memory_cleared", attendant, "meters rebuilt from the ledger")  # fmt: skip  # noqa: E501
        await self.memory.save(s, "locks_cleared", attendant, ", ".join(causes))
