"""The shape every game's round engine has, so the table runtime drives them all alike.

A round is a sans-I/O state machine. The runtime feeds it commands and answers its chance
requests; each call returns the events it caused, in order, or raises ``IllegalAction``
(nothing changed) when the command is not allowed now.

    round = Engine(config, round_id)        # phase BETTING, returns nothing yet
    events = round.open()                   # BettingOpened
    events = round.place(wager)             # BetAccepted, or IllegalAction
    events = round.cancel(player_id, bet_id)
    events = round.close_betting()          # BettingClosed ("no more bets")
    while (request := round.pending()) is not None:
        if isinstance(request, CardRequest):
            events = round.provide_card(card)    # from the shoe, a device, or a script
        elif isinstance(request, SpinRequest):
            events = round.provide_spin(spin)
        elif isinstance(request, MysteryHitRequest):    # Baccarat's Must-Hit-By meter, 631b.6
            events = round.provide_mystery_hit(value)   # journaled first, never sent
        elif isinstance(request, DecisionRequest):
            events = round.decide(player_id, decision)  # or round.time_out(player_id)
        else:                                           # any other kind of chance, declared
            events = round.provide(request, answer)     # with its game (ChanceEngine)
    # the last events include WagerSettled for every wager and RoundSettled

Events are the shared ones of ``server.games.events`` plus each game's own frozen event
types, hence ``Sequence[object]`` here. ``void(reason)`` ends the round at any point before
settlement with every wager returned.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any, Protocol

from rng.cards import Card
from server.games.chance import ChanceRequest
from server.games.wagers import Wager

__all__ = [
    "ChanceEngine",
    "DecidingEngine",
    "DecisionRequest",
    "Phase",
    "Request",
    "RoundEngine",
    "WheelEngine",
]


class Phase(Enum):
    BETTING = "betting"  # wagers accepted
    DEALING = "dealing"  # "no more bets": chance requests being answered
    DECIDING = "deciding"  # waiting for a player's decision
    SETTLED = "settled"
    VOIDED = "voided"

    # Members are singletons compared by identity: hash them as objects, in C, not by
    # ``Enum.__hash__``'s Python call on the name; every transition lookup hashes a phase.
    __hash__ = object.__hash__


@dataclass(frozen=True, slots=True)
class DecisionRequest:
    """A player must choose among ``options`` (e.g. "war", "surrender"; "hit", "stand");
    ``default`` is what a time-out chooses: the option that places no further money."""

    player_id: str
    spot: str
    options: tuple[str, ...]
    default: str


Request = ChanceRequest | DecisionRequest
"""What ``pending()`` asks: a kind of chance (``server.games.chance``) or a player's decision."""


class RoundEngine(Protocol):
    round_id: str

    @property
    def phase(self) -> Phase: ...

    def open(self) -> Sequence[object]: ...

    def place(self, wager: Wager) -> Sequence[object]: ...

    def cancel(self, player_id: str, bet_id: str) -> Sequence[object]: ...

    def close_betting(self) -> Sequence[object]: ...

    def pending(self) -> Request | None: ...

    def provide_card(self, card: Card) -> Sequence[object]: ...

    def void(self, reason: str) -> Sequence[object]: ...


class WheelEngine(RoundEngine, Protocol):
    """A wheel game's round: it asks ``SpinRequest`` and takes the result (a compartment's
    label for roulette, a section index for the Big Six Wheel)."""

    def provide_spin(self, result: Any) -> Sequence[object]: ...


class ChanceEngine(RoundEngine, Protocol):
    """A round that asks a kind of chance the table answers through the generic path (a
    ``ChanceRequest`` its game declares, no card, wheel, hole-card range or Mystery hit)."""

    def provide(self, request: ChanceRequest, answer: Any) -> Sequence[object]:
        """The answer to ``request`` (the ``pending()`` one), read from its journal record
        (``request.read``): the events it causes."""


class DecidingEngine(RoundEngine, Protocol):
    """A round that asks players for decisions (``DecisionRequest``)."""

    def stake_of(self, player_id: str, spot: str, decision: str) -> int:
        """The money ``decision`` would put on the table (a War Wager, a Double Down, an
        Insurance or split wager), or the ``IllegalAction`` that ``decide`` would raise; the
        caller checks the player can cover it before deciding. Changes nothing."""

    def wagers_added(self, player_id: str, spot: str, decision: str) -> Sequence[Wager]:
        """The wagers ``decide`` would add for ``decision`` (their ids, spots and amounts,
        as its ``BetAccepted`` events will carry them), or the ``IllegalAction`` it would
        raise: the table debits them before the engine decides. Changes nothing."""

    def decide(self, player_id: str, spot: str, decision: str) -> Sequence[object]: ...

    def time_out(self, player_id: str) -> Sequence[object]:
        """The player did not decide in time: the option that places no further money."""
