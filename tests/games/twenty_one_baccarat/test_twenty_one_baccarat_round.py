"""21 Baccarat rounds (681a), table-driven by section."""

from __future__ import annotations

from contextlib import suppress

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rng.cards import ALL_CARDS, parse_cards
from server.games.betting import Limits
from server.games.chance import CardRequest
from server.games.errors import (
    ABOVE_MAXIMUM,
    BETTING_CLOSED,
    MAIN_WAGER_REQUIRED,
    UNKNOWN_WAGER,
    WAGER_NOT_OFFERED,
    IllegalAction,
)
from server.games.events import BetAccepted, BetCancelled, CardDealt, RoundSettled, WagerSettled
from server.games.round import Phase
from server.games.twenty_one_baccarat import (
    AdditionalCardDecided,
    HandsCompared,
    TwentyOneBaccaratRound,
    TwentyOneBaccaratTable,
    bonus_hand,
)
from server.games.wagers import Result, Wager

ALL_SPOTS = ("player", "banker", "tie", "bonus_player", "bonus_banker")


def _play(
    cards: str, spots: tuple[str, ...] = ALL_SPOTS, decks: int = 4
) -> tuple[TwentyOneBaccaratRound, list[object]]:
    table = TwentyOneBaccaratTable(decks=decks, bonus_paytable="A" if decks == 4 else "D")
    r = TwentyOneBaccaratRound(table, "r")
    r.open()
    for spot in spots:
        r.place(Wager(spot, "al", spot, 100))
    r.close_betting()
    events: list[object] = []
    for card in parse_cards(cards):
        request = r.pending()
        assert isinstance(request, CardRequest)
        events.extend(r.provide_card(card))
    assert r.pending() is None
    assert r.phase is Phase.SETTLED
    return r, events


def _returned(events: list[object]) -> dict[str, int]:
    return {
        e.settlement.wager.bet_id: e.settlement.returned
        for e in events
        if isinstance(e, WagerSettled)
    }


# Cards in dealing order: P, B, P, B (681a.7(e)), then the Player's and the Banker's one
# additional card where the hand is below 17 (681a.7(f), (g)). Returned per 100 wagered.
CASES = [
    # section, cards, player, banker, tie, bonus_player, bonus_banker (paytable A)
    ("681a.7(i)(2)(i) player higher", "10S 9H 9S 9D", 200, 0, 0, 0, 400),
    ("681a.7(j)(2)(i) banker higher", "10S 10H 8S 10D", 0, 200, 0, 0, 400),  # banker pair of 10s
    ("681a.8(a) wins with 17 pay 1 to 2", "10S 10H 7S 5D 9C", 150, 0, 0, 0, 0),
    ("681a.8(a) banker 17 pays 1 to 2", "10S 10H 6S 7D 8C", 0, 150, 0, 0, 0),
    ("681a.7(i)(4), 681a.8(b) tie", "10S 10H 9S 9D", 100, 100, 1100, 0, 0),
    # Both draw one card: P 10+5=15 draws 9 -> 24; B 10+4=14 draws 10 -> 24: both over 21 tie.
    ("681a.7(i)(3) both over 21, equal", "10S 10H 5S 4D 9C 10C", 100, 100, 1100, 0, 0),
    # P 10+5+9=24, B 10+4+QC=24 ... P 10+6+9=25 vs B 24: the lower total wins over 21.
    ("681a.7(j)(3)(i) both over 21, banker lower", "10S 10H 6S 4D 9C QC", 0, 200, 0, 0, 0),
    ("681a.7(i)(3)(i) both over 21, player lower", "10S 10H 4S 6D 9C QC", 200, 0, 0, 0, 0),
    ("681a.7(i)(1) player 21 or less, banker over", "10S 10H 5S 4D 3C 9C", 200, 0, 0, 0, 0),
    # Player stands on 18 (no card), banker 13 draws 5: 18 vs 18 tie.
    ("681a.7(g) only hands below 17 draw", "10S 10H 8S 3D 5C", 100, 100, 1100, 0, 0),
    # One additional card only (docs/interpretations.md, 1): P 2+3=5 draws 4 -> 9, stops; B 10+8=18.
    (
        "681a.7(g) exactly one card (docs/interpretations.md, 1)",
        "2S 10H 3S 8D 4C",
        0,
        200,
        0,
        1200,
        0,
    ),
    # Naturals (docs/interpretations.md, 2): natural beats a three-card 21; the third card of a
    # natural round counts for the Bonus Wagers only (681a.7(f)(2)).
    ("681a.7(f)(2) natural beats 21; bonus card", "AS 5H KS 6D 10C", 200, 0, 0, 0, 600),
    ("681a.1 natural vs natural ties", "AS AH KS QD", 100, 100, 1100, 0, 0),
    ("docs/interpretations.md, 2 two aces beat ace-ten", "AS AH AD QD 9C", 200, 0, 0, 600, 0),
    ("681a.3(e)(1) three 7s", "7S 10H 7D 10D 7C", 200, 0, 0, 10100, 400),
    ("681a.3(e)(2) three of a kind", "4S 10H 4D 10D 4C", 0, 200, 0, 4100, 400),
    ("681a.3(e)(3) straight 5-6-7", "5S 10H 7D 9D 6C", 0, 200, 0, 1200, 0),
    ("docs/interpretations.md, 3 straight A-2-3", "AS 10H 2D 9D 3C", 0, 200, 0, 1200, 0),
    ("681a.3(e)(4) three-card 21", "6S 10H 6D 9D 9C", 200, 0, 0, 600, 0),
    ("681a.3(e)(5) pair on first two only", "5S 10H 9D 9D 5C", 100, 100, 1100, 0, 0),
]


