"""Every Chapter 631a/631b payout table as data, with the section it comes from.

A ``Paytable`` maps the name of each paying line to its exact net odds per unit staked
(``money.to_odds`` for "X to 1", ``money.for_one`` for "X for 1", ``0`` for a push). A
line absent from a table ("N/A") does not pay: the wager loses. ``jackpot`` names the line
paid 100% of a progressive meter; the wager's own fixed-odds part is then nothing (the award
is "for 1": it includes the wager, docs/interpretations.md, 4).

Line names are stable identifiers; the judges in ``side_wagers`` return them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from types import MappingProxyType

from server.games.money import EVEN, PUSH, for_one, odds_text, to_odds

__all__ = [
    "BASE",
    "FIVE_TREASURES",
    "GOLDEN_TALONS",
    "HARMONY_PROGRESSIVE",
    "HARMONY_RATES",
    "HEAVENLY_9_PROGRESSIVE",
    "LUCKY_NINES",
    "LUCKY_SIX",
    "MAJESTIC_MATCH",
    "PAIRS",
    "PAYTABLES",
    "PERFECT_PAIRS",
    "RISING_PHOENIX_BONUS",
    "SHARED_TABLES",
    "HarmonyRates",
    "Paytable",
]


@dataclass(frozen=True, slots=True)
class Paytable:
    """One regulation payout table. ``letter`` is the Rules Submission's choice (None when
    the section has only one table). ``for_one``: the section words its awards "X for 1"."""

    family: str
    letter: str | None
    section: str
    pays: Mapping[str, Fraction]
    jackpot: str | None = None
    for_one: bool = False

    def lines(self) -> tuple[str, ...]:
        return tuple(self.pays) + ((self.jackpot,) if self.jackpot else ())

    def lines_of(self, spot: str) -> tuple[str, ...]:
        """The lines a wager on ``spot`` can be paid. Five Treasures (631b.3(h)) and the
        Rising Phoenix bonus wagers (631b.8(h)(2)) print one table for several wagers, each
        line named after its wager; a wager is paid only on its own lines."""
        if self.family not in SHARED_TABLES:
            return self.lines()
        return tuple(line for line in self.lines() if line == spot or line.startswith(spot + "_"))

    def shown(self, spot: str) -> dict[str, str]:
        """``lines_of(spot)`` in the regulation's words, as players read them (810a.3)."""
        return {
            line: "100% of the progressive meter"
            if line == self.jackpot
            else odds_text(self.pays[line], for_one=self.for_one)
            for line in self.lines_of(spot)
        }


# The families whose one printed table serves several wagers (``Paytable.lines_of``).
SHARED_TABLES = frozenset({"five_treasures", "rising_phoenix_bonus"})


def _table(
    family: str,
    letter: str | None,
    section: str,
    pays: dict[str, Fraction],
    jackpot: str | None = None,
    *,
    for_one: bool = False,
) -> Paytable:
    return Paytable(family, letter, section, MappingProxyType(pays), jackpot, for_one)


def _columns(
    family: str, section: str, rows: dict[str, tuple[Fraction | None, ...]], letters: str
) -> dict[str | None, Paytable]:
    """A regulation table printed with one column per paytable letter (None: N/A)."""
    tables: dict[str | None, Paytable] = {}
    for i, letter in enumerate(letters):
        pays = {line: odds[i] for line, odds in rows.items() if odds[i] is not None}
        tables[letter] = _table(
            family, letter, section, {k: v for k, v in pays.items() if v is not None}
        )
    return tables


X = to_odds  # "X to 1"

# 631a.13 and 631b.5(h)-(j), 631b.8(g)(1)-(3), (h)(1): the three main wagers per variant.
BASE: Mapping[str, Mapping[str, Paytable]] = MappingProxyType(
    {
        "standard": {
            "player": _table("player", None, "631a.13(a)", {"player_wins": EVEN, "tie": PUSH}),
            "banker": _table(
                "banker", None, "631a.13(b)", {"banker_wins": to_odds(19, 20), "tie": PUSH}
            ),
            "tie": _table("tie", None, "631a.13(c)", {"tie": X(8)}),
        },
        "commission_free": {
            "player": _table("player", None, "631b.5(h)", {"player_wins": EVEN, "tie": PUSH}),
            "banker": _table(
                "banker",
                None,
                "631b.5(i)",
                {"banker_wins_with_6": to_odds(1, 2), "banker_wins": EVEN, "tie": PUSH},
            ),
            "tie": _table("tie", None, "631b.5(j)", {"tie": X(8)}),
        },
        "rising_phoenix": {
            "player": _table("player", None, "631b.8(g)(2)", {"player_wins": EVEN, "tie": PUSH}),
            "banker": _table(
                "banker", None, "631b.8(g)(1)", {"banker_wins": to_odds(19, 20), "tie": PUSH}
            ),
            "tie": _table("tie", None, "631b.8(g)(3)", {"tie": X(8)}),
        },
        "rising_phoenix_commission_free": {
            "player": _table("player", None, "631b.8(g)(2)", {"player_wins": EVEN, "tie": PUSH}),
            "banker": _table(
                "banker",
                None,
                "631b.8(g)(1)(iv)",
                {"banker_wins_with_three_card_7": PUSH, "banker_wins": EVEN, "tie": PUSH},
            ),
            "tie": _table("tie", None, "631b.8(g)(3)", {"tie": X(8)}),
        },
    }
)

