"""The payouts players read in the rules dialog are the odds the engine settles at.

For every table of the demo lobby and every payout line its ``rules`` message shows, the
odds are derived from the engine itself — the exact par sheet (which prices every line with
the same ``judge`` that settles real rounds) for Baccarat, and the settlement functions or a
whole scripted round for the other games — and compared with the displayed words. No odds
are typed here: only cards and spots that make each line happen. A line shown that the
engine never pays, or a line the engine pays that is not shown, fails too.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from fractions import Fraction
from functools import cache
from typing import Any

import pytest

from rng.cards import Card, parse_cards
from rng.sources import HmacDrbgSource
from rng.wheel_layouts import BIG_SIX_ORDER
from server.config import load_config
from server.games.baccarat.config import Variant
from server.games.baccarat.par_sheet import par_sheet, shoe_of
from server.games.baccarat.side_wagers import JACKPOT_NET
from server.games.baccarat.table import BaccaratGame
from server.games.big_six_table import BigSixGame
from server.games.big_six_wheel import BIG_SIX_SPOTS, big_six_outcome
from server.games.casino_war.round import CasinoWarRound
from server.games.casino_war.table import CasinoWarGame
from server.games.chance import CardRequest
from server.games.down_under_blackjack.rules import (
    PlayedHand,
    bet_outcome,
    insurance_outcome,
    match_the_dealer_outcome,
)
from server.games.down_under_blackjack.table import DownUnderBlackjackGame
from server.games.events import WagerSettled
from server.games.roulette.layout import WagerKind, placements
from server.games.roulette.settlement import outcome as roulette_outcome
from server.games.roulette.table import RouletteGame
from server.games.table import TableGame
from server.games.twenty_one_baccarat.hands import Coup
from server.games.twenty_one_baccarat.hands import outcome as twenty_one_outcome
from server.games.twenty_one_baccarat.table import TwentyOneBaccaratGame
from server.games.wagers import Wager
from server.tables.games import build_game

METER = "100% of the progressive meter"
NOT_PAYOUTS = {"lights"}  # Down Under: the reader's colours, shown with the pays

Odds = Fraction | str  # a fraction, or METER


def parse_odds(text: str) -> Odds:
    """Displayed words back to net odds per unit staked."""
    if text == METER:
        return METER
    if text == "push":
        return Fraction(0)
    match = re.fullmatch(r"(\d+) (to|for) (\d+)", text)
    assert match, f"not odds in the regulation's words: {text!r}"
    win, word, stake = int(match[1]), match[2], int(match[3])
    return Fraction(win, stake) - (1 if word == "for" else 0)


def displayed(game: TableGame) -> dict[str, dict[str, Odds]]:
    shown: dict[str, dict[str, Odds]] = {}
    for spot, table in game.rules()["paytables"].items():
        if spot in NOT_PAYOUTS:
            continue
        assert set(table) == {"section", "letter", "pays"}, spot
        assert re.match(r"6\d\d[ab]\.", table["section"]), table["section"]
        shown[spot] = {line: parse_odds(text) for line, text in table["pays"].items()}
    return shown


# -- the odds the engine settles at, game by game -----------------------------------------


@cache
def _baccarat_rows(decks: int, variant: Variant) -> dict[tuple[str, str | None], Any]:
    return {(r.wager, r.paytable): r for r in par_sheet(shoe_of(decks), (variant,))}


def baccarat_settles(game: BaccaratGame) -> dict[str, dict[str, Odds]]:
    rows = _baccarat_rows(game.config.decks, game.config.variant)
    settles: dict[str, dict[str, Odds]] = {}
    for spot in game.config.spots:
        letter = game.config.paytable(spot).letter
        row = rows[(spot, letter)]
        settles[spot] = {
            # The par sheet values a progressive award at its fixed-odds part, JACKPOT_NET.
            line.name: METER if line.net == JACKPOT_NET else line.net
            for line in row.outcomes
            if line.name != "lose"
        }
    return settles


def _cards(text: str) -> tuple[Card, ...]:
    return tuple(parse_cards(text))


def twenty_one_settles(game: TwentyOneBaccaratGame) -> dict[str, dict[str, Odds]]:
    def net(spot: str, player: str, banker: str, letter: str | None = None) -> Fraction:
        return twenty_one_outcome(spot, Coup(_cards(player), _cards(banker)), letter).net

    def hand(spot: str) -> dict[str, Odds]:
        mine, other = ("player", "banker") if spot == "player" else ("banker", "player")

        def deal(me: str, them: str) -> Fraction:
            return net(spot, **{mine: me, other: them})

        return {
            f"{spot}_wins": deal("KS 9H", "QD 8C"),
            f"{spot}_wins_with_17": deal("KS 7H", "QD 5C JH"),  # the other hand is over 21
            "tie": deal("KS 9H", "QD 9C"),
        }

    settles: dict[str, dict[str, Odds]] = {"player": hand("player"), "banker": hand("banker")}
    if game.table.tie_offered:
        settles["tie"] = {"tie": net("tie", "KS 9H", "QD 9C")}
    letter = game.table.bonus_paytable
    if letter:
        bonus = {
            "three_7s": "7S 7H 7D",
            "three_of_a_kind": "5S 5H 5D",
            "straight": "4S 5H 6D",
            "three_card_21": "9S 5H 7D",
            "pair": "8S 8H 2D",
        }
        settles["bonus"] = {
            name: net("bonus_player", cards, "KS 9H", letter) for name, cards in bonus.items()
        }
    return settles


def _play_war(game: CasinoWarGame, first: str, war: str) -> dict[str, Fraction]:
    """A whole Casino War round in box 1: the original deal ``first`` (player, dealer), War,
    three burns and the War deal ``war``; the net odds each settled wager kind got."""
    r = CasinoWarRound(game.table, "r")
    r.open()
    r.place(Wager("i", "al", "initial:1", 1000))
    r.place(Wager("t", "al", "tie:1", 1000))
    r.close_betting()
    events: list[object] = []

    def deal(cards: str) -> None:
        for card in parse_cards(cards):
            assert isinstance(r.pending(), CardRequest)
            events.extend(r.provide_card(card))

    deal(first)
    if war:
        events.extend(r.decide("al", "initial:1", "war"))
        deal("2C 3C 4C " + war)
    return {
        e.settlement.wager.spot.split(":")[0]: e.settlement.outcome.net
        for e in events
        if isinstance(e, WagerSettled)
    }


def casino_war_settles(game: CasinoWarGame) -> dict[str, dict[str, Odds]]:
    return {
        "initial": {"win": _play_war(game, "KH QC", "")["initial"]},
        "tie": {"tie_hand": _play_war(game, "7H 7S", "")["tie"]},
        "war": {
            "war_won": _play_war(game, "7H 7S", "KH QC")["war"],
            "war_tie": _play_war(game, "7H 7S", "9H 9S")["war"],
        },
    }


def down_under_settles(game: DownUnderBlackjackGame) -> dict[str, dict[str, Odds]]:
    hand = PlayedHand
    ranks = [c.rank for c in _cards("KD 8C")]  # the dealer stands on 18
    settles: dict[str, dict[str, Odds]] = {
        "bet": {
            "win": bet_outcome(hand(tuple(c.rank for c in _cards("KS 9H"))), ranks).net,
            "blackjack": bet_outcome(hand(tuple(c.rank for c in _cards("AS KH"))), ranks).net,
        },
        "insurance": {"win": insurance_outcome(Card.parse("QH")).net},
    }
    if game.table.match_the_dealer:
        up, decks = Card.parse("7S"), game.table.decks
        settles["match_the_dealer"] = {
            "suited_match_each_card": match_the_dealer_outcome(_cards("7S 2D"), up, decks).net,
            "unsuited_match_each_card": match_the_dealer_outcome(_cards("7H 2D"), up, decks).net,
        }
    return settles


def roulette_settles(game: RouletteGame) -> dict[str, dict[str, Odds]]:
    def won(kind: WagerKind) -> Fraction | None:
        placement = next(placements(kind, game.wheel_type), None)
        if placement is None:
            return None  # not on this wheel
        return roulette_outcome(placement, next(iter(placement.numbers))).net

    pays = {k.value: won(k) for k in WagerKind if k is not WagerKind.FIVE_ADJACENT}
    settles: dict[str, dict[str, Odds]] = {
        "roulette": {k: v for k, v in pays.items() if v is not None}
    }
    if game.table.five_adjacent_offered:
        five = won(WagerKind.FIVE_ADJACENT)
        assert five is not None
        settles["five_adjacent"] = {"whole_wager": five}
    return settles


def big_six_settles(game: BigSixGame) -> dict[str, dict[str, Odds]]:
    return {
        "big_six": {
            spot: big_six_outcome(symbol, BIG_SIX_ORDER.index(symbol)).net
            for spot, symbol in BIG_SIX_SPOTS.items()
        }
    }


SETTLES: dict[type, Callable[[Any], dict[str, dict[str, Odds]]]] = {
    BaccaratGame: baccarat_settles,
    TwentyOneBaccaratGame: twenty_one_settles,
    CasinoWarGame: casino_war_settles,
    DownUnderBlackjackGame: down_under_settles,
    RouletteGame: roulette_settles,
    BigSixGame: big_six_settles,
}

DEMO = load_config(None).tables


@pytest.mark.parametrize("settings", DEMO, ids=[t.id for t in DEMO])
def test_every_displayed_payout_is_what_the_engine_pays(settings: Any) -> None:
    game = build_game(settings, HmacDrbgSource("payouts"))
    assert displayed(game) == SETTLES[type(game)](game)


def test_every_game_and_variant_is_in_the_demo_lobby() -> None:
    # The comparison above covers only the tables the demo lobby has: it must have them all.
    games = {build_game(t, HmacDrbgSource("payouts")) for t in DEMO}
    assert {type(g) for g in games} == set(SETTLES)
    assert {g.variant for g in games if isinstance(g, BaccaratGame)} == {v.value for v in Variant}


def test_parse_odds_reads_the_regulation_words() -> None:
    assert parse_odds("19 to 20") == Fraction(19, 20)
    assert parse_odds("299 for 1") == 298
    assert parse_odds("push") == 0
    assert parse_odds(METER) == METER


def test_the_rules_say_what_the_progressive_meters_are_and_why_harmony_starts_at_zero() -> None:
    # 631b.10(j) sets Harmony's rates (paytable A: 15% to the meter, 3% to the reserve that
    # reseeds it) but no opening seed; 631b.2(i) seeds Heavenly 9 at $10,000 and adds 10%.
    table = next(t for t in DEMO if t.id == "baccarat")
    game = build_game(table, HmacDrbgSource("meters"))
    assert isinstance(game, BaccaratGame)
    summary = game.rules()["summary"]
    for words in ("631b.10(j), paytable A", "15% of every Harmony", "further 3%", "$0.00"):
        assert words in summary, words
    for words in ("631b.2", "$10,000.00", "10% of every Heavenly 9"):
        assert words in summary, words
    assert game.meter_amounts()["harmony_progressive"] == 0  # what the lobby shows: $0
    harmony = game.meters.harmony
    assert harmony is not None
    harmony.contribute(10_000)  # a $100 Harmony wager
    assert (harmony.amount, harmony.reserve) == (1_500, 300)  # $15 to the meter, $3 reserve
    assert game.meter_amounts()["harmony_progressive"] == 1_500


def test_tables_without_progressives_say_nothing_about_meters() -> None:
    table = next(t for t in DEMO if t.id == "baccarat-no-commission")
    assert "meter" not in build_game(table, HmacDrbgSource("meters")).rules()["summary"]
