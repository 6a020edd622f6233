"""Casino War rounds (651a), table-driven by section, plus the betting phase they share."""

from __future__ import annotations

from fractions import Fraction

import pytest

from rng.cards import Card, parse_cards
from server.games.betting import (
    BAD_BET_ID,
    BAD_DECISION,
    BOX_TAKEN,
    MAIN_WAGER_IN_USE,
    NOT_AN_OPTION,
    SPOT_TAKEN,
    DecisionMade,
    DecisionRequested,
    DecisionTimedOut,
    Limits,
)
from server.games.casino_war import (
    CasinoWarRound,
    CasinoWarTable,
    HandCompared,
    Surrendered,
    WarDeclared,
)
from server.games.chance import CardRequest
from server.games.errors import (
    ABOVE_MAXIMUM,
    BELOW_MINIMUM,
    BETTING_CLOSED,
    DUPLICATE_BET_ID,
    MAIN_WAGER_REQUIRED,
    NO_DECISION_PENDING,
    NOT_IN_PHASE,
    UNKNOWN_BET,
    UNKNOWN_WAGER,
    IllegalAction,
)
from server.games.events import (
    BetAccepted,
    BettingClosed,
    CardBurned,
    CardDealt,
    RoundSettled,
    RoundVoided,
    WagerSettled,
)
from server.games.round import DecisionRequest, Phase
from server.games.wagers import Result, Wager


def _round(*wagers: Wager, table: CasinoWarTable | None = None) -> CasinoWarRound:
    r = CasinoWarRound(table or CasinoWarTable(), "r")
    r.open()
    for wager in wagers:
        r.place(wager)
    r.close_betting()
    return r


def _deal(r: CasinoWarRound, cards: str) -> list[object]:
    events: list[object] = []
    for card in parse_cards(cards):
        assert isinstance(r.pending(), CardRequest)
        events.extend(r.provide_card(card))
    return events


def _returned(events: list[object]) -> dict[str, tuple[Result, int]]:
    return {
        e.settlement.wager.bet_id: (e.settlement.outcome.result, e.settlement.returned)
        for e in events
        if isinstance(e, WagerSettled)
    }


@pytest.mark.parametrize(
    ("section", "player", "dealer", "initial", "tie"),
    [
        ("651a.9(a)(1)", "5H", "9C", (Result.LOSE, 0), (Result.LOSE, 0)),
        ("651a.9(a)(2)", "KH", "QC", (Result.WIN, 2000), (Result.LOSE, 0)),
        ("651a.6 ace high", "AS", "KS", (Result.WIN, 2000), (Result.LOSE, 0)),
        ("651a.6 two low", "2S", "3S", (Result.LOSE, 0), (Result.LOSE, 0)),
    ],
)
def test_original_deal_settles_initial_and_tie(
    section: str, player: str, dealer: str, initial: tuple[Result, int], tie: tuple[Result, int]
) -> None:
    # 651a.9(a), 651a.10(1), (2)
    r = _round(Wager("i", "al", "initial:1", 1000), Wager("t", "al", "tie:1", 100))
    events = _deal(r, f"{player} {dealer}")
    assert _returned(events) == {"i": initial, "t": tie}, section
    assert r.phase is Phase.SETTLED
    assert isinstance(events[-1], RoundSettled)


def test_tie_hand_pays_tie_wager_and_asks_each_player() -> None:
    # 651a.9(a)(3): the Tie Wager wins 10 to 1; 651a.9(c): each player with a tie hand decides.
    r = _round(
        Wager("i", "al", "initial:1", 1000),
        Wager("t", "al", "tie:1", 100),
        Wager("j", "bo", "initial:3", 500),
    )
    events = _deal(r, "7H 7S 7C")
    assert _returned(events) == {"t": (Result.WIN, 1100)}
    assert r.phase is Phase.DECIDING
    asked = [e for e in events if isinstance(e, DecisionRequested)]
    assert [(e.player_id, e.spot, e.default) for e in asked] == [
        ("al", "initial:1", "surrender"),
        ("bo", "initial:3", "surrender"),
    ]
    assert r.pending() == DecisionRequest(
        "al", "initial:1", ("war", "war+tie", "surrender"), "surrender"
    )
    assert len(r.decisions_awaited) == 2


