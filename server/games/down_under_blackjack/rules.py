"""The rules of Down Under Blackjack (685a) as functions of the cards, shared by the round
engine and the par sheet: card values and totals, hole-card ranges and the reader's lights,
the dealer's drawing rule, and the outcome of every wager.

Readings (docs/interpretations.md, 15):

* A dealer ace counts 11 unless the dealer would exceed 22 (685a.3(d)(3)); the dealer can make
  a soft 22 (two aces are 22) and stands on 17 to 22, hard or soft (685a.7(m)).
* Dealer 22 pays the Bet Wagers of hands totalling 21 and of unsplit hands whose original two
  cards are both Large; other standing hands push; a hand over 21 loses (685a.7(n)(1), (q)).
* Match-the-Dealer pays each of the player's two initial cards that matches the dealer's up
  card separately, and the awards add (685a.7(f), 685a.11(c)).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from fractions import Fraction
from types import MappingProxyType
from typing import Final

from rng.cards import Card, Rank
from server.games.money import to_odds
from server.games.wagers import Outcome

__all__ = [
    "BLACKJACK_ODDS",
    "DEALER_STANDS_FROM",
    "DEFAULT_LIGHTS",
    "INSURANCE_ODDS",
    "MATCH_PAYTABLES",
    "HoleRange",
    "PlayedHand",
    "bet_outcome",
    "dealer_draws",
    "dealer_total",
    "insurance_outcome",
    "is_blackjack",
    "is_large",
    "match_the_dealer_outcome",
    "player_total",
    "point_value",
]

PLAYER_LIMIT: Final = 21
DEALER_LIMIT: Final = 22
DEALER_STANDS_FROM: Final = 17  # 685a.7(m): stands on 17, 18, 19, 20, 21 or 22
BLACKJACK_ODDS: Final = to_odds(3, 2)  # 685a.11(a)
WIN_ODDS: Final = to_odds(1)  # 685a.11(a)
INSURANCE_ODDS: Final = to_odds(2)  # 685a.11(b)
# 685a.11(c): (suited match, unsuited match) net odds per matching card, by decks.
MATCH_PAYTABLES: Final[Mapping[int, tuple[Fraction, Fraction]]] = MappingProxyType(
    {6: (to_odds(11), to_odds(4)), 8: (to_odds(14), to_odds(3))}
)


class HoleRange(Enum):
    """685a.1, 685a.3(d): the value range of the dealer's hole card, as the reader reports it."""

    SMALL = "small"  # 2-5
    MEDIUM = "medium"  # 6-9
    LARGE = "large"  # 10, J, Q, K, A

    @staticmethod
    def of(card: Card) -> HoleRange:
        if is_large(card.rank):
            return HoleRange.LARGE
        return HoleRange.SMALL if card.rank <= Rank.FIVE else HoleRange.MEDIUM


# 685a.1, 685a.3(d), 685a.7(h): the Masque Card Reader's lights. Configuration of the table
# (a device may be wired otherwise), defaulting to the chapter's colours.
DEFAULT_LIGHTS: Final[Mapping[HoleRange, str]] = MappingProxyType(
    {HoleRange.SMALL: "blue", HoleRange.MEDIUM: "red", HoleRange.LARGE: "yellow"}
)


def point_value(rank: Rank) -> int:
    """685a.3(d): 2-10 face value, pictures 10; an ace 1 here (made 11 by the totals)."""
    return min(int(rank), 10)


def is_large(rank: Rank) -> bool:
    """685a.1: 10, jack, queen, king or ace."""
    return rank is Rank.ACE or rank >= Rank.TEN


def _total(ranks: Sequence[Rank], limit: int) -> int:
    total = sum(point_value(r) for r in ranks)
    for rank in ranks:
        if rank is Rank.ACE and total + 10 <= limit:
            total += 10
    return total


def player_total(ranks: Sequence[Rank]) -> int:
    """685a.3(d)(3): an ace counts 11 unless the player would exceed 21."""
    return _total(ranks, PLAYER_LIMIT)


def dealer_total(ranks: Sequence[Rank]) -> int:
    """685a.3(d)(3): an ace counts 11 unless the dealer would exceed 22 (two aces are 22)."""
    return _total(ranks, DEALER_LIMIT)


def dealer_draws(ranks: Sequence[Rank]) -> bool:
    """685a.7(m): the dealer draws until a hard or soft 17 to 22."""
    return dealer_total(ranks) < DEALER_STANDS_FROM


def is_blackjack(ranks: Sequence[Rank]) -> bool:
    """685a.1: an ace and a 10-value card as the initial two cards (never after a split)."""
    return (
        len(ranks) == 2
        and Rank.ACE in ranks
        and point_value(ranks[0]) + point_value(ranks[1]) == 11
    )


@dataclass(frozen=True, slots=True)
class PlayedHand:
    """A player's hand at settlement: its cards, and whether it came from a split."""

    ranks: tuple[Rank, ...]
    split: bool = False

    @property
    def total(self) -> int:
        return player_total(self.ranks)

    @property
    def blackjack(self) -> bool:
        return not self.split and is_blackjack(self.ranks)

    @property
    def two_large(self) -> bool:
        """685a.7(n)(1): exactly two original Large cards (an unsplit hand,
        docs/interpretations.md, 15)."""
        return not self.split and all(is_large(r) for r in self.ranks[:2])


def bet_outcome(hand: PlayedHand, dealer: Sequence[Rank], *, extra: bool = False) -> Outcome:
    """The outcome of the Bet Wager on ``hand`` (or, with ``extra``, of its Double Down or
    split wager) against the dealer's final ``dealer`` cards (685a.7(h), (i), (n)-(q),
    685a.9(b), 685a.10(d), 685a.11(a))."""
    if is_blackjack(dealer[:2]) and len(dealer) == 2:
        if extra:
            return Outcome.push()  # 685a.9(b), 685a.10(d): only the initial Bet is collected
        return Outcome.push() if hand.blackjack else Outcome.lose()  # 685a.7(h)(1), (2)
    if hand.blackjack:
        return Outcome.win(BLACKJACK_ODDS)  # 685a.7(i)(1)
    total = hand.total
    if total > PLAYER_LIMIT:
        return Outcome.lose()  # 685a.7(q)(1), even against a dealer 22
    dealer_points = dealer_total(dealer)
    if dealer_points == DEALER_LIMIT:  # 685a.7(n)(1)
        return Outcome.win(WIN_ODDS) if total == 21 or hand.two_large else Outcome.push()
    if dealer_points > DEALER_LIMIT or total > dealer_points:
        return Outcome.win(WIN_ODDS)  # 685a.7(o)
    return Outcome.push() if total == dealer_points else Outcome.lose()  # 685a.7(p), (q)(2)


def insurance_outcome(hole: Card) -> Outcome:
    """685a.8(a), 685a.11(b): Insurance wins 2 to 1 if the hole card is a 10, J, Q or K."""
    return Outcome.win(INSURANCE_ODDS) if point_value(hole.rank) == 10 else Outcome.lose()


def match_the_dealer_outcome(player: Sequence[Card], up: Card, decks: int) -> Outcome:
    """685a.7(f), 685a.11(c): each of the player's two initial cards of the up card's rank (a
    10-value card matches only its own rank) pays the suited or unsuited award; awards add."""
    suited, unsuited = MATCH_PAYTABLES[decks]
    net = sum(
        (
            suited if card.suit is up.suit else unsuited
            for card in player[:2]
            if card.rank is up.rank
        ),
        Fraction(0),
    )
    return Outcome.win(net) if net else Outcome.lose()
