# ruff: noqa: E501
"""Every paytable line of every Baccarat wager, played through the engine with scripted
cards. The odds are transcribed here from the regulation text, independently of
``server/games/baccarat/paytables.py``; each case names its section."""

from __future__ import annotations

from fractions import Fraction

import pytest

from server.games.baccarat.config import TableConfig, Variant
from server.games.events import WagerSettled
from server.games.wagers import Result
from tests.games.baccarat.baccarat_script import play

STAKE = 1000

# Scripted deals (dealing order P, B, P, B, then third cards). Comments: what they make.
NAT_TIE_KINGS = "KS KH KD KC KS KH"  # six kings, 0-0 tie, both draw: six of a kind
SUITED_9_TIE = "KS KS KS KS 9S 9S"  # both 3-card 9 in spades: tie, same suit
COLOUR_9_TIE = "KS KS KS KS 9S 9C"  # both 3-card 9, black: same colour, not suit
MIXED_9_TIE = "KS KH KS KH 9S 9D"  # both 3-card 9, red and black
FOUR_NINES = "9S 9H 9D 9C"  # natural 8-8 tie with four nines
FOUR_8S = "8S 8H 8D 8C"  # 6-6 tie, four cards
SIX_ZEROS = "KS KH QS QH JS JH"  # 0-0 tie with six 0-value cards, not of a kind
NO_PAIR_BANKER_WINS = "9S 9S 2H 3C 2H 2H"  # P 9S 2H =1, B 9S 3C =2 -> ... banker wins

# 631a.13, 631b.5(h)-(j), 631b.8(g)(1)-(3): main wagers by variant.
MAIN_CASES = [
    ("631a.13(a)", Variant.STANDARD, "player", "9S 9S 9S 2H", "1 to 1"),
    ("631a.13(b)", Variant.STANDARD, "banker", NO_PAIR_BANKER_WINS, "19 to 20"),
    ("631a.8(a)(2)", Variant.STANDARD, "banker", NAT_TIE_KINGS, "push"),
    ("631a.8(a)(1)", Variant.STANDARD, "player", NO_PAIR_BANKER_WINS, "lose"),
    ("631a.13(c)", Variant.STANDARD, "tie", NAT_TIE_KINGS, "8 to 1"),
    ("631a.8(a)(3)", Variant.STANDARD, "tie", NO_PAIR_BANKER_WINS, "lose"),
    ("631b.5(i)", Variant.COMMISSION_FREE, "banker", "9H 6D AC KD 10S", "1 to 2"),
    ("631b.5(i)", Variant.COMMISSION_FREE, "banker", NO_PAIR_BANKER_WINS, "1 to 1"),
    ("631b.5(h)", Variant.COMMISSION_FREE, "player", "9S 9S 9S 2H", "1 to 1"),
    ("631b.8(g)(1)", Variant.RISING_PHOENIX, "banker", NO_PAIR_BANKER_WINS, "19 to 20"),
    ("631b.8(g)(1)(iv)", Variant.RISING_PHOENIX_COMMISSION_FREE, "banker", "7H QC 3C JC AH 7S", "push"),
    ("631b.8(g)(1)", Variant.RISING_PHOENIX, "banker", "7H QC 3C JC AH 7S", "19 to 20"),
    ("631b.8(g)(1)", Variant.RISING_PHOENIX_COMMISSION_FREE, "banker", NO_PAIR_BANKER_WINS, "1 to 1"),
]  # fmt: skip


def _returned(odds: str, stake: int = STAKE) -> int:
    if odds == "lose" or odds == "jackpot":
        return 0
    if odds == "push":
        return stake
    if " for " in odds:
        total = Fraction(odds.split(" for ")[0])
        return int(stake * total)
    win, _, per = odds.partition(" to ")
    return int(stake + stake * Fraction(win) / Fraction(per))


@pytest.mark.parametrize(("section", "variant", "spot", "cards", "odds"), MAIN_CASES)
def test_main_wagers(section: str, variant: Variant, spot: str, cards: str, odds: str) -> None:
    config = TableConfig(variant=variant)
    s = play(config, [(spot, STAKE)], cards).settlement("b0")
    assert s.returned == _returned(odds), section


