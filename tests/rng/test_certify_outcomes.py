"""Outcome tests of the certification battery: their null laws, and their teeth.

The null laws are checked by simulation with NumPy (independent of the code under test): the
p-values of many samples from a perfect shuffler must be uniform. Then each test must pass the
real generator (a seeded HMAC_DRBG, so these tests are deterministic) and fail the broken
generator it exists to catch.
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, MutableSequence
from typing import Any

import numpy as np
import pytest
from scipy import stats as sps

from rng import HmacDrbgSource, seeded_source
from rng.certify import broken, outcome_tests
from rng.certify.results import ALPHA, Measurement
from rng.certify.subject import DOUBLE_ZERO_WHEEL, SINGLE_ZERO_WHEEL, Subject
from rng.wheels import BIG_SIX_ORDER, BigSixSymbol


def _uniform_p_values(p_values: list[float]) -> float:
    return float(sps.kstest(p_values, "uniform").pvalue)


def _numpy_decks(rng: np.random.Generator, count: int, n: int) -> list[bytes]:
    decks = rng.permuted(np.tile(np.arange(n, dtype=np.uint8), (count, 1)), axis=1)
    return [row.tobytes() for row in decks]


# -- null laws -----------------------------------------------------------------------------


def test_card_position_statistic_is_chi_square_on_n_minus_1_squared_df() -> None:
    """Pearson's X² of a permutation matrix has mean n(n-1); X²(n-1)/n has mean (n-1)²."""
    rng = np.random.default_rng(1)
    n = 6
    results = [outcome_tests.card_position(_numpy_decks(rng, 300, n)) for _ in range(400)]
    statistics = [r.statistic for r in results if r.statistic is not None]
    assert np.mean(statistics) == pytest.approx((n - 1) ** 2, rel=0.03)
    assert _uniform_p_values([r.p_value for r in results if r.p_value is not None]) > 0.001


@pytest.mark.parametrize("n", [5, 6, 7, 8])
def test_adjacency_null_law_is_the_spectrum_of_the_pair_covariance(n: int) -> None:
    pairs = [(a, b) for a in range(n) for b in range(n) if a != b]
    p = 1 / n
    joint = 1 / (n * (n - 1))  # P(a then b, and c then d) for pairs sharing no "slot" conflict
    cov = np.empty((len(pairs), len(pairs)))
    for i, (a, b) in enumerate(pairs):
        for j, (c, d) in enumerate(pairs):
            if (a, b) == (c, d):
                cov[i, j] = p * (1 - p)
            elif (c, d) == (b, a) or c == a or d == b:
                cov[i, j] = -p * p  # mutually exclusive in one deck
            else:
                cov[i, j] = joint - p * p
    eigen = np.round(np.linalg.eigvalsh(cov / p), 9)
    spectrum = Counter(eigen.tolist())
    spectrum.pop(0.0, None)
    expected = {round(w, 9): df for w, df in outcome_tests.adjacency_null(n)}
    assert dict(spectrum) == pytest.approx(expected)


def test_adjacency_p_values_are_uniform_under_the_null() -> None:
    rng = np.random.default_rng(2)
    results = [outcome_tests.adjacency(_numpy_decks(rng, 400, 7)) for _ in range(400)]
    assert _uniform_p_values([r.p_value for r in results if r.p_value is not None]) > 0.001


def test_shoe_rank_position_is_chi_square_on_n_minus_1_times_r_minus_1_df() -> None:
    rng = np.random.default_rng(3)
    results = []
    for _ in range(400):
        shoes = _numpy_decks(rng, 200, 8)  # 8 cards, ranks card % 4: two of each rank
        results.append(outcome_tests.shoe_rank_position(shoes, ranks=4))
    statistics = [r.statistic for r in results if r.statistic is not None]
    assert np.mean(statistics) == pytest.approx(7 * 3, rel=0.03)
    assert _uniform_p_values([r.p_value for r in results if r.p_value is not None]) > 0.001


def test_fixed_point_law_is_the_rencontres_distribution() -> None:
    probs = outcome_tests.fixed_point_probabilities(52, 5)
    assert sum(probs) == pytest.approx(1.0, abs=1e-15)
    for k in range(5):
        assert probs[k] == pytest.approx(math.exp(-1) / math.factorial(k), rel=1e-12)
    small = outcome_tests.fixed_point_probabilities(4, 5)  # 9, 8, 6, 0, 1 of 24
    assert small == pytest.approx([9 / 24, 8 / 24, 6 / 24, 0, 1 / 24, 0])


