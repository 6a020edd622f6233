"""Wheel orders and colours: 617a.1(c), (d), (e) and 619a.1(a), (b)."""

from collections import Counter

import pytest

from rng import BIG_SIX_WHEEL, BigSixSymbol, PocketColour, RouletteWheel, WheelType, seeded_source
from rng.wheels import DOUBLE_ZERO_ORDER, SINGLE_ZERO_ORDER


def test_single_zero_order_617a_1_c() -> None:
    wheel = RouletteWheel(WheelType.SINGLE_ZERO)
    labels = [p.label for p in wheel.pockets]
    assert len(labels) == 37
    assert labels[:6] == ["0", "32", "15", "19", "4", "21"]
    assert labels[-3:] == ["35", "3", "26"]
    assert sorted(labels, key=int) == [str(n) for n in range(37)]


def test_double_zero_order_617a_1_d() -> None:
    wheel = RouletteWheel(WheelType.DOUBLE_ZERO)
    labels = [p.label for p in wheel.pockets]
    assert len(labels) == 38
    assert labels[:5] == ["0", "28", "9", "26", "30"]
    assert labels[18:21] == ["1", "00", "27"]
    assert labels[-1] == "2"
    assert sorted(x for x in labels if x != "00") == sorted(str(n) for n in range(37))


@pytest.mark.parametrize("order", [SINGLE_ZERO_ORDER, DOUBLE_ZERO_ORDER])
def test_colours_alternate_around_the_zeros_617a_1(order: tuple[str, ...]) -> None:
    # 617a.1(c), (d): zeros green, the others "colored alternately red and black".
    wheel = RouletteWheel(WheelType.SINGLE_ZERO if len(order) == 37 else WheelType.DOUBLE_ZERO)
    colours = [p.colour for p in wheel.pockets]
    runs = [c for c in colours if c is not PocketColour.GREEN]
    assert sum(c is PocketColour.RED for c in runs) == 18
    for pocket, nxt in zip(wheel.pockets, wheel.pockets[1:] + wheel.pockets[:1], strict=True):
        if not pocket.is_zero and not nxt.is_zero:
            assert pocket.colour is not nxt.colour, (pocket.label, nxt.label)


def test_double_zero_used_as_single_voids_00_617a_4_c_2() -> None:
    wheel = RouletteWheel(WheelType.DOUBLE_ZERO_AS_SINGLE)
    assert len(wheel.pockets) == 38  # the physical wheel is the double-zero wheel
    source = seeded_source(7)
    voids = 0
    for _ in range(2000):
        spins = wheel.spin_until_valid(source)
        assert not spins[-1].void and spins[-1].pocket.label != "00"
        assert all(s.void and s.pocket.label == "00" for s in spins[:-1])
        voids += len(spins) - 1
    assert voids > 0  # 00 does come up, and is voided every time


def test_big_six_sections_619a_1() -> None:
    sections = BIG_SIX_WHEEL.sections
    assert len(sections) == 54
    counts = Counter(sections)
    assert counts == {
        BigSixSymbol.ONE: 23,
        BigSixSymbol.TWO: 15,
        BigSixSymbol.FIVE: 8,
        BigSixSymbol.TEN: 4,
        BigSixSymbol.TWENTY: 2,
        BigSixSymbol.JOKER: 1,
        BigSixSymbol.FLAG: 1,
    }
    assert sections[0] is BigSixSymbol.JOKER
    assert sections[27] is BigSixSymbol.FLAG
    assert [s.value for s in sections[:8]] == ["joker", "$1", "$2", "$1", "$5", "$2", "$1", "$10"]
    assert [s.value for s in sections[-4:]] == ["$5", "$1", "$2", "$1"]


def test_neighbours_wrap_around_617a_3_e() -> None:
    wheel = RouletteWheel(WheelType.SINGLE_ZERO)
    assert [p.label for p in wheel.neighbours(0)] == ["3", "26", "0", "32", "15"]
    dz = RouletteWheel(WheelType.DOUBLE_ZERO)
    assert [p.label for p in dz.neighbours("00")] == ["13", "1", "00", "27", "10"]
    with pytest.raises(ValueError, match="no pocket '00'"):
        wheel.pocket("00")
