"""The virtual shoe: N decks dealt lazily, with each chapter's burn and cover-card rules.

Dealt lazily (see docs/rng.md): the shoe holds the multiset of cards not yet dealt and draws
each card uniformly from it at the moment the game asks for it. The sequence of cards this
produces has exactly the distribution of a uniformly shuffled shoe (it is Fisher–Yates run
one step at a time), but no future card exists anywhere before it is needed: none can leak,
and every card is chosen after "no more bets". An 8-deck shoe has about 2**2229 orders, far
more than any 256-bit seed can reach; drawing lazily from a DRBG that is reseeded every
round removes that limit.

The physical procedures become parameters:

- **Burn** after each new shoe: baccarat exposes the first card and burns as many cards as
  its value, tens and pictures counting 10 (631a.9); Casino War (651a.8(b)), 21 Baccarat
  (681a.7(c)) and Down Under Blackjack (685a.7(c)) burn one card face down.
- **Cover card**: ``cards_behind_cover`` cards lie behind it. Casino War (651a.5(e)) and Down
  Under Blackjack (685a.5(d)) place it at least 1/4 of the way in from the bottom; 21
  Baccarat at least ten cards from either end (681a.5(c), (d)). Once it is reached, the round
  in progress is completed and the shoe is reshuffled (631a.9, 651a.8(d), 681a.7(d),
  685a.7(d)): ``needs_reshuffle`` says so.
- The cut itself rotates a randomly ordered stack and changes no probability, so a virtual
  shoe has nothing to model for it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rng.cards import ALL_CARDS, Card, Rank
from rng.errors import ShoeExhausted
from rng.scaling import take_one
from rng.shoe_rules import (
    BACCARAT,
    CASINO_WAR,
    DOWN_UNDER_BLACKJACK,
    TWENTY_ONE_BACCARAT,
    BurnRule,
    ShoeRules,
)
from rng.sources import RandomSource

__all__ = [
    "BACCARAT",
    "CASINO_WAR",
    "DOWN_UNDER_BLACKJACK",
    "TWENTY_ONE_BACCARAT",
    "Burn",
    "BurnRule",
    "Draw",
    "ShoeRules",
    "VirtualShoe",
]


@dataclass(frozen=True, slots=True)
class Draw:
    """One draw from the shoe, as the round journal records it: the card, and the uniform
    draw that chose it (``value`` in ``range(bound)``) at ``seq``, its position in the shoe."""

    seq: int
    bound: int
    value: int
    card: Card


@dataclass(frozen=True, slots=True)
class Burn:
    """The cards burned after a new shoe: ``exposed`` is shown to the table (baccarat only);
    ``burned`` go to the discard rack unseen — recorded, never revealed."""

    exposed: Card | None
    burned: tuple[Card, ...]


class VirtualShoe:
    """A shoe of ``decks`` decks dealt lazily from ``source``.

    ``observer``, if given, receives every ``Draw`` before the card is returned to the
    caller — the table runtime journals it there before anything is revealed.
    """

    def __init__(
        self,
        source: RandomSource,
        rules: ShoeRules,
        decks: int,
        *,
        cards_behind_cover: int | None = None,
        observer: Callable[[Draw], None] | None = None,
    ) -> None:
        if decks not in rules.decks_allowed:
            allowed = ", ".join(map(str, rules.decks_allowed))
            raise ValueError(f"{rules.chapter} allows {allowed} decks, not {decks}")
        total = 52 * decks
        if cards_behind_cover is None:
            cards_behind_cover = rules.default_cards_behind_cover(total)
        low, high = rules.min_cards_behind_cover(total), rules.max_cards_behind_cover(total)
        if not low <= cards_behind_cover <= high:
            raise ValueError(
                f"{rules.chapter}: the cover card must have between {low} and {high} cards "
                f"behind it in a {decks}-deck shoe, not {cards_behind_cover}"
            )
        self.source = source
        self.rules = rules
        self.decks = decks
        self.total = total
        self.cards_behind_cover = cards_behind_cover
        self.observer = observer
        self._remaining: list[int] = []
        self._seq = 0
        self.shoe_number = 0

    @property
    def remaining(self) -> int:
        return len(self._remaining)

    @property
    def dealt(self) -> int:
        """Cards taken from the shoe since the last shuffle, burn cards included."""
        return self._seq

    @property
    def needs_reshuffle(self) -> bool:
        """True once the cover card has been reached (or the shoe was never shuffled): finish
        the round in progress, then call ``shuffle``."""
        return self.shoe_number == 0 or len(self._remaining) <= self.cards_behind_cover

    def shuffle(self) -> Burn:
        """Start a new shoe: every card back in, then the chapter's burn."""
        self._remaining = [i % 52 for i in range(self.total)]
        self._seq = 0
        self.shoe_number += 1
        return self._burn()

    def _burn(self) -> Burn:
        if self.rules.burn is BurnRule.NONE:
            return Burn(None, ())
        if self.rules.burn is BurnRule.ONE_CARD:
            return Burn(None, (self.draw(),))
        exposed = self.draw()
        count = 10 if exposed.rank >= Rank.TEN else int(exposed.rank)
        return Burn(exposed, tuple(self.draw() for _ in range(count)))

    def draw_recorded(self) -> Draw:
        """Draw one card uniformly from those that remain, returning the full record."""
        if not self._remaining:
            raise ShoeExhausted(
                "no cards left in the shoe" if self.shoe_number else "the shoe was never shuffled"
            )
        bound, value, card_index = take_one(self.source.randbelow, self._remaining)
        record = Draw(self._seq, bound, value, ALL_CARDS[card_index])
        self._seq += 1
        if self.observer is not None:
            self.observer(record)
        return record

    def draw(self) -> Card:
        """Draw one card uniformly from those that remain."""
        return self.draw_recorded().card

    def deal_all(self) -> list[Card]:
        """Every remaining card in dealing order (outside shuffle tests, benchmarks)."""
        return [self.draw() for _ in range(len(self._remaining))]
