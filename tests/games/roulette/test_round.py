"""The roulette round engine: phases, the wheel result as a chance answer, the void-and-respin
rule of 617a.4(c)(2), "no spin" (617a.6), limits and rejections."""

from __future__ import annotations

import pytest

from rng import RouletteWheel, seeded_source
from rng.wheel_layouts import WheelType
from server.games.chance import SpinRequest
from server.games.errors import (
    ABOVE_MAXIMUM,
    BAD_AMOUNT,
    BELOW_MINIMUM,
    BETTING_CLOSED,
    DUPLICATE_BET_ID,
    NOT_IN_PHASE,
    UNKNOWN_BET,
    WAGER_NOT_OFFERED,
    IllegalAction,
    InvariantViolation,
)
from server.games.events import (
    BetAccepted,
    BetCancelled,
    BettingClosed,
    BettingOpened,
    RoundSettled,
    RoundVoided,
    WagerSettled,
)
from server.games.roulette import (
    FIVE_ADJACENT_AMOUNT,
    ILLEGAL_PLACEMENT,
    BallLanded,
    RouletteRound,
    RouletteTable,
    SpinVoided,
)
from server.games.round import Phase
from server.games.wagers import Result, Wager

SZ, DZ, DZS = WheelType.SINGLE_ZERO, WheelType.DOUBLE_ZERO, WheelType.DOUBLE_ZERO_AS_SINGLE


def _round(wheel: WheelType, **table: object) -> RouletteRound:
    engine = RouletteRound(RouletteTable(wheel, **table), "r1")  # type: ignore[arg-type]
    assert engine.open() == (BettingOpened("r1"),)
    return engine


def _settled(events: object) -> dict[str, int]:
    assert isinstance(events, tuple)
    return {
        e.settlement.wager.bet_id: e.settlement.returned
        for e in events
        if isinstance(e, WagerSettled)
    }


def test_a_full_round_617a_5() -> None:
    engine = _round(DZ)
    events = engine.place(Wager("b1", "alice", "split:20-17", 500))
    assert events == (BetAccepted("r1", Wager("b1", "alice", "split:17-20", 500)),)  # canonical
    engine.place(Wager("b2", "alice", "red", 1000))
    engine.place(Wager("b3", "bob", "straight:00", 100))
    assert engine.pending() is None
    assert engine.close_betting() == (BettingClosed("r1"),)  # 617a.5(b) "no more bets"
    assert engine.phase is Phase.DEALING
    assert engine.pending() == SpinRequest("double_zero")
    events = engine.provide_spin("20")
    assert events[0] == BallLanded("r1", 0, "20")
    assert _settled(events) == {"b1": 500 * 18, "b2": 0, "b3": 0}  # 20 is black
    assert events[-1] == RoundSettled("r1", "20 black")
    assert engine.phase is Phase.SETTLED
    assert engine.pending() is None


def test_losing_wagers_are_collected_before_winners_are_paid_617a_5_e() -> None:
    engine = _round(SZ)
    for i, spot in enumerate(["red", "black", "straight:4", "even", "odd"]):
        engine.place(Wager(f"b{i}", "p", spot, 100))
    engine.close_betting()
    settled = [e.settlement for e in engine.provide_spin("4") if isinstance(e, WagerSettled)]
    assert [s.wager.spot for s in settled] == ["red", "odd", "black", "straight:4", "even"]
    assert [s.outcome.result for s in settled] == [Result.LOSE] * 2 + [Result.WIN] * 3


def test_00_wins_on_a_double_zero_wheel_617a_4_b() -> None:
    engine = _round(DZ)
    engine.place(Wager("b1", "p", "straight:00", 100))
    engine.place(Wager("b2", "p", "first_five", 100))
    engine.place(Wager("b3", "p", "even", 100))
    engine.close_betting()
    assert _settled(engine.provide_spin("00")) == {"b1": 3600, "b2": 700, "b3": 0}


