"""Chance requests: what an engine asks its caller for instead of rolling dice itself.

Like OpenSpiel's chance nodes (docs/architecture.md, principle 2): the engine says which card
or wheel result it needs next; the table answers from the virtual shoe or wheel (``rng``), from a
card-reading shoe or automated wheel (devices), or from a scripted list (tests, par sheets).
Every answer is journaled before it takes effect, so replay and recovery rebuild it.

Every kind of chance is a ``ChanceRequest``, declared once, with the game that asks it (its
own package). A kind the table answers through the generic path — every kind but the four
built in here, which keep the shoe's, the wheel's and the hole-card reader's own records —
declares all the table needs to answer it without naming it: its ``kind`` (the journal and
the devices name it so), how its answer is written to and read from the journal
(``write``, ``read``), and how the table's virtual device answers it when no device does: a
uniform draw from the table's certified RNG (``outcomes``, then ``outcome`` of the value
drawn; a game never imports a random source). The table journals the answer as one generic
record (``server.journal.records.ChanceAnswered``) and gives it to the round engine's
``provide(request, answer)`` (``server.games.round.ChanceEngine``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

__all__ = [
    "BUILT_IN_KINDS",
    "CardRequest",
    "ChanceRequest",
    "HoleRangeRequest",
    "MysteryHitRequest",
    "SpinRequest",
]


class ChanceRequest:
    """The base of every kind of chance request. A subclass (a frozen dataclass, like the
    ones below) sets ``kind``, a name no other kind has, and, to be answered by the generic
    path, overrides what its answers need:

    - ``outcomes()`` and ``outcome(value)``: the virtual device draws ``value`` uniformly from
      ``0 .. outcomes() - 1`` with the table's certified RNG, and the answer is
      ``outcome(value)``; a kind that does not override them has no virtual answer: only a
      device of a role that ``answers`` it can;
    - ``write(answer)``: the answer as the journal keeps it (JSON: a number, a string, a list
      or a dict of them); ``read(data)``: the answer again from what ``write`` gave, or
      ``ValueError`` when ``data`` cannot answer this request (a wrong journal, a device's
      bad read: never guessed). By default the answer is its own journal form, unchecked.
    """

    __slots__ = ()

    kind: ClassVar[str] = ""

    def outcomes(self) -> int:
        """How many equally likely outcomes the virtual device draws from."""
        raise TypeError(f"{type(self).__name__} has no virtual answer: a device answers it")

    def outcome(self, value: int) -> Any:
        """The answer that the draw ``value`` (``0 <= value < outcomes()``) stands for."""
        raise TypeError(f"{type(self).__name__} has no virtual answer: a device answers it")

    def write(self, answer: Any) -> Any:
        """``answer`` as the journal keeps it (JSON-compatible)."""
        return answer

    def read(self, data: Any) -> Any:
        """The answer ``data`` (from ``write``) stands for; ``ValueError`` if it cannot
        answer this request."""
        return data


@dataclass(frozen=True, slots=True)
class CardRequest(ChanceRequest):
    """The next card is needed for ``target`` (a hand or a burn), dealt face up or down."""

    kind: ClassVar[str] = "card"

    target: str
    face_up: bool = True


@dataclass(frozen=True, slots=True)
class SpinRequest(ChanceRequest):
    """A wheel result is needed."""

    kind: ClassVar[str] = "spin"

    wheel: str


@dataclass(frozen=True, slots=True)
class HoleRangeRequest(ChanceRequest):
    """The hole-card reader must report the range of the dealer's face-down card (685a)."""

    kind: ClassVar[str] = "hole_range"

    target: str = "dealer"


@dataclass(frozen=True, slots=True)
class MysteryHitRequest(ChanceRequest):
    """A Must-Hit-By Mystery Bonus meter needs its hit value (631b.6(c)(3)): a whole number of
    minor units drawn uniformly from ``low`` to ``high``, both included (docs/interpretations.md,
    11). The answer is a secret: journaled like a card, never sent to any client."""

    kind: ClassVar[str] = "mystery_hit"

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


# The kinds answered by the table's own devices (the shoe, the wheel, the hole-card reader,
# a Must-Hit-By meter's draw), with records of their own; every other kind goes the generic
# way.
BUILT_IN_KINDS: tuple[type[ChanceRequest], ...] = (
    CardRequest,
    SpinRequest,
    HoleRangeRequest,
    MysteryHitRequest,
)
