"""What a table's runtime tells the rest of the process, and asks of it: its lifecycle
hooks, declared in one place and given when the runtime is made (like a Colyseus room's
lifecycle), so a bet's route can be read from ``runtime.py`` and nothing outside writes into
a runtime or its core.

The process's composition root (``server/app/``) fills them in: the edge's fan-out and round
counter, the player stations' gate and round meters, a cluster node's publishing of events
to the other nodes. A field left out does nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from server.games.errors import Refusal
from server.journal.journal import RoundStatus
from server.tables.viewers import Fanout, deliver_each

__all__ = ["Publish", "TableHooks"]

# Each event as it goes out (seq, audience, frame) and each balance frame (None, the player,
# frame): a cluster node publishes them to the other nodes' viewers.
Publish = Callable[[int | None, str | None, bytes], object]


def _open(kind: str, player_id: str) -> Refusal | None:
    return None


def _nothing(*args: object) -> None:
    return None


@dataclass(frozen=True, slots=True)
class TableHooks:
    # Hands one encoded frame to many viewers (the edge's frames it once: server.net.fanout).
    fanout: Fanout = deliver_each
    # Who may play here, asked before a play command (its ``kind``: place, cancel, repeat,
    # decide) reaches the table: a player station's lock, a table for stations only.
    gate: Callable[[str, str], Refusal | None] = _open
    # A round finished (its status): the edge's round counter.
    round_finished: Callable[[RoundStatus], object] = _nothing
    # A round ended (its id, its status): the player stations meter it.
    round_ended: Callable[[str, RoundStatus], object] = _nothing
    # Each event and balance frame as it goes out: a cluster node's (``Publish``).
    published: Publish | None = None
