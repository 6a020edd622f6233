"""Roulette wager placement: 617a.3(e) layout geometry, zero groups, Five Adjacent Numbers."""

from __future__ import annotations

from collections import Counter

import pytest

from rng.wheel_layouts import DOUBLE_ZERO_ORDER, SINGLE_ZERO_ORDER, WheelType
from server.games.errors import UNKNOWN_WAGER, WAGER_NOT_OFFERED, IllegalAction
from server.games.roulette import (
    ILLEGAL_PLACEMENT,
    MALFORMED_SPOT,
    NUMBER_NOT_ON_LAYOUT,
    PAYOUT_ODDS,
    WagerKind,
    parse_spot,
    placements,
)

SZ, DZ, DZS = WheelType.SINGLE_ZERO, WheelType.DOUBLE_ZERO, WheelType.DOUBLE_ZERO_AS_SINGLE
ALL = (SZ, DZ, DZS)


def _cell(n: int) -> tuple[int, int]:
    """(row, column) of n on the three-column layout, computed independently."""
    return ((n - 1) // 3, (n - 1) % 3)


def _covers(spot: str, wheel: WheelType) -> set[str]:
    return set(parse_spot(spot, wheel).numbers)


# --- every kind on every wheel: what it covers (617a.3(e)(1)–(14)) -------------------------

RED = {1, 3, 5, 7, 9, 12, 14, 16, 18, 19, 21, 23, 25, 27, 30, 32, 34, 36}


@pytest.mark.parametrize("wheel", ALL)
@pytest.mark.parametrize(
    ("spot", "expected"),
    [
        ("straight:17", {17}),  # 617a.3(e)(1)
        ("straight:0", {0}),
        ("split:17-20", {17, 20}),  # 617a.3(e)(2), vertical
        ("split:20-21", {20, 21}),  # horizontal
        ("split:2-0", {0, 2}),  # 0 borders 1 and 2 on every layout
        ("three_numbers:34-35-36", {34, 35, 36}),  # 617a.3(e)(3)
        ("three_numbers:0-1-2", {0, 1, 2}),  # 617a.3(e)(3)(i)
        ("four_numbers:1-2-4-5", {1, 2, 4, 5}),  # 617a.3(e)(4)
        ("four_numbers:32-33-35-36", {32, 33, 35, 36}),
        ("six_numbers:31-32-33-34-35-36", set(range(31, 37))),  # 617a.3(e)(6)
        ("column:1", set(range(1, 37, 3))),  # 617a.3(e)(7)
        ("column:3", set(range(3, 37, 3))),
        ("dozen:2", set(range(13, 25))),  # 617a.3(e)(8)
        ("red", RED),  # 617a.3(e)(9)
        ("black", set(range(1, 37)) - RED),  # 617a.3(e)(10)
        ("odd", set(range(1, 37, 2))),  # 617a.3(e)(11)
        ("even", set(range(2, 37, 2))),  # 617a.3(e)(12): 0 is not even
        ("low", set(range(1, 19))),  # 617a.3(e)(13)
        ("high", set(range(19, 37))),  # 617a.3(e)(14)
    ],
)
def test_wager_covers_617a_3_e(wheel: WheelType, spot: str, expected: set[int]) -> None:
    assert _covers(spot, wheel) == {str(n) for n in expected}


@pytest.mark.parametrize(
    ("spot", "expected"),
    [
        ("straight:00", {"00"}),  # 617a.3(e)(1)
        ("split:0-00", {"0", "00"}),  # 617a.3(e)(2): the 0-00 split
        ("split:00-2", {"00", "2"}),
        ("split:3-00", {"00", "3"}),
        ("three_numbers:0-2-00", {"0", "2", "00"}),  # 617a.3(e)(3)(i)
        ("three_numbers:00-2-3", {"00", "2", "3"}),
        ("first_five", {"0", "00", "1", "2", "3"}),  # 617a.3(e)(5)
    ],
)
def test_double_zero_wagers_617a_3_e(spot: str, expected: set[str]) -> None:
    assert _covers(spot, DZ) == expected


@pytest.mark.parametrize("wheel", [SZ, DZS])
@pytest.mark.parametrize(
    "spot", ["straight:00", "split:0-00", "split:00-3", "three_numbers:0-2-00", "five_adjacent:00"]
)
def test_no_00_wager_without_00_617a_1_e_1(wheel: WheelType, spot: str) -> None:
    # 617a.1(e)(1), (e)(2)(i): on a double zero wheel used as single zero the 00 area is covered.
    with pytest.raises(IllegalAction) as info:
        parse_spot(spot, wheel)
    assert info.value.code == NUMBER_NOT_ON_LAYOUT
    assert info.value.value == "00"


@pytest.mark.parametrize("wheel", [SZ, DZS])
def test_first_five_only_with_00_interpretation_13(wheel: WheelType) -> None:
    # docs/interpretations.md, 13
    with pytest.raises(IllegalAction) as info:
        parse_spot("first_five", wheel)
    assert info.value.code == WAGER_NOT_OFFERED
    assert "617a.3(e)(5)" in info.value.message
    assert list(placements(WagerKind.FIRST_FIVE, wheel)) == []


def test_zero_splits_per_layout_617a_3_e_2() -> None:
    # The single zero box borders 1, 2 and 3; on the double zero layout 0 borders 1 and 2 and
    # 00 borders 2 and 3 (the groups of 617a.3(e)(3)(i)); covered 00 leaves 0-1 and 0-2.
    def zero_splits(wheel: WheelType) -> set[str]:
        return {p.spot for p in placements(WagerKind.SPLIT, wheel) if p.numbers & {"0", "00"}}

    assert zero_splits(SZ) == {"split:0-1", "split:0-2", "split:0-3"}
    assert zero_splits(DZ) == {"split:0-1", "split:0-2", "split:0-00", "split:00-2", "split:00-3"}
    assert zero_splits(DZS) == {"split:0-1", "split:0-2"}


def test_grid_geometry_matches_an_independent_adjacency_617a_3_e() -> None:
    # Splits: boxes sharing a side; corners: 2x2 blocks; six lines: two contiguous rows.
    cells = {n: _cell(n) for n in range(1, 37)}
    splits = {
        frozenset({str(a), str(b)})
        for a in cells
        for b in cells
        if a < b and abs(cells[a][0] - cells[b][0]) + abs(cells[a][1] - cells[b][1]) == 1
    }
    corners = {
        frozenset(str(3 * r + c + 1) for r in (row, row + 1) for c in (col, col + 1))
        for row in range(11)
        for col in range(2)
    }
    streets = {frozenset(str(3 * r + c + 1) for c in range(3)) for r in range(12)}
    six_lines = {a | b for a in streets for b in streets if a != b and _adjacent_rows(a, b)}
    for wheel in ALL:
        got = {p.numbers for p in placements(WagerKind.SPLIT, wheel)}
        assert {s for s in got if not s & {"0", "00"}} == splits
        assert {p.numbers for p in placements(WagerKind.FOUR_NUMBERS, wheel)} == corners
        assert {p.numbers for p in placements(WagerKind.SIX_NUMBERS, wheel)} == six_lines
        rows = {p.numbers for p in placements(WagerKind.THREE_NUMBERS, wheel)}
        assert {r for r in rows if not r & {"0", "00"}} == streets
    assert len(splits) == 57 and len(corners) == 22 and len(six_lines) == 11


def _adjacent_rows(a: frozenset[str], b: frozenset[str]) -> bool:
    return abs(min(map(int, a)) - min(map(int, b))) == 3


@pytest.mark.parametrize(
    ("wheel", "kind", "count"),
    [
        (SZ, WagerKind.STRAIGHT, 37),
        (DZ, WagerKind.STRAIGHT, 38),
        (DZS, WagerKind.STRAIGHT, 37),
        (SZ, WagerKind.SPLIT, 60),
        (DZ, WagerKind.SPLIT, 62),
        (DZS, WagerKind.SPLIT, 59),
        (SZ, WagerKind.THREE_NUMBERS, 13),
        (DZ, WagerKind.THREE_NUMBERS, 15),
        (DZS, WagerKind.THREE_NUMBERS, 13),
        (DZ, WagerKind.FIRST_FIVE, 1),
        (SZ, WagerKind.FIVE_ADJACENT, 37),
        (DZ, WagerKind.FIVE_ADJACENT, 38),
        (DZS, WagerKind.FIVE_ADJACENT, 33),
    ],
)
def test_number_of_placements(wheel: WheelType, kind: WagerKind, count: int) -> None:
    assert len(list(placements(kind, wheel))) == count


# --- illegal placements are rejected with their reason -------------------------------------


@pytest.mark.parametrize(
    ("wheel", "spot", "code", "reason"),
    [
        (DZ, "split:1-5", ILLEGAL_PLACEMENT, "617a.3(e)(2)"),  # diagonal, not a side
        (DZ, "split:3-4", ILLEGAL_PLACEMENT, "617a.3(e)(2)"),  # end of one row, start of next
        (DZ, "split:1-3", ILLEGAL_PLACEMENT, "617a.3(e)(2)"),
        (DZ, "split:0-3", ILLEGAL_PLACEMENT, "617a.3(e)(2)"),  # 0 does not border 3 with 00
        (DZ, "split:00-1", ILLEGAL_PLACEMENT, "617a.3(e)(2)"),
        (DZS, "split:0-3", ILLEGAL_PLACEMENT, "617a.3(e)(2)"),
        (SZ, "split:17-17", ILLEGAL_PLACEMENT, "2 different numbers"),
        (SZ, "split:17", ILLEGAL_PLACEMENT, "2 different numbers"),
        (SZ, "three_numbers:2-3-4", ILLEGAL_PLACEMENT, "617a.3(e)(3)"),
        (SZ, "three_numbers:0-2-3", ILLEGAL_PLACEMENT, "617a.3(e)(3)"),  # not a listed group
        (DZ, "three_numbers:0-1-00", ILLEGAL_PLACEMENT, "617a.3(e)(3)"),
        (SZ, "four_numbers:2-3-4-5", ILLEGAL_PLACEMENT, "617a.3(e)(4)"),  # wraps a row
        (SZ, "four_numbers:0-1-2-3", ILLEGAL_PLACEMENT, "617a.3(e)(4)"),
        (SZ, "six_numbers:1-2-3-7-8-9", ILLEGAL_PLACEMENT, "617a.3(e)(6)"),  # rows not contiguous
        (SZ, "six_numbers:2-3-4-5-6-7", ILLEGAL_PLACEMENT, "617a.3(e)(6)"),
        (SZ, "column:0", ILLEGAL_PLACEMENT, "617a.3(e)(7)"),
        (SZ, "dozen:4", ILLEGAL_PLACEMENT, "617a.3(e)(7), (8)"),
        (SZ, "straight:37", NUMBER_NOT_ON_LAYOUT, "no number 37"),
        (SZ, "straight:-1", MALFORMED_SPOT, "not a roulette number"),
        (SZ, "straight:017", MALFORMED_SPOT, "not a roulette number"),
        (SZ, "straight:", MALFORMED_SPOT, "needs its numbers"),
        (SZ, "straight", MALFORMED_SPOT, "needs its numbers"),
        (SZ, "red:1", MALFORMED_SPOT, "takes no numbers"),
        (SZ, "corner:1-2-4-5", UNKNOWN_WAGER, "no wager 'corner'"),
        (SZ, "", UNKNOWN_WAGER, "no wager"),
        (DZS, "five_adjacent:1", ILLEGAL_PLACEMENT, "include 00"),  # 36 13 1 00 27
    ],
)
def test_illegal_placement_rejected_with_reason_617a_3_e(
    wheel: WheelType, spot: str, code: str, reason: str
) -> None:
    with pytest.raises(IllegalAction) as info:
        parse_spot(spot, wheel)
    assert info.value.code == code
    assert reason in info.value.message


@pytest.mark.parametrize(
    ("given", "canonical"),
    [
        ("split:20-17", "split:17-20"),
        ("split:00-0", "split:0-00"),
        ("three_numbers:3-00-2", "three_numbers:00-2-3"),
        ("four_numbers:5-4-2-1", "four_numbers:1-2-4-5"),
        ("column:2", "column:2"),
        ("five_adjacent:17", "five_adjacent:17"),
        ("first_five", "first_five"),
    ],
)
def test_canonical_spot(given: str, canonical: str) -> None:
    assert parse_spot(given, DZ).spot == canonical


# --- Five Adjacent Numbers: neighbour sets on both wheel orders, 617a.3(e)(1)(i)-(iii) -----


@pytest.mark.parametrize(
    ("wheel", "centre", "five"),
    [
        # 617a.1(c): 0, 32, 15, 19, 4, ... 12, 35, 3, 26 (clockwise, wrapping round)
        (SZ, "0", ["3", "26", "0", "32", "15"]),
        (SZ, "26", ["35", "3", "26", "0", "32"]),
        (SZ, "32", ["26", "0", "32", "15", "19"]),
        (SZ, "17", ["2", "25", "17", "34", "6"]),
        (SZ, "3", ["12", "35", "3", "26", "0"]),
        # 617a.1(d): 0, 28, 9, ... 13, 1, 00, 27, 10, ... 35, 14, 2
        (DZ, "0", ["14", "2", "0", "28", "9"]),
        (DZ, "2", ["35", "14", "2", "0", "28"]),
        (DZ, "00", ["13", "1", "00", "27", "10"]),
        (DZ, "17", ["20", "32", "17", "5", "22"]),
        (DZS, "17", ["20", "32", "17", "5", "22"]),
        (DZS, "28", ["2", "0", "28", "9", "26"]),
    ],
)
def test_five_adjacent_neighbours_617a_3_e_1(
    wheel: WheelType, centre: str, five: list[str]
) -> None:
    placement = parse_spot(f"five_adjacent:{centre}", wheel)
    assert placement.kind is WagerKind.FIVE_ADJACENT
    assert placement.numbers == frozenset(five)
    assert placement.choice == centre


@pytest.mark.parametrize(("wheel", "order"), [(SZ, SINGLE_ZERO_ORDER), (DZ, DOUBLE_ZERO_ORDER)])
def test_five_adjacent_sets_are_wheel_arcs_617a_3_e_1(
    wheel: WheelType, order: tuple[str, ...]
) -> None:
    # Independently of the implementation: the five numbers are a contiguous arc of the
    # regulated order centred on the chosen number, and each number is in exactly five sets.
    n = len(order)
    seen: Counter[str] = Counter()
    for placement in placements(WagerKind.FIVE_ADJACENT, wheel):
        i = order.index(placement.choice or "")
        assert placement.numbers == {order[(i + k) % n] for k in (-2, -1, 0, 1, 2)}
        seen.update(placement.numbers)
    assert set(seen.values()) == {5} and len(seen) == n


def test_five_adjacent_without_00_excludes_the_arcs_through_00() -> None:
    # 617a.1(e)(2)(i): 00 is not an available wager, so no five-number arc may include it.
    centres = {p.choice for p in placements(WagerKind.FIVE_ADJACENT, DZS)}
    assert set(DOUBLE_ZERO_ORDER) - centres == {"13", "1", "00", "27", "10"}


def test_payout_odds_617a_4_a() -> None:
    expected = {
        "straight": 35,
        "split": 17,
        "three_numbers": 11,
        "four_numbers": 8,
        "first_five": 6,
        "six_numbers": 5,
        "column": 2,
        "dozen": 2,
        "red": 1,
        "black": 1,
        "odd": 1,
        "even": 1,
        "low": 1,
        "high": 1,
    }
    assert {k.value: v for k, v in PAYOUT_ODDS.items()} == expected


def test_rng_wheels_reexports_the_pure_layouts() -> None:
    # rng.wheel_layouts holds the pure data the engines use; rng.wheels (which draws) re-exports
    # it, so the wheel that spins and the engine that settles share one copy of 617a.1/619a.1.
    import rng
    import rng.wheel_layouts as layouts
    import rng.wheels as wheels

    for name in ("DOUBLE_ZERO_ORDER", "SINGLE_ZERO_ORDER", "RED_NUMBERS", "BIG_SIX_ORDER"):
        assert getattr(wheels, name) is getattr(layouts, name)
    for name in ("Pocket", "PocketColour", "WheelType", "BigSixSymbol"):
        assert getattr(rng, name) is getattr(layouts, name) is getattr(wheels, name)
    for wheel_type in WheelType:
        spinning = rng.RouletteWheel(wheel_type)
        assert spinning.pockets == layouts.wheel_pockets(wheel_type)
        for pocket in spinning.pockets:
            assert tuple(p.label for p in spinning.neighbours(pocket.label)) == (
                layouts.neighbours(layouts.wheel_order(wheel_type), pocket.label)
            )