# (family, spot, {letter: odds...} in the order of ``lines``), with a deal per line.
# Transcribed from the regulation tables.
SIDE_TABLES: list[tuple[str, str, str, list[tuple[str, str]], dict[str | None, list[str]]]] = [
    (
        "631b.1(e)", "perfect_pairs", "perfect_pairs_player",
        [("perfect", SUITED_9_TIE), ("coloured", "4S 9C 4C 9C"), ("mixed", NAT_TIE_KINGS),
         ("none", NO_PAIR_BANKER_WINS)],
        {"A": ["25 to 1", "12 to 1", "6 to 1", "lose"], "B": ["30 to 1", "10 to 1", "5 to 1", "lose"],
         "C": ["25 to 1", "15 to 1", "5 to 1", "lose"]},
    ),
    (
        "631b.1(e)", "perfect_pairs", "perfect_pairs_banker",
        [("perfect", SUITED_9_TIE), ("coloured", "JC 6H KC 6D 9D QS"), ("mixed", NAT_TIE_KINGS),
         ("none", NO_PAIR_BANKER_WINS)],
        {"A": ["25 to 1", "12 to 1", "6 to 1", "lose"], "B": ["30 to 1", "10 to 1", "5 to 1", "lose"],
         "C": ["25 to 1", "15 to 1", "5 to 1", "lose"]},
    ),
    (
        "631b.2(i)", "heavenly_9_progressive", "heavenly_9_progressive",
        [("same suit", SUITED_9_TIE), ("same colour", COLOUR_9_TIE), ("tie", MIXED_9_TIE),
         ("banker 3-card 9", "4D KH 9H 3S 7C 6C"), ("player 3-card 9", "JC 5D AD 9H 8D"),
         ("none", NAT_TIE_KINGS)],
        {None: ["jackpot", "299 for 1", "60 for 1", "9 for 1", "8 for 1", "lose"]},
    ),
    (
        "631b.3(h)", "five_treasures", "fortune_7",
        [("banker wins 3-card 7", "7H QC 3C JC AH 7S"), ("none", NO_PAIR_BANKER_WINS)],
        {"A": ["40 to 1", "lose"], "B": ["40 to 1", "lose"]},
    ),
    (
        "631b.3(h)", "five_treasures", "golden_8",
        [("player wins 3-card 8", "10D QS KD JH 8H QC"), ("none", NO_PAIR_BANKER_WINS)],
        {"A": ["25 to 1", "lose"], "B": ["25 to 1", "lose"]},
    ),
    (
        "631b.3(h)", "five_treasures", "heavenly_9",
        [("both", SUITED_9_TIE), ("either", "JC 5D AD 9H 8D"), ("none", NO_PAIR_BANKER_WINS)],
        {"A": ["75 to 1", "10 to 1", "lose"], "B": ["75 to 1", "10 to 1", "lose"]},
    ),
    (
        "631b.3(h)", "five_treasures", "blazing_7s",
        [("3-card", "10D 5C 2C QC 5D 2D"), ("2-card", "KS 4C 7C 3D"), ("none", NO_PAIR_BANKER_WINS)],
        {"A": ["400 to 1", "lose", "lose"], "B": ["200 to 1", "50 to 1", "lose"]},
    ),
    (
        "631b.3(f)(5)", "five_treasures", "cover_all",
        [("heavenly 9", SUITED_9_TIE), ("fortune 7", "7H QC 3C JC AH 7S"),
         ("2-card blazing", "KS 4C 7C 3D"), ("none", NO_PAIR_BANKER_WINS)],
        # docs/interpretations.md, 5: a 2-card Blazing 7's is N/A under A, so Cover All loses there
        {"A": ["6 to 1", "6 to 1", "lose", "lose"], "B": ["6 to 1", "6 to 1", "6 to 1", "lose"]},
    ),
    (
        "631b.4(e)", "lucky_nines", "lucky_nines",
        [("4 nines", FOUR_NINES), ("3 same suit", "9S 9S 9S 2H"), ("3 nines", "9S 9H 9D 2H"),
         ("2 same suit", "9S 9S 2H 3C 2H 2H"), ("2 nines", "6S 9D 9S 2H 3H KD"),
         ("1 diamond", "2H JD 9D AC 6S 7D"), ("1 nine", "QC 6H 9H AH"), ("none", NAT_TIE_KINGS)],
        {
            "A": ["500 to 1", "250 to 1", "20 to 1", "8 to 1", "5 to 1", "2 to 1", "1 to 1", "lose"],
            "B": ["500 to 1", "250 to 1", "30 to 1", "12 to 1", "5 to 1", "2 to 1", "1 to 1", "lose"],
            "C": ["1000 to 1", "500 to 1", "35 to 1", "16 to 1", "5 to 1", "2 to 1", "1 to 1", "lose"],
            "D": ["2000 to 1", "500 to 1", "15 to 1", "10 to 1", "4 to 1", "2 to 1", "1 to 1", "lose"],
        },
    ),
    (
        "631b.7(d)", "majestic_match", "majestic_match_player",
        [("royal", "KS KH QS QH JS JH"), ("suited", SUITED_9_TIE), ("none", NAT_TIE_KINGS)],
        {None: ["25 to 1", "5 to 2", "lose"]},
    ),
    (
        "631b.7(d)", "majestic_match", "majestic_match_banker",
        [("royal", "KS KH QS QH JS JH"), ("suited", SUITED_9_TIE), ("none", NAT_TIE_KINGS)],
        {None: ["25 to 1", "5 to 2", "lose"]},
    ),
    (
        "631b.9(f)", "golden_talons", "golden_talons_player",
        [("by 9", "AS 5S 3S 5C 5C KC"), ("by 8", "10D QS KD JH 8H QC"), ("by 7", "JC 6H KC 6D 9D QS"),
         ("by 6", "AC 5S QS 8H 8H"), ("by 5", "JC 5D AD 9H 8D"), ("by 4", "6H 9S 10S 3C JH"),
         ("natural win", "9S 9S 9S 2H"), ("natural tie", FOUR_NINES), ("other tie", NAT_TIE_KINGS),
         ("lose", NO_PAIR_BANKER_WINS)],
        {
            "A": ["30 to 1", "10 to 1", "6 to 1", "4 to 1", "2 to 1", "1 to 1", "1 to 1", "push", "lose", "lose"],
            "B": ["20 to 1", "10 to 1", "5 to 1", "4 to 1", "2 to 1", "1 to 1", "1 to 1", "2 to 1", "lose", "lose"],
            "C": ["30 to 1", "12 to 1", "5 to 1", "3 to 1", "3 to 1", "1 to 1", "1 to 1", "push", "lose", "lose"],
            "D": ["20 to 1", "8 to 1", "7 to 1", "4 to 1", "3 to 1", "1 to 1", "1 to 1", "push", "lose", "lose"],
            "E": ["30 to 1", "10 to 1", "4 to 1", "4 to 1", "2 to 1", "2 to 1", "1 to 1", "push", "lose", "lose"],
        },
    ),
    (
        "631b.9(f)", "golden_talons", "golden_talons_banker",
        [("by 9", "4D KH 9H 3S 7C 6C"), ("by 8", "QH 10D AD 3D QS 6D"), ("by 7", "4H 6S AH AH 5H"),
         ("by 6", "9H 6D AC KD 10S"), ("by 5", "9S KD AH 7D 2C"), ("by 4", "KH 6C 10H 9C AS"),
         ("natural win", "5C 8H KC KD"), ("natural tie", FOUR_NINES), ("by 1", NO_PAIR_BANKER_WINS)],
        {
            "A": ["30 to 1", "10 to 1", "6 to 1", "4 to 1", "2 to 1", "1 to 1", "1 to 1", "push", "lose"],
            "B": ["20 to 1", "10 to 1", "5 to 1", "4 to 1", "2 to 1", "1 to 1", "1 to 1", "2 to 1", "lose"],
            "C": ["30 to 1", "12 to 1", "5 to 1", "3 to 1", "3 to 1", "1 to 1", "1 to 1", "push", "lose"],
            "D": ["20 to 1", "8 to 1", "7 to 1", "4 to 1", "3 to 1", "1 to 1", "1 to 1", "push", "lose"],
            "E": ["30 to 1", "10 to 1", "4 to 1", "4 to 1", "2 to 1", "2 to 1", "1 to 1", "push", "lose"],
        },
    ),
    (
        "631b.10(i)", "harmony_progressive", "harmony_progressive",
        [("six of a kind", NAT_TIE_KINGS), ("four 8s", FOUR_8S), ("four of a kind", FOUR_NINES),
         ("six zeros", SIX_ZEROS), ("tie 0, 6 cards, mixed", "10D KS 10H 2S KS 8H"),
         ("tie 4, 5 cards, mixed", "KH 4C 5H 10D 9S"), ("tie 9, 6 cards, one suit", SUITED_9_TIE),
         ("tie 9, 6 cards, mixed", MIXED_9_TIE), ("tie 9, 4 cards", "7H 9D 2S 10S"),
         ("no tie", NO_PAIR_BANKER_WINS)],
        {
            "A": ["jackpot", "1000 for 1", "300 for 1", "100 for 1", "20 for 1", "6 for 1", "3 for 1", "3 for 1", "3 for 1", "lose"],
            "B": ["jackpot", "1000 for 1", "200 for 1", "100 for 1", "20 for 1", "5 for 1", "3 for 1", "3 for 1", "3 for 1", "lose"],
            "C": ["jackpot", "600 for 1", "300 for 1", "100 for 1", "20 for 1", "5 for 1", "5 for 1", "5 for 1", "5 for 1", "lose"],
            "D": ["jackpot", "600 for 1", "300 for 1", "200 for 1", "3 for 1", "3 for 1", "20 for 1", "3 for 1", "3 for 1", "lose"],
            "E": ["jackpot", "1000 for 1", "300 for 1", "100 for 1", "3 for 1", "3 for 1", "20 for 1", "3 for 1", "3 for 1", "lose"],
            "F": ["jackpot", "300 for 1", "300 for 1", "100 for 1", "5 for 1", "5 for 1", "20 for 1", "5 for 1", "5 for 1", "lose"],
            "G": ["jackpot", "600 for 1", "200 for 1", "100 for 1", "3 for 1", "10 for 1", "3 for 1", "3 for 1", "3 for 1", "lose"],
            "H": ["jackpot", "1000 for 1", "200 for 1", "50 for 1", "4 for 1", "8 for 1", "4 for 1", "4 for 1", "3 for 1", "lose"],
            "I": ["jackpot", "300 for 1", "300 for 1", "50 for 1", "6 for 1", "10 for 1", "6 for 1", "6 for 1", "4 for 1", "lose"],
        },
    ),
]  # fmt: skip

