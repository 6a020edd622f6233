"""One player station as the server knows it now (docs/electronic-tables.md).

Its locks and its handpays waiting for an attendant are ``row.state``, kept in critical
memory (``memory.py``); the rest (the link, the attendant key, the player card, the
touchscreens watching) lives as long as the process. ``why_not`` is the one answer to
"may the station take a bet, a bill, a ticket or a cash-out now?" that every side asks.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

from server.config import DeviceSettings
from server.protocol.messages import ServerMessage
from server.stations.store import StationRow

__all__ = [
    "CONNECTION",
    "CRITICAL_MEMORY",
    "HEARTBEAT",
    "SELF_TEST",
    "Station",
    "StationRefused",
    "iso",
    "new_lock",
]

# Lock causes the server sees itself (any other cause is a fault the station reports).
CONNECTION: Final = "connection"
HEARTBEAT: Final = "heartbeat"
SELF_TEST: Final = "self_test"
CRITICAL_MEMORY: Final = "critical_memory"


class StationRefused(Exception):
    """A touchscreen's request refused: ``code`` goes to the client (docs/protocol.md)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def iso(moment: float) -> str:
    """A moment as shown and printed: UTC, to the second."""
    return datetime.fromtimestamp(moment, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def new_lock(cause: str, detail: str, *, present: bool) -> dict[str, Any]:
    """A lock as kept in critical memory (and shown: ``StationLock``)."""
    return {"cause": cause, "since": iso(time.time()), "detail": detail[:200], "present": present}


@dataclass
class Station:
    """What the server knows of one station now (its locks and handpays are ``row.state``,
    kept in critical memory)."""

    settings: DeviceSettings
    row: StationRow
    memory_ok: bool = True
    up: bool = False
    session: int | None = None
    self_tested: bool = False  # a passed self-test since the link last came up
    attendant: str | None = None
    called: bool = False
    player_card: str | None = None
    last_ticket: dict[str, Any] | None = None
    screens: list[Callable[[ServerMessage], None]] = field(default_factory=list)

    @property
    def id(self) -> str:
        return self.settings.id

    @property
    def locks(self) -> list[dict[str, Any]]:
        locks: list[dict[str, Any]] = self.row.state.setdefault("locks", [])
        return locks

    @property
    def handpays(self) -> list[dict[str, Any]]:
        """The handpays waiting for an attendant, oldest first: ``{id, amount, kind, round}``."""
        handpays: list[dict[str, Any]] = self.row.state.setdefault("handpays", [])
        return handpays

    @property
    def handpay(self) -> dict[str, Any] | None:
        """The next handpay to pay (shown on the touchscreen), if any."""
        return self.handpays[0] if self.handpays else None

    def why_not(self) -> str | None:
        """Why the station takes no bets, bills, tickets or cash-out now; None if it does."""
        if self.locks:
            return "locked: " + ", ".join(lock["cause"] for lock in self.locks)
        if self.handpay is not None:
            waiting = sum(int(h["amount"]) for h in self.handpays)
            return f"handpays of {waiting} wait for an attendant"
        if not self.up:
            return "the station is not connected"
        if not self.self_tested:
            return "the station has not passed its self-test"
        return None
