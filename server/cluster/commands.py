"""Commands for tables across the cluster: a player's command (a seat, a bet) for a table
another node runs goes to that node over Redis (``rpc.py``) and comes back with the table's
answer. ``ask`` sends one from this node's door (``tables.py``) to the owner, following the
table when it moves; ``serve`` carries one out for a table this node runs. A command
crosses as the core's own type (``server.core.commands``, by its ``kind``) and a refusal as
the one ``Refusal`` (``server.games.errors``), unchanged.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any

import msgspec
from redis.exceptions import RedisError

from server.cluster.rpc import NotOwner, RpcTimeout
from server.core import commands as cmd
from server.core.table import TABLE_UNAVAILABLE
from server.games.errors import IllegalAction, Refusal

if TYPE_CHECKING:
    from server.cluster.node import ClusterNode

__all__ = ["Commands"]


class Commands:
    def __init__(self, node: ClusterNode) -> None:
        self.node = node

    async def serve(self, op: str, table_id: str, args: dict[str, Any]) -> Any:
        """A command from another node's player, for a table this node runs."""
        table = self.node.casino.tables.get(table_id)
        if table is None or table.finished:
            raise NotOwner(f"node {self.node.node_id} does not run table {table_id}")
        player = args["player"]
        try:
            if op == "enter":
                seat = args.get("seat")  # the seat they had at the table's last owner
                table.seat(cmd.Join(player, args["role"], None if seat is None else int(seat)))
                return {"data": table.snapshot_data(player)}
            if op == "leave":
                table.seat(cmd.Leave(player, args["role"]))
            elif op == "drop":
                table.seat(cmd.Drop(player, args["role"]))
            elif op == "submit":
                command = msgspec.convert(args["command"], cmd.PLAY_COMMANDS[args["kind"]])
                reply = await table.submit(command)
                return {"data": [msgspec.to_builtins(reply.refusal), reply.data]}
        except IllegalAction as exc:
            return {"error": msgspec.to_builtins(exc.refusal)}
        return {"data": None}

    async def ask(self, table_id: str, op: str, args: dict[str, Any]) -> Any:
        """Run a player's command at the node that runs the table: its answer, or
        ``IllegalAction`` (the table's refusal, or ``table_unavailable`` while the table
        has no node or is moving to another)."""
        for _ in range(3):
            owner = self.node.owners.get(table_id)
            if owner is None or owner.node_id == self.node.node_id:  # being taken: not yet ours
                await asyncio.sleep(self.node.tick)
                await self._refresh_owner(table_id)
                continue
            try:
                answer = await self.node.rpc.call(
                    owner.node_id, op, table_id, args, timeout=max(2.0, self.node.lease_seconds)
                )
            except NotOwner:
                await self._refresh_owner(table_id)
                continue
            except RpcTimeout:
                # The command reached the owner's queue and may have been carried out:
                # the player learns which by sending it again as it was (a bet's id makes
                # that safe), never by assuming it was refused.
                raise IllegalAction(
                    TABLE_UNAVAILABLE,
                    "the table's node did not answer in time; the command may have been "
                    "carried out: send it again as it was (the same bet_id) to learn its outcome",
                    table_id,
                ) from None
            if "error" in answer:
                raise IllegalAction.of(msgspec.convert(answer["error"], Refusal))
            return answer["data"]
        raise IllegalAction(
            TABLE_UNAVAILABLE, "the table is moving to another node; try again", table_id
        )

    async def _refresh_owner(self, table_id: str) -> None:
        with contextlib.suppress(RedisError, OSError):
            owner = (await self.node.leases.owners()).get(table_id)
            if owner is None:
                self.node.owners.pop(table_id, None)
            else:
                self.node.owners[table_id] = owner