def test_surrender_returns_half() -> None:
    # 651a.9(c)(1): half of the Initial Wager collected, half returned.
    r = _round(Wager("i", "al", "initial:1", 1001))
    _deal(r, "QH QC")
    events = list(r.decide("al", "initial:1", "surrender"))
    assert isinstance(events[0], DecisionMade)
    assert _returned(events) == {"i": (Result.SURRENDER, 500)}  # rounding policy: down
    assert any(isinstance(e, Surrendered) for e in events)
    assert r.phase is Phase.SETTLED


@pytest.mark.parametrize(
    ("section", "war_cards", "war", "war_tie"),
    [
        ("651a.9(g)(1)", "4H 9D", (Result.LOSE, 0), (Result.LOSE, 0)),
        ("651a.9(g)(2), 651a.10(3) 2 to 1", "AH 9D", (Result.WIN, 3000), (Result.LOSE, 0)),
        ("651a.9(g)(3), 651a.10(3) 3 to 1", "9H 9D", (Result.WIN, 4000), (Result.WIN, 2200)),
    ],
)
def test_war(
    section: str, war_cards: str, war: tuple[Result, int], war_tie: tuple[Result, int]
) -> None:
    # 651a.9(c)(2), (e): going to War forfeits the Initial Wager and places an equal War
    # Wager; 651a.9(f): three cards burned before the War deal (docs/interpretations.md, 12).
    r = _round(Wager("i", "al", "initial:2", 1000))
    _deal(r, "5H 5C")
    events = list(r.decide("al", "initial:2", "war+tie:200"))
    assert _returned(events) == {"i": (Result.LOSE, 0)}, section
    declared = [e for e in events if isinstance(e, WarDeclared)]
    assert declared == [WarDeclared("r", "al", 2, 1000, 200)]
    accepted = [e.wager for e in events if isinstance(e, BetAccepted)]
    assert [(w.spot, w.amount) for w in accepted] == [("war:2", 1000), ("war_tie:2", 200)]
    assert r.phase is Phase.DEALING
    burns = []
    for card in parse_cards("2C 3C 4C"):
        assert r.pending() == CardRequest("burn", face_up=False)
        burns.extend(r.provide_card(card))
    assert all(isinstance(e, CardBurned) for e in burns)
    events = _deal(r, war_cards)
    assert _returned(events) == {"i~war": war, "i~war_tie": war_tie}, section
    compared = [e for e in events if isinstance(e, HandCompared)]
    assert compared[0].deal == "war"
    assert r.phase is Phase.SETTLED


def test_several_players_decide_each_their_own() -> None:
    # 651a.9(c): each player with a tie hand chooses; time-out surrenders (issue item 4).
    r = _round(Wager("i", "al", "initial:1", 1000), Wager("j", "bo", "initial:2", 600))
    _deal(r, "8H 8D 8C")
    events = list(r.decide("bo", "initial:2", "war"))
    assert r.phase is Phase.DECIDING  # al has not decided yet
    events += r.time_out("al")
    assert DecisionTimedOut("r", "al", "initial:1", "surrender") in events
    assert _returned(events)["i"] == (Result.SURRENDER, 500)
    assert r.phase is Phase.DEALING
    events = _deal(r, "2C 3C 4C KD QD")
    assert _returned(events) == {"j~war": (Result.WIN, 1800)}


def test_decision_errors() -> None:
    r = _round(
        Wager("i", "al", "initial:1", 1000), table=CasinoWarTable(limits={"tie": Limits(100, 500)})
    )
    _deal(r, "8H 8D")
    for who, spot, decision, code in [
        ("bo", "initial:1", "war", NO_DECISION_PENDING),
        ("al", "initial:2", "war", NO_DECISION_PENDING),
        ("al", "initial:1", "hit", NOT_AN_OPTION),
        ("al", "initial:1", "war+tie", BAD_DECISION),
        ("al", "initial:1", "war+tie:-5", BAD_DECISION),
        ("al", "initial:1", "war:5", BAD_DECISION),
        ("al", "initial:1", "war+tie:50", BELOW_MINIMUM),
        ("al", "initial:1", "war+tie:501", ABOVE_MAXIMUM),
    ]:
        assert not r.can_decide(who, spot, decision)
        with pytest.raises(IllegalAction) as info:
            r.decide(who, spot, decision)
        assert info.value.code == code, decision
    with pytest.raises(IllegalAction) as info:
        r.time_out("bo")
    assert info.value.code == NO_DECISION_PENDING
    with pytest.raises(IllegalAction) as info:
        r.provide_card(Card.parse("2C"))
    assert info.value.code == NOT_IN_PHASE


