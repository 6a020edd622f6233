"""The lobby on a cluster node: every table's line, wherever it runs. Each node puts its own
tables' lines in Redis at every tick and reads the others'; a table no node runs shows as
closed (docs/operations.md, "Running a cluster")."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, cast

import msgspec

from server.games.table import TableSettings
from server.protocol.messages import TableSummary
from server.tables.lobby import Lobby, lobby_answer

if TYPE_CHECKING:
    from server.cluster.node import ClusterNode

__all__ = ["SharedLobby"]

log = logging.getLogger("croupier.cluster")

_summary = msgspec.msgpack.Decoder(TableSummary).decode
_encode = msgspec.msgpack.Encoder().encode


class SharedLobby:
    def __init__(self, node: ClusterNode, lobby: Lobby) -> None:
        self.node, self.lobby = node, lobby
        self._lines: dict[str, bytes] = {}  # each table's lobby line, msgpack
        # The line of each table no node runs (closed), encoded: its settings, whether it
        # seats its stations only, and the line.
        self._closed: dict[str, tuple[TableSettings, bool, bytes]] = {}

    async def share(self) -> None:
        """Put this node's tables' lobby lines in Redis and read the others'."""
        key = f"{self.node.prefix}lobby"
        mine = {
            table_id: self.lobby.encoded(table)
            for table_id, table in self.node.casino.tables.items()
            if table_id in self.node.owned
        }
        pipe = self.node.redis.pipeline(transaction=False)
        if mine:
            pipe.hset(key, mapping=mine)  # type: ignore[arg-type]
        pipe.hgetall(key)
        *_, lines = await pipe.execute()
        lines = cast(dict[bytes, bytes], lines)
        before, self._lines = self._lines, {}
        for field, line in lines.items():
            table_id = field.decode() if isinstance(field, bytes) else str(field)
            if before.get(table_id) != line:  # new or changed: read it once before serving it
                try:
                    _summary(line)
                except msgspec.DecodeError as exc:  # a node of another version, a bad write
                    log.warning("cluster: lobby line of %s unreadable, left out: %s", table_id, exc)
                    continue
            self._lines[table_id] = line

    def lines(self) -> list[TableSummary]:
        """Every table's lobby line: this node's own now, the others' as their owners last
        shared them; a table no node runs shows as closed."""
        return [_summary(line) for line in self._encoded()]

    def answer(self, ref: int | None) -> bytes:
        """The ``lobby`` message for a reader, encoded: ``encode(Lobby(tables=self.lines(),
        ref=ref))``, made of the lines' bytes as they are — the others' as Redis holds
        them (each read once when it changed, ``share``), none decoded and encoded again."""
        lines = self._encoded()
        return lobby_answer(lines, len(lines), ref)

    def _encoded(self) -> list[bytes]:
        lines = []
        for settings in self.node.casino.settings.tables:
            table = self.node.casino.tables.get(settings.id)
            if table is not None and settings.id in self.node.owned:
                lines.append(self.lobby.encoded(table))
            elif settings.id in self.node.owners and settings.id in self._lines:
                lines.append(self._lines[settings.id])
            else:
                lines.append(self._closed_line(settings))
        return lines

    def _closed_line(self, settings: TableSettings) -> bytes:
        stations_only = self.lobby.stations_only(settings.id)
        kept = self._closed.get(settings.id)
        if kept is not None and kept[0] is settings and kept[1] == stations_only:
            return kept[2]
        game = self.node.casino.games[settings.id]
        line = _encode(
            TableSummary(
                table=settings.id,
                name=settings.name,
                game=game.game,
                variant=game.variant,
                minimum=settings.minimum,
                maximum=settings.maximum,
                seats=settings.seats,
                seated=0,
                phase="closed",
                closes_in_ms=None,
                last_results=[],
                automated=game.automated,
                boxed=game.boxed,
                stations_only=stations_only,
            )
        )
        self._closed[settings.id] = (settings, stations_only, line)
        return line
