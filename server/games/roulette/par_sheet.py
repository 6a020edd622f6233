"""Exact par sheets of every roulette wager on each wheel type (617a.3, 617a.4).

Each row is an exact enumeration, not a simulation: every legal placement of the wager on the
table's layout (``placements``) × every compartment of the wheel, each compartment with its
exact probability, settled by the same ``outcome`` function that settles real rounds. The row
is the average over placements, each equally weighted; every placement of a kind has the same
edge on every wheel (a test checks it), so the average is the edge of any one placement.

Probabilities of the compartments:

- single zero: each of the 37 compartments 1/37 (617a.1(c));
- double zero: each of the 38 compartments 1/38 (617a.1(d));
- double zero used as single zero: a ball in 00 is "no spin" and the wheel is re-spun with the
  same wagers (617a.4(c)(2)). Spins are independent and uniform over 38, so the result that
  settles the wagers is the first non-00 one: P(k) = Σ_{j≥0} (1/38)^j · 1/38 = 1/37 for each
  of the 37 other compartments. 00 settles nothing and is left out.
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from fractions import Fraction

from rng.wheel_layouts import WheelType, wheel_order
from server.games.par_sheet import OutcomeLine, ParSheetRow, house_edge_of
from server.games.roulette.layout import WagerKind, placements
from server.games.roulette.settlement import is_void_spin, outcome
from server.games.wagers import Result

__all__ = ["pocket_probabilities", "roulette_par_sheet", "roulette_row"]

_WHEEL_METHOD = {
    WheelType.SINGLE_ZERO: "37 compartments, each 1/37",
    WheelType.DOUBLE_ZERO: "38 compartments, each 1/38",
    WheelType.DOUBLE_ZERO_AS_SINGLE: (
        "37 compartments, each 1/37 (00 is void and re-spun, 617a.4(c)(2): "
        "sum_j (1/38)^j * 1/38 = 1/37)"
    ),
}


def pocket_probabilities(wheel: WheelType) -> dict[str, Fraction]:
    """The exact probability that each compartment is the result that settles the wagers."""
    valid = [label for label in wheel_order(wheel) if not is_void_spin(label, wheel)]
    return {label: Fraction(1, len(valid)) for label in valid}


def roulette_row(kind: WagerKind, wheel: WheelType) -> ParSheetRow | None:
    """The par-sheet row of ``kind`` on ``wheel``; ``None`` where the wager does not exist
    (First Five Numbers without 00, docs/interpretations.md, 13)."""
    legal = list(placements(kind, wheel))
    if not legal:
        return None
    probabilities = pocket_probabilities(wheel)
    weight = Fraction(1, len(legal))
    lines: dict[tuple[Result, Fraction], Fraction] = defaultdict(Fraction)
    for placement in legal:
        for label, probability in probabilities.items():
            result = outcome(placement, label)
            lines[(result.result, result.net)] += weight * probability
    outcome_lines = tuple(
        OutcomeLine(result.value, probability, net)
        for (result, net), probability in sorted(lines.items(), key=lambda item: -item[0][1])
    )
    unit = "centre" if kind is WagerKind.FIVE_ADJACENT else "placement"
    over = f"; each of {len(legal)} legal {unit}s, averaged" if len(legal) > 1 else ""
    return ParSheetRow(
        variant=f"roulette {wheel.value}",
        wager=kind.value,
        paytable=None,
        house_edge_exact=house_edge_of(outcome_lines),
        method=f"exact enumeration: {_WHEEL_METHOD[wheel]}{over}",
        outcomes=outcome_lines,
    )


def roulette_par_sheet(wheels: tuple[WheelType, ...] = tuple(WheelType)) -> list[ParSheetRow]:
    """Every wager of 617a.3 on each of ``wheels``, in the order of 617a.4(a)."""
    rows = []
    for wheel in wheels:
        for kind in WagerKind:
            row = roulette_row(kind, wheel)
            if row is not None:
                rows.append(row)
    return rows


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``croupier par-sheet roulette``."""
    parser.add_argument(
        "--wheel",
        choices=[wheel.value for wheel in WheelType],
        help="one wheel type (default: all three)",
    )


def compute(args: argparse.Namespace) -> list[ParSheetRow]:
    wheels = (WheelType(args.wheel),) if args.wheel else tuple(WheelType)
    return roulette_par_sheet(wheels)
