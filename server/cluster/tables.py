"""A cluster node's door to each table, wherever it runs (``server.tables.door``).

Each node keeps its own viewers of every table here. When the node runs the table, the
table's runtime delivers to these same viewers (it is given this door's ``viewers``) and
every command goes straight to it. When another node runs it, the events come from the
bus (``server.cluster.bus``) and commands go to the owner (``server.cluster.rpc``); a
viewer admitted there gets the events that arrive while its ``joined`` is on the way right
after it — those its snapshot already holds are dropped.

When the table moves, the viewers stay: the node seats its players again at the new owner
(``reseat``) and they see the table carry on.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Iterable
from typing import TYPE_CHECKING, Any

import msgspec
from redis.exceptions import RedisError

from server.core import commands as cmd
from server.core.seats import NOT_SEATED
from server.games.errors import IllegalAction, Refusal
from server.protocol.messages import TableSnapshot
from server.tables.runtime import TableReply, TableRuntime
from server.tables.viewers import Fanout, Viewer

if TYPE_CHECKING:
    from server.cluster.node import ClusterNode

__all__ = ["ClusterTable"]

log = logging.getLogger("croupier.cluster")


class ClusterTable:
    def __init__(self, node: ClusterNode, table_id: str, fanout: Fanout) -> None:
        self.node, self.id, self.fanout = node, table_id, fanout
        self.viewers: dict[Viewer, str] = {}
        # Viewers admitted at another node whose ``joined`` has not gone out yet: the
        # snapshot's seq, and the (seq, frame) that came meanwhile.
        self._held: dict[Viewer, tuple[int, list[tuple[int | None, bytes]]]] = {}
        # Viewers just admitted, and the last seq they have: the owner's answer to ``enter``
        # comes back on another Redis connection than its events, and may overtake events
        # the snapshot already holds; those must not reach the viewer after it. Forgotten
        # once the bus brings a later seq (the table's events come in order).
        self._floor: dict[Viewer, int] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        # Each of this node's players' seat (a betting box in the boxed games), so the table's
        # next owner gives them the same one back.
        self.seat_of: dict[str, int] = {}

    def runtime(self) -> TableRuntime | None:
        table = self.node.casino.tables.get(self.id)
        return table if table is not None and not table.finished else None

    @property
    def in_process(self) -> bool:
        """Whether this node runs the table now (else a command is a round trip through
        Redis to its owner)."""
        return self.runtime() is not None

    # --- the door ------------------------------------------------------------------------

    async def enter(
        self, viewer: Viewer, role: str, last_seq: int | None = None
    ) -> tuple[TableSnapshot, bool]:
        table = self.runtime()
        if table is not None:
            snapshot, resumed = await table.enter(viewer, role, last_seq)
            self._seated(viewer.player_id, snapshot.seat)
            # The table's events from the bus too, should it move to another node.
            self._spawn(self.node.bus.watch(self.id))
            return snapshot, resumed
        self._held[viewer] = (-1, [])
        self.viewers[viewer] = role  # events from now on are held for it
        try:
            # Subscribed before the owner takes the snapshot: no event after it is missed.
            await self.node.bus.watch(self.id)
            data = await self._ask("enter", {"player": viewer.player_id, "role": role})
        except BaseException:
            self.viewers.pop(viewer, None)
            self._held.pop(viewer, None)
            self._unwatch_when_alone()
            raise
        snapshot = TableSnapshot(**data)
        self._seated(viewer.player_id, snapshot.seat)
        self._held[viewer] = (snapshot.seq, self._held[viewer][1])
        resumed = False
        if last_seq is not None:
            try:
                missed = await self.node.bus.since(
                    self.id, last_seq, viewer.player_id, snapshot.seq
                )
            except (RedisError, OSError) as exc:
                # The history could not be read: the viewer starts from the snapshot it
                # has (resumed false), as when its seq is no longer kept. Raising here left
                # it in the door, its events held for an ``entered`` that never came.
                log.warning("cluster: history of %s not read for a resume: %s", self.id, exc)
                missed = None
            if missed is not None:
                for frame in missed:
                    viewer.deliver(frame)
                resumed = True
        return snapshot, resumed

    def _seated(self, player_id: str, seat: int | None) -> None:
        if seat is not None:
            self.seat_of[player_id] = seat

    def entered(self, viewer: Viewer) -> None:
        held = self._held.pop(viewer, None)
        if held is None:
            return
        seq, frames = held
        for event_seq, frame in frames:
            if event_seq is None or event_seq > seq:
                viewer.deliver(frame)
                seq = max(seq, event_seq or seq)
        if seq >= 0:
            self._floor[viewer] = seq

    def remove_viewer(self, viewer: Viewer) -> None:
        self._forget(viewer, "leave")

    def drop_viewer(self, viewer: Viewer) -> None:
        self._forget(viewer, "drop")

    def _forget(self, viewer: Viewer, how: str) -> None:
        table = self.runtime()
        if table is not None:
            (table.remove_viewer if how == "leave" else table.drop_viewer)(viewer)
            self._unwatch_when_alone()
            return
        role = self.viewers.pop(viewer, None)
        self._held.pop(viewer, None)
        self._floor.pop(viewer, None)
        self._unwatch_when_alone()
        if role is not None:
            self._spawn(self._ask(how, {"player": viewer.player_id, "role": role}))

    def _unwatch_when_alone(self) -> None:
        """The node's last viewer of the table left: its events need not come here."""
        if not self.viewers:
            self.node.bus.unwatch(self.id)

    def queue(self, command: cmd.PlayCommand) -> Awaitable[TableReply]:
        table = self.runtime()
        if table is not None:
            return table.queue(command)
        # Asked through Redis: in order with the commands started before it only as far as
        # their tasks start in order (a connection queues at once only in-process tables).
        return asyncio.ensure_future(self.submit(command))

    async def submit(self, command: cmd.PlayCommand) -> TableReply:
        table = self.runtime()
        if table is not None:
            return await table.queue(command)
        # The command as the edge built it, named by its kind (server.core.commands).
        sent = {"player": command.player_id, "kind": command.kind}
        sent["command"] = msgspec.to_builtins(command)
        try:
            reply = await self._reply(sent)
            if (
                reply.refusal
                and reply.refusal.code == NOT_SEATED
                and self._seated_here(command.player_id)
            ):
                # The table moved a moment ago and this node has not seated its players at
                # the new owner yet: seat this one now, and ask again.
                await self._ask("enter", self._seat_args(command.player_id))
                reply = await self._reply(sent)
        except IllegalAction as exc:
            return TableReply(exc.refusal)
        return reply

    async def _reply(self, sent: dict[str, Any]) -> TableReply:
        refusal, data = await self._ask("submit", sent)
        return TableReply(msgspec.convert(refusal, Refusal | None), data)

    def _seated_here(self, player_id: str) -> bool:
        return any(v.player_id == player_id and r == "player" for v, r in self.viewers.items())

    def _seat_args(self, player_id: str) -> dict[str, Any]:
        return {"player": player_id, "role": "player", "seat": self.seat_of.get(player_id)}

    # --- events from the owner ------------------------------------------------------------

    def deliver(self, seq: int | None, audience: str | None, frame: bytes) -> None:
        """One event of the table from the bus: to every viewer here that may see it."""
        if audience is None:
            targets: Iterable[Viewer] = self.viewers
        else:
            targets = [v for v in self.viewers if v.player_id == audience]
        if self._held:
            for viewer in targets:
                held = self._held.get(viewer)
                if held is not None:
                    held[1].append((seq, frame))
            targets = [v for v in targets if v not in self._held]
        if self._floor and seq is not None:
            floors = self._floor
            targets = [v for v in targets if floors.get(v, -1) < seq]
            for viewer in [v for v, floor in floors.items() if floor < seq]:
                del floors[viewer]
        self.fanout(targets, frame)

    # --- the owner changed ------------------------------------------------------------------

    async def reseat(self) -> None:
        """Seat this node's players again at the table's new owner (its seats are new), each
        in the seat they had if nobody took it meanwhile."""
        table = self.runtime()
        for viewer, role in list(self.viewers.items()):
            player, seat = viewer.player_id, self.seat_of.get(viewer.player_id)
            try:
                if table is not None:
                    table.seat(cmd.Join(player, role, seat))
                else:
                    await self._ask("enter", {**self._seat_args(player), "role": role})
            except IllegalAction:
                log.warning("cluster: %s lost their seat at %s", viewer.player_id, self.id)
            except Exception as exc:
                log.warning("cluster: reseating at %s failed: %s", self.id, exc)

    # --- talking to the owner ----------------------------------------------------------------

    async def _ask(self, op: str, args: dict[str, Any]) -> Any:
        """The owner's answer; ``IllegalAction(table_unavailable)`` when no node answers for
        the table in time (it is moving, or nobody runs it)."""
        return await self.node.commands.ask(self.id, op, args)

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        task.add_done_callback(lambda t: t.cancelled() or t.exception())
