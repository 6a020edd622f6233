"""Raw-stream and predictability tests of the certification battery."""

from __future__ import annotations

import functools
import random

import numpy as np
import pytest
from scipy import stats as sps

from rng import seeded_source
from rng.certify import predictability, raw_tests
from rng.certify.broken import BiasedByteSource, MersenneTwisterSource
from rng.certify.results import ALPHA, Measurement


# Drawn when a test first needs them, not at import: every test worker imports this module
# to collect it, and the DRBG takes seconds for 4 MiB.
@functools.cache
def good() -> bytes:
    return seeded_source("certify raw tests").random_bytes(4 << 20)


@functools.cache
def biased() -> bytes:
    return BiasedByteSource(seeded_source("certify raw biased")).random_bytes(4 << 20)


@functools.cache
def mersenne() -> bytes:
    return MersenneTwisterSource(4321).random_bytes(1 << 20)


RAW_TESTS = {
    "byte-frequency": raw_tests.byte_frequency,
    "monobit": raw_tests.monobit,
    "bit-runs": raw_tests.bit_runs,
    "byte-pairs": raw_tests.byte_pairs,
    "serial-correlation": raw_tests.byte_serial_correlation,
    "ks": lambda data: raw_tests.ks_words(data, 100_000),
    "maximum-of-5": lambda data: raw_tests.maximum_of_t(data, 100_000),
}


@pytest.mark.parametrize("name", sorted(RAW_TESTS))
def test_good_bytes_pass(name: str) -> None:
    m: Measurement = RAW_TESTS[name](good())
    assert m.p_value is not None and m.p_value >= ALPHA, m


@pytest.mark.parametrize("name", ["byte-frequency", "monobit", "byte-pairs", "ks", "maximum-of-5"])
def test_a_biased_top_bit_fails(name: str) -> None:
    m: Measurement = RAW_TESTS[name](biased())
    assert m.p_value is not None and m.p_value < 1e-10, m


def test_the_biased_byte_source_has_the_documented_bias() -> None:
    top = sum(b >> 7 for b in biased()) / len(biased())
    assert top == pytest.approx(141 / 256, abs=0.002)
    low = sum((b >> 6) & 1 for b in biased()) / len(biased())
    assert low == pytest.approx(0.5, abs=0.002)


def test_serial_correlation_matches_numpy() -> None:
    data = good()[:200_000]
    array = np.frombuffer(data, dtype=np.uint8).astype(float)
    m = raw_tests.byte_serial_correlation(data)
    r = np.corrcoef(array[:-1], array[1:])[0, 1]
    assert m.detail == f"lag-1 correlation r = {r:+.6f}"


def test_bit_runs_counts_runs() -> None:
    data = bytes([0b11110000, 0b10101010])  # runs: 1111 0000 1 0 1 0 1 0 1 0 -> 10 runs
    assert raw_tests.bit_runs(data).detail.startswith("10 runs in 16 bits")


def test_ks_words_matches_scipy() -> None:
    words = raw_tests.words(good(), 5_000)
    values = [(w + 0.5) / 2**32 for w in words]
    m = raw_tests.ks_words(good(), 5_000)
    expected = sps.kstest(values, "uniform")
    assert m.statistic == pytest.approx(expected.statistic, rel=1e-12)
    assert m.p_value == pytest.approx(expected.pvalue, rel=1e-5)


# -- predictability ------------------------------------------------------------------------


def _temper(y: int) -> int:
    y ^= y >> 11
    y ^= (y << 7) & 0x9D2C5680
    y ^= (y << 15) & 0xEFC60000
    return y ^ (y >> 18)


def test_untemper_inverts_the_mt19937_tempering() -> None:
    r = random.Random(7)
    for _ in range(2_000):
        x = r.getrandbits(32)
        assert predictability.untemper(_temper(x)) == x


@pytest.mark.parametrize("offset", [0, 1, 2, 3])
def test_mersenne_twister_is_predicted_at_any_alignment(offset: int) -> None:
    m = predictability.mt19937_prediction(mersenne()[offset:])
    assert m.passed is False
    assert m.statistic == 624.0
    assert "predictable" in m.detail


def test_mersenne_twister_is_predicted_in_big_endian_words_too() -> None:
    words = [int.from_bytes(mersenne()[i : i + 4], "little") for i in range(0, 8192, 4)]
    big_endian = b"".join(w.to_bytes(4, "big") for w in words)
    m = predictability.mt19937_prediction(big_endian)
    assert m.passed is False and "big-endian" in m.detail


def test_a_csprng_is_not_predicted() -> None:
    m = predictability.mt19937_prediction(good())
    assert m.passed is True and m.statistic == 0.0


def test_too_little_data_is_skipped_not_passed() -> None:
    assert predictability.mt19937_prediction(good()[:100]).skipped is not None
    assert predictability.linear_complexity(good()[:100], 50_000).skipped is not None


def test_berlekamp_massey_finds_an_lfsr() -> None:
    # x^7 + x + 1 style recurrence: s[t] = s[t-7] ^ s[t-6]
    bits = [1, 0, 0, 1, 0, 1, 1]
    for t in range(7, 300):
        bits.append(bits[t - 7] ^ bits[t - 6])
    packed = sum(b << i for i, b in enumerate(bits))
    assert predictability.berlekamp_massey(packed, len(bits)) == 7


def test_linear_complexity_exposes_mt19937_but_not_a_csprng() -> None:
    mt = predictability.linear_complexity(mersenne(), 50_000)
    csprng = predictability.linear_complexity(good(), 50_000)
    assert mt.passed is False and mt.statistic == 19937.0
    assert csprng.passed is True and csprng.statistic is not None
    assert abs(csprng.statistic - 25_000) < 20
