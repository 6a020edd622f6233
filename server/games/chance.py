"""Chance requests: what an engine asks its caller for instead of rolling dice itself.

Like OpenSpiel's chance nodes (DESIGN.md principle 2): the engine says which card or wheel
result it needs next; the table answers from the virtual shoe or wheel (``rng``), from a
card-reading shoe or automated wheel (devices), or from a scripted list (tests, par sheets).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CardRequest", "HoleRangeRequest", "SpinRequest"]


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
