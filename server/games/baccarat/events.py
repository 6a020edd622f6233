"""Baccarat's own events: frozen value objects named for what happened
(docs/architecture.md, principle 4).

The shared events (``BetAccepted``, ``CardDealt``, ``WagerSettled``, ``RoundSettled`` ...)
live in ``server.games.events``; these add what only Baccarat announces: the point counts of
the initial four cards, each third-card decision with the rule that made it, the result, and
the progressive meters' contributions and awards.
"""

from __future__ import annotations

from fractions import Fraction

import msgspec

from rng.cards import Card

__all__ = [
    "InitialCountsAnnounced",
    "ProgressiveAwarded",
    "ProgressiveContributed",
    "ResultAnnounced",
    "ThirdCardDecided",
]


class InitialCountsAnnounced(msgspec.Struct, frozen=True, gc=False):
    """The four initial cards are face up and both point counts announced (631b.1(d),
    631b.7(c)); wagers on the initial cards are settled next, before any third card."""

    round_id: str
    player_count: int
    banker_count: int
    natural: bool


class ThirdCardDecided(msgspec.Struct, frozen=True, gc=False):
    """Whether ``hand`` takes a third card, and the 631a.11 rule that decided it.

    ``player_third`` is the value of the Player's third card for the Banker's decision (None
    if the Player stood or for the Player's own decision)."""

    round_id: str
    hand: str
    count: int
    player_third: int | None
    draws: bool
    rule: str


class ResultAnnounced(msgspec.Struct, frozen=True, gc=False):
    """Both hands complete (631a.12): every card, both point counts and the winner."""

    round_id: str
    player: tuple[Card, ...]
    banker: tuple[Card, ...]
    player_count: int
    banker_count: int
    winner: str


class ProgressiveContributed(msgspec.Struct, frozen=True, gc=False):
    """A progressive wager's contribution to ``meter`` (exact minor units)."""

    round_id: str
    player_id: str
    bet_id: str
    meter: str
    to_meter: Fraction
    to_reserve: Fraction


class ProgressiveAwarded(msgspec.Struct, frozen=True, gc=False):
    """``amount`` minor units of ``meter`` paid to the player for ``bet_id`` (a jackpot line
    or the Must-Hit-By Mystery Bonus, 631b.6(c)(7))."""

    round_id: str
    player_id: str
    bet_id: str
    meter: str
    amount: int
