"""Events shared by every game: frozen value objects named for what happened.

Engines return tuples of events from each command. Game-specific events (a third-card
decision, a War choice, a hole-card range) live beside their game; these are the ones every
table has. Events are never subclassed (docs/architecture.md, principle 4).

They are frozen msgspec Structs with ``gc=False``: cheap to build (rounds build dozens), and
untracked by the cyclic garbage collector, which is safe because a frozen value whose fields
hold only immutable values (no list or dict) can never be part of a reference cycle.
"""

from __future__ import annotations

import msgspec

from rng.cards import Card
from server.games.wagers import Settlement, Wager

__all__ = [
    "BetAccepted",
    "BetCancelled",
    "BettingClosed",
    "BettingOpened",
    "CardBurned",
    "CardDealt",
    "Event",
    "RoundSettled",
    "RoundVoided",
    "WagerSettled",
]


class BettingOpened(msgspec.Struct, frozen=True, gc=False):
    round_id: str


class BetAccepted(msgspec.Struct, frozen=True, gc=False):
    round_id: str
    wager: Wager


class BetCancelled(msgspec.Struct, frozen=True, gc=False):
    round_id: str
    wager: Wager


class BettingClosed(msgspec.Struct, frozen=True, gc=False):
    """ "No more bets": from here no wager is placed, altered or withdrawn."""

    round_id: str


class CardDealt(msgspec.Struct, frozen=True, gc=False):
    """A card dealt to ``target`` (e.g. "player", "banker", "dealer", "seat:3").

    ``seq`` counts the cards of the round from 0. A face-down card (``face_up=False``) is
    journaled but a view never shows it to a player before its reveal.
    """

    round_id: str
    target: str
    card: Card
    seq: int
    face_up: bool = True


class CardBurned(msgspec.Struct, frozen=True, gc=False):
    """A card removed unseen (a burn); journaled, never shown."""

    round_id: str
    card: Card
    seq: int


class WagerSettled(msgspec.Struct, frozen=True, gc=False):
    round_id: str
    settlement: Settlement


class RoundSettled(msgspec.Struct, frozen=True, gc=False):
    """Every wager of the round is settled; ``result`` is the game's summary ("banker 7-5")."""

    round_id: str
    result: str


class RoundVoided(msgspec.Struct, frozen=True, gc=False):
    """The round was voided (device fault, irregularity): every wager returned in full."""

    round_id: str
    reason: str


Event = (
    BettingOpened
    | BetAccepted
    | BetCancelled
    | BettingClosed
    | CardDealt
    | CardBurned
    | WagerSettled
    | RoundSettled
    | RoundVoided
)