def test_void_and_respin_on_double_zero_as_single_617a_4_c_2() -> None:
    engine = _round(DZS)
    engine.place(Wager("b1", "p", "red", 100))
    engine.place(Wager("b2", "p", "straight:0", 100))
    engine.close_betting()
    wagers_before = engine.wagers
    for spin in range(3):  # 00 three times running: each spin void, same wagers, asked again
        events = engine.provide_spin("00")
        assert events == (
            BallLanded("r1", spin, "00"),
            SpinVoided(
                "r1",
                spin,
                "00",
                "no spin: 00 on a double zero wheel used as single zero, 617a.4(c)(2)",
            ),
        )
        assert engine.phase is Phase.DEALING
        assert engine.pending() == SpinRequest("double_zero_as_single")
        assert engine.wagers == wagers_before
    events = engine.provide_spin("0")  # 617a.4(c)(3): red loses on 0
    assert events[0] == BallLanded("r1", 3, "0")
    assert _settled(events) == {"b1": 0, "b2": 3600}


def test_no_spin_617a_6() -> None:
    engine = _round(SZ)
    engine.place(Wager("b1", "p", "odd", 100))
    engine.close_betting()
    assert engine.no_spin("ball left the wheel, 617a.6(c)") == (
        SpinVoided("r1", 0, None, "ball left the wheel, 617a.6(c)"),
    )
    assert engine.pending() == SpinRequest("single_zero")
    assert _settled(engine.provide_spin("1")) == {"b1": 200}


@pytest.mark.parametrize(("wheel", "label"), [(SZ, "00"), (SZ, "37"), (DZ, "x"), (DZS, 17)])
def test_a_result_not_on_the_wheel_is_a_device_fault(wheel: WheelType, label: object) -> None:
    engine = _round(wheel)
    engine.place(Wager("b1", "p", "odd", 100))
    engine.close_betting()
    with pytest.raises(InvariantViolation):
        engine.provide_spin(label)  # type: ignore[arg-type]
    assert engine.phase is Phase.DEALING  # nothing changed


def test_driven_by_the_virtual_wheel() -> None:
    # The chance answer comes from rng.wheels: every spin of spin_until_valid is provided.
    source = seeded_source(3)
    wheel = RouletteWheel(WheelType.DOUBLE_ZERO_AS_SINGLE)
    for n in range(200):
        engine = RouletteRound(RouletteTable(DZS), f"r{n}")
        engine.open()
        engine.place(Wager("b", "p", "straight:0", 100))
        engine.close_betting()
        for spin in wheel.spin_until_valid(source):
            assert engine.pending() is not None
            engine.provide_spin(spin.pocket.label)
        assert engine.phase is Phase.SETTLED


@pytest.mark.parametrize(
    ("command", "phase_setup", "code"),
    [
        ("place", "unopened", NOT_IN_PHASE),
        ("place", "closed", BETTING_CLOSED),
        ("cancel", "closed", BETTING_CLOSED),
        ("close_betting", "unopened", NOT_IN_PHASE),
        ("close_betting", "closed", NOT_IN_PHASE),
        ("provide_spin", "betting", NOT_IN_PHASE),
        ("provide_spin", "settled", NOT_IN_PHASE),
        ("open", "betting", NOT_IN_PHASE),
        ("void", "settled", NOT_IN_PHASE),
    ],
)
def test_commands_out_of_phase_are_rejected(command: str, phase_setup: str, code: str) -> None:
    engine = RouletteRound(RouletteTable(SZ), "r1")
    if phase_setup != "unopened":
        engine.open()
        engine.place(Wager("b1", "p", "red", 100))
    if phase_setup in ("closed", "settled"):
        engine.close_betting()
    if phase_setup == "settled":
        engine.provide_spin("1")
    calls = {
        "place": lambda: engine.place(Wager("b2", "p", "black", 100)),
        "cancel": lambda: engine.cancel("p", "b1"),
        "close_betting": engine.close_betting,
        "provide_spin": lambda: engine.provide_spin("1"),
        "open": engine.open,
        "void": lambda: engine.void("x"),
    }
    with pytest.raises(IllegalAction) as info:
        calls[command]()
    assert info.value.code == code