@pytest.mark.parametrize(
    ("section", "cards", "player", "banker", "tie", "bonus_player", "bonus_banker"), CASES
)
def test_settlement(
    section: str,
    cards: str,
    player: int,
    banker: int,
    tie: int,
    bonus_player: int,
    bonus_banker: int,
) -> None:
    _, events = _play(cards)
    assert _returned(events) == {
        "player": player,
        "banker": banker,
        "tie": tie,
        "bonus_player": bonus_player,
        "bonus_banker": bonus_banker,
    }, section
    assert isinstance(events[-1], RoundSettled)


def test_natural_without_bonus_wager_deals_no_more_cards() -> None:
    # 681a.7(f)(1)
    _, events = _play("AS 5H KS 6D", spots=("player", "banker", "tie"))
    decided = [e for e in events if isinstance(e, AdditionalCardDecided)]
    assert [d.draws for d in decided] == [False, False]
    assert _returned(events) == {"player": 200, "banker": 0, "tie": 0}


def test_bonus_only_card_is_marked_and_does_not_count() -> None:
    # 681a.7(f)(2): the Banker's 11 receives a card that counts for the Bonus Wager only.
    _, events = _play("AS 5H KS 6D 10C")
    decided = {e.hand: e for e in events if isinstance(e, AdditionalCardDecided)}
    assert decided["banker"].bonus_only and decided["banker"].draws
    assert not decided["player"].draws
    compared = next(e for e in events if isinstance(e, HandsCompared))
    assert (compared.player_total, compared.banker_total) == (21, 11)
    assert len(compared.banker) == 2


@pytest.mark.parametrize(
    ("cards", "hand"),
    [
        ("7S 7H 7D", "three_7s"),
        ("QS QH QD", "three_of_a_kind"),
        ("QS KH AD", "straight"),
        ("KS AH 2D", None),
        ("10S JH QD", "straight"),
        ("AS 5H 5D", "three_card_21"),
        ("10S 10H", "pair"),
        ("10S JH", None),
        ("9S 9H 3D", "three_card_21"),  # only the highest award (docs/interpretations.md, 3)
        ("9S 9H 2D", "pair"),
    ],
)
def test_bonus_hands(cards: str, hand: str | None) -> None:
    # 681a.3(e), docs/interpretations.md, 3
    assert bonus_hand(tuple(c.rank for c in parse_cards(cards))) == hand


