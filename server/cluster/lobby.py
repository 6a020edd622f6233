"""The lobby on a cluster node: every table's line, wherever it runs. Each node puts its own
tables' lines in Redis at every tick and reads the others'; a table no node runs shows as
closed (docs/operations.md, "Running a cluster")."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

import msgspec

from server.protocol.messages import TableSummary
from server.tables.lobby import Lobby

if TYPE_CHECKING:
    from server.cluster.node import ClusterNode

__all__ = ["SharedLobby"]

_summary = msgspec.msgpack.Decoder(TableSummary).decode
_encode = msgspec.msgpack.Encoder().encode


class SharedLobby:
    def __init__(self, node: ClusterNode, lobby: Lobby) -> None:
        self.node, self.lobby = node, lobby
        self._lines: dict[str, bytes] = {}  # each table's lobby line, msgpack

    async def share(self) -> None:
        """Put this node's tables' lobby lines in Redis and read the others'."""
        key = f"{self.node.prefix}lobby"
        mine = {
            table_id: _encode(self.lobby.summary(table))
            for table_id, table in self.node.casino.tables.items()
            if table_id in self.node.owned
        }
        pipe = self.node.redis.pipeline(transaction=False)
        if mine:
            pipe.hset(key, mapping=mine)  # type: ignore[arg-type]
        pipe.hgetall(key)
        *_, lines = await pipe.execute()
        lines = cast(dict[bytes, bytes], lines)
        self._lines = {(k.decode() if isinstance(k, bytes) else k): v for k, v in lines.items()}

    def lines(self) -> list[TableSummary]:
        """Every table's lobby line: this node's own now, the others' as their owners last
        shared them; a table no node runs shows as closed."""
        lines = []
        for settings in self.node.casino.settings.tables:
            table = self.node.casino.tables.get(settings.id)
            if table is not None and settings.id in self.node.owned:
                lines.append(self.lobby.summary(table))
            elif settings.id in self.node.owners and settings.id in self._lines:
                lines.append(_summary(self._lines[settings.id]))
            else:
                game = self.node.casino.games[settings.id]
                lines.append(
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
                        stations_only=self.lobby.stations_only(settings.id),
                    )
                )
        return lines
