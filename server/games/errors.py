"""Errors of the rule engines, split by who is to blame (docs/architecture.md, principle 5).

``IllegalAction`` is the player's (or client's) doing: a wager the table does not offer, an
amount out of limits, a command out of phase. It carries a stable ``code`` for the wire
protocol and the offending ``value``. ``InvariantViolation`` is ours: a broken internal
rule, never reported to a player as their fault.

``Refusal`` is the one shape a refusal has once it leaves the code that refused: the
engine's ``IllegalAction`` (``.refusal``), a table's answer to a command, a gate's verdict,
a cluster node's answer for a table it runs and the wire's ``error`` message all carry the
same three fields, unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

__all__ = [
    "ABOVE_MAXIMUM",
    "BAD_AMOUNT",
    "BELOW_MINIMUM",
    "BETTING_CLOSED",
    "DUPLICATE_BET_ID",
    "MAIN_WAGER_REQUIRED",
    "NOT_IN_PHASE",
    "NO_DECISION_PENDING",
    "UNKNOWN_BET",
    "UNKNOWN_WAGER",
    "WAGER_NOT_OFFERED",
    "GameError",
    "IllegalAction",
    "InvariantViolation",
    "Refusal",
    "allowed",
]

# Stable rejection codes (the wire protocol repeats them verbatim).
BAD_AMOUNT: Final = "bad_amount"  # not a positive whole number of minor units
BELOW_MINIMUM: Final = "below_minimum"
ABOVE_MAXIMUM: Final = "above_maximum"
BETTING_CLOSED: Final = "betting_closed"  # after "no more bets"
UNKNOWN_WAGER: Final = "unknown_wager"  # no such wager in this game
WAGER_NOT_OFFERED: Final = "wager_not_offered"  # exists, but this table does not offer it
MAIN_WAGER_REQUIRED: Final = "main_wager_required"  # e.g. 631a.8(a)
DUPLICATE_BET_ID: Final = "duplicate_bet_id"
UNKNOWN_BET: Final = "unknown_bet"
NOT_IN_PHASE: Final = "not_in_phase"
NO_DECISION_PENDING: Final = "no_decision_pending"


@dataclass(frozen=True, slots=True)
class Refusal:
    """A command refused, nothing changed: a stable ``code`` (the wire protocol repeats it
    verbatim), a ``message`` for the player, and the offending ``value``."""

    code: str
    message: str
    value: Any = None


class GameError(Exception):
    """Base class of the engines' errors."""


class IllegalAction(GameError):
    """A command the rules do not allow now; the caller's fault. Nothing changed."""

    def __init__(self, code: str, message: str, value: object = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.value = value

    @classmethod
    def of(cls, refusal: Refusal) -> IllegalAction:
        """The refusal raised again where an exception is the way to say it (a seat)."""
        return cls(refusal.code, refusal.message, refusal.value)

    @property
    def refusal(self) -> Refusal:
        return Refusal(self.code, self.message, self.value)

    def __repr__(self) -> str:
        return f"IllegalAction({self.code!r}, {self.message!r}, value={self.value!r})"


class InvariantViolation(GameError):
    """Our own rule was broken (a bug or a faulty device). Never the player's fault."""


def allowed(verify: Callable[..., object], *args: object) -> bool:
    """Ask (docs/architecture.md, principle 5): would ``verify(*args)`` — an engine's ``verify_x`` —
    accept the command? Its ``IllegalAction`` becomes False; nothing changes."""
    try:
        verify(*args)
    except IllegalAction:
        return False
    return True
