"""Money: integer minor units, exact odds, and the one rounding policy.

Amounts are ``int`` minor units (cents) everywhere; odds are ``Fraction``. No float comes
near money.

**Rounding policy** (the only one, applied everywhere): when odds produce a fraction of a
minor unit, the amount returned to the player is rounded *down* to a whole minor unit, and
the fraction (the "breakage") stays with the house. ``returned(stake, net)`` is the single
place that does it. Par sheets do not round: they use the exact ``net`` odds, so a house
edge is the game's, not the breakage's. Progressive meters keep fractions (see
``progressives``) so that no contribution is lost.

Odds wording (docs/interpretations.md, 4): "X to 1" pays X plus the wager back (net
X); "X for 1" includes the wager (net X − 1).
"""

from __future__ import annotations

from fractions import Fraction

from server.games.errors import BAD_AMOUNT, IllegalAction

__all__ = [
    "EVEN",
    "LOSE_ALL",
    "PUSH",
    "check_amount",
    "for_one",
    "odds_text",
    "return_ratio",
    "returned",
    "to_odds",
]

EVEN = Fraction(1)
PUSH = Fraction(0)
LOSE_ALL = Fraction(-1)


def to_odds(win: int, stake: int = 1) -> Fraction:
    """Net odds of "``win`` to ``stake``" (e.g. ``to_odds(19, 20)`` for Banker less 5%)."""
    return Fraction(win, stake)


def for_one(total: int) -> Fraction:
    """Net odds of "``total`` for 1": the wager is included in the award."""
    return Fraction(total - 1)


def odds_text(net: Fraction, *, for_one: bool = False) -> str:
    """``net`` odds in the regulation's words, for the rules players read (58 Pa. Code
    810a.3): "19 to 20", "8 to 1", "299 for 1" (``for_one``: the award includes the wager),
    "push" for a wager returned. The inverse of ``to_odds`` and ``for_one``."""
    if net == 0:
        return "push"
    if for_one:
        total = net + 1
        if total.denominator != 1:
            raise ValueError(f"{net} is not a whole 'for 1' award")
        return f"{total.numerator} for 1"
    return f"{net.numerator} to {net.denominator}"


def returned(stake: int, net: Fraction) -> int:
    """What the player gets back for ``stake`` settled at ``net`` odds, stake included.

    ``net`` is the net win per unit staked: 1 for even money, 0 for a push, -1 for a loss,
    -1/2 for a surrender. Rounded down to a minor unit (the rounding policy above).
    """
    multiplier, divisor = return_ratio(net)
    return stake * multiplier // divisor


def return_ratio(net: Fraction) -> tuple[int, int]:
    """``(m, d)`` with ``returned(stake, net) == stake * m // d`` for every stake: the rounding
    policy's multiplier, for engines that settle many stakes at the same odds."""
    numerator, denominator = net.numerator, net.denominator
    if numerator < -denominator:
        raise ValueError(f"a wager cannot lose more than itself (net {net})")
    # floor(stake × (1 + n/d)) in integers: d > 0, so floor division is the exact floor.
    return numerator + denominator, denominator


def check_amount(value: object, field: str = "amount") -> int:
    """Validate an amount from outside: a positive whole number of minor units.

    Rejects bools, floats (even 5.0: minor units are whole), strings, zero and negatives
    with ``IllegalAction(BAD_AMOUNT)`` naming the value.
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise IllegalAction(
            BAD_AMOUNT, f"{field} must be a whole number of minor units (cents)", value
        )
    if value <= 0:
        raise IllegalAction(BAD_AMOUNT, f"{field} must be positive", value)
    return value