CF_CASES = [
    ("631b.5(g)", "pairs", "player_pair", NAT_TIE_KINGS, "11 to 1"),
    ("631b.5(c)(1)", "pairs", "player_pair", NO_PAIR_BANKER_WINS, "lose"),
    ("631b.5(g)", "pairs", "banker_pair", NAT_TIE_KINGS, "11 to 1"),
    ("631b.5(c)(2)", "pairs", "banker_pair", NO_PAIR_BANKER_WINS, "lose"),
    ("631b.5(k)(1)", "lucky_six", "lucky_six", "9H 6D AC KD 10S", "12 to 1"),
    ("631b.5(k)(2)", "lucky_six", "lucky_six", "AC 8C 9C 5D KD 3H", "20 to 1"),
    ("631b.5(c)(3)(ii)", "lucky_six", "lucky_six", NO_PAIR_BANKER_WINS, "lose"),
    ("631b.5(c)(3)(i)", "lucky_six", "lucky_six", "3S 3H 3D 3C", "lose"),  # 6-6: not higher
]

# 631b.8(g)(4), (h)(2): each bonus wager with a deal that wins it and one that loses it.
RP_CASES = [
    ("(i)", "sun_7", "7H QC 3C JC AH 7S", "40 to 1"),
    ("(ii)", "moon_8", "10D QS KD JH 8H QC", "25 to 1"),
    ("(iii)", "nine_over_seven", "QC 6H 9H AH", "25 to 1"),
    ("(iv)", "two_card_8_over_two_card_1", "9S 9S 9S 2H", "50 to 1"),
    ("(v)", "player_wins_three_card_6", "6S 3H 8D 9C 2H QD", "40 to 1"),
    ("(vi)", "banker_wins_1_or_2", "AH 10C KH 2H QD JH", "60 to 1"),
    ("(vii)", "both_8_or_9", SUITED_9_TIE, "20 to 1"),
    ("(viii)", "one_over_zero", "8C KC 3S QS QH 10D", "90 to 1"),
    ("(ix)", "three_card_6_over_three_card_3", "JS 2H QH AS 6H QC", "150 to 1"),
    ("(x)", "three_card_8_over_three_card_0", "10D QS KD JH 8H QC", "130 to 1"),
    ("(xi)", "banker_wins_over_two_card_7", "10C 4H 7D 4H", "30 to 1"),
    ("(xii)", "three_card_9_over_three_card_6", "3C 7C 9C 8H 4D 4C", "200 to 1"),
    ("(xiii)", "three_card_9_over_three_card_8", "4H JH 8S 3H 7S 5S", "200 to 1"),
    ("(xiv)", "player_three_card_8_over_banker_three_card_0", "10D QS KD JH 8H QC", "250 to 1"),
    ("(xv)", "tie_0", NAT_TIE_KINGS, "150 to 1"),
    ("(xvi)", "tie_1_2_3", "4D 7H JD 4H 9D 2D", "70 to 1"),
    ("(xvii)", "tie_4_5_6_7", FOUR_8S, "15 to 1"),
    ("(xviii)", "tie_8_9", SUITED_9_TIE, "40 to 1"),
    ("(xix)", "player_pair", NAT_TIE_KINGS, "11 to 1"),
    ("(xx)", "banker_pair", NAT_TIE_KINGS, "11 to 1"),
]