def test_coupon_collector_cdf_has_the_known_mean() -> None:
    cdf = outcome_tests.coupon_collector_cdf(6)
    mean = sum(1 - cdf(t) for t in range(0, 400))
    assert mean == pytest.approx(6 * sum(1 / k for k in range(1, 7)), rel=1e-9)
    assert cdf(5) == 0.0
    assert cdf(6) == pytest.approx(math.factorial(6) / 6**6)


def test_big_six_symbol_shares_are_the_619a_1_counts() -> None:
    shares = Counter(BIG_SIX_ORDER)
    assert [shares[s] for s in BigSixSymbol] == [23, 15, 8, 4, 2, 1, 1]
    exact = bytes(s for s in range(54) for _ in range(100))
    assert outcome_tests.big_six_symbols(exact).statistic == pytest.approx(0.0)


# -- teeth ---------------------------------------------------------------------------------


def _good() -> Subject:
    return Subject(seeded_source("certify outcome tests"))


def _inner() -> Callable[[], HmacDrbgSource]:
    counter = iter(range(1000))
    return lambda: seeded_source(f"certify broken inner {next(counter)}")


SAMPLES: dict[str, Callable[[Subject], Any]] = {
    "decks": lambda subject: [subject.deal_shoe(1) for _ in range(6_000)],
    "shoes": lambda subject: [subject.deal_shoe(8) for _ in range(60)],
    "small4": lambda subject: [subject.deal_items(4) for _ in range(12_000)],
    "small5": lambda subject: [subject.deal_items(5) for _ in range(30_000)],
    "r37": lambda subject: subject.roulette(SINGLE_ZERO_WHEEL, 60_000),
    "r38": lambda subject: subject.roulette(DOUBLE_ZERO_WHEEL, 60_000),
    "b6": lambda subject: subject.big_six(60_000),
}


def _samples(subject: Subject) -> dict[str, Any]:
    return {kind: sample(subject) for kind, sample in SAMPLES.items()}


BROKEN_NAMES = [s.name for s in broken.broken_subjects(_inner(), mt_seed=1234)]


@functools.cache
def _broken_sample(name: str, kind: str) -> Any:
    """One kind of sample of one broken generator, drawn when a test first needs it (most
    need a few kinds of one generator), from a generator made afresh for it: the same
    sample whichever test, worker or order asks first."""
    subject = next(s for s in broken.broken_subjects(_inner(), mt_seed=1234) if s.name == name)
    return SAMPLES[kind](subject)


class _BrokenSamples(Mapping[str, Any]):
    def __init__(self, name: str) -> None:
        self.name = name

    def __getitem__(self, kind: str) -> Any:
        return _broken_sample(self.name, kind)

    def __iter__(self) -> Iterator[str]:
        return iter(SAMPLES)

    def __len__(self) -> int:
        return len(SAMPLES)


TESTS: dict[str, Callable[[Mapping[str, Any]], Measurement]] = {
    "card-position": lambda s: outcome_tests.card_position(s["decks"]),
    "adjacency": lambda s: outcome_tests.adjacency(s["decks"]),
    "fixed-points": lambda s: outcome_tests.fixed_points(s["decks"]),
    "inter-deal": lambda s: outcome_tests.inter_deal_correlation(s["decks"]),
    "shoe": lambda s: outcome_tests.shoe_rank_position(s["shoes"]),
    "small-4": lambda s: outcome_tests.small_deck_permutations(s["small4"]),
    "small-5": lambda s: outcome_tests.small_deck_permutations(s["small5"]),
    "r37": lambda s: outcome_tests.uniform_frequencies(s["r37"], 37, "spins", "pockets"),
    "r38": lambda s: outcome_tests.uniform_frequencies(s["r38"], 38, "spins", "pockets"),
    "serial-pairs": lambda s: outcome_tests.serial_pairs(s["r37"], 37, "spins"),
    "runs": lambda s: outcome_tests.runs_test(
        outcome_tests.colour_symbols(s["r37"], SINGLE_ZERO_WHEEL),
        "spins",
        "red/black",
    ),
    "serial-correlation": lambda s: outcome_tests.serial_correlation(s["r37"], "spins"),
    "gap": lambda s: outcome_tests.gap_test(s["r37"], 0, 37, "spins", "zeros"),
    "coupon": lambda s: outcome_tests.coupon_collector(s["r37"], 37, "spins"),
    "b6-sections": lambda s: outcome_tests.uniform_frequencies(s["b6"], 54, "spins", "sections"),
    "b6-symbols": lambda s: outcome_tests.big_six_symbols(s["b6"]),
    "b6-runs": lambda s: outcome_tests.runs_test(
        outcome_tests.high_low_symbols(s["b6"], 54),
        "spins",
        "high/low",
    ),
}


