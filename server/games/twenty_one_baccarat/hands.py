"""The rules of 21 Baccarat (681a) as functions of the cards: totals, naturals, drawing,
the comparison of the hands, the Bonus hands and every wager's outcome.

The round engine and the par sheet both settle through ``outcome`` (one copy of the rules).

Readings (docs/interpretations.md, 1-3):

* A hand that is not a natural and totals less than 17 receives exactly **one** additional
  card (681a.7(g)); it never draws again.
* A natural (two aces, or an ace and a 10-value card) beats every other hand, a three-card
  21 included; two naturals of the same kind tie and two aces beat ace–ten.
* When either hand is a natural and a Bonus Wager is on the table, each hand totalling less
  than 17 still receives one card (681a.7(f)(2)); it counts for the Bonus Wagers only. Two
  aces total 12 (681a.3(d)(3)), so a two-ace natural receives that card too.
* A Bonus hand is judged on the hand's first three cards, a pair on its first two; only the
  highest award is paid; A-2-3 and Q-K-A are straights.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from fractions import Fraction
from typing import Final

from rng.cards import Card, Rank
from server.games.money import to_odds
from server.games.wagers import Outcome

__all__ = [
    "BONUS_HANDS",
    "BONUS_PAYTABLES",
    "DRAWS_BELOW",
    "MAIN_SPOTS",
    "SPOTS",
    "Coup",
    "Winner",
    "bonus_hand",
    "draws",
    "hand_total",
    "is_natural",
    "outcome",
    "point_value",
    "winner",
]

DRAWS_BELOW: Final = 17  # 681a.2(b)(7)(i), 681a.7(f), (g)
MAIN_SPOTS: Final = ("player", "banker")
SPOTS: Final = ("player", "banker", "tie", "bonus_player", "bonus_banker")

# 681a.8(c): paytables A-C with four decks, D-F with eight; net odds "X to 1".
BONUS_HANDS: Final = ("three_7s", "three_of_a_kind", "straight", "three_card_21", "pair")
BONUS_PAYTABLES: Final[dict[str, dict[str, Fraction]]] = {
    letter: dict(zip(BONUS_HANDS, (to_odds(x) for x in odds), strict=True))
    for letter, odds in {
        "A": (100, 40, 11, 5, 3),
        "B": (80, 40, 12, 5, 3),
        "C": (80, 40, 10, 6, 3),
        "D": (100, 40, 10, 5, 3),
        "E": (80, 40, 11, 5, 3),
        "F": (80, 35, 12, 5, 3),
    }.items()
}
PAYTABLES_FOR_DECKS: Final[dict[int, tuple[str, ...]]] = {4: ("A", "B", "C"), 8: ("D", "E", "F")}
WIN_ODDS: Final = to_odds(1)  # 681a.8(a)
WIN_WITH_17_ODDS: Final = to_odds(1, 2)  # 681a.8(a)
TIE_ODDS: Final = to_odds(10)  # 681a.8(b)


class Winner(Enum):
    PLAYER = "player"
    BANKER = "banker"
    TIE = "tie"


def point_value(rank: Rank) -> int:
    """681a.3(d): 2-10 face value, pictures 10, an ace 1 here (made 11 by ``hand_total``)."""
    return min(int(rank), 10)


def hand_total(ranks: Sequence[Rank]) -> int:
    """681a.3(d)(3): an ace counts 11 unless that takes the hand over 21."""
    total = sum(point_value(r) for r in ranks)
    if Rank.ACE in ranks and total + 10 <= 21:
        total += 10
    return total


def is_natural(ranks: Sequence[Rank]) -> bool:
    """681a.1: two aces, or an ace and a 10-value card, as the hand's two cards."""
    return (
        len(ranks) == 2
        and Rank.ACE in ranks
        and point_value(ranks[0]) + point_value(ranks[1]) in (2, 11)
    )


