"""Roulette wheels (617a.1) and the Big Six Wheel (619a.1), in their regulated clockwise order.

A spin is one uniform draw over the wheel's physical compartments or sections, so every
weight comes from the wheel itself, never from scaling.

- Single zero: 37 compartments in the order of 617a.1(c).
- Double zero: 38 compartments in the order of 617a.1(d).
- Double zero used as single zero (617a.1(e)): the double-zero wheel; a ball in 00 voids the
  spin and the wheel is re-spun with the same wagers (617a.4(c)(2)). ``Spin.void`` marks it;
  ``spin_until_valid`` returns every spin, voided ones first, so each is journaled.
- Big Six: 54 sections in the order of 619a.1(b).

The orders, colours and symbols themselves are pure data in ``rng.wheel_layouts`` (re-exported
here) so that the rule engines can use them without importing anything that draws.
"""

from __future__ import annotations

from dataclasses import dataclass

from rng.sources import RandomSource
from rng.wheel_layouts import (
    BIG_SIX_ORDER,
    DOUBLE_ZERO,
    DOUBLE_ZERO_ORDER,
    RED_NUMBERS,
    SINGLE_ZERO_ORDER,
    BigSixSymbol,
    Pocket,
    PocketColour,
    WheelType,
    neighbours,
    wheel_pockets,
)

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
        self.pockets: tuple[Pocket, ...] = wheel_pockets(wheel_type)
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
        order = tuple(p.label for p in self.pockets)
        return tuple(
            self._by_label[lbl] for lbl in neighbours(order, self.pocket(label).label, each_side)
        )

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
