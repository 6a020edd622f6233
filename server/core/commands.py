"""What goes into a table core: players' commands, time, and the answers to its effects.

A player's play command (``Place``, ``Cancel``, ``Repeat``, ``Decide``) is built once, where
the player's message arrives (the connection), and travels as it is — to the table's
runtime, or across the cluster to the node that runs the table. The runtime names it with a
``cid`` as it queues it; the core's ``Reply`` effect names the same ``cid``. Seat commands
(``Join``, ``Leave``, ``Drop``), ``Stop`` and ``Drain`` take effect at once; play
commands queue and run while the table waits (a betting window, a decision, the pause) —
several players' at once, each player's one after another in the order sent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

__all__ = [
    "PLAY_COMMANDS",
    "Cancel",
    "Command",
    "Console",
    "Decide",
    "Done",
    "Drain",
    "Drop",
    "Join",
    "Leave",
    "Place",
    "PlayCommand",
    "Repeat",
    "Stop",
    "Tick",
]


@dataclass(frozen=True, slots=True)
class Join:
    """A connection of ``player_id`` watches the table, as a ``player`` (seated, may bet) or a
    ``spectator``. Refused with ``table_full`` when every seat is taken. ``seat``: the seat
    the player had (at the table's previous node), theirs again unless someone has it."""

    player_id: str
    role: str
    seat: int | None = None


@dataclass(frozen=True, slots=True)
class Leave:
    """A connection left on purpose: the seat is free at once (when it was the player's last
    connection as a player)."""

    player_id: str
    role: str


@dataclass(frozen=True, slots=True)
class Drop:
    """A connection dropped without leaving: the seat is held for the grace period; the
    player's accepted bets stand and settle."""

    player_id: str
    role: str


@dataclass(frozen=True, slots=True)
class Place:
    kind: ClassVar[str] = "place"
    player_id: str
    round_id: str
    bet_id: str
    spot: str
    amount: int
    cid: int = field(default=0, kw_only=True)  # named by the runtime as it queues it


@dataclass(frozen=True, slots=True)
class Cancel:
    kind: ClassVar[str] = "cancel"
    player_id: str
    round_id: str
    bet_id: str
    cid: int = field(default=0, kw_only=True)  # named by the runtime as it queues it


@dataclass(frozen=True, slots=True)
class Repeat:
    """Place again the player's wagers of their previous round here, ids ``<prefix>-1`` …"""

    kind: ClassVar[str] = "repeat"
    player_id: str
    round_id: str
    prefix: str
    cid: int = field(default=0, kw_only=True)  # named by the runtime as it queues it


@dataclass(frozen=True, slots=True)
class Decide:
    kind: ClassVar[str] = "decide"
    player_id: str
    round_id: str
    spot: str
    decision: str
    cid: int = field(default=0, kw_only=True)  # named by the runtime as it queues it


@dataclass(frozen=True, slots=True)
class Tick:
    """Time passed (the core keeps the latest ``now`` it was given with any command)."""


@dataclass(frozen=True, slots=True)
class Stop:
    """Stop the table: the round in play is voided at its next wait, every wager returned."""


@dataclass(frozen=True, slots=True)
class Drain:
    """Hand the table over: the round in play finishes as usual and no next round opens (a
    cluster node giving the table to another node, docs/operations.md "Running a
    cluster"). The table's life then ends with nothing left open."""


@dataclass(frozen=True, slots=True)
class Done:
    """The results of ``Wait`` number ``wid``, one per effect, in order: the effect's value,
    or a ``Failed``/``Refused`` (``server.core.effects``). ``wid`` None: the only ``Wait``
    not yet answered (an error when there are several)."""

    results: tuple[Any, ...]
    wid: int | None = None


@dataclass(frozen=True, slots=True)
class Console:
    """The dealer console, outside a device hold (docs/devices.md): ``staff`` is the journal's
    ``StaffDecision`` — ``no_more_bets`` closes betting now, ``void`` voids the round in play
    (every wager returned). Ignored, and logged, when there is no round it can apply to."""

    staff: Any


PlayCommand = Place | Cancel | Repeat | Decide
# By ``kind``: how a play command is named across the cluster (``server/cluster/rpc.py``).
PLAY_COMMANDS: dict[str, type[PlayCommand]] = {c.kind: c for c in (Place, Cancel, Repeat, Decide)}
Command = Join | Leave | Drop | PlayCommand | Tick | Stop | Drain | Done | Console
