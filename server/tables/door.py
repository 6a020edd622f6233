"""What a player's connection uses of a table (``server.net.connection``): the table's own
runtime when this process runs it, or — on a cluster node — a door to the table wherever it
runs (``server.cluster.tables``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from collections.abc import Awaitable

    from server.core.commands import PlayCommand
    from server.protocol.messages import TableSnapshot
    from server.tables.runtime import TableReply
    from server.tables.viewers import Viewer

__all__ = ["TableDoor"]


class TableDoor(Protocol):
    id: str

    @property
    def in_process(self) -> bool:
        """Whether the table runs in this process: its commands reach it without I/O (a
        connection starts them at once, ``server.tables.eager``)."""
        ...

    async def enter(
        self, viewer: Viewer, role: str, last_seq: int | None = None
    ) -> tuple[TableSnapshot, bool]:
        """Admit the viewer (``IllegalAction`` when refused), sending it the events after
        ``last_seq`` when given; the snapshot, and whether the events were all sent."""
        ...

    def entered(self, viewer: Viewer) -> None:
        """The viewer's ``joined`` went out: events held back for it may follow."""

    def remove_viewer(self, viewer: Viewer) -> None: ...

    def drop_viewer(self, viewer: Viewer) -> None: ...

    async def submit(self, command: PlayCommand) -> TableReply:
        """Play ``command`` (built once, at the edge) at the table; its answer."""
        ...

    def queue(self, command: PlayCommand) -> Awaitable[TableReply]:
        """``submit``, with ``command`` queued at the table before this returns — behind
        the commands queued before it, ahead of those queued after — where the table runs in
        this process (``in_process``): a connection sends its next bet without waiting for
        this one's answer. A table elsewhere is asked as ``submit`` asks it, with no such
        promise of order (a connection queues only in-process tables' commands this way)."""
        ...
