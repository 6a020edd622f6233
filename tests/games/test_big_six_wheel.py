"""The Big Six Wheel (619a): sections, payouts of 619a.3, the round engine and the par sheet."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rng import BIG_SIX_WHEEL, seeded_source
from rng.wheel_layouts import BIG_SIX_ORDER, BigSixSymbol
from server.cli.main import main
from server.games.big_six_wheel import (
    BIG_SIX_SPOTS,
    BigSixRound,
    BigSixTable,
    WheelStopped,
    big_six_outcome,
    big_six_par_sheet,
)
from server.games.chance import SpinRequest
from server.games.errors import (
    BELOW_MINIMUM,
    BETTING_CLOSED,
    UNKNOWN_WAGER,
    IllegalAction,
    InvariantViolation,
)
from server.games.events import RoundSettled, WagerSettled
from server.games.roulette import SpinVoided
from server.games.round import Phase
from server.games.wagers import Result, Wager

# Independent data, from 619a.1(a) and 619a.3: sections per symbol and "X to 1".
SECTIONS_AND_ODDS = {
    "one": (23, 1),
    "two": (15, 2),
    "five": (8, 5),
    "ten": (4, 10),
    "twenty": (2, 20),
    "joker": (1, 45),
    "flag": (1, 45),
}


def _settled(events: object) -> dict[str, int]:
    assert isinstance(events, tuple)
    return {
        e.settlement.wager.bet_id: e.settlement.returned
        for e in events
        if isinstance(e, WagerSettled)
    }


def _round(**table: int) -> BigSixRound:
    engine = BigSixRound(BigSixTable(**table), "r1")
    engine.open()
    return engine


@pytest.mark.parametrize("spot", list(SECTIONS_AND_ODDS))
def test_payouts_619a_3(spot: str) -> None:
    sections, odds = SECTIONS_AND_ODDS[spot]
    symbol = BIG_SIX_SPOTS[spot]
    wins = [s for s in range(54) if big_six_outcome(symbol, s).result is Result.WIN]
    assert len(wins) == sections  # 619a.1(a)
    assert {big_six_outcome(symbol, s).net for s in wins} == {odds}
    assert all(big_six_outcome(symbol, s).net == -1 for s in range(54) if s not in wins)


def test_sections_619a_1_b() -> None:
    assert BIG_SIX_ORDER[0] is BigSixSymbol.JOKER and BIG_SIX_ORDER[27] is BigSixSymbol.FLAG
    assert BIG_SIX_ORDER[13] is BigSixSymbol.TWENTY and BIG_SIX_ORDER[7] is BigSixSymbol.TEN


def test_a_full_round_619a_2() -> None:
    engine = _round()
    engine.place(Wager("b1", "alice", "twenty", 100))
    engine.place(Wager("b2", "alice", "one", 100))
    engine.place(Wager("b3", "bob", "joker", 10))
    engine.close_betting()  # 619a.2(a)
    assert engine.pending() == SpinRequest("big_six")
    events = engine.provide_spin(13)  # $20
    assert events[0] == WheelStopped("r1", 0, 13, BigSixSymbol.TWENTY)
    assert _settled(events) == {"b1": 2100, "b2": 0, "b3": 0}
    assert events[-1] == RoundSettled("r1", "$20")
    assert engine.phase is Phase.SETTLED


@pytest.mark.parametrize(("section", "flag", "joker"), [(0, 0, 4600), (27, 4600, 0)])
def test_joker_and_flag_pay_45_to_1_619a_3(section: int, flag: int, joker: int) -> None:
    engine = _round()
    engine.place(Wager("f", "p", "flag", 100))
    engine.place(Wager("j", "p", "joker", 100))
    engine.close_betting()
    assert _settled(engine.provide_spin(section)) == {"f": flag, "j": joker}


def test_clapper_between_sections_is_no_spin_619a_2_d() -> None:
    engine = _round()
    engine.place(Wager("b1", "p", "two", 100))
    engine.close_betting()
    reason = "clapper between two sections, 619a.2(d)"
    assert engine.no_spin(reason) == (SpinVoided("r1", 0, None, reason),)
    assert engine.pending() == SpinRequest("big_six")
    events = engine.provide_spin(2)
    assert events[0] == WheelStopped("r1", 1, 2, BigSixSymbol.TWO)
    assert _settled(events) == {"b1": 300}


@pytest.mark.parametrize("section", [-1, 54, "3", True, None])
def test_bad_section_is_a_device_fault(section: object) -> None:
    engine = _round()
    engine.close_betting()
    with pytest.raises(InvariantViolation):
        engine.provide_spin(section)  # type: ignore[arg-type]
    assert engine.phase is Phase.DEALING


def test_rejections() -> None:
    engine = _round(minimum=100)
    for spot, amount, code in [("seven", 100, UNKNOWN_WAGER), ("one", 99, BELOW_MINIMUM)]:
        with pytest.raises(IllegalAction) as info:
            engine.place(Wager("b", "p", spot, amount))
        assert info.value.code == code
    engine.close_betting()
    with pytest.raises(IllegalAction) as info:
        engine.place(Wager("b", "p", "one", 100))
    assert info.value.code == BETTING_CLOSED  # 619a.2(a): "no more bets"


def test_driven_by_the_virtual_wheel() -> None:
    source = seeded_source(11)
    for n in range(100):
        engine = BigSixRound(BigSixTable(), f"r{n}")
        engine.open()
        engine.place(Wager("b", "p", "five", 100))
        engine.close_betting()
        spin = BIG_SIX_WHEEL.spin(source)
        events = engine.provide_spin(spin.section)
        expected = 600 if spin.symbol is BigSixSymbol.FIVE else 0
        assert _settled(events) == {"b": expected}


@given(
    st.lists(st.tuples(st.sampled_from(list(BIG_SIX_SPOTS)), st.integers(1, 10**6)), max_size=20),
    st.integers(0, 53),
)
def test_settlement_conserves_money_and_is_additive(
    bets: list[tuple[str, int]], section: int
) -> None:
    def play(wagers: list[Wager]) -> dict[str, int]:
        engine = _round()
        for wager in wagers:
            engine.place(wager)
        engine.close_betting()
        return _settled(engine.provide_spin(section))

    wagers = [Wager(f"b{i}", "p", spot, amount) for i, (spot, amount) in enumerate(bets)]
    together = play(wagers)
    alone: dict[str, int] = {}
    for wager in wagers:
        alone.update(play([wager]))
    assert together == alone
    symbol = BIG_SIX_ORDER[section]
    for wager in wagers:
        _, odds = SECTIONS_AND_ODDS[wager.spot]
        won = BIG_SIX_SPOTS[wager.spot] is symbol
        assert together[wager.bet_id] == (wager.amount * (1 + odds) if won else 0)


def test_par_sheet_matches_section_counts_619a_3() -> None:
    rows = big_six_par_sheet()
    assert [row.wager for row in rows] == list(SECTIONS_AND_ODDS)
    for row in rows:
        sections, odds = SECTIONS_AND_ODDS[row.wager]
        expected = -Fraction(sections * odds - (54 - sections), 54)
        assert row.house_edge_exact == expected
        assert sum(line.probability for line in row.outcomes) == 1
    edges = {row.wager: row.house_edge_exact for row in rows}
    assert edges == {
        "one": Fraction(4, 27),  # 14.81%
        "two": Fraction(1, 6),  # 16.67%
        "five": Fraction(1, 9),  # 11.11%
        "ten": Fraction(5, 27),  # 18.52%
        "twenty": Fraction(2, 9),  # 22.22%
        "joker": Fraction(4, 27),
        "flag": Fraction(4, 27),
    }


def test_par_sheet_cli_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["par-sheet", "big_six", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["wager"] for r in rows] == list(SECTIONS_AND_ODDS)
    assert rows[0]["variant"] == "big_six" and rows[0]["house_edge_exact"] == "4/27"
    assert rows[0]["outcomes"][0]["probability_exact"] == "23/54"
