"""Deliberately broken generators for the certification self-test.

A battery that passes everything proves nothing; it has to be shown failing the generators
it exists to reject (the "tests must have teeth" rule of docs/certification.md). Each broken
generator has exactly one realistic flaw and is otherwise built like the real one:

- ``ModuloScaling``: ``randbelow(n)`` is ``int.from_bytes(bytes) % n`` — the bias that
  58 Pa. Code 810a.5(d) and UKGC RTS 7 2.3 forbid (256 % 52 = 48: 48 cards are 5/4 as likely
  as the other 4 at every draw). Deals and spins both use it.
- ``OffByOneDeal``: the lazy deal draws ``j`` from ``0..i-1`` instead of ``0..i`` (the
  Sattolo mistake in Fisher–Yates): the last card in the pool is never the one dealt.
- ``MersenneTwister``: Python's ``random.Random`` (MT19937) with a small seed and *correct*
  scaling. Its output passes ordinary statistical tests; it fails because 624 outputs reveal
  its state (25 CFR 547.14(c)(1), UKGC RTS 7 2.1(b): unpredictable even to someone who knows
  the algorithm and all past output).
- ``BiasedByte``: the top bit of every byte is 1 with probability 141/256 ≈ 0.551, like a
  hardware source with a sticky bit feeding the generator.

Each is a ``Subject`` whose source has the ``RandomSource`` interface.
"""

from __future__ import annotations

import random
from collections.abc import Callable, MutableSequence, Sequence
from typing import TypeVar

from rng.certify.subject import Subject
from rng.sources import RandomSource, _Scaled  # the real sources' base: one flaw apart

__all__ = [
    "BiasedByte",
    "BiasedByteSource",
    "MersenneTwister",
    "MersenneTwisterSource",
    "ModuloScaling",
    "ModuloSource",
    "OffByOneDeal",
    "broken_subjects",
]

T = TypeVar("T")


class _ScaledBytes(_Scaled):
    """A real source's unbiased ``randbelow`` over ``random_bytes``, with ``shuffle`` and
    ``choice`` drawn through ``self.randbelow``: a subject that breaks the scaling breaks
    every deal and spin with it."""

    def shuffle(self, items: MutableSequence[T]) -> None:
        for i in range(len(items) - 1, 0, -1):
            j = self.randbelow(i + 1)
            items[i], items[j] = items[j], items[i]

    def choice(self, items: Sequence[T]) -> T:
        if not items:
            raise ValueError("choice from an empty sequence")
        return items[self.randbelow(len(items))]


class ModuloSource(_ScaledBytes):
    """Good bytes, broken scaling: ``randbelow(n)`` = (just enough bytes) ``% n``."""

    name = "modulo-scaling"

    def __init__(self, inner: RandomSource) -> None:
        self._inner = inner

    def random_bytes(self, n: int) -> bytes:
        return self._inner.random_bytes(n)

    def randbelow(self, n: int) -> int:
        if n <= 0:
            raise ValueError(f"randbelow needs a positive bound, got {n}")
        nbytes = max(1, ((n - 1).bit_length() + 7) // 8)
        return int.from_bytes(self._inner.random_bytes(nbytes), "big") % n


class MersenneTwisterSource(_ScaledBytes):
    """MT19937 (``random.Random``) bytes with the correct, unbiased scaling."""

    name = "mersenne-twister"

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self._random = random.Random(seed)

    def random_bytes(self, n: int) -> bytes:
        # randbytes(n) is getrandbits(8n) little-endian: consecutive 32-bit outputs, each
        # stored little-endian, exactly what an implementation copying words out would emit.
        return self._random.randbytes(n)


class BiasedByteSource(_ScaledBytes):
    """Bytes whose top bit is 1 with probability 141/256; the other seven bits are good."""

    name = "biased-byte"
    threshold = 141

    def __init__(self, inner: RandomSource) -> None:
        self._inner = inner
        self._top_bit = bytes(0x80 if v < self.threshold else 0 for v in range(256))

    def random_bytes(self, n: int) -> bytes:
        if n == 0:
            return b""
        low = int.from_bytes(self._inner.random_bytes(n), "big")
        coins = self._inner.random_bytes(n).translate(self._top_bit)
        mixed = (low & int.from_bytes(b"\x7f" * n, "big")) | int.from_bytes(coins, "big")
        return mixed.to_bytes(n, "big")


class ModuloScaling(Subject):
    """Broken scaling everywhere: the production shoe and wheels draw with ``bytes % n``."""

    flaw = "modulo scaling: randbelow(n) = random bytes % n"

    def __init__(self, inner: RandomSource) -> None:
        super().__init__(ModuloSource(inner), name="modulo-scaling", description=self.flaw)

    def over(self, source: RandomSource) -> Subject:
        return ModuloScaling(source)


class OffByOneDeal(Subject):
    """Good bytes and scaling, but each dealt card is drawn from all but the last in the pool.

    The shoe is the lazy deal as a developer with this bug would have written it, so it does
    not go through ``VirtualShoe``; the wheels are unaffected.
    """

    flaw = "off-by-one deal: j drawn from 0..i-1 instead of 0..i (Sattolo's algorithm)"

    def __init__(self, inner: RandomSource) -> None:
        super().__init__(inner, name="off-by-one-deal", description=self.flaw)

    def over(self, source: RandomSource) -> Subject:
        return OffByOneDeal(source)

    def take(self, pool: list[int]) -> int:
        bound = len(pool)
        value = 0 if bound == 1 else self.source.randbelow(bound - 1)  # the bug: not bound
        item = pool[value]
        pool[value] = pool[-1]
        pool.pop()
        return item

    def deal_shoe(self, decks: int) -> bytes:
        self.new_shoe()
        pool = [i % 52 for i in range(52 * decks)]
        take = self.take
        return bytes(take(pool) for _ in range(len(pool)))


class MersenneTwister(Subject):
    """MT19937 with a 16-bit seed, correct scaling, through every production path."""

    def __init__(self, seed: int) -> None:
        self.flaw = f"Mersenne Twister (Python random.Random) seeded with {seed}"
        super().__init__(
            MersenneTwisterSource(seed), name="mersenne-twister", description=self.flaw
        )


class BiasedByte(Subject):
    """A stuck-ish top bit, through every production path."""

    flaw = "biased byte: top bit of each byte is 1 with probability 141/256 (0.551)"

    def __init__(self, inner: RandomSource) -> None:
        super().__init__(BiasedByteSource(inner), name="biased-byte", description=self.flaw)


def broken_subjects(make_inner: Callable[[], RandomSource], mt_seed: int) -> list[Subject]:
    """The four broken generators; ``make_inner`` makes a good byte source for each."""
    return [
        ModuloScaling(make_inner()),
        OffByOneDeal(make_inner()),
        MersenneTwister(mt_seed),
        BiasedByte(make_inner()),
    ]
