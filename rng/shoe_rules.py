"""Each chapter's shoe procedure as data: deck counts, burn rule, cover-card limits.

Types and constants only, no randomness: a game package (``server/games``, sans-I/O) names
the shoe its table needs with one of these, and the table runtime builds the ``VirtualShoe``
(``rng/shoe.py``, which re-exports everything here) from it. The procedures themselves are
described in ``rng/shoe.py`` and docs/rng.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum
from fractions import Fraction

__all__ = [
    "BACCARAT",
    "CASINO_WAR",
    "DOWN_UNDER_BLACKJACK",
    "TWENTY_ONE_BACCARAT",
    "BurnRule",
    "ShoeRules",
]


class BurnRule(Enum):
    """How cards are burned after a new shoe is placed in the dealing shoe."""

    BY_FIRST_CARD_VALUE = "by_first_card_value"  # 631a.9: expose one, burn its value
    ONE_CARD = "one_card"  # 651a.8(b), 681a.7(c), 685a.7(c): one card face down
    NONE = "none"


@dataclass(frozen=True, slots=True)
class ShoeRules:
    """One chapter's shoe: allowed deck counts, burn rule and cover-card limits.

    ``min_cover_fraction_from_bottom`` and ``min_cover_cards_from_bottom`` both bound how
    few cards may lie behind the cover card; ``min_cover_cards_from_top`` bounds how soon it
    may come out. ``default_cards_behind_cover`` is a function of the shoe size.
    """

    chapter: str
    decks_allowed: tuple[int, ...]
    burn: BurnRule
    min_cover_cards_from_bottom: int = 1
    min_cover_fraction_from_bottom: Fraction = Fraction(0)
    min_cover_cards_from_top: int = 1
    default_cover_fraction: Fraction = Fraction(1, 4)
    default_cover_cards: int | None = None

    def min_cards_behind_cover(self, total: int) -> int:
        by_fraction = math.ceil(self.min_cover_fraction_from_bottom * total)
        return max(self.min_cover_cards_from_bottom, by_fraction)

    def max_cards_behind_cover(self, total: int) -> int:
        return total - self.min_cover_cards_from_top

    def default_cards_behind_cover(self, total: int) -> int:
        if self.default_cover_cards is not None:
            wanted = self.default_cover_cards
        else:
            wanted = math.ceil(self.default_cover_fraction * total)
        return min(
            max(wanted, self.min_cards_behind_cover(total)), self.max_cards_behind_cover(total)
        )


BACCARAT = ShoeRules(
    # 631a.3: six or eight decks, two cover cards. The chapter leaves the cover card's position
    # to the operator; a virtual table keeps it at least ten cards from either end like 681a
    # and defaults to 16 cards behind it, the usual baccarat penetration.
    chapter="631a",
    decks_allowed=(6, 8),
    burn=BurnRule.BY_FIRST_CARD_VALUE,
    min_cover_cards_from_bottom=10,
    min_cover_cards_from_top=10,
    default_cover_cards=16,
)
TWENTY_ONE_BACCARAT = ShoeRules(
    chapter="681a",
    decks_allowed=(4, 8),
    burn=BurnRule.ONE_CARD,
    min_cover_cards_from_bottom=10,
    min_cover_cards_from_top=10,
    default_cover_fraction=Fraction(1, 5),
)
CASINO_WAR = ShoeRules(
    chapter="651a",
    decks_allowed=(6, 8),
    burn=BurnRule.ONE_CARD,
    min_cover_fraction_from_bottom=Fraction(1, 4),
)
DOWN_UNDER_BLACKJACK = ShoeRules(
    chapter="685a",
    decks_allowed=(4, 5, 6, 8),
    burn=BurnRule.ONE_CARD,
    min_cover_fraction_from_bottom=Fraction(1, 4),
)
