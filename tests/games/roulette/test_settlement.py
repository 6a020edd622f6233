"""Roulette settlement: winning and losing compartments for every wager kind on each wheel
type, the zero rules (617a.4(b), (c)(3)) and Five Adjacent Numbers (617a.3(e)(1)(iii))."""

from __future__ import annotations

from fractions import Fraction

import pytest

from rng.wheel_layouts import WheelType
from server.games.errors import InvariantViolation
from server.games.roulette import is_void_spin, outcome, parse_spot, settle_all
from server.games.wagers import Outcome, Result, Wager

SZ, DZ, DZS = WheelType.SINGLE_ZERO, WheelType.DOUBLE_ZERO, WheelType.DOUBLE_ZERO_AS_SINGLE

# (spot, a winning compartment, a losing compartment, net odds of 617a.4(a))
CASES = [
    ("straight:17", "17", "18", 35),
    ("straight:0", "0", "17", 35),
    ("split:17-20", "20", "18", 17),
    ("split:0-2", "0", "3", 17),
    ("three_numbers:13-14-15", "14", "16", 11),
    ("three_numbers:0-1-2", "0", "3", 11),
    ("four_numbers:17-18-20-21", "21", "19", 8),
    ("six_numbers:1-2-3-4-5-6", "6", "7", 5),
    ("column:1", "34", "36", 2),
    ("column:2", "2", "0", 2),
    ("dozen:3", "25", "24", 2),
    ("dozen:1", "12", "0", 2),
    ("red", "1", "2", 1),
    ("black", "2", "0", 1),
    ("odd", "35", "0", 1),
    ("even", "36", "0", 1),
    ("low", "18", "0", 1),
    ("high", "19", "0", 1),
]


@pytest.mark.parametrize("wheel", [SZ, DZ, DZS])
@pytest.mark.parametrize(("spot", "winner", "loser", "odds"), CASES)
def test_wins_and_loses_617a_4_a(
    wheel: WheelType, spot: str, winner: str, loser: str, odds: int
) -> None:
    placement = parse_spot(spot, wheel)
    won = outcome(placement, winner)
    assert won.result is Result.WIN and won.net == odds
    assert outcome(placement, loser).result is Result.LOSE


@pytest.mark.parametrize(
    ("spot", "winner", "loser", "odds"),
    [
        ("straight:00", "00", "0", 35),
        ("split:0-00", "00", "1", 17),
        ("three_numbers:0-2-00", "00", "1", 11),
        ("three_numbers:00-2-3", "3", "0", 11),
        ("first_five", "00", "4", 6),
        ("first_five", "3", "36", 6),
    ],
)
def test_double_zero_wagers_617a_4_a(spot: str, winner: str, loser: str, odds: int) -> None:
    placement = parse_spot(spot, DZ)
    assert outcome(placement, winner) == Outcome.win(Fraction(odds))
    assert outcome(placement, loser).result is Result.LOSE


@pytest.mark.parametrize(("wheel", "zeros"), [(SZ, ["0"]), (DZ, ["0", "00"]), (DZS, ["0"])])
@pytest.mark.parametrize(
    "spot", ["red", "black", "odd", "even", "low", "high", "column:1", "column:2", "dozen:1"]
)
def test_zero_loses_the_outside_wagers_617a_4_b_c_3(
    wheel: WheelType, zeros: list[str], spot: str
) -> None:
    # 617a.4(b) (single and double zero) and 617a.4(c)(3) (double zero used as single zero):
    # lost outright — no half back, no imprisonment.
    for zero in zeros:
        result = outcome(parse_spot(spot, wheel), zero)
        assert result.result is Result.LOSE and result.net == -1


def test_00_is_a_void_spin_only_on_double_zero_as_single_617a_4_c_2() -> None:
    assert is_void_spin("00", DZS)
    assert not is_void_spin("00", DZ)
    assert not is_void_spin("0", DZS)
    with pytest.raises(InvariantViolation):
        settle_all([], "00", DZS)
    with pytest.raises(InvariantViolation):
        settle_all([], "00", SZ)


@pytest.mark.parametrize(
    ("wheel", "centre", "landed", "returned"),
    [
        # 617a.3(e)(1)(iii), 617a.5(d): 500 = five Straight Wagers of 100 on 3 26 0 32 15.
        (SZ, "0", "0", 3600),  # 100 + 35 x 100; the other four fifths lose
        (SZ, "0", "15", 3600),
        (SZ, "0", "3", 3600),
        (SZ, "0", "19", 0),
        (DZ, "00", "00", 3600),
        (DZ, "00", "10", 3600),
        (DZ, "00", "0", 0),
        (DZS, "17", "22", 3600),
        (DZS, "17", "0", 0),
    ],
)
def test_five_adjacent_is_five_straights_617a_3_e_1_iii(
    wheel: WheelType, centre: str, landed: str, returned: int
) -> None:
    placement = parse_spot(f"five_adjacent:{centre}", wheel)
    wager = Wager("b", "p", placement.spot, 500)
    (settlement,) = settle_all([(wager, placement)], landed, wheel)
    assert settlement.returned == returned
    # Equal to five Straight Wagers of one fifth each, settled separately.
    straights = [
        (Wager(f"b{n}", "p", f"straight:{n}", 100), parse_spot(f"straight:{n}", wheel))
        for n in placement.numbers
    ]
    assert sum(s.returned for s in settle_all(straights, landed, wheel)) == returned
