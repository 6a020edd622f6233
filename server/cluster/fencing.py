"""Fencing tokens: what makes a table's writes safe when its lease moves between nodes.

A node that acquires a table's lease in Redis gets a token from a counter that only grows
(``server.cluster.leases``) and **raises the table's fence** in PostgreSQL to it before it
reads or writes anything of the table. Every write the node then makes for the table —
each ledger batch, each journal record, in the same transaction — first checks that the
fence still holds its token (``Fence``). A node that lost the lease without knowing it
(paused past the lease, partitioned from Redis) is refused on its next write: the new
owner raised the fence above its token. The check locks the fence row ``FOR SHARE``, so
raising it waits for writes already under way and none slips in after.

A fence never goes down: a token lower than the one it holds (Redis lost its counter, or
two nodes raced and the later raise came first) is refused, and the node gives the lease
up (``StaleToken``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from server.stores import StorageError

__all__ = ["Fence", "Fenced", "StaleToken", "fence_of", "raise_fence"]


class Fenced(StorageError):
    """A write for a table this node no longer owns: refused, nothing of it applied."""


class StaleToken(StorageError):
    """A token lower than the table's fence: another node owns the table since."""

    def __init__(self, table_id: str, token: int, fence: int) -> None:
        super().__init__(f"table {table_id}: token {token} is below the fence {fence}")
        self.fence = fence


def raise_fence(conn: Any, table_id: str, token: int, node_id: str) -> None:
    """Raise ``table_id``'s fence to ``token`` for ``node_id`` (in the caller's transaction);
    ``StaleToken`` when the fence is already at ``token`` or above."""
    row = conn.execute(
        "INSERT INTO table_fences(table_id, token, node_id) VALUES (%s, %s, %s) "
        "ON CONFLICT (table_id) DO UPDATE SET token = EXCLUDED.token, "
        "node_id = EXCLUDED.node_id, since = now() WHERE table_fences.token < EXCLUDED.token "
        "RETURNING token",
        (table_id, token, node_id),
    ).fetchone()
    if row is None:
        held = fence_of(conn, table_id)
        raise StaleToken(table_id, token, held[0] if held else 0)


def fence_of(conn: Any, table_id: str) -> tuple[int, str] | None:
    """The table's fence: (token, node) — or None if no node ever owned it."""
    row = conn.execute(
        "SELECT token, node_id FROM table_fences WHERE table_id = %s", (table_id,)
    ).fetchone()
    return (int(row[0]), str(row[1])) if row else None


@dataclass(frozen=True, slots=True)
class Fence:
    """The check each write for ``table_id`` makes first, in its own transaction."""

    table_id: str
    token: int
    node_id: str

    def __call__(self, conn: Any) -> None:
        row = conn.execute(
            "SELECT token, node_id FROM table_fences WHERE table_id = %s FOR SHARE",
            (self.table_id,),
        ).fetchone()
        self._holds(row)

    @staticmethod
    def check_many(conn: Any, fences: list[Fence]) -> None:
        """Every one of ``fences`` at once, in one statement: the group commit's writes of
        many tables check their fences together (``group_commit.Batched``). The rows are
        locked in the order of their table ids, as every node's groups lock them, so that
        two groups never wait for each other's fences in a circle."""
        rows = {
            table_id: (token, node_id)
            for table_id, token, node_id in conn.execute(
                "SELECT table_id, token, node_id FROM table_fences WHERE table_id = ANY(%s) "
                "ORDER BY table_id FOR SHARE",
                (sorted({fence.table_id for fence in fences}),),
            ).fetchall()
        }
        for fence in fences:
            fence._holds(rows.get(fence.table_id))

    def _holds(self, row: Any) -> None:
        """Raise ``Fenced`` unless the fence's row (token, node) holds this token."""
        if row is None or int(row[0]) != self.token:
            holder = f"node {row[1]} holds token {row[0]}" if row else "no node holds it"
            raise Fenced(
                f"fencing token refused: node {self.node_id} no longer owns table "
                f"{self.table_id} (its token {self.token}; {holder}); nothing was written"
            )