def _side_cases() -> list[object]:
    cases = []
    for section, family, spot, deals, tables in SIDE_TABLES:
        for letter, odds in tables.items():
            assert len(odds) == len(deals), (spot, letter)
            for (what, cards), expected in zip(deals, odds, strict=True):
                cases.append(
                    pytest.param(section, family, letter, spot, cards, expected, id=f"{spot}-{letter}-{what}")
                )  # fmt: skip
    return cases


def _config(family: str, letter: str | None, variant: Variant = Variant.STANDARD) -> TableConfig:
    return TableConfig(variant=variant, automated=True, side_wagers={family: letter})


def _side_amount(spot: str) -> int:
    return 500 if spot == "heavenly_9_progressive" else STAKE


@pytest.mark.parametrize(("section", "family", "letter", "spot", "cards", "odds"), _side_cases())
def test_every_paytable_line(
    section: str, family: str, letter: str | None, spot: str, cards: str, odds: str
) -> None:
    amount = _side_amount(spot)
    played = play(_config(family, letter), [("banker", STAKE), (spot, amount)], cards)
    s = played.settlement("b1")
    assert s.returned == _returned(odds, amount), section
    if odds == "jackpot":
        # 100% of the progressive meter; the fixed-odds part returns nothing (for 1).
        from server.games.baccarat.events import ProgressiveAwarded

        awards = [e for e in played.events if isinstance(e, ProgressiveAwarded)]
        assert [a.bet_id for a in awards] == ["b1"] and awards[0].amount > 0
        assert s.outcome.result is Result.WIN