def test_betting_phase_rules() -> None:
    # 651a.7: an Initial Wager to play, a Tie Wager with it; one box per player; limits.
    r = CasinoWarRound(CasinoWarTable(limits={"initial": Limits(100, 1000)}), "r")
    with pytest.raises(IllegalAction) as info:
        r.place(Wager("i", "al", "initial:1", 500))
    assert info.value.code == NOT_IN_PHASE  # not open yet
    r.open()
    cases = [
        (Wager("x", "al", "initial:8", 500), UNKNOWN_WAGER),
        (Wager("x", "al", "big:1", 500), UNKNOWN_WAGER),
        (Wager("x", "al", "initial:1", 50), BELOW_MINIMUM),
        (Wager("x", "al", "initial:1", 1001), ABOVE_MAXIMUM),
        (Wager("x", "al", "tie:1", 100), MAIN_WAGER_REQUIRED),
        (Wager("x~", "al", "initial:1", 500), BAD_BET_ID),
    ]
    for wager, code in cases:
        with pytest.raises(IllegalAction) as info:
            r.place(wager)
        assert info.value.code == code, wager
    r.place(Wager("i", "al", "initial:1", 500))
    r.place(Wager("t", "al", "tie:1", 100))
    for wager, code in [
        (Wager("i", "al", "initial:2", 500), DUPLICATE_BET_ID),
        (Wager("k", "bo", "initial:1", 500), BOX_TAKEN),
        (Wager("k", "al", "initial:1", 500), SPOT_TAKEN),
    ]:
        assert not r.can_place(wager)
        with pytest.raises(IllegalAction) as info:
            r.place(wager)
        assert info.value.code == code, wager
    with pytest.raises(IllegalAction) as info:
        r.cancel("al", "i")
    assert info.value.code == MAIN_WAGER_IN_USE
    with pytest.raises(IllegalAction) as info:
        r.cancel("al", "nope")
    assert info.value.code == UNKNOWN_BET
    r.cancel("al", "t")
    r.cancel("al", "i")
    r.place(Wager("i2", "al", "initial:1", 500))
    assert isinstance(r.close_betting()[0], BettingClosed)
    with pytest.raises(IllegalAction) as info:
        r.place(Wager("late", "al", "initial:2", 500))
    assert info.value.code == BETTING_CLOSED  # 651a.7(d)
    assert r.pending() == CardRequest("box:1")


def test_no_wagers_settles_at_once() -> None:
    r = _round()
    assert r.phase is Phase.SETTLED
    assert r.pending() is None


def test_void_returns_open_wagers_and_keeps_settled_ones() -> None:
    # A device fault during War: the settled Initial Wager stands, the War Wager is returned.
    r = _round(Wager("i", "al", "initial:1", 1000), Wager("t", "al", "tie:1", 10))
    _deal(r, "8H 8D")
    r.decide("al", "initial:1", "war")
    events = list(r.void("shoe fault"))
    assert _returned(events) == {"i~war": (Result.VOID, 1000)}
    assert isinstance(events[-1], RoundVoided)
    assert r.phase is Phase.VOIDED
    assert r.pending() is None


def test_card_dealt_targets_and_order() -> None:
    # 651a.8(c): one card to each box from the dealer's left, then the dealer.
    r = _round(Wager("b", "bo", "initial:5", 100), Wager("a", "al", "initial:2", 100))
    events = _deal(r, "2H 3H 4H")
    dealt = [(e.target, e.seq) for e in events if isinstance(e, CardDealt)]
    assert dealt == [("box:2", 0), ("box:5", 1), ("dealer", 2)]
    assert Fraction(1) == 1


def test_stake_of_a_decision_is_the_money_it_puts_on_the_table() -> None:
    # 651a.9(c)(2), docs/interpretations.md, 12: going to War places a War Wager equal to the
    # Initial Wager (plus the optional Tie Wager on the War deal); surrendering places nothing.
    r = _round(Wager("i", "al", "initial:1", 700))
    _deal(r, "QH QC")
    assert r.stake_of("al", "initial:1", "surrender") == 0
    assert r.stake_of("al", "initial:1", "war") == 700
    assert r.stake_of("al", "initial:1", "war+tie:300") == 1000
    with pytest.raises(IllegalAction):
        r.stake_of("al", "initial:1", "fold")