@pytest.fixture(scope="module")
def good_samples() -> dict[str, Any]:
    return _samples(_good())


@pytest.fixture(scope="module")
def broken_samples() -> dict[str, Mapping[str, Any]]:
    return {name: _BrokenSamples(name) for name in BROKEN_NAMES}


@pytest.mark.parametrize("test", sorted(TESTS))
def test_the_real_generator_passes(test: str, good_samples: dict[str, Any]) -> None:
    m = TESTS[test](good_samples)
    assert m.p_value is not None and m.p_value >= ALPHA, m


# Which outcome test must catch which broken generator beyond doubt (p < 1e-10).
CAUGHT_BY = {
    "modulo-scaling": ["card-position", "r37", "r38", "b6-sections"],
    "off-by-one-deal": ["card-position", "small-4", "small-5"],
    "biased-byte": ["card-position", "small-4", "small-5", "r37", "r38", "b6-sections"],
}


@pytest.mark.parametrize(
    ("generator", "test"), [(g, t) for g, tests in CAUGHT_BY.items() for t in tests]
)
def test_broken_generators_fail(
    generator: str, test: str, broken_samples: dict[str, Mapping[str, Any]]
) -> None:
    m = TESTS[test](broken_samples[generator])
    assert m.p_value is not None and m.p_value < 1e-10, m


def test_mersenne_twister_passes_every_outcome_test(
    broken_samples: dict[str, Mapping[str, Any]],
) -> None:
    """That is why the predictability tests exist (see test_certify_raw.py)."""
    results = {name: run(broken_samples["mersenne-twister"]) for name, run in TESTS.items()}
    low = {name: m.p_value for name, m in results.items() if m.p_value and m.p_value < 1e-4}
    assert not low


# -- the small-deck permutation test against classic shuffle bugs --------------------------


def _deal_with(shuffle: Callable[[MutableSequence[int]], None], k: int, count: int) -> list[bytes]:
    out = []
    for _ in range(count):
        items = list(range(k))
        shuffle(items)
        out.append(bytes(items))
    return out


@pytest.mark.parametrize("k", [4, 5])
def test_small_deck_test_catches_an_off_by_one_fisher_yates(k: int) -> None:
    randbelow = seeded_source("sattolo").randbelow

    def sattolo(items: MutableSequence[int]) -> None:  # j in 0..i-1: only k-cycles
        for i in range(len(items) - 1, 0, -1):
            j = randbelow(i)
            items[i], items[j] = items[j], items[i]

    m = outcome_tests.small_deck_permutations(_deal_with(sattolo, k, 10_000))
    assert m.p_value == 0.0 and m.log10_p is not None and m.log10_p < -1000


@pytest.mark.parametrize("k", [4, 5])
def test_small_deck_test_catches_the_naive_shuffle(k: int) -> None:
    randbelow = seeded_source("naive").randbelow

    def naive(items: MutableSequence[int]) -> None:  # j in 0..n-1 at every step: n**n paths
        for i in range(len(items) - 1, 0, -1):
            j = randbelow(len(items))
            items[i], items[j] = items[j], items[i]

    m = outcome_tests.small_deck_permutations(_deal_with(naive, k, 60_000))
    assert m.p_value is not None and m.p_value < 1e-10


@pytest.mark.parametrize("k", [4, 5])
def test_small_deck_test_passes_the_production_shuffle_and_lazy_deal(k: int) -> None:
    source = seeded_source(f"production {k}")
    shuffled = outcome_tests.small_deck_permutations(_deal_with(source.shuffle, k, 24_000))
    subject = _good()
    dealt = outcome_tests.small_deck_permutations([subject.deal_items(k) for _ in range(24_000)])
    assert shuffled.p_value is not None and shuffled.p_value >= ALPHA
    assert dealt.p_value is not None and dealt.p_value >= ALPHA


def test_small_deck_test_catches_the_lazy_off_by_one_deal() -> None:
    subject = broken.OffByOneDeal(seeded_source("off by one"))
    m = outcome_tests.small_deck_permutations([subject.deal_items(4) for _ in range(2_000)])
    assert m.p_value == 0.0
    assert "orders never dealt" in m.detail
