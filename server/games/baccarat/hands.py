"""Point count, naturals and the third-card rule of Baccarat (631a.6, 631a.11), as data.

The third-card rule is three tables, not nested ifs (docs/architecture.md, principle 3): whether the
Player's Hand draws on each two-card count, whether the Banker's Hand draws when the Player
stood, and the 631a.11(c) table of the Banker's count against the value of the Player's third
card. A ``Coup`` is a completed (or initial) deal: the Player's and Banker's cards in the
order dealt, with their point counts.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from enum import Enum

import msgspec

from rng.cards import Card, Rank

__all__ = [
    "BANKER_DRAWS_AFTER_PLAYER_DRAW",
    "BANKER_DRAWS_WHEN_PLAYER_STANDS",
    "PLAYER_DRAWS",
    "POINT_VALUE",
    "POINT_VALUE_BY_INDEX",
    "Coup",
    "Winner",
    "banker_draws",
    "is_natural",
    "play_out",
    "player_draws",
    "point_count",
    "value_of",
]

# 631a.6: ace 1, two to nine face value, ten and pictures 0.
POINT_VALUE: dict[Rank, int] = {rank: (int(rank) if rank <= Rank.NINE else 0) for rank in Rank}
# The same, indexed by Card.index (0..51), for the hot paths.
POINT_VALUE_BY_INDEX: tuple[int, ...] = tuple(POINT_VALUE[Rank(i % 13 + 1)] for i in range(52))


def value_of(card: Card) -> int:
    """A card's point value (631a.6)."""
    return POINT_VALUE_BY_INDEX[card.index]


def point_count(cards: Iterable[Card]) -> int:
    """The Point Count of a hand: the sum of its cards' values modulo 10 (631a.6)."""
    return sum(POINT_VALUE_BY_INDEX[c.index] for c in cards) % 10


def is_natural(cards: tuple[Card, ...]) -> bool:
    """A Natural: a two-card Point Count of 8 or 9 (631a.6)."""
    return len(cards) == 2 and point_count(cards) >= 8


def _row(text: str) -> tuple[bool, ...]:
    return tuple(cell == "D" for cell in text.split())


# 631a.11(b): the Player's Hand, by its two-card count (0..9), when neither hand is a Natural.
PLAYER_DRAWS: tuple[bool, ...] = _row("D D D D D D S S S S")
# 631a.11(c): the Banker's Hand, by its two-card count, when the Player's Hand stood.
BANKER_DRAWS_WHEN_PLAYER_STANDS: tuple[bool, ...] = _row("D D D D D D S S S S")
# 631a.11(c): the Banker's Hand when the Player's Hand drew. Row: the Banker's count (0..9);
# column: the value (0..9) of the Player's third card. Rows 0-2 draw, 7 stands; rows 3-6 are
# the regulation's table cell by cell. Rows 8 and 9 never reach this table (Naturals).
BANKER_DRAWS_AFTER_PLAYER_DRAW: tuple[tuple[bool, ...], ...] = tuple(
    _row(line)
    for line in (
        #  0 1 2 3 4 5 6 7 8 9   (value of the Player's third card)
        "D D D D D D D D D D",  # 0
        "D D D D D D D D D D",  # 1
        "D D D D D D D D D D",  # 2
        "D D D D D D D D S D",  # 3
        "S S D D D D D D S S",  # 4
        "S S S S D D D D S S",  # 5
        "S S S S S S D D S S",  # 6
        "S S S S S S S S S S",  # 7
        "S S S S S S S S S S",  # 8
        "S S S S S S S S S S",  # 9
    )
)


def player_draws(player_count: int, banker_count: int) -> bool:
    """Whether the Player's Hand takes a third card, given both two-card counts (631a.11(a)-(b))."""
    if player_count >= 8 or banker_count >= 8:
        return False
    return PLAYER_DRAWS[player_count]


def banker_draws(player_count: int, banker_count: int, player_third: int | None) -> bool:
    """Whether the Banker's Hand takes a third card (631a.11(a), (c)).

    ``player_count`` and ``banker_count`` are the two-card counts; ``player_third`` is the
    value of the Player's third card, or None if the Player's Hand stood.
    """
    if player_count >= 8 or banker_count >= 8:
        return False
    if player_third is None:
        return BANKER_DRAWS_WHEN_PLAYER_STANDS[banker_count]
    return BANKER_DRAWS_AFTER_PLAYER_DRAW[banker_count][player_third]


class Winner(Enum):
    PLAYER = "player"
    BANKER = "banker"
    TIE = "tie"


class Coup(msgspec.Struct, frozen=True, gc=False):
    """The cards of one round, in dealing order per hand, and their point counts.

    Build one with ``Coup.of``; ``player_count``/``banker_count`` are derived, never passed in
    independently of the cards.
    """

    player: tuple[Card, ...]
    banker: tuple[Card, ...]
    player_count: int
    banker_count: int

    @staticmethod
    def of(player: Iterable[Card], banker: Iterable[Card]) -> Coup:
        p, b = tuple(player), tuple(banker)
        return Coup(p, b, point_count(p), point_count(b))

    @property
    def winner(self) -> Winner:
        if self.player_count > self.banker_count:
            return Winner.PLAYER
        if self.banker_count > self.player_count:
            return Winner.BANKER
        return Winner.TIE

    @property
    def initial(self) -> tuple[Card, Card, Card, Card]:
        """The four initial cards in dealing order: Player, Banker, Player, Banker (631a.9)."""
        return (self.player[0], self.banker[0], self.player[1], self.banker[1])

    def describe(self) -> str:
        """The announcement of 631a.12, e.g. ``banker 7-5`` or ``tie 6-6`` (Banker first
        only when it wins)."""
        return _DESCRIPTIONS[self.player_count * 10 + self.banker_count]


def _describe(player_count: int, banker_count: int) -> str:
    if banker_count > player_count:
        return f"banker {banker_count}-{player_count}"
    winner = "player" if player_count > banker_count else "tie"
    return f"{winner} {player_count}-{banker_count}"


# Every announcement, by Player count × 10 + Banker count (worded once, not every round).
_DESCRIPTIONS = tuple(_describe(p, b) for p in range(10) for b in range(10))


def play_out(cards: Iterable[Card]) -> Coup:
    """Deal a whole round from ``cards`` in order (631a.9, 631a.11), taking only what it needs.

    Tests, benchmarks and the brute-force par-sheet check use it; the engine asks for the
    same cards one at a time through chance requests and reaches the same ``Coup``.
    """
    it: Iterator[Card] = iter(cards)
    p1, b1, p2, b2 = next(it), next(it), next(it), next(it)
    player, banker = [p1, p2], [b1, b2]
    pc, bc = point_count(player), point_count(banker)
    third: int | None = None
    if player_draws(pc, bc):
        card = next(it)
        player.append(card)
        third = value_of(card)
    if banker_draws(pc, bc, third):
        banker.append(next(it))
    return Coup.of(player, banker)
