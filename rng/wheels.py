"""Roulette wheels (617a.1) and the Big Six Wheel (619a.1), in their regulated clockwise order.

A spin is one uniform draw over the wheel's physical compartments or sections, so every
weight comes from the wheel itself, never from scaling.

- Single zero: 37 compartments in the order of 617a.1(c).
- Double zero: 38 compartments in the order of 617a.1(d).
- Double zero used as single zero (617a.1(e)): the double-zero wheel; a ball in 00 voids the
  spin and the wheel is re-spun with the same wagers (617a.4(c)(2)). ``Spin.void`` marks it;
  ``spin_until_valid`` returns every spin, voided ones first, so each is journaled.
- Big Six: 54 sections in the order of 619a.1(b).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from rng.sources import RandomSource

__all__ = [
    "BIG_SIX_ORDER",
    "BIG_SIX_WHEEL",
    "DOUBLE_ZERO_ORDER",
    "RED_NUMBERS",
    "SINGLE_ZERO_ORDER",
    "BigSixSpin",
    "BigSixSymbol",
    "BigSixWheel",
    "Pocket",
    "PocketColour",
    "RouletteWheel",
    "Spin",
    "WheelType",
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


def _pocket(label: str, position: int) -> Pocket:
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


@dataclass(frozen=True, slots=True)
class Spin:
    """One spin: the pocket, the uniform draw that chose it, and whether it is void (00 on a
    double-zero wheel used as a single-zero wheel, 617a.4(c)(2))."""

    pocket: Pocket
    bound: int
    value: int
    void: bool


class RouletteWheel:
    """A roulette wheel of one of the three types."""

    def __init__(self, wheel_type: WheelType) -> None:
        self.type = wheel_type
        order = SINGLE_ZERO_ORDER if wheel_type is WheelType.SINGLE_ZERO else DOUBLE_ZERO_ORDER
        self.pockets: tuple[Pocket, ...] = tuple(_pocket(lbl, i) for i, lbl in enumerate(order))
        self._by_label = {p.label: p for p in self.pockets}

    @property
    def has_double_zero_pocket(self) -> bool:
        return self.type is not WheelType.SINGLE_ZERO

    @property
    def double_zero_voids(self) -> bool:
        return self.type is WheelType.DOUBLE_ZERO_AS_SINGLE

    def pocket(self, label: str | int) -> Pocket:
        """The pocket printed ``label`` ("00", "17" or 17)."""
        key = str(label)
        try:
            return self._by_label[key]
        except KeyError:
            raise ValueError(f"no pocket {label!r} on a {self.type.value} wheel") from None

    def neighbours(self, label: str | int, each_side: int = 2) -> tuple[Pocket, ...]:
        """The pocket and ``each_side`` pockets on either side of it, clockwise order
        (Five Adjacent Numbers, 617a.3(e)(1))."""
        centre = self.pocket(label).position
        n = len(self.pockets)
        return tuple(self.pockets[(centre + k) % n] for k in range(-each_side, each_side + 1))

    def spin(self, source: RandomSource) -> Spin:
        bound = len(self.pockets)
        value = source.randbelow(bound)
        pocket = self.pockets[value]
        return Spin(pocket, bound, value, self.double_zero_voids and pocket.label == DOUBLE_ZERO)

    def spin_until_valid(self, source: RandomSource) -> list[Spin]:
        """Spin, re-spinning after every void spin; the last spin in the list is valid."""
        spins = [self.spin(source)]
        while spins[-1].void:
            spins.append(self.spin(source))
        return spins


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


@dataclass(frozen=True, slots=True)
class BigSixSpin:
    """One spin of the Big Six Wheel: the section's clockwise index and its symbol."""

    section: int
    symbol: BigSixSymbol
    bound: int
    value: int


class BigSixWheel:
    """The Big Six Wheel of 619a.1: 54 equal sections."""

    sections: tuple[BigSixSymbol, ...] = BIG_SIX_ORDER

    def spin(self, source: RandomSource) -> BigSixSpin:
        bound = len(self.sections)
        value = source.randbelow(bound)
        return BigSixSpin(value, self.sections[value], bound, value)


BIG_SIX_WHEEL = BigSixWheel()
