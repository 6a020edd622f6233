"""The regulated wheel layouts as pure data: roulette orders and colours (617a.1), the Big Six
sections (619a.1). No randomness here.

This module holds only values and pure functions so that the rule engines in
``server/games`` (which must not import anything that draws) can use the same orders, colours
and neighbour sets as the wheels that spin in ``rng.wheels``.

- Single zero: 37 compartments in the clockwise order of 617a.1(c).
- Double zero: 38 compartments in the clockwise order of 617a.1(d).
- Double zero used as single zero (617a.1(e)): the double-zero wheel, 00 voids the spin.
- Big Six: 54 sections in the clockwise order of 619a.1(b) (docs/interpretations.md, 14).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

__all__ = [
    "BIG_SIX_ORDER",
    "DOUBLE_ZERO",
    "DOUBLE_ZERO_ORDER",
    "RED_NUMBERS",
    "SINGLE_ZERO_ORDER",
    "BigSixSymbol",
    "Pocket",
    "PocketColour",
    "WheelType",
    "neighbours",
    "pocket_of",
    "wheel_order",
    "wheel_pockets",
]

DOUBLE_ZERO = "00"


class PocketColour(Enum):
    RED = "red"
    BLACK = "black"
    GREEN = "green"


# 617a.1(c), clockwise from zero.
SINGLE_ZERO_ORDER: tuple[str, ...] = tuple(
    "0 32 15 19 4 21 2 25 17 34 6 27 13 36 11 30 8 23 10 5 24 16 33 1 20 14 31 9 22 18 29 7 28 "
    "12 35 3 26".split()
)
# 617a.1(d), clockwise from zero.
DOUBLE_ZERO_ORDER: tuple[str, ...] = tuple(
    "0 28 9 26 30 11 7 20 32 17 5 22 34 15 3 24 36 13 1 00 27 10 25 29 12 8 19 31 18 6 21 33 16 "
    "4 23 35 14 2".split()
)
# The red numbers of the standard layout; the wheel rings alternate red and black around the
# green zeros (617a.1(c), (d)) and a test checks that this set does so on both wheels.
RED_NUMBERS: frozenset[int] = frozenset(
    {1, 3, 5, 7, 9, 12, 14, 16, 18, 19, 21, 23, 25, 27, 30, 32, 34, 36}
)


@dataclass(frozen=True, slots=True)
class Pocket:
    """A compartment: ``label`` as printed ("0", "00", "1".."36"), ``number`` 0–36 (None for
    00), its colour, and ``position``, its clockwise index from zero."""

    label: str
    number: int | None
    colour: PocketColour
    position: int

    @property
    def is_zero(self) -> bool:
        return self.colour is PocketColour.GREEN


def pocket_of(label: str, position: int) -> Pocket:
    """The pocket printed ``label`` at clockwise ``position``, with its colour."""
    if label == DOUBLE_ZERO:
        return Pocket(label, None, PocketColour.GREEN, position)
    number = int(label)
    if number == 0:
        colour = PocketColour.GREEN
    else:
        colour = PocketColour.RED if number in RED_NUMBERS else PocketColour.BLACK
    return Pocket(label, number, colour, position)


class WheelType(Enum):
    SINGLE_ZERO = "single_zero"
    DOUBLE_ZERO = "double_zero"
    DOUBLE_ZERO_AS_SINGLE = "double_zero_as_single"


def wheel_order(wheel_type: WheelType) -> tuple[str, ...]:
    """The clockwise labels of the physical wheel of ``wheel_type`` (a double-zero wheel used as
    a single-zero wheel is the double-zero wheel, 617a.1(e))."""
    return SINGLE_ZERO_ORDER if wheel_type is WheelType.SINGLE_ZERO else DOUBLE_ZERO_ORDER


def wheel_pockets(wheel_type: WheelType) -> tuple[Pocket, ...]:
    """Every compartment of the physical wheel of ``wheel_type``, clockwise from zero."""
    return tuple(pocket_of(label, i) for i, label in enumerate(wheel_order(wheel_type)))


def neighbours(order: tuple[str, ...], label: str, each_side: int = 2) -> tuple[str, ...]:
    """``label`` and the ``each_side`` labels on either side of it on the wheel ``order``,
    clockwise (Five Adjacent Numbers, 617a.3(e)(1)). Raises ``ValueError`` for a label that is
    not on the wheel."""
    try:
        centre = order.index(label)
    except ValueError:
        raise ValueError(f"no pocket {label!r} on this wheel") from None
    n = len(order)
    return tuple(order[(centre + k) % n] for k in range(-each_side, each_side + 1))


class BigSixSymbol(Enum):
    """The symbols of 619a.1(a)."""

    ONE = "$1"
    TWO = "$2"
    FIVE = "$5"
    TEN = "$10"
    TWENTY = "$20"
    JOKER = "joker"
    FLAG = "flag"


_BIG_SIX_CODES = {
    "joker": BigSixSymbol.JOKER,
    "flag": BigSixSymbol.FLAG,
    "1": BigSixSymbol.ONE,
    "2": BigSixSymbol.TWO,
    "5": BigSixSymbol.FIVE,
    "10": BigSixSymbol.TEN,
    "20": BigSixSymbol.TWENTY,
}
# 619a.1(b), clockwise from the joker.
BIG_SIX_ORDER: tuple[BigSixSymbol, ...] = tuple(
    _BIG_SIX_CODES[code]
    for code in (
        "joker 1 2 1 5 2 1 10 1 5 1 2 1 20 1 2 1 5 2 1 10 1 2 5 1 2 1 "
        "flag 2 5 2 1 2 1 10 1 5 1 2 1 20 1 2 1 5 2 1 10 1 2 5 1 2 1"
    ).split()
)