# 631b.1(e)
PERFECT_PAIRS = _columns(
    "perfect_pairs",
    "631b.1(e)",
    {
        "perfect_pair": (X(25), X(30), X(25)),
        "coloured_pair": (X(12), X(10), X(15)),
        "mixed_pair": (X(6), X(5), X(5)),
    },
    "ABC",
)

# 631b.2(i): the same-suit tie is 100% of the progressive meter (seed $10,000, 10% increment).
HEAVENLY_9_PROGRESSIVE = _table(
    "heavenly_9_progressive",
    None,
    "631b.2(i)",
    {
        "three_card_9_tie_same_colour": for_one(299),
        "three_card_9_tie": for_one(60),
        "banker_three_card_9": for_one(9),
        "player_three_card_9": for_one(8),
    },
    jackpot="three_card_9_tie_same_suit",
    for_one=True,
)

# 631b.3(h): one table for the five wagers (lines prefixed by wager).
FIVE_TREASURES = _columns(
    "five_treasures",
    "631b.3(h)",
    {
        "fortune_7": (X(40), X(40)),
        "golden_8": (X(25), X(25)),
        "heavenly_9_player_and_banker": (X(75), X(75)),
        "heavenly_9_player_or_banker": (X(10), X(10)),
        "blazing_7s_three_card": (X(400), X(200)),
        "blazing_7s_two_card": (None, X(50)),
        "cover_all": (X(6), X(6)),
    },
    "AB",
)

# 631b.4(e)
LUCKY_NINES = _columns(
    "lucky_nines",
    "631b.4(e)",
    {
        "four_nines": (X(500), X(500), X(1000), X(2000)),
        "three_nines_same_suit": (X(250), X(250), X(500), X(500)),
        "three_nines": (X(20), X(30), X(35), X(15)),
        "two_nines_same_suit": (X(8), X(12), X(16), X(10)),
        "two_nines": (X(5), X(5), X(5), X(4)),
        "one_nine_diamonds": (X(2), X(2), X(2), X(2)),
        "one_nine": (X(1), X(1), X(1), X(1)),
    },
    "ABCD",
)

# 631b.5(g) and 631b.8(h)(2): Player Pair and Banker Pair, 11 to 1.
PAIRS = _table("pairs", None, "631b.5(g)", {"pair": X(11)})
# 631b.5(k)
LUCKY_SIX = _table(
    "lucky_six",
    None,
    "631b.5(k)",
    {"banker_wins_with_two_card_6": X(12), "banker_wins_with_three_card_6": X(20)},
)

# 631b.7(d): "2.5 to 1" is 5 to 2.
MAJESTIC_MATCH = _table(
    "majestic_match",
    None,
    "631b.7(d)",
    {"royal_match": X(25), "suited_match": to_odds(5, 2)},
)

# 631b.8(h)(2): the Rising Phoenix bonus wagers; one line each, named by the wager id.
RISING_PHOENIX_BONUS = _table(
    "rising_phoenix_bonus",
    None,
    "631b.8(h)(2)",
    {
        "sun_7": X(40),
        "moon_8": X(25),
        "nine_over_seven": X(25),
        "two_card_8_over_two_card_1": X(50),
        "player_wins_three_card_6": X(40),
        "banker_wins_1_or_2": X(60),
        "both_8_or_9": X(20),
        "one_over_zero": X(90),
        "three_card_6_over_three_card_3": X(150),
        "three_card_8_over_three_card_0": X(130),
        "banker_wins_over_two_card_7": X(30),
        "three_card_9_over_three_card_6": X(200),
        "three_card_9_over_three_card_8": X(200),
        "player_three_card_8_over_banker_three_card_0": X(250),
        "tie_0": X(150),
        "tie_1_2_3": X(70),
        "tie_4_5_6_7": X(15),
        "tie_8_9": X(40),
    },
)

