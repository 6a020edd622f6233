"""What each viewer may see of an engine event (docs/protocol.md).

Events become wire dictionaries here: cards as codes, enums as values, exact odds as "p/q".
Two rules keep secrets:

- a card dealt face down (the Down Under Blackjack hole card) or burned is sent without its
  identity — every viewer learns that a card was dealt, nobody learns which until an event
  reveals it;
- a wager, its acceptance, cancellation and settlement — anything about one player's bet —
  belong to the player who made it: ``audience`` names that player and nobody else receives
  the event.
"""

from __future__ import annotations

import dataclasses
import re
from enum import Enum
from fractions import Fraction
from typing import Any

import msgspec

from rng.cards import Card
from server.games.events import CardBurned, CardDealt
from server.games.wagers import Settlement, Wager

__all__ = ["audience", "event_name", "public_data", "to_wire"]

_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")


# By class, what every event of that class needs worked out once: its name, a dataclass's
# field names (each bet's event is made wire-ready here: on a busy table the regular
# expression and ``dataclasses.fields`` per event cost more than the event itself).
_NAMES: dict[type, str] = {}
_FIELDS: dict[type, tuple[str, ...]] = {}
# Exactly these types go on the wire as they are (a subclass — an ``IntEnum``, a ``Card`` —
# is looked at below).
_PLAIN: frozenset[type] = frozenset({str, int, float, bool, type(None)})


def event_name(event: object) -> str:
    """``CardDealt`` → ``card_dealt``."""
    kind = type(event)
    name = _NAMES.get(kind)
    if name is None:
        name = _NAMES[kind] = _CAMEL.sub("_", kind.__name__).lower()
    return name


def to_wire(value: Any) -> Any:
    """A JSON/MessagePack-compatible copy of an event field."""
    kind = type(value)
    if kind in _PLAIN:
        return value
    if isinstance(value, Card):
        return value.code
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Fraction):
        return f"{value.numerator}/{value.denominator}"
    if isinstance(value, bool | int | str | float):
        return value
    if isinstance(value, msgspec.Struct):
        return {name: to_wire(getattr(value, name)) for name in value.__struct_fields__}
    names = _FIELDS.get(kind)
    if names is None and dataclasses.is_dataclass(value) and not isinstance(value, type):
        names = _FIELDS[kind] = tuple(f.name for f in dataclasses.fields(value))
    if names is not None:
        return {name: to_wire(getattr(value, name)) for name in names}
    if isinstance(value, dict):
        return {str(k): to_wire(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [to_wire(v) for v in value]
    return str(value)


def audience(event: object) -> str | None:
    """The one player an event is for, or None when every viewer may see it."""
    wager = getattr(event, "wager", None)
    if isinstance(wager, Wager):
        return wager.player_id
    settlement = getattr(event, "settlement", None)
    if isinstance(settlement, Settlement):
        return settlement.wager.player_id
    # Anything else about one player's bet (a progressive contribution or award) is theirs.
    player, bet = getattr(event, "player_id", None), getattr(event, "bet_id", None)
    if isinstance(player, str) and isinstance(bet, str):
        return player
    return None


def public_data(event: object) -> dict[str, Any]:
    """The event's fields as its audience may see them (round id dropped: it travels in the
    envelope)."""
    data = to_wire(event)
    assert isinstance(data, dict)
    data.pop("round_id", None)
    if (isinstance(event, CardDealt) and not event.face_up) or isinstance(event, CardBurned):
        data.pop("card", None)
    return data
