"""Scaling raw random bytes to game outcomes without bias (58 Pa. Code 810a.5(d)).

``randbelow`` draws just enough bits to cover the range and rejects values outside it, so
every outcome in ``range(n)`` has exactly the same probability. No modulo reduction and no
floating point is used anywhere (a modulo of 256 by 52 would favour 48 cards; a float
multiply rounds). ``shuffle`` is the Fisher–Yates (Durstenfeld) shuffle: position ``i``
swaps with a uniform ``j`` in ``0..i`` inclusive — every permutation is equally likely.
"""

from __future__ import annotations

from collections.abc import Callable, MutableSequence, Sequence
from typing import TypeVar

__all__ = ["choice", "randbelow", "shuffle", "take_one"]

T = TypeVar("T")

ByteSource = Callable[[int], bytes]


def randbelow(random_bytes: ByteSource, n: int) -> int:
    """A uniform integer in ``range(n)`` by rejection sampling over ``(n-1).bit_length()`` bits.

    ``random_bytes(k)`` must return ``k`` uniformly random bytes. Each attempt succeeds with
    probability ``n / 2**bits`` > 1/2, so the expected number of attempts is below 2.
    """
    if n <= 0:
        raise ValueError(f"randbelow needs a positive bound, got {n}")
    if n == 1:
        return 0
    bits = (n - 1).bit_length()
    nbytes = (bits + 7) // 8
    excess = nbytes * 8 - bits
    while True:
        value = int.from_bytes(random_bytes(nbytes), "big") >> excess
        if value < n:
            return value


def shuffle(random_bytes: ByteSource, items: MutableSequence[T]) -> None:
    """Shuffle ``items`` in place (Fisher–Yates): from the top down, swap i with j in 0..i."""
    for i in range(len(items) - 1, 0, -1):
        j = randbelow(random_bytes, i + 1)
        items[i], items[j] = items[j], items[i]


def take_one(randbelow: Callable[[int], int], pool: list[T]) -> tuple[int, int, T]:
    """Remove and return one element of ``pool`` chosen uniformly: the lazy shoe's draw.

    ``randbelow`` is a source's unbiased ``randbelow`` (a source's own, so that the
    certification can substitute a deliberately broken one and see it caught).

    Returns ``(bound, value, item)``: the draw ``value`` in ``range(bound)`` that chose it, for
    the journal. The last element takes the chosen one's place (O(1)); only the multiset of
    what remains matters for the next draw, so repeated calls deal a uniform permutation —
    this is Fisher–Yates performed one step at a time, when each card is needed.
    """
    bound = len(pool)
    value = randbelow(bound)
    item = pool[value]
    pool[value] = pool[-1]
    pool.pop()
    return bound, value, item


def choice(random_bytes: ByteSource, items: Sequence[T]) -> T:
    """One element of a non-empty sequence, uniformly."""
    if not items:
        raise ValueError("choice from an empty sequence")
    return items[randbelow(random_bytes, len(items))]
