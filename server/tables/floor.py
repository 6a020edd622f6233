"""The casino as a player's connection meets it (``server.net.connection``): logging in,
the lobby, each table's door, its rules, the player's recall and notices, the player
stations' touchscreens.

One process alone answers everything from its own tables. A cluster node gives its own
parts (``server/cluster/``): a door to every table wherever it runs, the lobby as the node
sees it, and recovery's notices kept where any node finds them. The composition root
(``server/app/``) builds the floor with whichever applies; nothing patches it afterwards.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping

from server.config import ServerSettings
from server.protocol.messages import Notice, RecalledRound, Rules
from server.stations.service import Stations
from server.tables.casino import Casino
from server.tables.door import TableDoor
from server.tables.lobby import Lobby
from server.tables.players import Players

__all__ = ["Floor"]


class Floor:
    def __init__(
        self,
        casino: Casino,
        players: Players,
        lobby: Lobby,
        *,
        doors: Mapping[str, TableDoor] | None = None,
        lobby_answer: Callable[[int | None], bytes] | None = None,
        shared_notices: Callable[[str], Awaitable[list[Notice]]] | None = None,
    ) -> None:
        """``doors``, ``lobby_answer``, ``shared_notices``: a cluster node's (None: this
        process's own tables, lobby and notices)."""
        self.casino, self.players, self.lobby = casino, players, lobby
        self._doors = doors
        self._lobby_answer = lobby_answer or lobby.answer
        self.shared_notices = shared_notices

    @property
    def settings(self) -> ServerSettings:
        return self.casino.settings

    @property
    def stations(self) -> Stations | None:
        return self.casino.stations

    def door(self, table_id: str) -> TableDoor | None:
        """The table as a player's connection uses it (None: no such table)."""
        if self._doors is not None:
            return self._doors.get(table_id)
        return self.casino.tables.get(table_id)

    def lobby_answer(self, ref: int | None) -> bytes:
        """The lobby — every table's line — as the encoded ``lobby`` message answering the
        request ``ref``."""
        return self._lobby_answer(ref)

    def rules(self, table_id: str) -> Rules | None:
        return self.lobby.rules(table_id)

    def recall(self, player_id: str, table_id: str | None = None) -> list[RecalledRound]:
        return self.lobby.recall(player_id, table_id)

    def notices(self, player_id: str) -> list[Notice]:
        """What this process's recovery has to tell the player, told once."""
        return self.casino.notices.pop(player_id, [])

    def game_of(self, table_id: str) -> str:
        """The table's game (the metrics' label)."""
        return self.casino.games[table_id].game
