"""Down Under Blackjack settlement (685a), table-driven by section, on the rules functions the
engine and the par sheet share."""

from __future__ import annotations

from fractions import Fraction

import pytest

from rng.cards import Card, parse_cards
from server.games.down_under_blackjack import (
    HoleRange,
    PlayedHand,
    bet_outcome,
    dealer_total,
    insurance_outcome,
    match_the_dealer_outcome,
    player_total,
)
from server.games.wagers import Result


def _ranks(text: str) -> tuple:  # type: ignore[type-arg]
    return tuple(c.rank for c in parse_cards(text))


@pytest.mark.parametrize(
    ("section", "cards", "total"),
    [
        ("685a.3(d)(3) dealer two aces are 22 (docs/interpretations.md, 15)", "AS AH", 22),
        ("685a.3(d)(3) dealer soft 22", "AS 5H 6D", 22),
        ("685a.3(d)(3) dealer ace becomes 1 above 22", "AS 6H 6D", 13),
        ("685a.3(d)(3) dealer soft 17", "AS 6H", 17),
        ("dealer hard 26", "10S 6H QD", 26),
    ],
)
def test_dealer_totals(section: str, cards: str, total: int) -> None:
    assert dealer_total(_ranks(cards)) == total, section


def test_player_totals() -> None:
    # 685a.3(d)(3): a player's ace is 11 unless that exceeds 21.
    assert player_total(_ranks("AS AH")) == 12
    assert player_total(_ranks("AS 10H")) == 21
    assert player_total(_ranks("AS 5H 6D")) == 12


W, L, P = Result.WIN, Result.LOSE, Result.PUSH

BET_CASES = [
    # section, player cards, split?, dealer final cards, result, net
    ("685a.7(n)(1) dealer 22 pays a 21", "5S 6H 10D", False, "10C 2C 10H", W, 1),
    ("685a.7(n)(1) dealer 22 pays two original Large", "KS QH", False, "AS AH", W, 1),
    ("685a.7(n)(1) two Large, hit, still paid", "AS AH 7D", False, "10C 2C 10H", W, 1),
    ("685a.7(n)(1) dealer 22 pushes other hands", "10S 6H 4D", False, "10C 2C 10H", P, 0),
    ("685a.7(n)(1) a split hand of Large cards pushes", "KS 10H", True, "AS 5H 6D", P, 0),
    ("685a.7(n)(1) a split 21 is paid", "KS 5H 6D", True, "AS 5H 6D", W, 1),
    (
        "docs/interpretations.md, 15 over 21 loses against 22",
        "10S 6H 9D",
        False,
        "10C 2C 10H",
        L,
        -1,
    ),
    ("685a.7(o)(1) dealer over 22", "10S 2H", False, "10C 6C 10H", W, 1),
    ("685a.7(o)(2) higher total", "10S 9H", False, "10C 8C", W, 1),
    ("685a.7(p) equal totals push", "10S 8H", False, "10C 8C", P, 0),
    ("685a.7(q)(1) player over 21", "10S 6H 10D", False, "10C 6C 10H", L, -1),
    ("685a.7(q)(2) dealer higher", "10S 7H", False, "10C 8C", L, -1),
    ("685a.11(a) Blackjack 3 to 2", "AS KH", False, "10C 8C", W, Fraction(3, 2)),
    ("685a.1 21 after a split is no Blackjack", "AS KH", True, "10C 8C", W, 1),
    ("685a.7(h)(1) Blackjack against dealer Blackjack pushes", "AS KH", False, "AC QC", P, 0),
    ("685a.7(h)(2) dealer Blackjack collects the Bet", "10S 9H", False, "AC QC", L, -1),
]


@pytest.mark.parametrize(("section", "cards", "split", "dealer", "result", "net"), BET_CASES)
def test_bet_outcome(
    section: str, cards: str, split: bool, dealer: str, result: Result, net: Fraction
) -> None:
    outcome = bet_outcome(PlayedHand(_ranks(cards), split), _ranks(dealer))
    assert (outcome.result, outcome.net) == (result, net), section


def test_double_and_split_wagers_after_dealer_blackjack_are_returned() -> None:
    # 685a.9(b), 685a.10(d): only the initial Bet is collected.
    hand = PlayedHand(_ranks("5S 6H 2D"))
    assert bet_outcome(hand, _ranks("AC QC"), extra=True).result is Result.PUSH
    assert bet_outcome(hand, _ranks("AC QC")).result is Result.LOSE
    # A doubled hand otherwise follows its hand (685a.9).
    assert bet_outcome(hand, _ranks("10C 7C"), extra=True).result is Result.LOSE


@pytest.mark.parametrize(
    ("section", "player", "up", "decks", "net"),
    [
        ("685a.11(c) suited match, 6 decks", "7S 2H", "7S", 6, Fraction(11)),
        ("685a.11(c) unsuited match, 6 decks", "7H 2H", "7S", 6, Fraction(4)),
        ("docs/interpretations.md, 15 two matches add", "7S 7D", "7S", 6, Fraction(15)),
        ("685a.11(c) suited match, 8 decks", "7S 2H", "7S", 8, Fraction(14)),
        ("685a.11(c) unsuited match, 8 decks", "2H 7C", "7S", 8, Fraction(3)),
        ("685a.11(c) two suited, 8 decks", "7S 7S", "7S", 8, Fraction(28)),
        ("685a.7(f) a king matches only a king", "KS 10S", "QS", 6, Fraction(-1)),
        ("685a.7(f) no match", "2S 3S", "4S", 6, Fraction(-1)),
    ],
)
def test_match_the_dealer(section: str, player: str, up: str, decks: int, net: Fraction) -> None:
    outcome = match_the_dealer_outcome(parse_cards(player), Card.parse(up), decks)
    assert outcome.net == net, section


def test_insurance_and_ranges() -> None:
    # 685a.8(a), 685a.11(b): Insurance wins 2 to 1 on a 10-value hole card.
    assert insurance_outcome(Card.parse("KD")).net == 2
    assert insurance_outcome(Card.parse("AD")).result is Result.LOSE
    # 685a.3(d): the ranges.
    assert [HoleRange.of(c) for c in parse_cards("2S 5S 6S 9S 10S KS AS")] == [
        HoleRange.SMALL, HoleRange.SMALL, HoleRange.MEDIUM, HoleRange.MEDIUM,
        HoleRange.LARGE, HoleRange.LARGE, HoleRange.LARGE,
    ]  # fmt: skip
