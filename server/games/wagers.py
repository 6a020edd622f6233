"""Wagers and their settlement, shared by every game.

A ``Wager`` is a player's accepted bet on one spot of the layout. Engines decide each
wager's ``Outcome`` (a result and exact net odds); ``settle`` turns it into money with the
rounding policy of ``money.returned``. Par sheets use the same ``Outcome`` values, so the
odds a par sheet prices are the odds a real round pays.

They are frozen msgspec Structs with ``gc=False``: cheap to build (rounds build dozens), and
untracked by the cyclic garbage collector, which is safe because a frozen value whose fields
hold only immutable values (no list or dict) can never be part of a reference cycle.
"""

from __future__ import annotations

from enum import Enum
from fractions import Fraction

import msgspec

from server.games.money import returned

__all__ = ["Outcome", "Result", "Settlement", "Wager", "settle"]


class Result(Enum):
    WIN = "win"
    LOSE = "lose"
    PUSH = "push"
    SURRENDER = "surrender"  # a partial loss chosen by the player (Casino War, 651a.9(c)(1))
    VOID = "void"  # the round was voided: the wager is returned in full


class Outcome(msgspec.Struct, frozen=True, gc=False):
    """How a wager ended: ``net`` is the net win per unit staked (exact)."""

    result: Result
    net: Fraction

    @staticmethod
    def win(net: Fraction) -> Outcome:
        if net <= 0:
            raise ValueError(f"a win pays a positive net, not {net}")
        return Outcome(Result.WIN, net)

    @staticmethod
    def lose() -> Outcome:
        return _LOSE

    @staticmethod
    def push() -> Outcome:
        return _PUSH

    @staticmethod
    def void() -> Outcome:
        return _VOID


_LOSE = Outcome(Result.LOSE, Fraction(-1))
_PUSH = Outcome(Result.PUSH, Fraction(0))
_VOID = Outcome(Result.VOID, Fraction(0))


class Wager(msgspec.Struct, frozen=True, gc=False):
    """An accepted wager. ``bet_id`` is chosen by the client and unique per round and player,
    so a retried message is recognised and never charged twice."""

    bet_id: str
    player_id: str
    spot: str
    amount: int


class Settlement(msgspec.Struct, frozen=True, gc=False):
    """A settled wager: ``returned`` is paid back to the player, stake included."""

    wager: Wager
    outcome: Outcome
    returned: int

    @property
    def net(self) -> int:
        return self.returned - self.wager.amount


def settle(wager: Wager, outcome: Outcome) -> Settlement:
    return Settlement(wager, outcome, returned(wager.amount, outcome.net))
