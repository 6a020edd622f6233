"""Unbiased scaling: rejection sampling and Fisher–Yates (58 Pa. Code 810a.5(d): scaling
must not weaken the generator)."""

import itertools
from collections import Counter

import pytest
from scipy import stats

from rng import scaling, seeded_source
from tests.rng.scripted import ScriptedBytes


def test_randbelow_rejects_values_outside_the_range() -> None:
    # 52 needs 6 bits: the top 6 bits of 0xFF are 63 (rejected), of 0xCC are 51 (accepted).
    src = ScriptedBytes(bytes([0xFF, 0xD0, 0xCC]))
    assert scaling.randbelow(src.random_bytes, 52) == 51
    assert src.pos == 3  # two rejections, never a modulo


@pytest.mark.parametrize("n", [2, 3, 5, 6, 7, 10, 37, 38, 52, 54, 100, 255, 256])
def test_every_byte_value_maps_to_at_most_one_outcome_and_each_outcome_equally(n: int) -> None:
    """Exact: over all 256 possible one-byte draws, every accepted value is hit equally
    often, so rejection sampling is uniform by construction (no modulo bias)."""
    hits: Counter[int] = Counter()
    for byte in range(256):
        src = ScriptedBytes(bytes([byte]))
        try:
            hits[scaling.randbelow(src.random_bytes, n)] += 1
        except AssertionError:
            continue  # rejected: it would draw again
    assert set(hits) == set(range(n))
    assert len(set(hits.values())) == 1


def test_randbelow_uses_two_bytes_above_256() -> None:
    src = ScriptedBytes(bytes([0x01, 0x9F]))  # 9 bits for 416: 0x019F >> 7 = 3
    assert scaling.randbelow(src.random_bytes, 416) == 3


def test_randbelow_one_and_bad_bounds() -> None:
    assert scaling.randbelow(ScriptedBytes(b"").random_bytes, 1) == 0
    for bad in (0, -3):
        with pytest.raises(ValueError):
            scaling.randbelow(ScriptedBytes(b"").random_bytes, bad)


def _sattolo(random_bytes: scaling.ByteSource, items: list[int]) -> None:
    """The classic off-by-one Fisher–Yates (j in 0..i-1): only cyclic permutations."""
    for i in range(len(items) - 1, 0, -1):
        j = scaling.randbelow(random_bytes, i)
        items[i], items[j] = items[j], items[i]


def _naive(random_bytes: scaling.ByteSource, items: list[int]) -> None:
    """Swap each position with any position: n**n paths onto n! orders, not uniform."""
    for i in range(len(items)):
        j = scaling.randbelow(random_bytes, len(items))
        items[i], items[j] = items[j], items[i]


def _lazy_deal(random_bytes: scaling.ByteSource, items: list[int]) -> None:
    pool = list(items)

    def randbelow(n: int) -> int:
        return scaling.randbelow(random_bytes, n)

    items[:] = [scaling.take_one(randbelow, pool)[2] for _ in range(len(pool))]


def _permutation_p_value(shuffle: object, k: int, trials: int, seed: int) -> float:
    source = seeded_source(seed)
    counts: Counter[tuple[int, ...]] = Counter()
    for _ in range(trials):
        items = list(range(k))
        shuffle(source.random_bytes, items)  # type: ignore[operator]
        counts[tuple(items)] += 1
    observed = [counts[p] for p in itertools.permutations(range(k))]
    return float(stats.chisquare(observed).pvalue)


@pytest.mark.parametrize("deal", [scaling.shuffle, _lazy_deal], ids=["fisher_yates", "lazy_deal"])
def test_small_deck_permutation_test_passes_for_our_shuffles(deal: object) -> None:
    """All 5! orders equally likely (small-deck permutation test, notes 1.5)."""
    assert _permutation_p_value(deal, 5, 60_000, seed=1) > 0.001


@pytest.mark.parametrize("broken", [_sattolo, _naive], ids=["off_by_one", "naive_swap"])
def test_small_deck_permutation_test_catches_broken_shuffles(broken: object) -> None:
    assert _permutation_p_value(broken, 5, 60_000, seed=1) < 1e-12


def test_take_one_reports_the_draw_that_chose_the_card() -> None:
    pool = ["a", "b", "c", "d"]
    src = ScriptedBytes(bytes([0x40]))  # 2 bits: 0x40 >> 6 = 1
    bound, value, item = scaling.take_one(src.randbelow, pool)
    assert (bound, value, item) == (4, 1, "b")
    assert sorted(pool) == ["a", "c", "d"]


def test_choice_is_uniform_and_rejects_empty() -> None:
    source = seeded_source(3)
    counts = Counter(source.choice("abcdefg") for _ in range(70_000))
    assert stats.chisquare([counts[c] for c in "abcdefg"]).pvalue > 0.001
    with pytest.raises(ValueError):
        source.choice([])


def test_no_float_or_modulo_in_scaling_source() -> None:
    """810a.5(d): the scaling code itself contains no modulo reduction and no float."""
    import inspect

    code = inspect.getsource(scaling)
    body = code.split('"""', 2)[2]  # skip the module docstring, which explains why
    assert " % " not in body and "float" not in body and "random()" not in body
