"""Playing cards: ranks, suits, colours, card codes and decks.

A deck is the 52-card pack every chapter in scope uses (631a.3, 651a.3, 681a.3, 685a.3):
thirteen ranks in four suits. Cards are interned: there is exactly one ``Card`` object per
rank and suit, so identity, equality and hashing are cheap and ``Card.index`` (0–51) can key
arrays in statistics and par sheets.

Card codes are rank then suit, as a dealer would call them: ``AS``, ``10H``, ``KD``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, IntEnum

__all__ = [
    "ALL_CARDS",
    "Card",
    "Colour",
    "Rank",
    "Suit",
    "deck",
    "parse_cards",
]


class Colour(Enum):
    """The colour printed on a card's pips."""

    RED = "red"
    BLACK = "black"


class Suit(Enum):
    """The four suits, coded by their initial."""

    SPADES = "S"
    HEARTS = "H"
    DIAMONDS = "D"
    CLUBS = "C"

    @property
    def colour(self) -> Colour:
        return Colour.RED if self in (Suit.HEARTS, Suit.DIAMONDS) else Colour.BLACK

    @property
    def code(self) -> str:
        return self.value


class Rank(IntEnum):
    """Card ranks, ace low as ordinal 1. Game rules decide what each rank is worth."""

    ACE = 1
    TWO = 2
    THREE = 3
    FOUR = 4
    FIVE = 5
    SIX = 6
    SEVEN = 7
    EIGHT = 8
    NINE = 9
    TEN = 10
    JACK = 11
    QUEEN = 12
    KING = 13

    @property
    def code(self) -> str:
        return _RANK_CODES[self]

    @property
    def is_face(self) -> bool:
        """Jack, queen or king (the picture cards)."""
        return self >= Rank.JACK


_RANK_CODES: dict[Rank, str] = {
    Rank.ACE: "A",
    Rank.TWO: "2",
    Rank.THREE: "3",
    Rank.FOUR: "4",
    Rank.FIVE: "5",
    Rank.SIX: "6",
    Rank.SEVEN: "7",
    Rank.EIGHT: "8",
    Rank.NINE: "9",
    Rank.TEN: "10",
    Rank.JACK: "J",
    Rank.QUEEN: "Q",
    Rank.KING: "K",
}
_RANK_BY_CODE: dict[str, Rank] = {code: rank for rank, code in _RANK_CODES.items()}
# "T" is the usual one-character ten in card-tracking files; accept it on input only.
_RANK_BY_CODE["T"] = Rank.TEN
_SUIT_ORDER: tuple[Suit, ...] = (Suit.SPADES, Suit.HEARTS, Suit.DIAMONDS, Suit.CLUBS)


@dataclass(frozen=True, slots=True)
class Card:
    """One playing card. Use ``Card.of`` or ``Card.parse``; both return the interned card."""

    rank: Rank
    suit: Suit
    index: int  # 0..51: suit-major (spades A..K, hearts A..K, diamonds, clubs)

    @staticmethod
    def of(rank: Rank, suit: Suit) -> Card:
        return ALL_CARDS[_SUIT_ORDER.index(suit) * 13 + rank - 1]

    @staticmethod
    def from_index(index: int) -> Card:
        """The card with ``index`` 0–51; in a multi-deck shoe use ``index % 52``."""
        return ALL_CARDS[index]

    @staticmethod
    def parse(code: str) -> Card:
        """Parse a card code such as ``AS``, ``10H``, ``TD`` or ``kc``.

        Raises ``ValueError`` naming the offending code.
        """
        text = code.strip().upper()
        card = _CARD_BY_CODE.get(text)
        if card is None:
            raise ValueError(
                f"not a card code: {code!r} (expected rank A,2-10,J,Q,K then suit S,H,D,C)"
            )
        return card

    @property
    def code(self) -> str:
        return self.rank.code + self.suit.code

    @property
    def colour(self) -> Colour:
        return self.suit.colour

    def __str__(self) -> str:
        return self.code

    def __repr__(self) -> str:
        return f"Card({self.code})"


ALL_CARDS: tuple[Card, ...] = tuple(
    Card(rank, suit, s * 13 + rank - 1) for s, suit in enumerate(_SUIT_ORDER) for rank in Rank
)
_CARD_BY_CODE: dict[str, Card] = {
    rank_code + card.suit.code: card
    for card in ALL_CARDS
    for rank_code, rank in _RANK_BY_CODE.items()
    if rank is card.rank
}


def deck() -> list[Card]:
    """One 52-card deck in a fixed, documented order (the ``index`` order)."""
    return list(ALL_CARDS)


def parse_cards(text: str) -> list[Card]:
    """Parse space- or comma-separated card codes (``"AS 10H KD"``)."""
    return [Card.parse(tok) for tok in text.replace(",", " ").split()]
