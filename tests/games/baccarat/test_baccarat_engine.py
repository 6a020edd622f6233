"""The Baccarat round engine: third-card rule cell by cell (631a.11), settlement timing of
wagers on the initial cards (631b.1(d), 631b.4(d), 631b.5(d), 631b.7(c)), every rejection
code, configuration checks and voiding (631a.15)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from rng.cards import Card, Rank, Suit, parse_cards
from server.games.baccarat.config import ConfigError, Limits, TableConfig, Variant
from server.games.baccarat.engine import MAIN_WAGER_IN_USE, BaccaratRound
from server.games.baccarat.events import (
    InitialCountsAnnounced,
    ResultAnnounced,
    ThirdCardDecided,
)
from server.games.baccarat.hands import banker_draws, play_out, player_draws
from server.games.chance import CardRequest
from server.games.errors import (
    ABOVE_MAXIMUM,
    BAD_AMOUNT,
    BELOW_MINIMUM,
    BETTING_CLOSED,
    DUPLICATE_BET_ID,
    MAIN_WAGER_REQUIRED,
    NOT_IN_PHASE,
    UNKNOWN_BET,
    UNKNOWN_WAGER,
    WAGER_NOT_OFFERED,
    IllegalAction,
)
from server.games.events import BetAccepted, RoundSettled, RoundVoided, WagerSettled
from server.games.progressives import MYSTERY_BONUS_CONFIGS, MysteryBonusConfig
from server.games.round import Phase
from server.games.wagers import Result, Wager
from tests.games.baccarat.baccarat_script import play

# 631a.11(c), transcribed: row = Banker's count, column = value of the Player's third card.
BANKER_TABLE = {
    3: "D D D D D D D D S D",
    4: "S S D D D D D D S S",
    5: "S S S S D D D D S S",
    6: "S S S S S S D D S S",
}


def _card(value: int, suit: Suit = Suit.HEARTS) -> Card:
    return Card.of(Rank(value) if value else Rank.KING, suit)


def _expected_banker_draw(banker: int, third: int) -> bool:
    if banker <= 2:
        return True  # 631a.11(c): draws on 0-2
    if banker == 7:
        return False  # stands on 7
    return BANKER_TABLE[banker].split()[third] == "D"


@pytest.mark.parametrize("banker", range(8))
@pytest.mark.parametrize("third", range(10))
def test_banker_third_card_table_cell_by_cell(banker: int, third: int) -> None:
    # 631a.11(c): the Player (2S 3S = 5) drew ``third``; the Banker holds ``banker``.
    cards = [
        Card.of(Rank.TWO, Suit.SPADES),
        _card(banker),
        Card.of(Rank.THREE, Suit.SPADES),
        Card.of(Rank.KING, Suit.DIAMONDS),
        _card(third, Suit.CLUBS),
    ]
    expected = _expected_banker_draw(banker, third)
    assert banker_draws(5, banker, third) is expected
    rnd = BaccaratRound(TableConfig(), "r")
    rnd.open()
    rnd.close_betting()
    events: list[object] = []
    for card in cards:
        events += rnd.provide_card(card)
    decision = [e for e in events if isinstance(e, ThirdCardDecided) and e.hand == "banker"]
    assert decision[0].draws is expected and decision[0].player_third == third
    assert rnd.pending() == (CardRequest("banker") if expected else None)


@pytest.mark.parametrize("player", range(10))
@pytest.mark.parametrize("banker", range(10))
def test_player_rule_and_banker_rule_when_player_stands(player: int, banker: int) -> None:
    # 631a.11(a): a Natural on either side stops the deal; (b): the Player draws on 0-5;
    # (c): a Banker whose Player stood draws on 0-5 and stands on 6-7.
    natural = player >= 8 or banker >= 8
    assert player_draws(player, banker) is (not natural and player <= 5)
    if not natural and player >= 6:
        assert banker_draws(player, banker, None) is (banker <= 5)
    if natural:
        assert banker_draws(player, banker, None) is False
        assert banker_draws(player, banker, 3) is False
    # the engine agrees: P = (player, 0) as K + value, B likewise
    cards = [_card(player), _card(banker, Suit.CLUBS), _card(0), _card(0, Suit.CLUBS)]
    rnd = BaccaratRound(TableConfig(), "r")
    rnd.open()
    rnd.close_betting()
    for card in cards:
        rnd.provide_card(card)
    if natural or player >= 6:
        assert rnd.pending() == (CardRequest("banker") if not natural and banker <= 5 else None)
    else:
        assert rnd.pending() == CardRequest("player")


def test_dealing_order_is_player_banker_player_banker() -> None:
    # 631a.9: first and third card to the Player's Hand, second and fourth to the Banker's.
    rnd = BaccaratRound(TableConfig(), "r")
    rnd.open()
    rnd.close_betting()
    asked = []
    for card in parse_cards("2S 3H 4S 5H"):
        request = rnd.pending()
        assert request is not None
        asked.append(request.target)
        rnd.provide_card(card)
    assert asked == ["player", "banker", "player", "banker"]


def test_two_card_wagers_settle_before_any_third_card() -> None:
    # 631b.1(d), 631b.4(d), 631b.7(c): Perfect Pairs, Lucky Nines and Majestic Match are
    # settled once the four initial cards are shown, before the Player's third card.
    config = TableConfig(
        automated=True,
        side_wagers={"perfect_pairs": "A", "lucky_nines": "A", "majestic_match": None,
                     "golden_talons": "A"},
    )  # fmt: skip
    rnd = BaccaratRound(config, "r2")
    rnd.open()
    for i, spot in enumerate(["banker", "perfect_pairs_player", "lucky_nines",
                              "majestic_match_banker", "golden_talons_banker"]):  # fmt: skip
        rnd.place(Wager(f"b{i}", "p1", spot, 1000))
    rnd.close_betting()
    events = []
    for card in parse_cards("2S 9H 3D 3H"):  # P 5 draws; B 9H 3H = 2, suited; one nine
        events += rnd.provide_card(card)
    settled = [e.settlement.wager.spot for e in events if isinstance(e, WagerSettled)]
    assert sorted(settled) == ["lucky_nines", "majestic_match_banker", "perfect_pairs_player"]
    kinds = [type(e).__name__ for e in events]
    assert kinds.index("InitialCountsAnnounced") < kinds.index("WagerSettled")
    assert kinds.index("WagerSettled") < kinds.index("ThirdCardDecided")
    assert rnd.pending() == CardRequest("player")
    assert {w.spot for w in rnd.wagers} == {"banker", "golden_talons_banker"}
    # losers collected first (631a.12): the pair lost, then the wins are paid
    results = [e.settlement.outcome.result for e in events if isinstance(e, WagerSettled)]
    assert results == [Result.LOSE, Result.WIN, Result.WIN]
    events = list(rnd.provide_card(Card.parse("5C")))  # P 0; B 2 draws (631a.11(c))
    events += rnd.provide_card(Card.parse("KC"))
    assert isinstance(events[-1], RoundSettled)
    assert any(isinstance(e, ResultAnnounced) for e in events)
    assert rnd.phase is Phase.SETTLED and rnd.wagers == ()


def test_initial_counts_are_announced() -> None:
    # 631b.1(d), 631b.7(c): the Point Counts are announced once the four cards are shown.
    played = play(TableConfig(), [], "9S 2H KS 3H")
    (announced,) = [e for e in played.events if isinstance(e, InitialCountsAnnounced)]
    assert (announced.player_count, announced.banker_count, announced.natural) == (9, 5, True)
    assert play_out(parse_cards("9S 2H KS 3H")).describe() == "player 9-5"


# -- rejections: each code, the offending value, nothing changed ------------------------------


def _round(config: TableConfig | None = None) -> BaccaratRound:
    config = config or TableConfig(side_wagers={"perfect_pairs": "A", "majestic_match": None})
    rnd = BaccaratRound(config, "r")
    rnd.open()
    return rnd


def _rejects(rnd: BaccaratRound, wager: Wager, code: str, value: object) -> None:
    before = rnd.wagers
    assert not rnd.can_place(wager)
    with pytest.raises(IllegalAction) as info:
        rnd.place(wager)
    assert (info.value.code, info.value.value) == (code, value)
    assert rnd.wagers == before


@pytest.mark.parametrize("amount", [0, -100, 250.0, True, "500", None])
def test_bad_amount(amount: object) -> None:
    _rejects(_round(), Wager("b", "p", "player", amount), BAD_AMOUNT, amount)  # type: ignore[arg-type]


def test_table_limits() -> None:
    rnd = _round(TableConfig(limits={"player": Limits(500, 2000)}))
    _rejects(rnd, Wager("b", "p", "player", 499), BELOW_MINIMUM, 499)
    _rejects(rnd, Wager("b", "p", "player", 2001), ABOVE_MAXIMUM, 2001)
    rnd.place(Wager("b1", "p", "player", 1500))
    # the maximum applies to the player's total on the spot
    _rejects(rnd, Wager("b2", "p", "player", 600), ABOVE_MAXIMUM, 2100)
    rnd.place(Wager("b2", "q", "player", 600))  # another player's spot


def test_unknown_and_not_offered_wagers() -> None:
    rnd = _round()
    _rejects(rnd, Wager("b", "p", "dragon_7", 100), UNKNOWN_WAGER, "dragon_7")
    # 631b.5(c)(3): Lucky Six exists, but only at a commission-free table
    _rejects(rnd, Wager("b", "p", "lucky_six", 100), WAGER_NOT_OFFERED, "lucky_six")
    _rejects(rnd, Wager("b", "p", "golden_talons_player", 100), WAGER_NOT_OFFERED,
             "golden_talons_player")  # fmt: skip


def test_side_wager_needs_a_player_or_banker_wager() -> None:
    # 631a.8(a): a Player's or Banker's Hand wager first; a Tie wager is not enough.
    rnd = _round()
    _rejects(rnd, Wager("s", "p", "perfect_pairs_player", 100), MAIN_WAGER_REQUIRED,
             "perfect_pairs_player")  # fmt: skip
    rnd.place(Wager("t", "p", "tie", 100))
    _rejects(rnd, Wager("s", "p", "perfect_pairs_player", 100), MAIN_WAGER_REQUIRED,
             "perfect_pairs_player")  # fmt: skip
    rnd.place(Wager("m", "q", "banker", 100))  # someone else's main wager does not count
    _rejects(rnd, Wager("s", "p", "perfect_pairs_player", 100), MAIN_WAGER_REQUIRED,
             "perfect_pairs_player")  # fmt: skip
    rnd.place(Wager("m", "p", "player", 100))
    assert isinstance(rnd.place(Wager("s", "p", "perfect_pairs_player", 100))[0], BetAccepted)


def test_majestic_match_may_be_placed_alone() -> None:
    # 631b.7(b): "without the necessity of placing a Baccarat wager".
    rnd = _round()
    rnd.place(Wager("m", "p", "majestic_match_player", 100))
    rnd.close_betting()
    assert [w.spot for w in rnd.wagers] == ["majestic_match_player"]


def test_duplicate_bet_id_and_unknown_bet() -> None:
    # docs/architecture.md, "Money": a retried placement is recognised, never charged twice.
    rnd = _round()
    rnd.place(Wager("b", "p", "player", 100))
    _rejects(rnd, Wager("b", "p", "banker", 100), DUPLICATE_BET_ID, "b")
    rnd.place(Wager("b", "q", "banker", 100))  # bet ids are per player
    with pytest.raises(IllegalAction) as info:
        rnd.cancel("p", "nope")
    assert (info.value.code, info.value.value) == (UNKNOWN_BET, "nope")


def test_cancelling_the_main_wager_under_side_wagers() -> None:
    # 631a.8(a): the side wager would be left without its Baccarat wager.
    rnd = _round()
    rnd.place(Wager("m", "p", "banker", 100))
    rnd.place(Wager("s", "p", "perfect_pairs_banker", 100))
    with pytest.raises(IllegalAction) as info:
        rnd.cancel("p", "m")
    assert (info.value.code, info.value.value) == (MAIN_WAGER_IN_USE, "m")
    rnd.place(Wager("m2", "p", "player", 100))
    rnd.cancel("p", "m")  # another main wager remains
    rnd.cancel("p", "s")
    rnd.cancel("p", "m2")
    assert rnd.wagers == ()


def test_no_more_bets() -> None:
    # 631a.9: no wager is placed, altered or withdrawn after "no more bets".
    rnd = _round()
    rnd.place(Wager("b", "p", "player", 100))
    rnd.close_betting()
    _rejects(rnd, Wager("c", "p", "banker", 100), BETTING_CLOSED, "dealing")
    with pytest.raises(IllegalAction) as info:
        rnd.cancel("p", "b")
    assert info.value.code == BETTING_CLOSED


def test_commands_out_of_phase() -> None:
    # 631a.9: betting opens, "no more bets", then the deal; nothing out of that order.
    rnd = BaccaratRound(TableConfig(), "r")
    for command in (lambda: rnd.place(Wager("b", "p", "player", 100)),
                    rnd.close_betting, lambda: rnd.provide_card(Card.parse("AS"))):  # fmt: skip
        with pytest.raises(IllegalAction) as info:
            command()
        assert info.value.code == NOT_IN_PHASE
    rnd.open()
    for command in (rnd.open, lambda: rnd.provide_card(Card.parse("AS"))):
        with pytest.raises(IllegalAction) as info:
            command()
        assert info.value.code == NOT_IN_PHASE
    played = play(TableConfig(), [], "9S 2H KS 3H")
    for command in (played.round.close_betting, lambda: played.round.void("late")):
        with pytest.raises(IllegalAction) as info:
            command()
        assert info.value.code == NOT_IN_PHASE


def test_void_returns_unsettled_wagers_and_keeps_settled_ones() -> None:
    # 631a.15 / rules README: a device fault voids the round, wagers returned in full.
    config = TableConfig(side_wagers={"perfect_pairs": "A"})
    rnd = BaccaratRound(config, "r")
    rnd.open()
    rnd.place(Wager("m", "p", "player", 1000))
    rnd.place(Wager("s", "p", "perfect_pairs_player", 1000))
    rnd.close_betting()
    for card in parse_cards("2S 9H 2S 3H"):  # Perfect Pair settled; the Player must draw
        rnd.provide_card(card)
    events = rnd.void("card reader fault")
    settled = [e.settlement for e in events if isinstance(e, WagerSettled)]
    assert [(s.wager.bet_id, s.outcome.result, s.returned) for s in settled] == [
        ("m", Result.VOID, 1000)
    ]
    assert isinstance(events[-1], RoundVoided) and rnd.phase is Phase.VOIDED
    assert [s.returned for s in rnd.settlements] == [26000, 1000]


# -- configuration (the operator's Rules Submission) ------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "section"),
    [
        ({"decks": 7}, "631a.3"),
        ({"side_wagers": {"lucky_nines": "A"}}, "631b.4(a)"),
        ({"side_wagers": {"lucky_six": None}}, "631b.5(c)(3)"),
        ({"side_wagers": {"rising_phoenix_bonus": None}}, "631b.8(g)(4)"),
        ({"side_wagers": {"perfect_pairs": "D"}}, "631b.1(e)"),
        ({"side_wagers": {"dragon_bonus": None}}, "601a.2"),
        ({"side_wagers": {"heavenly_9_progressive": None},
          "limits": {"heavenly_9_progressive": Limits(100, 1000)}}, "631b.2(c)"),
        ({"mystery_bonus": MYSTERY_BONUS_CONFIGS["A-$1"]}, "631b.6(a)"),
        ({"limits": {"fortune_7": Limits(100, 1000)}}, "601a.2"),
        # 631b.8(g): Rising Phoenix permits its own wagers, Golden Talons and Harmony only.
        *[({"variant": v, "side_wagers": {family: letter}}, "631b.8(g)")
          for v in (Variant.RISING_PHOENIX, Variant.RISING_PHOENIX_COMMISSION_FREE)
          for family, letter in (("perfect_pairs", "A"), ("five_treasures", "A"),
                                 ("heavenly_9_progressive", None), ("majestic_match", None),
                                 ("lucky_six", None))],
        ({"variant": Variant.RISING_PHOENIX, "automated": True,
          "side_wagers": {"lucky_nines": "A"}}, "631b.8(g)"),
        # 631b.6(c)(4): one of the twelve configurations, nothing else.
        ({"side_wagers": {"heavenly_9_progressive": None},
          "mystery_bonus": MysteryBonusConfig("bogus", 100, 1, 2, Fraction(9, 10))},
         "631b.6(c)(4)"),
    ],
)  # fmt: skip
def test_configurations_the_rules_do_not_allow(kwargs: dict[str, object], section: str) -> None:
    with pytest.raises(ConfigError):
        TableConfig(**kwargs)  # type: ignore[arg-type]


def test_lucky_nines_on_an_automated_table() -> None:
    # 631b.4(a): offered only on a fully automated electronic table.
    config = TableConfig(automated=True, side_wagers={"lucky_nines": "D"})
    assert "lucky_nines" in config.spots


def test_every_variant_offers_its_wagers() -> None:
    # 631b.5(c), 631b.8(g)(4): each variant's own optional wagers.
    assert "lucky_six" in TableConfig.everything(Variant.COMMISSION_FREE).spots
    rp = TableConfig.everything(Variant.RISING_PHOENIX).spots
    assert "sun_7" in rp and "player_pair" in rp and "lucky_six" not in rp
    assert "golden_talons_banker" in rp and "harmony_progressive" in rp  # 631b.8(g)(5), (6)
    assert "perfect_pairs_player" not in rp and "fortune_7" not in rp
    with pytest.raises(ConfigError):
        Limits(0, 10)
