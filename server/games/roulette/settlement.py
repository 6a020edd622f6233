"""Settlement of roulette wagers: a pure function of the placement and the winning number.

617a.3(d): a wager is settled by its position on the layout when the ball comes to rest. It
wins when the ball's number is one the placement covers, at the odds of 617a.4(a); otherwise
it loses. The zero rules need no special case: 0 and 00 are not red, black, odd, even, 1–18
or 19–36, so those wagers lose on them (617a.4(b), (c)(3)), and no wager is halved or held.
A Five Adjacent Numbers wager is five Straight Wagers of one fifth each (617a.3(e)(1)(iii)):
at most one of them wins, so the whole amount nets 36/5 − 1 = 31/5 or loses.

The round engine and the par sheet both call ``outcome``: one copy of the rules.
"""

from __future__ import annotations

from collections.abc import Iterable

from rng.wheel_layouts import WheelType, wheel_order
from server.games.errors import InvariantViolation
from server.games.roulette.layout import DOUBLE_ZERO, Placement
from server.games.wagers import Outcome, Settlement, Wager, settle

__all__ = ["is_void_spin", "outcome", "settle_all"]


def is_void_spin(label: str, wheel: WheelType) -> bool:
    """617a.4(c)(2): on a double zero wheel used as a single zero wheel, a ball in 00 is "no
    spin" — the spin is void and the wheel is re-spun with the same wagers."""
    return wheel is WheelType.DOUBLE_ZERO_AS_SINGLE and label == DOUBLE_ZERO


def outcome(placement: Placement, label: str) -> Outcome:
    """How ``placement`` ends when the ball rests in the compartment ``label`` (617a.3(d),
    617a.4). The caller has already set void spins aside (``is_void_spin``)."""
    if label in placement.numbers:
        return Outcome.win(placement.net_if_won)
    return Outcome.lose()


def settle_all(
    wagers: Iterable[tuple[Wager, Placement]], label: str, wheel: WheelType
) -> tuple[Settlement, ...]:
    """Settle every wager on the winning compartment ``label`` (617a.5(e)). Each wager is
    settled on its own; a valid result is required."""
    if label not in wheel_order(wheel) or is_void_spin(label, wheel):
        raise InvariantViolation(f"{label!r} is not a valid result of a {wheel.value} wheel")
    return tuple(settle(wager, outcome(placement, label)) for wager, placement in wagers)