def test_betting_rules() -> None:
    # 681a.6(c), (d): Tie and Bonus Wagers need a Player or Banker Wager.
    table = TwentyOneBaccaratTable(decks=8, bonus_paytable=None, limits={"tie": Limits(maximum=50)})
    r = TwentyOneBaccaratRound(table, "r")
    r.open()
    for wager, code in [
        (Wager("a", "al", "tie", 10), MAIN_WAGER_REQUIRED),
        (Wager("a", "al", "bonus_player", 10), WAGER_NOT_OFFERED),
        (Wager("a", "al", "dragon", 10), UNKNOWN_WAGER),
    ]:
        assert not r.can_place(wager)
        with pytest.raises(IllegalAction) as info:
            r.place(wager)
        assert info.value.code == code
    r.place(Wager("a", "al", "banker", 10))
    r.place(Wager("b", "al", "tie", 50))
    with pytest.raises(IllegalAction) as info:
        r.place(Wager("c", "al", "tie", 1))
    assert info.value.code == ABOVE_MAXIMUM
    r.close_betting()
    with pytest.raises(IllegalAction) as info:
        r.place(Wager("d", "al", "player", 10))
    assert info.value.code == BETTING_CLOSED  # 681a.6(b)
    with pytest.raises(ValueError):
        TwentyOneBaccaratTable(decks=4, bonus_paytable="D")  # 681a.8(c)
    with pytest.raises(ValueError):
        TwentyOneBaccaratTable(decks=6)  # 681a.3(a)


def test_cards_are_dealt_face_up_in_order() -> None:
    # 681a.7(e)
    _, events = _play("10S 9H 9S 9D")
    assert [(e.target, e.face_up) for e in events if isinstance(e, CardDealt)] == [
        ("player", True), ("banker", True), ("player", True), ("banker", True)
    ]  # fmt: skip


def test_void_and_empty_round() -> None:
    r = TwentyOneBaccaratRound(TwentyOneBaccaratTable(), "r")
    r.open()
    r.close_betting()
    assert r.phase is Phase.SETTLED
    r = TwentyOneBaccaratRound(TwentyOneBaccaratTable(), "r")
    r.open()
    r.place(Wager("a", "al", "player", 10))
    r.close_betting()
    r.provide_card(ALL_CARDS[0])
    events = r.void("shoe fault")
    assert [e.settlement.outcome.result for e in events if isinstance(e, WagerSettled)] == [
        Result.VOID
    ]


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_money_is_conserved(data: st.DataObject) -> None:
    r = TwentyOneBaccaratRound(TwentyOneBaccaratTable(decks=4, bonus_paytable="C"), "r")
    balances = {"al": 10**6, "bo": 10**6}
    house = 0
    open_: dict[tuple[str, str], int] = {}

    def apply(events: object) -> None:
        nonlocal house
        for e in events:  # type: ignore[attr-defined]
            if isinstance(e, BetAccepted):
                balances[e.wager.player_id] -= e.wager.amount
                open_[(e.wager.player_id, e.wager.bet_id)] = e.wager.amount
            elif isinstance(e, BetCancelled):
                balances[e.wager.player_id] += open_.pop((e.wager.player_id, e.wager.bet_id))
            elif isinstance(e, WagerSettled):
                w = e.settlement.wager
                stake = open_.pop((w.player_id, w.bet_id))
                balances[w.player_id] += e.settlement.returned
                house += stake - e.settlement.returned

    total = sum(balances.values())
    apply(r.open())
    for i in range(data.draw(st.integers(0, 10))):
        wager = Wager(
            f"b{data.draw(st.integers(0, 5))}",
            data.draw(st.sampled_from(["al", "bo"])),
            data.draw(st.sampled_from([*ALL_SPOTS, "nope"])),
            data.draw(st.integers(-1, 999)),
        )
        with suppress(IllegalAction):
            apply(r.place(wager))
        if data.draw(st.booleans()) and r.wagers:
            w = data.draw(st.sampled_from(r.wagers))
            with suppress(IllegalAction):
                apply(r.cancel(w.player_id, w.bet_id))
        del i
    apply(r.close_betting())
    while r.pending() is not None:
        apply(r.provide_card(data.draw(st.sampled_from(ALL_CARDS))))
        assert sum(balances.values()) + house + sum(open_.values()) == total
    assert not open_ and r.phase is Phase.SETTLED
    assert sum(balances.values()) + house == total