def test_cancel_and_duplicates() -> None:
    engine = _round(SZ)
    wager = Wager("b1", "p", "red", 100)
    engine.place(wager)
    with pytest.raises(IllegalAction) as info:
        engine.place(Wager("b1", "p", "black", 100))
    assert info.value.code == DUPLICATE_BET_ID
    engine.place(Wager("b1", "q", "black", 100))  # bet ids are per player
    assert engine.cancel("p", "b1") == (BetCancelled("r1", wager),)
    with pytest.raises(IllegalAction) as info:
        engine.cancel("p", "b1")
    assert info.value.code == UNKNOWN_BET
    engine.close_betting()
    assert _settled(engine.provide_spin("2")) == {"b1": 200}


def test_void_round_returns_every_wager() -> None:
    engine = _round(DZ)
    engine.place(Wager("b1", "p", "red", 100))
    engine.place(Wager("b2", "p", "straight:5", 250))
    engine.close_betting()
    events = engine.void("wheel fault")
    assert _settled(events) == {"b1": 100, "b2": 250}
    assert all(
        e.settlement.outcome.result is Result.VOID for e in events if isinstance(e, WagerSettled)
    )
    assert events[-1] == RoundVoided("r1", "wheel fault")
    assert engine.phase is Phase.VOIDED


def test_illegal_placement_is_rejected_and_nothing_changes_617a_3_e_2() -> None:
    engine = _round(DZ)
    assert not engine.can_place(Wager("b1", "p", "split:1-5", 100))
    with pytest.raises(IllegalAction) as info:
        engine.place(Wager("b1", "p", "split:1-5", 100))
    assert info.value.code == ILLEGAL_PLACEMENT
    assert "share a side" in info.value.message
    assert engine.wagers == ()


@pytest.mark.parametrize("amount", [0, -5, 2.5, "100", True])
def test_bad_amounts(amount: object) -> None:
    engine = _round(SZ)
    with pytest.raises(IllegalAction) as info:
        engine.place(Wager("b1", "p", "red", amount))  # type: ignore[arg-type]
    assert info.value.code == BAD_AMOUNT


def test_five_adjacent_offered_only_if_submitted_617a_3_e_1_i() -> None:
    engine = _round(SZ)
    with pytest.raises(IllegalAction) as info:
        engine.place(Wager("b1", "p", "five_adjacent:17", 500))
    assert info.value.code == WAGER_NOT_OFFERED


@pytest.mark.parametrize("amount", [1, 4, 501, 999])
def test_five_adjacent_must_split_into_five_equal_straights_617a_3_e_1_iii(amount: int) -> None:
    engine = _round(SZ, five_adjacent_offered=True)
    with pytest.raises(IllegalAction) as info:
        engine.place(Wager("b1", "p", "five_adjacent:17", amount))
    assert info.value.code == FIVE_ADJACENT_AMOUNT
    assert "617a.3(e)(1)(iii)" in info.value.message


def test_five_adjacent_round_617a_5_d() -> None:
    engine = _round(SZ, five_adjacent_offered=True)
    engine.place(Wager("b1", "p", "five_adjacent:0", 500))  # 3 26 0 32 15
    engine.place(Wager("b2", "p", "five_adjacent:17", 500))  # 2 25 17 34 6
    engine.close_betting()
    assert _settled(engine.provide_spin("26")) == {"b1": 3600, "b2": 0}


def test_limits_617a_1_f_3() -> None:
    engine = _round(SZ, five_adjacent_offered=True, minimum=100, maximum=10_000)
    for spot, amount, code in [
        ("red", 99, BELOW_MINIMUM),
        ("red", 10_001, ABOVE_MAXIMUM),
        ("five_adjacent:5", 495, BELOW_MINIMUM),  # each Straight Wager is 99
        ("five_adjacent:5", 50_005, ABOVE_MAXIMUM),
    ]:
        with pytest.raises(IllegalAction) as info:
            engine.place(Wager("b", "p", spot, amount))
        assert info.value.code == code
    engine.place(Wager("b1", "p", "five_adjacent:5", 500))
    engine.place(Wager("b2", "p", "red", 10_000))


def test_roulette_deals_no_cards() -> None:
    from rng.cards import parse_cards

    engine = _round(SZ)
    with pytest.raises(InvariantViolation):
        engine.provide_card(parse_cards("AS")[0])
