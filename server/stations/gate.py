"""Who may bet and sit at a table with stations (docs/electronic-tables.md, "What a station
is", and "Lockouts").

A station sits at its configured seat and bets at its own tables only; a table that any
station names seats its stations only (others may watch it: ``stations_only``). A station
that may not take a bet now — locked, a handpay waiting, its link down, its self-test not
passed — has its bets refused before the table sees them (``station_locked``); bets it
placed before stand, and a cancel, which returns money, is always let through.
"""

from __future__ import annotations

from typing import Final

from server.games.errors import Refusal
from server.stations.station import Station

__all__ = ["STATIONS_ONLY", "STATION_LOCKED", "Gate"]

STATIONS_ONLY: Final = "stations_only"
STATION_LOCKED: Final = "station_locked"
# The commands a locked station may not give (a cancel returns money: always allowed).
_BETTING: Final = frozenset({"place", "repeat", "decide"})


class Gate:
    """The refusals a table with stations gives before its core sees a command or a seat."""

    def __init__(self, stations: dict[str, Station], tables: dict[str, list[str]]) -> None:
        self.stations, self.tables = stations, tables

    def gate(self, table_id: str, kind: str, player_id: str) -> Refusal | None:
        """A player's command refused before the table sees it: a station's at a table it
        does not play or while it may not bet, and anyone else's bet at a table with
        stations."""
        if kind not in _BETTING:
            return None
        station = self.station_of(player_id)
        if station is None:
            if table_id in self.tables:
                return Refusal(STATIONS_ONLY, "this table takes bets from its player stations only", table_id)  # fmt: skip  # noqa: E501
            return None
        if table_id not in station.settings.tables:
            return Refusal(STATIONS_ONLY, _plays_only(station), table_id)
        why = station.why_not()
        if why is not None:
            return Refusal(STATION_LOCKED, f"station {station.id}: {why}", station.id)
        return None

    def join_refusal(self, table_id: str, player_id: str, role: str) -> str | None:
        """Why ``player_id`` may not sit at ``table_id`` as ``role``: a table with stations
        seats its stations only, and a station sits at its own tables only."""
        if role != "player":
            return None
        station = self.station_of(player_id)
        if station is not None and table_id not in station.settings.tables:
            return _plays_only(station)
        if station is None and table_id in self.tables:
            return "this table seats its player stations only: join it as a spectator"
        return None

    def station_of(self, player_id: str) -> Station | None:
        """The station a player id is the touchscreen of (``station:ID``), if any."""
        if not player_id.startswith("station:"):
            return None
        return self.stations.get(player_id.removeprefix("station:"))


def _plays_only(station: Station) -> str:
    return f"station {station.id} plays {', '.join(station.settings.tables)} only"
