"""The certification's stdlib statistics against SciPy (an independent implementation)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from rng.certify import stats

CHI2_DFS = [1, 2, 3, 5, 10, 23, 51, 119, 255, 1000, 2601, 4980, 5000]
TAIL_PROBABILITIES = [1e-250, 1e-30, 1e-8, 1e-3, 0.01, 0.05, 0.3, 0.5, 0.9, 0.999, 1 - 1e-9]


@pytest.mark.parametrize("df", CHI2_DFS)
def test_chi2_sf_matches_scipy_across_the_tail(df: int) -> None:
    for q in TAIL_PROBABILITIES:
        x = sps.chi2.isf(q, df)
        assert stats.chi2_sf(x, df) == pytest.approx(sps.chi2.sf(x, df), rel=1e-9)
        assert stats.chi2_log10_sf(x, df) == pytest.approx(
            sps.chi2.logsf(x, df) / math.log(10), rel=1e-9, abs=1e-12
        )


def test_chi2_log10_sf_stays_finite_where_the_p_value_underflows() -> None:
    # A broken generator's X² of a million on 2601 df: p is about 10**-210,000.
    log10_p = stats.chi2_log10_sf(1e6, 2601)
    assert stats.chi2_sf(1e6, 2601) == 0.0
    # ln Q(a, x) ~ -x + (a-1) ln x - lgamma(a) for x >> a
    a, x = 2601 / 2, 1e6 / 2
    approx = (-x + (a - 1) * math.log(x) - math.lgamma(a)) / math.log(10)
    assert log10_p == pytest.approx(approx, rel=1e-4)


def test_gamma_q_edges() -> None:
    assert stats.gamma_q(3.0, 0.0) == 1.0
    assert stats.gamma_q(0.5, 1.0) == pytest.approx(math.erfc(1.0), rel=1e-13)
    with pytest.raises(ValueError, match="a > 0"):
        stats.gamma_q(0.0, 1.0)


@pytest.mark.parametrize("z", [0.0, 0.5, 1.0, 2.5, 5.0, 8.0, 20.0, 37.0])
def test_normal_tails(z: float) -> None:
    assert stats.normal_sf(z) == pytest.approx(sps.norm.sf(z), rel=1e-12)
    assert stats.normal_two_sided(-z) == pytest.approx(2 * sps.norm.sf(z), rel=1e-12)


@pytest.mark.parametrize("z", [1.0, 10.0, 38.0, 40.0, 100.0, 1000.0])
def test_normal_two_sided_log10_beyond_underflow(z: float) -> None:
    expected = (math.log(2) + sps.norm.logsf(z)) / math.log(10)
    assert stats.normal_two_sided_log10(z) == pytest.approx(expected, rel=1e-9)


KS_SIZES = [1, 2, 3, 5, 10, 30, 50, 100, 140, 141, 500, 1000, 10_000, 100_000]


@pytest.mark.parametrize("n", KS_SIZES)
def test_kolmogorov_sf_matches_scipy_kstwo(n: int) -> None:
    for q in [0.999, 0.9, 0.5, 0.1, 0.01, 1e-3, 1e-6, 1e-20]:
        d = sps.kstwo.isf(q, n)
        if not 0 < d < 1:
            continue
        # SciPy is itself consistent (its isf against its sf) only to ~4e-5 near n = 141.
        assert stats.kolmogorov_sf(d, n) == pytest.approx(sps.kstwo.sf(d, n), rel=1e-4)
    assert stats.kolmogorov_sf(0.5 / n, n) == 1.0
    assert stats.kolmogorov_sf(1.0, n) == 0.0


@pytest.mark.parametrize("n", [5, 40, 300])
def test_smirnov_sf_is_the_exact_one_sided_tail(n: int) -> None:
    for d in [0.05, 0.1, 0.2, 0.4]:
        assert stats.smirnov_sf(d, n) == pytest.approx(sps.ksone.sf(d, n), rel=1e-9)


@pytest.mark.parametrize("n", [7, 60, 2_000])
def test_ks_uniform_matches_scipy_kstest(n: int) -> None:
    rng = np.random.default_rng(n)
    for values in (rng.random(n), rng.random(n) ** 1.3):
        d, p, count = stats.ks_uniform(values.tolist())
        expected = sps.kstest(values, "uniform", method="exact")
        assert count == n
        assert d == pytest.approx(expected.statistic, rel=1e-12)
        assert p == pytest.approx(expected.pvalue, rel=1e-6)


@pytest.mark.parametrize(
    ("k", "n", "p"),
    [
        *[(0, 1000, 8e-4), (1, 1000, 8e-4), (4, 1000, 8e-4), (17, 1000, 8e-4)],
        *[(90, 100_000, 8e-4), (40, 100, 0.5), (60, 100, 0.5), (1000, 1000, 0.3), (3, 2, 0.5)],
    ],
)
def test_binomial_sf(k: int, n: int, p: float) -> None:
    assert stats.binomial_sf(k, n, p) == pytest.approx(sps.binom.sf(k - 1, n, p), rel=1e-9)


def test_weighted_chi2_sf_is_exact_for_one_term() -> None:
    for x in [50.0, 100.0, 150.0]:
        assert stats.weighted_chi2_sf(x, [(2.0, 40)]) == pytest.approx(
            sps.chi2.sf(x / 2.0, 40), rel=1e-9
        )


def test_weighted_chi2_sf_tail_against_simulation() -> None:
    """The adjacency null law for n = 12 (weights 1/11, 1, 13/11): Pearson's approximation
    against one million draws, at the 5 %, 1 % and 0.1 % points."""
    terms = [(1 / 11, 22.0), (1.0, 54.0), (13 / 11, 55.0)]
    rng = np.random.default_rng(2024)
    draws = sum(w * rng.chisquare(df, 1_000_000) for w, df in terms)
    for q in [0.05, 0.01, 0.001]:
        x = float(np.quantile(draws, 1 - q))
        assert stats.weighted_chi2_sf(x, terms) == pytest.approx(q, rel=0.08)