def draws(ranks: Sequence[Rank]) -> bool:
    """681a.7(f)(2), (g): a two-card hand totalling less than 17 takes one card."""
    return len(ranks) == 2 and hand_total(ranks) < DRAWS_BELOW


def _natural_rank(ranks: Sequence[Rank]) -> int:
    """0: not a natural; 1: ace and ten; 2: two aces (docs/interpretations.md, 2)."""
    if not is_natural(ranks):
        return 0
    return 2 if ranks[0] == ranks[1] else 1


@dataclass(frozen=True, slots=True)
class Coup:
    """The hands of a round: every card dealt to each hand, and whether the third cards
    counted only for the Bonus Wagers (681a.7(f)(2))."""

    player: tuple[Card, ...]
    banker: tuple[Card, ...]
    bonus_only: bool = False

    def counted(self, hand: str) -> tuple[Rank, ...]:
        """The ranks that count for the Player and Banker Wagers."""
        cards = self.player if hand == "player" else self.banker
        return tuple(c.rank for c in (cards[:2] if self.bonus_only else cards))

    def bonus_cards(self, hand: str) -> tuple[Rank, ...]:
        return tuple(c.rank for c in (self.player if hand == "player" else self.banker)[:3])


def winner(player: Sequence[Rank], banker: Sequence[Rank]) -> tuple[Winner, int]:
    """681a.6(c), 681a.7(h)-(j) and docs/interpretations.md, 2: the winning hand and its total."""
    pn, bn = _natural_rank(player), _natural_rank(banker)
    pt, bt = hand_total(player), hand_total(banker)
    if pn or bn:
        if pn == bn:
            return Winner.TIE, pt
        return (Winner.PLAYER, pt) if pn > bn else (Winner.BANKER, bt)
    if pt == bt:
        return Winner.TIE, pt
    if pt <= 21 and bt <= 21:
        player_wins = pt > bt
    elif pt <= 21 or bt <= 21:
        player_wins = pt <= 21
    else:  # both over 21: the lower total wins, 681a.7(i)(3), (j)(3)
        player_wins = pt < bt
    return (Winner.PLAYER, pt) if player_wins else (Winner.BANKER, bt)


def bonus_hand(ranks: Sequence[Rank]) -> str | None:
    """681a.3(e) and docs/interpretations.md, 3: the highest Bonus hand of the first three cards (a
    pair on the first two only), or None."""
    three = tuple(ranks[:3])
    if len(three) == 3:
        if three == (Rank.SEVEN,) * 3:
            return "three_7s"
        if three[0] == three[1] == three[2]:
            return "three_of_a_kind"
        values = sorted(int(r) for r in three)
        if (values[2] - values[0] == 2 and len(set(values)) == 3) or values == [1, 12, 13]:
            return "straight"
        if hand_total(three) == 21:
            return "three_card_21"
    if len(three) >= 2 and three[0] == three[1]:
        return "pair"
    return None


def outcome(spot: str, coup: Coup, paytable: str | None = None) -> Outcome:
    """The outcome of a wager on ``spot`` (681a.7(h)-(k), 681a.8)."""
    if spot.startswith("bonus_"):
        if paytable is None:
            raise ValueError("a Bonus Wager needs its paytable")
        hand = bonus_hand(coup.bonus_cards(spot.removeprefix("bonus_")))
        return Outcome.lose() if hand is None else Outcome.win(BONUS_PAYTABLES[paytable][hand])
    won, total = winner(coup.counted("player"), coup.counted("banker"))
    if spot == "tie":
        return Outcome.win(TIE_ODDS) if won is Winner.TIE else Outcome.lose()
    if won is Winner.TIE:
        return Outcome.push()  # 681a.7(i)(4), (j)(4)
    if won.value != spot:
        return Outcome.lose()
    return Outcome.win(WIN_WITH_17_ODDS if total == 17 else WIN_ODDS)