@pytest.mark.parametrize(("section", "family", "spot", "cards", "odds"), CF_CASES)
def test_commission_free_side_wagers(
    section: str, family: str, spot: str, cards: str, odds: str
) -> None:
    config = _config(family, None, Variant.COMMISSION_FREE)
    played = play(config, [("player", STAKE), (spot, STAKE)], cards)
    assert played.settlement("b1").returned == _returned(odds), section


@pytest.mark.parametrize(
    "variant", [Variant.RISING_PHOENIX, Variant.RISING_PHOENIX_COMMISSION_FREE]
)
@pytest.mark.parametrize(("roman", "spot", "cards", "odds"), RP_CASES)
def test_rising_phoenix_bonus_wagers(
    variant: Variant, roman: str, spot: str, cards: str, odds: str
) -> None:
    family = "pairs" if spot.endswith("_pair") else "rising_phoenix_bonus"
    played = play(_config(family, None, variant), [("player", STAKE), (spot, STAKE)], cards)
    assert played.settlement("b1").returned == _returned(odds), f"631b.8(g)(4){roman}"
    # ... and loses on a deal that makes no bonus wager (a natural 9 over a two-card 5).
    lost = play(_config(family, None, variant), [("player", STAKE), (spot, STAKE)], "9S 2H KS 3H")
    assert lost.settlement("b1").returned == 0


def test_settlements_are_wager_settled_events() -> None:
    played = play(_config("perfect_pairs", "A"), [("banker", STAKE)], NAT_TIE_KINGS)
    assert sum(isinstance(e, WagerSettled) for e in played.events) == 1