# 631b.9(f): a natural tie is a push (0) except under paytable B (2 to 1).
GOLDEN_TALONS = _columns(
    "golden_talons",
    "631b.9(f)",
    {
        "win_by_9": (X(30), X(20), X(30), X(20), X(30)),
        "win_by_8": (X(10), X(10), X(12), X(8), X(10)),
        "win_by_7": (X(6), X(5), X(5), X(7), X(4)),
        "win_by_6": (X(4), X(4), X(3), X(4), X(4)),
        "win_by_5": (X(2), X(2), X(3), X(3), X(2)),
        "win_by_4": (X(1), X(1), X(1), X(1), X(2)),
        "natural_win": (X(1), X(1), X(1), X(1), X(1)),
        "natural_tie": (PUSH, X(2), PUSH, PUSH, PUSH),
    },
    "ABCDE",
)

_F = for_one
# 631b.10(i): six of a kind is 100% of the progressive meter under every table.
HARMONY_PROGRESSIVE: dict[str | None, Paytable] = {
    letter: _table(
        "harmony_progressive", letter, "631b.10(i)", pays, jackpot="six_of_a_kind", for_one=True
    )
    for letter, pays in {
        "A": {"four_8s": _F(1000), "four_of_a_kind": _F(300), "six_zero_value_cards": _F(100),
              "tie_0": _F(20), "tie_1_to_5": _F(6), "tie_6_to_9": _F(3)},
        "B": {"four_8s": _F(1000), "four_of_a_kind": _F(200), "six_zero_value_cards": _F(100),
              "tie_0": _F(20), "tie_1_to_5": _F(5), "tie_6_to_9": _F(3)},
        "C": {"four_8s": _F(600), "four_of_a_kind": _F(300), "six_zero_value_cards": _F(100),
              "tie_0": _F(20), "tie_1_to_5": _F(5), "tie_6_to_9": _F(5)},
        "D": {"four_8s": _F(600), "four_of_a_kind": _F(300), "six_zero_value_cards": _F(200),
              "tie_same_colour": _F(20), "any_tie": _F(3)},
        "E": {"four_8s": _F(1000), "four_of_a_kind": _F(300), "six_zero_value_cards": _F(100),
              "tie_same_colour": _F(20), "any_tie": _F(3)},
        "F": {"four_8s": _F(300), "four_of_a_kind": _F(300), "six_zero_value_cards": _F(100),
              "tie_same_colour": _F(20), "any_tie": _F(5)},
        "G": {"four_8s": _F(600), "four_of_a_kind": _F(200), "six_zero_value_cards": _F(100),
              "five_card_tie": _F(10), "six_card_tie": _F(3), "four_card_tie": _F(3)},
        "H": {"four_8s": _F(1000), "four_of_a_kind": _F(200), "six_zero_value_cards": _F(50),
              "five_card_tie": _F(8), "six_card_tie": _F(4), "four_card_tie": _F(3)},
        "I": {"four_8s": _F(300), "four_of_a_kind": _F(300), "six_zero_value_cards": _F(50),
              "five_card_tie": _F(10), "six_card_tie": _F(6), "four_card_tie": _F(4)},
    }.items()
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class HarmonyRates:
    """631b.10(j): share of each Harmony wager added to the meter, and to the reseed reserve."""

    increment: Fraction
    reserve: Fraction


HARMONY_RATES: Mapping[str, HarmonyRates] = MappingProxyType(
    {
        letter: (
            HarmonyRates(Fraction(19, 100), Fraction(5, 100))
            if letter in "BEH"
            else HarmonyRates(Fraction(15, 100), Fraction(3, 100))
        )
        for letter in "ABCDEFGHI"
    }
)

# Every optional-wager family and its tables, by paytable letter (None: the only table).
PAYTABLES: Mapping[str, Mapping[str | None, Paytable]] = MappingProxyType(
    {
        "perfect_pairs": PERFECT_PAIRS,
        "heavenly_9_progressive": {None: HEAVENLY_9_PROGRESSIVE},
        "five_treasures": FIVE_TREASURES,
        "lucky_nines": LUCKY_NINES,
        "pairs": {None: PAIRS},
        "lucky_six": {None: LUCKY_SIX},
        "majestic_match": {None: MAJESTIC_MATCH},
        "rising_phoenix_bonus": {None: RISING_PHOENIX_BONUS},
        "golden_talons": GOLDEN_TALONS,
        "harmony_progressive": HARMONY_PROGRESSIVE,
    }
)
