"""A scripted byte source for tests: returns exactly the bytes it was given, then fails."""

from __future__ import annotations

from collections.abc import MutableSequence, Sequence
from typing import TypeVar

from rng import scaling

T = TypeVar("T")


class ScriptedBytes:
    """``random_bytes`` replays a fixed byte string; running out is a test failure."""

    name = "scripted"

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def random_bytes(self, n: int) -> bytes:
        if self.pos + n > len(self.data):
            raise AssertionError("scripted bytes exhausted")
        chunk = self.data[self.pos : self.pos + n]
        self.pos += n
        return chunk

    def randbelow(self, n: int) -> int:
        return scaling.randbelow(self.random_bytes, n)

    def shuffle(self, items: MutableSequence[T]) -> None:
        scaling.shuffle(self.random_bytes, items)

    def choice(self, items: Sequence[T]) -> T:
        return scaling.choice(self.random_bytes, items)


class ScriptedDraws:
    """``randbelow`` returns scripted values (checked against the bound): drives a shoe card
    by card in tests."""

    name = "scripted-draws"

    def __init__(self, values: Sequence[int]) -> None:
        self.values = list(values)
        self.bounds: list[int] = []

    def randbelow(self, n: int) -> int:
        value = self.values.pop(0)
        assert 0 <= value < n, (value, n)
        self.bounds.append(n)
        return value

    def random_bytes(self, n: int) -> bytes:
        raise AssertionError("not used")

    def shuffle(self, items: MutableSequence[T]) -> None:
        raise AssertionError("not used")

    def choice(self, items: Sequence[T]) -> T:
        raise AssertionError("not used")
