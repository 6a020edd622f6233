"""In-house tests on the raw byte stream (before any scaling).

GLI-style submissions include a "raw output collection tool" so the lab can test the
generator itself, not only the games. These tests run on the same sample file the report
publishes (``samples/raw-<source>.bin``), complementing the external batteries
(``rng.certify.external``) with tests that need nothing installed:

- byte frequencies (256-cell chi-square);
- monobit (proportion of one bits) and bit runs (Wald–Wolfowitz, conditional on the ones);
- non-overlapping byte pairs (65,536-cell chi-square: Knuth's serial test);
- lag-1 serial correlation of bytes (what ``ent`` reports, with a p-value);
- Kolmogorov–Smirnov on 32-bit words read as fractions of 2**32 (810a.5(c));
- the maximum of five 32-bit words (an order-statistic test: max**5 is uniform).
"""

from __future__ import annotations

import math
import operator
from collections import Counter

from rng.certify.outcome_tests import chi_square_counts, z_measurement
from rng.certify.results import Measurement
from rng.certify.stats import ks_uniform

__all__ = [
    "bit_runs",
    "byte_frequency",
    "byte_pairs",
    "byte_serial_correlation",
    "ks_words",
    "maximum_of_t",
    "monobit",
    "words",
]


def byte_frequency(data: bytes) -> Measurement:
    """The 256 byte values equally frequent."""
    counter = Counter(data)
    counts = [counter.get(v, 0) for v in range(256)]
    detail = f"expected {len(data) / 256:.1f} per value, observed {min(counts)}–{max(counts)}"
    return chi_square_counts(counts, [1 / 256] * 256, len(data), "bytes", detail)


def monobit(data: bytes) -> Measurement:
    """Proportion of one bits: (ones - zeros)/sqrt(n) is standard normal (SP 800-22 2.1)."""
    n = 8 * len(data)
    ones = int.from_bytes(data, "big").bit_count()
    z = (2 * ones - n) / math.sqrt(n)
    return z_measurement(z, len(data), "bytes", f"{ones} ones in {n} bits ({ones / n:.6f})")


def bit_runs(data: bytes) -> Measurement:
    """Runs of equal bits: Wald–Wolfowitz given the numbers of ones and zeros."""
    n = 8 * len(data)
    value = int.from_bytes(data, "big")
    ones = value.bit_count()
    zeros = n - ones
    changes = ((value ^ (value >> 1)) & ((1 << (n - 1)) - 1)).bit_count()
    runs = changes + 1
    mean = 1.0 + 2.0 * ones * zeros / n
    variance = 2.0 * ones * zeros * (2.0 * ones * zeros - n) / (n * n * (n - 1.0))
    z = (runs - mean) / math.sqrt(variance)
    return z_measurement(z, len(data), "bytes", f"{runs} runs in {n} bits, expected {mean:.1f}")


def byte_pairs(data: bytes) -> Measurement:
    """Non-overlapping pairs of bytes uniform over the 65,536 cells."""
    even = data[: len(data) // 2 * 2]
    counter = Counter(memoryview(even).cast("H"))
    n = len(even) // 2
    counts = [counter.get(v, 0) for v in range(65536)]
    detail = f"{n} pairs, expected {n / 65536:.1f} per cell"
    m = chi_square_counts(counts, [1 / 65536] * 65536, n, "bytes", detail)
    return Measurement(
        sample_size=len(even),
        unit="bytes",
        statistic=m.statistic,
        statistic_name=m.statistic_name,
        df=m.df,
        p_value=m.p_value,
        log10_p=m.log10_p,
        detail=m.detail,
    )


def byte_serial_correlation(data: bytes) -> Measurement:
    """Lag-1 correlation of consecutive bytes: r·sqrt(n) is standard normal."""
    n = len(data)
    mean = sum(data) / n
    sum_sq = sum(map(operator.mul, data, data)) - n * mean * mean
    # sum over i < n-1 of (x_i - m)(x_{i+1} - m), expanded so the products run in C
    products = sum(map(operator.mul, data, data[1:]))
    lagged = products - (n + 1) * mean * mean + mean * (data[0] + data[-1])
    r = lagged / sum_sq
    z = r * math.sqrt(n - 1)
    return z_measurement(z, n, "bytes", f"lag-1 correlation r = {r:+.6f}")


def words(data: bytes, count: int) -> list[int]:
    """The first ``count`` 32-bit big-endian words of ``data``."""
    view = data[: 4 * count]
    return [int.from_bytes(view[i : i + 4], "big") for i in range(0, len(view), 4)]


def ks_words(data: bytes, count: int) -> Measurement:
    """Kolmogorov–Smirnov of ``count`` 32-bit words, as (w + 1/2) / 2**32, against U(0, 1)."""
    values = [(w + 0.5) / 2**32 for w in words(data, count)]
    d, p, n = ks_uniform(values)
    return Measurement(
        sample_size=4 * n,
        unit="bytes",
        statistic=d,
        statistic_name="D",
        p_value=p,
        detail=f"{n} 32-bit words",
    )


def maximum_of_t(data: bytes, count: int, t: int = 5, bins: int = 100) -> Measurement:
    """Knuth's maximum-of-t test: for ``count`` groups of t words, max(u)**t is uniform;
    its frequencies in ``bins`` equal bins are tested by chi-square (an order-statistic
    test, 810a.5(c))."""
    values = words(data, count * t)
    counts = [0] * bins
    for i in range(0, len(values) - t + 1, t):
        u = (max(values[i : i + t]) + 0.5) / 2**32
        counts[min(bins - 1, int(u**t * bins))] += 1
    n = len(values) // t
    m = chi_square_counts(counts, [1 / bins] * bins, n, "bytes", f"{n} groups of {t} words")
    return Measurement(
        sample_size=4 * n * t,
        unit="bytes",
        statistic=m.statistic,
        statistic_name=m.statistic_name,
        df=m.df,
        p_value=m.p_value,
        log10_p=m.log10_p,
        detail=m.detail,
    )
