"""Down Under Blackjack rounds (685a) through the engine: the deal, Match-the-Dealer,
Insurance, the hole-card reader, decisions and time-outs, the dealer's turn, settlement, and
that no event shown to players carries the hole card before its reveal. Cases named
"interp. N" check docs/interpretations.md, N."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import msgspec
import pytest

from rng.cards import Card, parse_cards
from server.games.betting import BAD_DECISION, NOT_AN_OPTION, DecisionRequested, DecisionTimedOut
from server.games.chance import CardRequest, HoleRangeRequest
from server.games.down_under_blackjack import (
    DealerStood,
    DownUnderRound,
    DownUnderTable,
    HoleCardRangeRead,
    HoleCardRevealed,
    HoleRange,
)
from server.games.errors import (
    MAIN_WAGER_REQUIRED,
    NO_DECISION_PENDING,
    NOT_IN_PHASE,
    WAGER_NOT_OFFERED,
    IllegalAction,
    InvariantViolation,
)
from server.games.events import BetAccepted, CardDealt, RoundSettled, WagerSettled
from server.games.round import DecisionRequest, Phase
from server.games.wagers import Result, Wager


def start(*wagers: Wager, decks: int = 6, mtd: bool = True) -> DownUnderRound:
    r = DownUnderRound(DownUnderTable(decks=decks, match_the_dealer=mtd), "r")
    r.open()
    for w in wagers:
        r.place(w)
    r.close_betting()
    return r


def drive(r: DownUnderRound, cards: str, decisions: list[str] | None = None) -> list[object]:
    """Answer requests: cards in order, the virtual reader from the hole card, and decisions
    ("player spot decision" or "player timeout") in order, until the script runs out."""
    deck: Iterator[Card] = iter(parse_cards(cards))
    todo = list(decisions or [])
    events: list[object] = []
    hole: Card | None = None
    while (request := r.pending()) is not None:
        if isinstance(request, CardRequest):
            card = next(deck, None)
            if card is None:
                break
            if not request.face_up:
                hole = card
            events.extend(r.provide_card(card))
        elif isinstance(request, HoleRangeRequest):
            assert hole is not None
            events.extend(r.provide_hole_range(HoleRange.of(hole)))
        else:
            if not todo:
                break
            words = todo.pop(0).split()
            if words[1] == "timeout":
                events.extend(r.time_out(words[0]))
            else:
                events.extend(r.decide(words[0], words[1], words[2]))
    return events


def returned(events: list[object]) -> dict[str, tuple[Result, int]]:
    return {
        e.settlement.wager.bet_id: (e.settlement.outcome.result, e.settlement.returned)
        for e in events
        if isinstance(e, WagerSettled)
    }


BET = Wager("b", "al", "bet:1", 1000)
MTD = Wager("m", "al", "match_the_dealer:1", 100)


def test_deal_order_and_face_down_hole() -> None:
    # 685a.7(e)
    r = start(BET, Wager("c", "bo", "bet:3", 500))
    events = drive(r, "2S 3S 9H 4S 5S KD")
    dealt = [(e.target, e.face_up) for e in events if isinstance(e, CardDealt)]
    assert dealt == [
        ("bet:1", True), ("bet:3", True), ("dealer", True),
        ("bet:1", True), ("bet:3", True), ("dealer", False),
    ]  # fmt: skip
    read = [e for e in events if isinstance(e, HoleCardRangeRead)]
    assert read == [HoleCardRangeRead("r", HoleRange.LARGE, "yellow")]  # 685a.7(h)
    assert not any(isinstance(e, HoleCardRevealed) for e in events)  # 9 up: not both Large
    assert r.pending() == DecisionRequest("al", "bet:1", ("hit", "stand", "double"), "stand")


def test_match_the_dealer_settled_before_the_reader() -> None:
    # 685a.7(f): settled right after the deal, before the hole card is read.
    r = start(BET, MTD)
    events = drive(r, "9S 9H 2S 5S")
    assert returned(events) == {"m": (Result.WIN, 500)}  # unsuited 4 to 1, 6 decks
    settled = next(i for i, e in enumerate(events) if isinstance(e, WagerSettled))
    read = next(i for i, e in enumerate(events) if isinstance(e, HoleCardRangeRead))
    assert settled < read


def test_match_the_dealer_rules() -> None:
    with pytest.raises(ValueError):
        DownUnderTable(decks=4, match_the_dealer=True)  # 685a.6(e)
    r = DownUnderRound(DownUnderTable(decks=4), "r")
    r.open()
    with pytest.raises(IllegalAction) as info:
        r.place(MTD)
    assert info.value.code == WAGER_NOT_OFFERED
    r = DownUnderRound(DownUnderTable(decks=8, match_the_dealer=True), "r")
    r.open()
    with pytest.raises(IllegalAction) as info:
        r.place(MTD)
    assert info.value.code == MAIN_WAGER_REQUIRED


def test_stand_and_dealer_draws_to_17_to_22() -> None:
    # 685a.7(l), (m): the hole card is turned up, the dealer draws to 17-22; (o)(2) win.
    r = start(BET)
    events = drive(r, "10S 6H 9S 5D 3C", ["al bet:1 stand"])
    revealed = [e for e in events if isinstance(e, HoleCardRevealed)]
    assert revealed == [HoleCardRevealed("r", Card.parse("5D"), "685a.7(l): the dealer's turn")]
    assert r.pending() == CardRequest("dealer")  # 6 + 5 + 3 = 14: draws again
    events += drive(r, "9C")  # 23: over 22
    stood = next(e for e in events if isinstance(e, DealerStood))
    assert stood.total == 23
    assert returned(events)["b"] == (Result.WIN, 2000)
    assert isinstance(events[-1], RoundSettled)


@pytest.mark.parametrize(
    ("section", "cards", "decisions", "bet"),
    [
        # player 10+5 hits 6 = 21; dealer 10 + 6 + 6 = 22: a 21 is paid.
        ("685a.7(n)(1) 21 vs 22", "10S 10H 5S 6D 6C 6H", ["al bet:1 hit"], (Result.WIN, 2000)),
        # player K Q stands on 20; dealer 10 6 6 = 22: two original Large cards are paid.
        ("685a.7(n)(1) two Large vs 22", "KS 10H QS 6D 6C", ["al bet:1 stand"], (Result.WIN, 2000)),
        # player 10 7 + 2 = 19; dealer 22: push.
        ("685a.7(n)(1) push on 22", "10S 10H 7S 6D 2C 6C", ["al bet:1 hit", "al bet:1 stand"],
         (Result.PUSH, 1000)),
        # player 10 7 hits 9 = 26: loses even against 22.
        ("interp. 15: bust loses vs 22", "10S 10H 7S 6D 9C 6C", ["al bet:1 hit"], (Result.LOSE, 0)),
        # dealer A up, A hole: 22, both Large: revealed at once (685a.7(h)).
        ("interp. 15: dealer two aces 22", "9S AH 9D AD", ["al insurance:1 no_insurance",
                                                           "al bet:1 stand"], (Result.PUSH, 1000)),
    ],
)  # fmt: skip
def test_dealer_22(section: str, cards: str, decisions: list[str], bet: tuple[Result, int]) -> None:
    r = start(BET)
    events = drive(r, cards, decisions)
    assert returned(events)["b"] == bet, section
    assert r.phase is Phase.SETTLED


def test_dealer_blackjack_with_insurance_and_player_blackjack() -> None:
    # 685a.7(g), (h)(1), (2), 685a.8, 685a.11(b): Insurance paid 2 to 1; Blackjack pushes.
    r = start(BET, Wager("c", "bo", "bet:2", 400))
    events = drive(
        r,
        "AS 9S AH KS 5D KH",
        ["al insurance:1 insurance", "bo insurance:2 insurance:100"],
    )
    assert [e.wager.amount for e in events if isinstance(e, BetAccepted)] == [500, 100]
    revealed = [e for e in events if isinstance(e, HoleCardRevealed)]
    assert revealed and "685a.7(h)" in revealed[0].rule
    assert returned(events) == {
        "b~insurance": (Result.WIN, 1500),
        "c~insurance": (Result.WIN, 300),
        "b": (Result.PUSH, 1000),
        "c": (Result.LOSE, 0),
    }
    assert r.phase is Phase.SETTLED
    # 685a.9(b), 685a.10(d): the dealer's Blackjack is known before any action, so no
    # double or split can be on the table; deciding now is refused.
    with pytest.raises(IllegalAction) as info:
        r.decide("bo", "bet:2", "double")
    assert info.value.code == NOT_IN_PHASE


def test_insurance_lost_when_no_blackjack_and_blackjack_paid() -> None:
    # 685a.8(d): collected once the reader shows no Blackjack; 685a.7(i)(1): 3 to 2.
    r = start(BET, Wager("c", "bo", "bet:2", 400))
    events = drive(r, "AS 9S AH KS 5D 4H", ["al insurance:1 no_insurance", "bo timeout"])
    assert DecisionTimedOut("r", "bo", "insurance:2", "no_insurance") in events
    assert returned(events) == {"b": (Result.WIN, 2500)}
    events = drive(r, "", [])
    r2 = start(BET)
    events = drive(r2, "10S AH 9S 5D", ["al insurance:1 insurance"])
    assert returned(events) == {"b~insurance": (Result.LOSE, 0)}


def test_insurance_amounts() -> None:
    # 685a.8(b): at most half the Bet (rounded up to a whole minor unit); even money only
    # for a Blackjack.
    r = start(Wager("b", "al", "bet:1", 1001))
    drive(r, "10S AH 9S")
    r.provide_card(Card.parse("5D"))
    for decision, code in [
        ("insurance:502", BAD_DECISION),
        ("insurance:0", BAD_DECISION),
        ("even_money", NOT_AN_OPTION),
        ("no_insurance:5", BAD_DECISION),
    ]:
        with pytest.raises(IllegalAction) as info:
            r.decide("al", "insurance:1", decision)
        assert info.value.code == code, decision
    events = r.decide("al", "insurance:1", "insurance")
    assert [e.wager.amount for e in events if isinstance(e, BetAccepted)] == [501]


def test_even_money() -> None:
    # 685a.7(g): a player with Blackjack may take even money.
    r = start(BET)
    events = drive(r, "AS AH KS 9D", ["al insurance:1 even_money"])
    assert returned(events)["b"] == (Result.WIN, 2000)


def test_double_down() -> None:
    # 685a.9(a), (c): one card only, at most the Bet.
    r = start(BET)
    events = drive(r, "6S 10H 5S 7D", [])
    assert not r.can_decide("al", "bet:1", "double:1001")
    with pytest.raises(IllegalAction) as info:
        r.decide("al", "bet:1", "double:0")
    assert info.value.code == BAD_DECISION
    events += r.decide("al", "bet:1", "double:600")
    assert r.pending() == CardRequest("bet:1")
    events += drive(r, "2C 10C")  # 13 after the double; dealer 17 + ... no: dealer 10 7 = 17
    res = returned(events)
    assert res == {"b": (Result.LOSE, 0), "b~double": (Result.LOSE, 0)}


def test_split_and_split_aces() -> None:
    # 685a.10(a), (b), (e): a pair split once; aces get one card each.
    r = start(BET)
    events = drive(r, "AS 9H AD 8D", ["al bet:1 split"])
    assert [e.wager.spot for e in events if isinstance(e, BetAccepted)] == ["split:1"]
    events += drive(r, "KC 5C")  # A+K = 21 (not Blackjack), A+5; no decisions for split aces
    assert r.phase is Phase.SETTLED
    assert returned(events) == {"b": (Result.WIN, 2000), "b~split": (Result.LOSE, 0)}

    r = start(BET)
    events = drive(r, "8S 10H 8D 9D", ["al bet:1 split"])
    assert r.pending() == CardRequest("bet:1")
    events += drive(r, "3C", ["al bet:1 double"])  # 8+3 doubled
    events += drive(r, "10C")  # 21
    request = r.pending()
    assert request == CardRequest("split:1")
    events += drive(r, "8C")  # 8+8: no second split
    assert r.pending() == DecisionRequest("al", "split:1", ("hit", "stand", "double"), "stand")
    events += drive(r, "", ["al split:1 stand"])
    assert returned(events) == {
        "b": (Result.WIN, 2000),
        "b~double": (Result.WIN, 2000),
        "b~split": (Result.LOSE, 0),
    }


def test_time_out_stands() -> None:
    # Issue item 4: no decision in time: stand, and the engine says so.
    r = start(BET)
    events = drive(r, "10S 10H 6S 7D", ["al timeout"])
    assert DecisionTimedOut("r", "al", "bet:1", "stand") in events
    assert returned(events) == {"b": (Result.LOSE, 0)}


def test_decision_errors() -> None:
    r = start(BET)
    drive(r, "10S 10H 6S 7D")
    for who, spot, decision, code in [
        ("bo", "bet:1", "hit", NO_DECISION_PENDING),
        ("al", "bet:1", "split", NOT_AN_OPTION),
        ("al", "bet:1", "surrender", NOT_AN_OPTION),  # 685a.7(i)(2): no surrender
        ("al", "bet:1", "hit:5", BAD_DECISION),
    ]:
        with pytest.raises(IllegalAction) as info:
            r.decide(who, spot, decision)
        assert info.value.code == code


def test_reader_fault_is_ours_and_changes_nothing() -> None:
    # 685a.12(h), (i): a wrong light is a device fault; the round can then be voided.
    r = start(BET)
    drive(r, "10S 10H 6S", [])
    r.provide_card(Card.parse("7D"))
    with pytest.raises(InvariantViolation):
        r.provide_hole_range(HoleRange.LARGE)
    assert isinstance(r.pending(), HoleRangeRequest)
    events = r.void("reader fault")
    assert returned(list(events)) == {"b": (Result.VOID, 1000)}


def test_lights_are_configuration() -> None:
    lights = {HoleRange.SMALL: "green", HoleRange.MEDIUM: "white", HoleRange.LARGE: "amber"}
    r = DownUnderRound(DownUnderTable(lights=lights), "r")
    r.open()
    r.place(BET)
    r.close_betting()
    events = drive(r, "10S 10H 6S 3D")
    assert HoleCardRangeRead("r", HoleRange.SMALL, "green") in events


def _mentions(value: object, card: Card) -> bool:
    if value is card:
        return True
    if isinstance(value, msgspec.Struct):
        return any(_mentions(getattr(value, name), card) for name in value.__struct_fields__)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return any(_mentions(getattr(value, f.name), card) for f in dataclasses.fields(value))
    if isinstance(value, (tuple, list)):
        return any(_mentions(v, card) for v in value)
    return False


@pytest.mark.parametrize(
    ("mine", "up", "hole", "rest", "decisions", "early"),
    [
        ("10S 6S", "9H", "QH", "5C", ["al bet:1 hit", "bo timeout"], False),
        ("AS 7S", "AH", "3D", "2C 9C 10C", ["al insurance:1 insurance", "bo timeout",
                                        "al bet:1 stand", "bo timeout"], False),
        ("9S 7S", "KH", "10D", "", ["al bet:1 stand", "bo timeout"], True),  # 685a.7(h)
        ("8S 8D", "10H", "2D", "3C 2C 9C", ["al bet:1 split", "al bet:1 stand",
                                           "al split:1 stand", "bo timeout"], False),
    ],
)  # fmt: skip
def test_no_event_shows_the_hole_card_before_its_reveal(
    mine: str, up: str, hole: str, rest: str, decisions: list[str], early: bool
) -> None:
    # 685a.7(h), (l), docs/interpretations.md, 15: players learn only the range until the reveal
    # (the face-down CardDealt is for the journal; a view never shows it).
    r = start(BET, Wager("c", "bo", "bet:2", 500))
    a, b = mine.split()
    events = drive(r, f"{a} 4C {up} {b} 4H {hole} {rest}", decisions)
    assert r.phase is Phase.SETTLED
    card = Card.parse(hole)
    assert f"{mine} {up} {rest} 4C 4H".split().count(hole) == 0  # the hole card is unique
    reveal = next(i for i, e in enumerate(events) if isinstance(e, HoleCardRevealed))
    asked = [
        i
        for i, e in enumerate(events)
        if isinstance(e, DecisionRequested) and e.spot.startswith("bet")
    ]
    assert (reveal < asked[0]) is early
    for event in events[:reveal]:
        if isinstance(event, CardDealt) and not event.face_up:
            continue
        assert not _mentions(event, card), event
    assert _mentions(events[reveal], card)
