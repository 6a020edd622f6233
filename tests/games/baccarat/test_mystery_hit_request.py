"""The Must-Hit-By Mystery Bonus hit value is a chance request (631b.6(c)(3);
docs/architecture.md, principle 2): a table's meter asks for it, the round passes the
question on right after "no more bets", and the answer (never an event: it is secret) sets
it."""

from __future__ import annotations

import pytest

from rng.cards import parse_cards
from server.games.baccarat.config import TableConfig
from server.games.baccarat.engine import BaccaratRound, Meters
from server.games.baccarat.events import ProgressiveAwarded
from server.games.chance import CardRequest, MysteryHitRequest
from server.games.errors import InvariantViolation
from server.games.progressives import MYSTERY_BONUS_CONFIGS, MustHitByMeter
from server.games.wagers import Wager

CONFIG = TableConfig(
    side_wagers={"heavenly_9_progressive": None}, mystery_bonus=MYSTERY_BONUS_CONFIGS["B-$5"]
)


def _closed(meters: Meters, *, replay: bool = False) -> BaccaratRound:
    rnd = BaccaratRound(CONFIG, "r", meters, replay=replay)
    rnd.open()
    rnd.place(Wager("b0", "p1", "player", 1000))
    rnd.place(Wager("b1", "p1", "heavenly_9_progressive", 500))
    rnd.close_betting()
    return rnd


def test_the_request_covers_the_configuration_range_in_minor_units() -> None:
    # 631b.6(c)(4) B-$5: $100-$500; the hit lies above the minimum the meter starts at.
    meter = MustHitByMeter(MYSTERY_BONUS_CONFIGS["B-$5"])
    assert meter.hit_value is None
    assert meter.pending() == MysteryHitRequest(10_001, 50_000)
    assert MysteryHitRequest(10_001, 50_000).answer(lambda n: n - 1) == 50_000
    with pytest.raises(ValueError):
        meter.set_hit_value(10_000)
    meter.set_hit_value(10_001)
    assert meter.pending() is None and meter.state()["hit_value"] == 10_001


def test_a_meter_that_paid_asks_again_and_a_restart_keeps_the_question() -> None:
    meter = MustHitByMeter(MYSTERY_BONUS_CONFIGS["B-$5"])
    meter.set_hit_value(10_001)
    assert meter.contribute(500).award == 10_010  # 2% of $5 takes it past $100.01
    assert meter.pending() is not None and "hit_value" not in meter.state()
    again = MustHitByMeter(MYSTERY_BONUS_CONFIGS["B-$5"])
    again.restore(meter.state())
    assert again.pending() == meter.pending() and again.amount == meter.amount


def test_the_round_asks_before_the_first_card_and_sends_nothing() -> None:
    meters = Meters.asking(CONFIG)
    rnd = _closed(meters)
    assert rnd.pending() == MysteryHitRequest(10_001, 50_000)
    with pytest.raises(InvariantViolation):
        rnd.provide_card(parse_cards("9S")[0])  # the hit value first
    with pytest.raises(InvariantViolation):
        rnd.provide_mystery_hit(50_001)  # outside 631b.6(c)(4)'s range: nothing changes
    assert rnd.pending() == MysteryHitRequest(10_001, 50_000)
    assert rnd.provide_mystery_hit(10_001) == ()  # secret: no event
    assert rnd.pending() == CardRequest("player")
    events: list[object] = []
    for card in parse_cards("9S 2H KS 3H"):
        events += rnd.provide_card(card)
    awards = [e for e in events if isinstance(e, ProgressiveAwarded)]
    assert [(a.meter, a.amount) for a in awards] == [("mystery_bonus", 10_010)]
    assert meters.mystery is not None and meters.mystery.hit_value is None
    assert _closed(meters).pending() == MysteryHitRequest(10_001, 50_000)  # asked again


def test_a_round_with_a_hit_value_asks_nothing_and_a_late_answer_is_refused() -> None:
    meters = Meters.asking(CONFIG)
    assert meters.mystery is not None
    meters.mystery.set_hit_value(20_000)
    rnd = _closed(meters)
    assert rnd.pending() == CardRequest("player")
    with pytest.raises(InvariantViolation):
        rnd.provide_mystery_hit(10_001)
    assert meters.mystery.hit_value == 20_000


def test_a_replay_takes_the_journaled_hit_value_over_its_copy() -> None:
    meters = Meters.asking(CONFIG)
    assert meters.mystery is not None
    meters.mystery.set_hit_value(20_000)
    rnd = _closed(meters.copy(CONFIG), replay=True)
    assert rnd.pending() == CardRequest("player")  # a replay asks for nothing ...
    rnd.provide_mystery_hit(10_001)  # ... and takes what the journal recorded
    assert rnd.meters.mystery is not None and rnd.meters.mystery.hit_value == 10_001
    assert meters.mystery.hit_value == 20_000  # the table's meters did not move


def test_a_voided_round_keeps_no_question() -> None:
    rnd = _closed(Meters.asking(CONFIG))
    rnd.void("device fault")
    assert rnd.pending() is None
