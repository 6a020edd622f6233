"""Chance requests: what an engine asks its caller for instead of rolling dice itself.

Like OpenSpiel's chance nodes (docs/architecture.md, principle 2): the engine says which card
or wheel result it needs next; the table answers from the virtual shoe or wheel (``rng``), from a
card-reading shoe or automated wheel (devices), or from a scripted list (tests, par sheets).
Every answer is journaled before it takes effect, so replay and recovery rebuild it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["CardRequest", "HoleRangeRequest", "MysteryHitRequest", "SpinRequest"]


@dataclass(frozen=True, slots=True)
class CardRequest:
    """The next card is needed for ``target`` (a hand or a burn), dealt face up or down."""

    target: str
    face_up: bool = True


@dataclass(frozen=True, slots=True)
class SpinRequest:
    """A wheel result is needed."""

    wheel: str


@dataclass(frozen=True, slots=True)
class HoleRangeRequest:
    """The hole-card reader must report the range of the dealer's face-down card (685a)."""

    target: str = "dealer"


@dataclass(frozen=True, slots=True)
class MysteryHitRequest:
    """A Must-Hit-By Mystery Bonus meter needs its hit value (631b.6(c)(3)): a whole number of
    minor units drawn uniformly from ``low`` to ``high``, both included (docs/interpretations.md,
    11). The answer is a secret: journaled like a card, never sent to any client."""

    low: int
    high: int

    def answer(self, randbelow: Callable[[int], int]) -> int:
        """The hit value from ``randbelow(n) -> 0..n-1`` (the certified RNG, or a script);
        ``ValueError`` if ``randbelow`` answers outside its range."""
        span = self.high - self.low + 1
        value = randbelow(span)
        if not 0 <= value < span:
            raise ValueError(f"randbelow({span}) returned {value}")
        return self.low + value

    def check(self, value: object) -> int:
        """``value`` if it answers this request, else ``ValueError`` (a wrong journal or a
        caller's bug: the hit value is never guessed)."""
        if type(value) is not int or not self.low <= value <= self.high:
            raise ValueError(f"a Mystery Bonus hit value is a whole number {self}: {value!r}")
        return value
