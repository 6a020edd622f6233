"""Money and the rounding policy (docs/interpretations.md, "Money")."""

import math
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.games.errors import BAD_AMOUNT, IllegalAction
from server.games.money import check_amount, for_one, returned, to_odds


@pytest.mark.parametrize(
    ("stake", "net", "expected"),
    [
        (100, Fraction(1), 200),  # even money
        (100, to_odds(19, 20), 195),  # Banker less 5% vigorish, 631a.13
        (105, to_odds(19, 20), 204),  # 99.75 won: rounded down to 99
        (5, to_odds(1, 2), 7),  # 2.5 won on a 1 to 2 payout: 2 paid
        (100, Fraction(0), 100),  # push
        (100, Fraction(-1), 0),  # loss
        (5, Fraction(-1, 2), 2),  # surrender half of an odd stake: the half cent stays
        (10, for_one(50), 500),  # "50 for 1" includes the wager
    ],
)
def test_returned_rounds_down_to_the_minor_unit(stake: int, net: Fraction, expected: int) -> None:
    assert returned(stake, net) == expected


def test_a_wager_cannot_lose_more_than_itself() -> None:
    with pytest.raises(ValueError):
        returned(100, Fraction(-2))


@pytest.mark.parametrize("bad", [0, -5, 2.5, 5.0, "5", None, True, [5]])
def test_check_amount_rejects_what_is_not_a_positive_whole_amount(bad: object) -> None:
    with pytest.raises(IllegalAction) as info:
        check_amount(bad)
    assert info.value.code == BAD_AMOUNT
    assert info.value.value == bad


def test_check_amount_accepts_huge_whole_amounts_for_limits_to_judge() -> None:
    assert check_amount(10**30) == 10**30


@given(
    stake=st.integers(1, 10**12),
    net=st.fractions(min_value=-1, max_value=10_000, max_denominator=1_000),
)
def test_returned_is_exactly_the_floor_of_the_exact_amount(stake: int, net: Fraction) -> None:
    """The integer arithmetic equals floor(stake × (1 + net)) computed with exact fractions."""
    assert returned(stake, net) == math.floor(Fraction(stake) * (1 + net))
