"""Progressive meters (server/games/progressives.py): Heavenly 9 (631b.2(i)), Harmony
(631b.10(j)) and the Must-Hit-By Mystery Bonus (631b.6) with an injected RNG; and how the
engine contributes and pays them."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.games.baccarat.config import TableConfig
from server.games.baccarat.engine import Meters
from server.games.baccarat.events import ProgressiveAwarded, ProgressiveContributed
from server.games.baccarat.paytables import HARMONY_RATES
from server.games.progressives import (
    MYSTERY_BONUS_CONFIGS,
    InMemoryMeter,
    MustHitByMeter,
    ProgressiveMeter,
    harmony_meter,
    heavenly_9_meter,
)
from tests.games.baccarat.baccarat_script import play


def test_heavenly_9_meter_seed_and_increment_keep_fractions() -> None:
    # 631b.2(i): seed/reseed $10,000; increment rate 10%.
    meter: ProgressiveMeter = heavenly_9_meter()
    assert meter.amount == 1_000_000
    c = meter.contribute(505)
    assert c.to_meter == Fraction(101, 2) and meter.amount == Fraction(2_000_101, 2)
    assert meter.pay_jackpot() == 1_000_050  # whole cents paid ...
    assert meter.amount == 1_000_000 + Fraction(1, 2)  # ... the half cent stays on the meter


@pytest.mark.parametrize(
    ("letter", "increment", "reserve"),
    [("A", 15, 3), ("B", 19, 5), ("C", 15, 3), ("D", 15, 3), ("E", 19, 5), ("F", 15, 3),
     ("G", 15, 3), ("H", 19, 5), ("I", 15, 3)],
)  # fmt: skip
def test_harmony_rates_per_paytable(letter: str, increment: int, reserve: int) -> None:
    # 631b.10(j): incrementation and reserve incrementation rates by paytable.
    rates = HARMONY_RATES[letter]
    assert (rates.increment, rates.reserve) == (Fraction(increment, 100), Fraction(reserve, 100))
    meter = harmony_meter(rates.increment, rates.reserve)
    meter.contribute(1000)
    assert meter.amount == 10 * increment and meter.reserve == 10 * reserve
    assert meter.pay_jackpot() == 10 * increment
    assert meter.amount == 10 * reserve and meter.reserve == 0  # the reserve reseeds


def test_meter_rates_are_validated() -> None:
    with pytest.raises(ValueError):
        InMemoryMeter("x", seed=0, increment=Fraction(3, 2))


# 631b.6(c)(4), transcribed: (minimum wager $, minimum $, maximum $, rate %).
MHB = {
    "A-$1": (1, 100, 200, "2"), "A-$2": (2, 100, 200, "1.5"), "A-$5": (5, 100, 250, "1"),
    "B-$1": (1, 100, 500, "5"), "B-$2": (2, 100, 500, "3.5"), "B-$5": (5, 100, 500, "2"),
    "C-$1": (1, 250, 500, "2"), "C-$2": (2, 250, 500, "1.5"), "C-$5": (5, 250, 500, "0.5"),
    "D-$1": (1, 250, 1000, "5"), "D-$2": (2, 250, 1000, "3"), "D-$5": (5, 250, 1000, "2"),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(MHB))
def test_must_hit_by_configurations(name: str) -> None:
    wager, low, high, rate = MHB[name]
    c = MYSTERY_BONUS_CONFIGS[name]
    assert (c.minimum_wager, c.minimum, c.maximum) == (wager * 100, low * 100, high * 100)
    assert c.rate == Fraction(rate) / 100
    # the hit value is drawn uniformly over (minimum, maximum] in whole cents
    asked: list[int] = []
    meter = MustHitByMeter(c, lambda n: asked.append(n) or n - 1)
    assert asked == [(high - low) * 100] and meter.hit_value == high * 100
    assert MustHitByMeter(c, lambda n: 0).hit_value == low * 100 + 1


class ScriptedRng:
    def __init__(self, *values: int) -> None:
        self.values = list(values)
        self.bounds: list[int] = []

    def __call__(self, n: int) -> int:
        self.bounds.append(n)
        return self.values.pop(0)


def test_must_hit_by_pays_the_contribution_that_crosses_the_hit_value() -> None:
    # 631b.6(c)(3), (5)(iv), (7): C-$5: $250-$500, 0.5%; hit value $250.04.
    rng = ScriptedRng(3, 7)
    meter = MustHitByMeter(MYSTERY_BONUS_CONFIGS["C-$5"], rng)
    assert meter.hit_value == 25_004 and meter.amount == 25_000
    assert meter.contribute(499).to_meter == 0  # below the $5 minimum: does not qualify
    first = meter.contribute(500)  # +2.5 cents -> 25002.5, not past 25004
    assert first.award is None and meter.amount == Fraction(50_005, 2)
    second = meter.contribute(500)  # -> 25005: past the hit value
    assert second.award == 25_005
    assert meter.amount == 25_000 and meter.hit_value == 25_008  # reset, fresh hit value
    third = meter.contribute(700)  # 3.5 cents: fractions are kept, nothing lost
    assert third.award is None and meter.amount == Fraction(50_007, 2)
    assert rng.bounds == [25_000, 25_000]


def test_must_hit_by_rejects_an_out_of_range_draw() -> None:
    with pytest.raises(ValueError):
        MustHitByMeter(MYSTERY_BONUS_CONFIGS["A-$1"], lambda n: n)


def test_engine_contributes_and_pays_the_heavenly_9_jackpot() -> None:
    # 631b.2(g)(1), (i): a same-suit tie of three-card nines wins 100% of the meter, this
    # round's contributions included; the meter then reseeds at $10,000.
    config = TableConfig(side_wagers={"heavenly_9_progressive": None})
    meters = Meters.for_table(config)
    played = play(
        config,
        [("banker", 1000), ("heavenly_9_progressive", 505)],
        "KS KS KS KS 9S 9S",
        meters=meters,
    )
    contributed = [e for e in played.events if isinstance(e, ProgressiveContributed)]
    assert [c.to_meter for c in contributed] == [Fraction(101, 2)]
    (award,) = [e for e in played.events if isinstance(e, ProgressiveAwarded)]
    assert (award.bet_id, award.meter, award.amount) == ("b1", "heavenly_9_progressive", 1_000_050)
    assert played.settlement("b1").returned == 0
    assert meters.heavenly_9 is not None and meters.heavenly_9.amount == 1_000_000 + Fraction(1, 2)


def test_engine_pays_the_mystery_bonus_to_the_qualifying_wager() -> None:
    # 631b.6(c)(1)-(3): a Baccarat wager and a qualifying Heavenly 9 Progressive wager; the
    # contribution that crosses the hit value wins the whole Mystery meter.
    config = TableConfig(
        side_wagers={"heavenly_9_progressive": None},
        mystery_bonus=MYSTERY_BONUS_CONFIGS["B-$5"],
    )
    meters = Meters.for_table(config, ScriptedRng(0, 100))  # hit value: $100.01
    played = play(
        config, [("player", 1000), ("heavenly_9_progressive", 500)], "9S 2H KS 3H", meters=meters
    )
    awards = [e for e in played.events if isinstance(e, ProgressiveAwarded)]
    assert [(a.meter, a.amount) for a in awards] == [("mystery_bonus", 10_010)]
    assert meters.mystery is not None and meters.mystery.hit_value == 10_101


def test_progressive_tables_need_their_meters() -> None:
    from server.games.baccarat.config import ConfigError
    from server.games.baccarat.engine import BaccaratRound

    config = TableConfig(side_wagers={"harmony_progressive": "A"})
    with pytest.raises(ConfigError):
        BaccaratRound(config, "r", Meters())
    mystery = TableConfig(
        side_wagers={"heavenly_9_progressive": None}, mystery_bonus=MYSTERY_BONUS_CONFIGS["A-$1"]
    )
    with pytest.raises(ConfigError):
        Meters.for_table(mystery)  # no randbelow: the hit value cannot be drawn


@settings(max_examples=100, deadline=None)
@given(
    wagers=st.lists(st.integers(1, 100_000), max_size=200),
    jackpots=st.lists(st.integers(0, 199), max_size=5),
    letter=st.sampled_from("ABCDEFGHI"),
)
def test_meters_lose_no_contribution(wagers: list[int], jackpots: list[int], letter: str) -> None:
    # rules README "Money": meters keep fractions; contributions in = meter growth + awards.
    rates = HARMONY_RATES[letter]
    meters = [heavenly_9_meter(), harmony_meter(rates.increment, rates.reserve, seed=25_000)]
    for meter in meters:
        start = meter.amount
        added = Fraction(0)
        paid = reseeded = 0
        for i, w in enumerate(wagers):
            c = meter.contribute(w)
            added += c.to_meter + c.to_reserve
            if i in jackpots:
                paid += meter.pay_jackpot()
                reseeded += meter.seed
        assert meter.amount + meter.reserve + paid == start + added + reseeded


@settings(max_examples=100, deadline=None)
@given(
    wagers=st.lists(st.integers(1, 5_000), max_size=300),
    name=st.sampled_from(sorted(MYSTERY_BONUS_CONFIGS)),
    draws=st.lists(st.integers(0, 10**9), min_size=1),
)
def test_must_hit_by_loses_no_contribution(wagers: list[int], name: str, draws: list[int]) -> None:
    config = MYSTERY_BONUS_CONFIGS[name]
    it = iter(draws * 400)
    meter = MustHitByMeter(config, lambda n: next(it) % n)
    added = Fraction(0)
    paid = resets = 0
    for w in wagers:
        c = meter.contribute(w)
        assert (c.to_meter > 0) == (w >= config.minimum_wager)
        added += c.to_meter
        if c.award is not None:
            paid += c.award
            resets += 1
        # the meter never passes its hit value without paying, and never its maximum
        assert meter.amount <= meter.hit_value <= config.maximum
    assert meter.amount + paid == config.minimum * (1 + resets) + added
