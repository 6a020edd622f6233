"""Par sheets: the exact house edge of every wager, as rows of one shape for every game.

Each game's par-sheet module enumerates its outcomes exactly (combinatorially, with card
removal — never Monte Carlo) and prices each wager with **the same settlement code** that
settles real rounds, turning ``Outcome`` odds into probability-weighted results. This module
holds only the row type and its JSON form, shared by ``croupier par-sheet GAME``.

``house_edge`` is minus the expected net result per unit wagered (positive favours the house).
For progressive awards the jackpot is valued at 0 and its probability listed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from fractions import Fraction

__all__ = ["OutcomeLine", "ParSheetRow", "house_edge_of", "row_to_json"]


@dataclass(frozen=True, slots=True)
class OutcomeLine:
    """One way a wager can end: its name, exact probability and net odds per unit staked."""

    name: str
    probability: Fraction
    net: Fraction


@dataclass(frozen=True, slots=True)
class ParSheetRow:
    variant: str
    wager: str
    paytable: str | None
    house_edge_exact: Fraction
    method: str
    outcomes: tuple[OutcomeLine, ...] = field(default=())

    @property
    def house_edge(self) -> float:
        return float(self.house_edge_exact)


def house_edge_of(lines: Iterable[OutcomeLine]) -> Fraction:
    """Minus the expected net per unit staked; the probabilities must sum to exactly 1."""
    lines = tuple(lines)
    total = sum((line.probability for line in lines), Fraction(0))
    if total != 1:
        raise ValueError(f"outcome probabilities sum to {total}, not 1")
    return -sum((line.probability * line.net for line in lines), Fraction(0))


def _fraction_text(value: Fraction) -> str:
    return f"{value.numerator}/{value.denominator}"


def row_to_json(row: ParSheetRow) -> dict[str, object]:
    """The JSON shape of ``croupier par-sheet GAME --json`` (one object per row)."""
    return {
        "variant": row.variant,
        "wager": row.wager,
        "paytable": row.paytable,
        "house_edge": row.house_edge,
        "house_edge_exact": _fraction_text(row.house_edge_exact),
        "method": row.method,
        "outcomes": [
            {
                "name": line.name,
                "probability": float(line.probability),
                "probability_exact": _fraction_text(line.probability),
                "net": _fraction_text(line.net),
            }
            for line in row.outcomes
        ],
    }
