"""The generator under test: a random source and the production paths that deal and spin with it.

The outcome tests of a lab (GLI-style, and 58 Pa. Code 810a.5(c)) are run on *game outcomes*,
because raw-stream tests cannot see a mapping bug. ``Subject`` produces those outcomes through
the code the tables run:

- single decks and 8-deck shoes dealt lazily by ``rng.shoe.VirtualShoe`` (reseeded at every
  new shoe, as a table does);
- small decks of k items dealt by the same take-one algorithm, ``rng.scaling.take_one``;
- roulette and Big Six spins by ``RouletteWheel.spin`` and ``BIG_SIX_WHEEL.spin``;
- raw bytes by the source's own ``random_bytes``.

The deliberately broken generators of the self-test (``rng.certify.broken``) subclass it and
replace one of these paths, so that the battery shows which test catches each flaw.
"""

from __future__ import annotations

from rng.scaling import take_one
from rng.shoe import BurnRule, ShoeRules, VirtualShoe
from rng.sources import HmacDrbgSource, RandomSource
from rng.wheels import BIG_SIX_WHEEL, RouletteWheel, WheelType

__all__ = [
    "CERTIFY_SHOE_RULES",
    "DOUBLE_ZERO_WHEEL",
    "SINGLE_ZERO_WHEEL",
    "Subject",
]

# Whole shoes for the position tests: no burn, no cover card to stop at (we deal every card).
CERTIFY_SHOE_RULES = ShoeRules(
    chapter="certify", decks_allowed=tuple(range(1, 9)), burn=BurnRule.NONE
)
SINGLE_ZERO_WHEEL = RouletteWheel(WheelType.SINGLE_ZERO)
DOUBLE_ZERO_WHEEL = RouletteWheel(WheelType.DOUBLE_ZERO)


class Subject:
    """A generator under test. Outcomes come back as ``bytes`` of small integers:

    - a dealt deck or shoe: the card indices (0–51, ``rng.cards.Card.index``) in dealing order;
    - a small deck: the items 0..k-1 in dealing order (the pool starts in index order);
    - spins: the uniform draw that chose the pocket or section (its clockwise position).
    """

    #: the flaw a broken generator has; ``None`` for the generator under certification
    flaw: str | None = None

    def __init__(self, source: RandomSource, *, name: str | None = None, description: str = ""):
        self.source = source
        self.name = name or source.name
        self.description = description or f"random source {source.name!r}"

    def over(self, source: RandomSource) -> Subject:
        """The same scaling and dealing code drawing from another byte source (the
        known-answer tests script the bytes). Subclasses whose flaw is in the scaling or the
        deal keep it; a flaw in the bytes themselves is what ``source`` replaces."""
        return Subject(source, name=self.name, description=self.description)

    # -- raw output ---------------------------------------------------------------------

    def raw_bytes(self, n: int) -> bytes:
        """``n`` bytes of raw (unscaled) generator output: what a lab's raw tests read."""
        return self.source.random_bytes(n)

    # -- dealing ------------------------------------------------------------------------

    def new_shoe(self) -> None:
        """What a table does when a new shoe starts: reseed an HMAC_DRBG from the OS."""
        if isinstance(self.source, HmacDrbgSource):
            self.source.reseed(b"croupier certify: new shoe")

    def take(self, pool: list[int]) -> int:
        """Remove and return one element of ``pool``: the lazy deal's single step."""
        return take_one(self.source.randbelow, pool)[2]

    def deal_shoe(self, decks: int) -> bytes:
        """A new shoe of ``decks`` decks, dealt to the end by ``VirtualShoe``."""
        self.new_shoe()
        shoe = VirtualShoe(self.source, CERTIFY_SHOE_RULES, decks)
        shoe.shuffle()
        return bytes(card.index for card in shoe.deal_all())

    def deal_items(self, k: int) -> bytes:
        """Items 0..k-1 dealt lazily by the take-one algorithm."""
        pool = list(range(k))
        take = self.take
        return bytes(take(pool) for _ in range(k))

    # -- wheels -------------------------------------------------------------------------

    def roulette(self, wheel: RouletteWheel, count: int) -> bytes:
        """``count`` spins of ``wheel``: each pocket's clockwise position."""
        source = self.source
        spin = wheel.spin
        return bytes(spin(source).value for _ in range(count))

    def big_six(self, count: int) -> bytes:
        """``count`` spins of the Big Six Wheel: each section's clockwise index."""
        source = self.source
        spin = BIG_SIX_WHEEL.spin
        return bytes(spin(source).section for _ in range(count))
