"""Roulette par sheets against independent exact computations (617a.3, 617a.4)."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from rng.wheel_layouts import WheelType
from server.cli.main import main
from server.games.par_sheet import house_edge_of
from server.games.roulette import WagerKind, placements, roulette_par_sheet, roulette_row
from server.games.roulette.par_sheet import pocket_probabilities
from server.games.roulette.settlement import outcome

SZ, DZ, DZS = WheelType.SINGLE_ZERO, WheelType.DOUBLE_ZERO, WheelType.DOUBLE_ZERO_AS_SINGLE

# Independent data: numbers covered and "X to 1" odds of 617a.4(a).
COVERED_AND_ODDS = {
    "straight": (1, 35),
    "split": (2, 17),
    "three_numbers": (3, 11),
    "four_numbers": (4, 8),
    "first_five": (5, 6),
    "six_numbers": (6, 5),
    "column": (12, 2),
    "dozen": (12, 2),
    "red": (18, 1),
    "black": (18, 1),
    "odd": (18, 1),
    "even": (18, 1),
    "low": (18, 1),
    "high": (18, 1),
    "five_adjacent": (5, Fraction(31, 5)),  # five straights of 1/5: 36/5 back, net 31/5
}
IDS = list(COVERED_AND_ODDS)
# Results that settle the wagers: 37 on a single-zero wheel and on a double-zero wheel used as
# single zero (00 is re-spun, so the settling result is uniform on the other 37), 38 otherwise.
SETTLING_RESULTS = {SZ: 37, DZ: 38, DZS: 37}


def _independent_edge(wager: str, wheel: WheelType) -> Fraction:
    covered, odds = COVERED_AND_ODDS[wager]
    n = SETTLING_RESULTS[wheel]
    return -(Fraction(covered, n) * odds - Fraction(n - covered, n))


@pytest.mark.parametrize("wheel", list(WheelType))
def test_every_row_matches_an_independent_exact_value(wheel: WheelType) -> None:
    rows = roulette_par_sheet((wheel,))
    expected_ids = [
        w for w in IDS if w != "first_five" or wheel is DZ
    ]  # docs/interpretations.md, 13
    assert [row.wager for row in rows] == expected_ids
    for row in rows:
        assert row.house_edge_exact == _independent_edge(row.wager, wheel), row.wager
        assert row.variant == f"roulette {wheel.value}"
        assert "exact enumeration" in row.method
        assert sum(line.probability for line in row.outcomes) == 1
        assert house_edge_of(row.outcomes) == row.house_edge_exact


def test_published_figures() -> None:
    # Single zero: every wager 1/37; double zero: 2/38, First Five Numbers 3/38.
    for row in roulette_par_sheet((SZ, DZS)):
        assert row.house_edge_exact == Fraction(1, 37)
        assert f"{row.house_edge:.4%}" == "2.7027%"
    for row in roulette_par_sheet((DZ,)):
        expected = Fraction(3, 38) if row.wager == "first_five" else Fraction(2, 38)
        assert row.house_edge_exact == expected
    assert f"{float(Fraction(3, 38)):.3%}" == "7.895%"


def test_double_zero_as_single_conditions_on_the_valid_result_617a_4_c_2() -> None:
    probabilities = pocket_probabilities(DZS)
    assert "00" not in probabilities and len(probabilities) == 37
    assert set(probabilities.values()) == {Fraction(1, 37)}
    # The geometric series of re-spins: P(result k) = sum_j (1/38)^j * (1/38), exactly 1/37.
    p00 = Fraction(1, 38)
    partial = sum((p00**j * Fraction(1, 38) for j in range(60)), Fraction(0))
    assert Fraction(1, 37) - partial == Fraction(1, 37) * p00**60
    row = roulette_row(WagerKind.STRAIGHT, DZS)
    assert row is not None and "617a.4(c)(2)" in row.method


@pytest.mark.parametrize("wheel", list(WheelType))
@pytest.mark.parametrize("kind", list(WagerKind))
def test_every_placement_has_the_same_edge(wheel: WheelType, kind: WagerKind) -> None:
    # The row averages over placements (five_adjacent: over centres); each one on its own
    # gives the same exact edge, so the average is every placement's edge.
    probabilities = pocket_probabilities(wheel)
    edges = {
        -sum(
            (p * outcome(placement, label).net for label, p in probabilities.items()),
            Fraction(0),
        )
        for placement in placements(kind, wheel)
    }
    if kind is WagerKind.FIRST_FIVE and wheel is not DZ:
        assert edges == set()
    else:
        assert edges == {_independent_edge(kind.value, wheel)}


def test_cli_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["par-sheet", "roulette", "--wheel", "double_zero", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["wager"] for r in rows] == IDS
    first_five = next(r for r in rows if r["wager"] == "first_five")
    assert first_five["house_edge_exact"] == "3/38"
    assert set(first_five) == {
        "variant",
        "wager",
        "paytable",
        "house_edge",
        "house_edge_exact",
        "method",
        "outcomes",
    }
    assert first_five["outcomes"][0] == {
        "name": "win",
        "probability": 5 / 38,
        "probability_exact": "5/38",
        "net": "6/1",
    }


def test_cli_all_wheels_text(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["par-sheet", "roulette"]) == 0
    out = capsys.readouterr().out
    assert out.count("roulette single_zero ") == 14
    assert out.count("roulette double_zero ") == 15
    assert out.count("roulette double_zero_as_single ") == 14
