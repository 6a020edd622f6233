"""Tests on game outcomes: dealt cards, roulette pockets and Big Six sections.

Raw-stream batteries cannot see a scaling or dealing bug, so labs test the outcomes too
(58 Pa. Code 810a.5(c) lists chi-square, runs, serial correlation, gap, coupon collector,
permutation, adjacency, Poisson and interplay-correlation tests; 25 CFR 547.14(b)(2) and AGCO
21.1.2 ask for game-specific tests at 99 % confidence). Every function here takes a sample
(see ``rng.certify.subject`` for its encoding) and returns a ``Measurement``.

Two statistics need more than a textbook chi-square, because a dealt deck is a permutation
and its counts are not multinomial:

- **Card position** (count[card][position] over N decks). Every row and column of a
  permutation matrix sums to one, so Pearson's X² has mean n(n-1), not (n-1)²: its covariance
  is n/(n-1) times the projection onto the (n-1)² free directions. The test statistic is
  X²·(n-1)/n, exactly chi-square((n-1)²) in the limit. The same holds for the rank-by-position
  table of a multi-deck shoe (n positions, 13 ranks of equal share): X²·(n-1)/n ~ χ²((n-1)·12).
- **Adjacency** (count of ordered pairs (a, b) with b dealt right after a). The n(n-1) cell
  indicators of one deck have a covariance whose spectrum is 1/(n-1) (2(n-1) times), 1
  (n(n-3)/2 times) and (n+1)/(n-1) ((n-1)(n-2)/2 times), so X² is that weighted sum of
  chi-squares (mean (n-1)²); its tail comes from ``stats.weighted_chi2_sf``.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Callable, Sequence
from fractions import Fraction

from rng.certify.results import Measurement
from rng.certify.stats import (
    LOG10_E,
    chi2_log10_sf,
    chi2_sf,
    log_gamma_q,
    normal_two_sided,
    normal_two_sided_log10,
    weighted_chi2_sf,
)
from rng.wheels import BIG_SIX_ORDER, PocketColour, RouletteWheel

__all__ = [
    "adjacency",
    "adjacency_null",
    "big_six_symbols",
    "card_position",
    "chi_square_counts",
    "colour_symbols",
    "coupon_collector",
    "coupon_collector_cdf",
    "fixed_point_probabilities",
    "fixed_points",
    "gap_test",
    "high_low_symbols",
    "inter_deal_correlation",
    "runs_test",
    "serial_correlation",
    "serial_pairs",
    "shoe_rank_position",
    "small_deck_permutations",
    "uniform_frequencies",
    "z_measurement",
]


def _chi2_measurement(
    x2: float,
    df: float,
    n: int,
    unit: str,
    detail: str,
    *,
    p: float | None = None,
    log10_p: float | None = None,
) -> Measurement:
    if p is None:
        log10_p = chi2_log10_sf(x2, df)
        p = chi2_sf(x2, df)
    return Measurement(
        sample_size=n,
        unit=unit,
        statistic=x2,
        statistic_name="X²",
        df=df,
        p_value=p,
        log10_p=log10_p,
        detail=detail,
    )


def z_measurement(z: float, n: int, unit: str, detail: str) -> Measurement:
    """A two-sided test of a standard normal statistic."""
    p = normal_two_sided(z)
    return Measurement(
        sample_size=n,
        unit=unit,
        statistic=z,
        statistic_name="z",
        p_value=p,
        log10_p=normal_two_sided_log10(z) if p < 1e-300 else None,
        detail=detail,
    )


def chi_square_counts(
    counts: Sequence[int], probabilities: Sequence[float], n: int, unit: str, detail: str = ""
) -> Measurement:
    """Pearson's goodness of fit of ``counts`` (summing to ``n``) to ``probabilities``."""
    x2 = 0.0
    for observed, prob in zip(counts, probabilities, strict=True):
        expected = n * prob
        x2 += (observed - expected) ** 2 / expected
    return _chi2_measurement(x2, len(counts) - 1, n, unit, detail)


def uniform_frequencies(values: bytes, cells: int, unit: str, what: str) -> Measurement:
    """Chi-square of the frequencies of ``values`` (each in ``range(cells)``) against uniform."""
    counter = Counter(values)
    if any(v >= cells for v in counter):
        raise ValueError(f"a value is outside range({cells})")
    counts = [counter.get(v, 0) for v in range(cells)]
    low, high = min(counts), max(counts)
    detail = f"{cells} {what}, expected {len(values) / cells:.1f} each, observed {low}–{high}"
    return chi_square_counts(counts, [1.0 / cells] * cells, len(values), unit, detail)


def _by_position(deals: Sequence[bytes]) -> tuple[bytes, int]:
    joined = b"".join(deals)
    n = len(deals[0])
    if len(joined) != n * len(deals):
        raise ValueError("every deal must have the same length")
    return joined, n


def card_position(decks: Sequence[bytes]) -> Measurement:
    """Card × position chi-square over N dealt decks: X²·(n-1)/n ~ χ²((n-1)²)."""
    joined, n = _by_position(decks)
    count = len(decks)
    expected = count / n
    x2 = 0.0
    for position in range(n):
        counter = Counter(joined[position::n])
        x2 += sum((counter.get(card, 0) - expected) ** 2 for card in range(n)) / expected
    statistic = x2 * (n - 1) / n
    detail = (
        f"{n}×{n} cells, expected {expected:.1f} each; Pearson X² = {x2:.1f} scaled by "
        f"{n - 1}/{n} for the fixed margins of a permutation matrix"
    )
    return _chi2_measurement(statistic, (n - 1) ** 2, count, "decks", detail)


def shoe_rank_position(shoes: Sequence[bytes], ranks: int = 13) -> Measurement:
    """Rank × position chi-square over N dealt multi-deck shoes: X²·(n-1)/n ~ χ²((n-1)(r-1))."""
    joined, n = _by_position(shoes)
    count = len(shoes)
    expected = count / ranks
    to_rank = bytes(card % ranks for card in range(256))
    x2 = 0.0
    for position in range(n):
        counter = Counter(joined[position::n].translate(to_rank))
        x2 += sum((counter.get(r, 0) - expected) ** 2 for r in range(ranks)) / expected
    statistic = x2 * (n - 1) / n
    detail = (
        f"{n} positions × {ranks} ranks, expected {expected:.1f} each; Pearson X² = {x2:.1f} "
        f"scaled by {n - 1}/{n} (each shoe holds every card exactly once)"
    )
    return _chi2_measurement(statistic, (n - 1) * (ranks - 1), count, "shoes", detail)


def adjacency_null(n: int) -> list[tuple[float, float]]:
    """The null law of the adjacency X² for decks of n cards, as (weight, df) terms."""
    return [
        (1.0 / (n - 1), 2.0 * (n - 1)),
        (1.0, n * (n - 3) / 2.0),
        ((n + 1) / (n - 1), (n - 1) * (n - 2) / 2.0),
    ]


def adjacency(decks: Sequence[bytes]) -> Measurement:
    """Ordered-pair adjacency: how often card b is dealt right after card a, for all a ≠ b."""
    joined, n = _by_position(decks)
    count = len(decks)
    pairs: Counter[tuple[int, int]] = Counter()
    for position in range(n - 1):
        pairs.update(zip(joined[position::n], joined[position + 1 :: n], strict=True))
    expected = count / n  # each of the n-1 adjacent slots holds (a, b) with prob 1/(n(n-1))
    x2 = 0.0
    for a in range(n):
        for b in range(n):
            if a != b:
                x2 += (pairs.get((a, b), 0) - expected) ** 2 / expected
    if any(a == b for a, b in pairs):
        raise ValueError("a deck holds the same card twice")
    terms = adjacency_null(n)
    p = weighted_chi2_sf(x2, terms)
    log10_p = None
    if p == 0.0:  # far beyond the tail: size it by the dominant chi-square term
        log10_p = log_gamma_q((n - 1) ** 2 / 2.0, x2 / 2.0 * (n - 1) / n) * LOG10_E
    detail = (
        f"{n * (n - 1)} ordered pairs, expected {expected:.1f} each; null law "
        + " + ".join(f"{w:.4g}·χ²({df:g})" for w, df in terms)
        + " (mean (n-1)²)"
    )
    return _chi2_measurement(x2, float((n - 1) ** 2), count, "decks", detail, p=p, log10_p=log10_p)


def fixed_point_probabilities(n: int, top: int) -> list[float]:
    """P(k fixed points) in a uniform permutation of n, k = 0..top-1, and P(>= top) last."""
    inverse_factorial_sums = [Fraction(0)] * (n + 1)
    running = Fraction(0)
    for j in range(n + 1):
        running += Fraction((-1) ** j, math.factorial(j))
        inverse_factorial_sums[j] = running
    probs = [inverse_factorial_sums[n - k] / math.factorial(k) for k in range(top)]
    return [float(p) for p in probs] + [float(1 - sum(probs))]


def fixed_points(decks: Sequence[bytes], top: int = 5) -> Measurement:
    """Cards dealt at their own index (the pool starts in index order): the count per deck
    is Poisson(1) to within 1/n! — the rencontres distribution, used exactly here."""
    n = len(decks[0])
    counts = [0] * (top + 1)
    for deck in decks:
        k = sum(1 for i, card in enumerate(deck) if card == i)
        counts[min(k, top)] += 1
    probs = fixed_point_probabilities(n, top)
    detail = "decks with 0, 1, 2, 3, 4, 5+ fixed points: " + ", ".join(map(str, counts))
    return chi_square_counts(counts, probs, len(decks), "decks", detail)


def inter_deal_correlation(decks: Sequence[bytes]) -> Measurement:
    """Spearman correlation between the card positions of consecutive deals (interplay
    correlation, 810a.5(c)): each ρ has mean 0 and variance 1/(n-1) under independence, and
    consecutive ρ are uncorrelated, so sum(ρ)·sqrt((n-1)/(N-1)) is standard normal."""
    n = len(decks[0])
    previous: list[int] | None = None
    centre = (n - 1) / 2.0
    scale = n * (n * n - 1) / 12.0
    total = 0.0
    pairs = 0
    for deck in decks:
        position = [0] * n
        for pos, card in enumerate(deck):
            position[card] = pos
        if previous is not None:
            pairs_of = zip(previous, position, strict=True)
            total += sum((a - centre) * (b - centre) for a, b in pairs_of) / scale
            pairs += 1
        previous = position
    z = total * math.sqrt((n - 1) / pairs)
    detail = f"mean Spearman ρ of {pairs} consecutive pairs = {total / pairs:+.5f}"
    return z_measurement(z, len(decks), "decks", detail)


def small_deck_permutations(perms: Sequence[bytes]) -> Measurement:
    """All k! orders of a small deck equally likely (catches off-by-one and modulo dealing)."""
    k = len(perms[0])
    counter = Counter(perms)
    orders = math.factorial(k)
    if len(counter) > orders:
        raise ValueError("a dealt small deck is not a permutation")
    counts = list(counter.values()) + [0] * (orders - len(counter))
    expected = len(perms) / orders
    detail = (
        f"{orders} orders of {k} items, expected {expected:.1f} each, observed "
        f"{min(counts)}–{max(counts)}; {orders - len(counter)} orders never dealt"
    )
    return chi_square_counts(counts, [1.0 / orders] * orders, len(perms), "decks", detail)


def serial_pairs(values: bytes, cells: int, unit: str) -> Measurement:
    """Knuth's serial test: non-overlapping consecutive pairs, uniform over cells²."""
    pairs = Counter(zip(values[0::2], values[1::2], strict=False))
    n = len(values) // 2
    total = cells * cells
    counts = [pairs.get((a, b), 0) for a in range(cells) for b in range(cells)]
    detail = f"{n} non-overlapping pairs in {total} cells, expected {n / total:.1f} each"
    return chi_square_counts(counts, [1.0 / total] * total, n, unit, detail)


def runs_test(symbols: bytes, unit: str, what: str) -> Measurement:
    """Wald–Wolfowitz runs test on a two-symbol sequence (conditional on the symbol counts)."""
    if not symbols:
        raise ValueError("the runs test needs a sequence")
    first = symbols[0]
    n1 = symbols.count(first)
    n2 = len(symbols) - n1
    n = n1 + n2
    if n2 == 0:
        raise ValueError("the runs test needs both symbols")
    runs = 1 + sum(1 for a, b in itertools.pairwise(symbols) if a != b)
    mean = 1.0 + 2.0 * n1 * n2 / n
    variance = 2.0 * n1 * n2 * (2.0 * n1 * n2 - n) / (n * n * (n - 1.0))
    z = (runs - mean) / math.sqrt(variance)
    return z_measurement(z, n, unit, f"{what}: {runs} runs, expected {mean:.1f}")


def colour_symbols(values: bytes, wheel: RouletteWheel) -> bytes:
    """Red/black sequence of spins (R/B), greens dropped."""
    table = bytes(
        ord("R")
        if i < len(wheel.pockets) and wheel.pockets[i].colour is PocketColour.RED
        else ord("B")
        if i < len(wheel.pockets) and wheel.pockets[i].colour is PocketColour.BLACK
        else ord("G")
        for i in range(256)
    )
    return values.translate(table).replace(b"G", b"")


def high_low_symbols(values: bytes, cells: int) -> bytes:
    """L for the lower half of the range, H for the upper half (cells even)."""
    table = bytes(ord("L") if i < cells // 2 else ord("H") for i in range(256))
    return values.translate(table)


def serial_correlation(values: bytes, unit: str) -> Measurement:
    """Lag-1 serial correlation of consecutive outcomes: r·sqrt(n) is standard normal."""
    n = len(values) - 1
    mean = sum(values) / len(values)
    centred = [v - mean for v in values]
    num = sum(a * b for a, b in itertools.pairwise(centred))
    den = sum(c * c for c in centred)
    r = num / den
    z = r * math.sqrt(n)
    return z_measurement(z, len(values), unit, f"lag-1 correlation r = {r:+.6f}")


def _bins_by_probability(
    cdf: Callable[[int], float], start: int, target_bins: int
) -> list[tuple[int, int, float]]:
    """Bins [lo, hi] of a distribution on start, start+1, ... with about equal mass each;
    the last bin is open (hi = -1)."""
    bins: list[tuple[int, int, float]] = []
    lo = start
    below = cdf(start - 1)
    t = start
    step = 1.0 / target_bins
    while len(bins) < target_bins - 1:
        while cdf(t) - below < step * 0.999:
            t += 1
        mass = cdf(t) - below
        bins.append((lo, t, mass))
        below = cdf(t)
        lo = t + 1
        t = lo
        if 1.0 - below < step:
            break
    bins.append((lo, -1, 1.0 - below))
    return bins


def _binned_chi_square(
    observations: Sequence[int],
    bins: list[tuple[int, int, float]],
    unit: str,
    detail: str,
    sample_size: int,
) -> Measurement:
    counts = [0] * len(bins)
    for value in observations:
        for i, (lo, hi, _) in enumerate(bins):
            if value >= lo and (hi < 0 or value <= hi):
                counts[i] += 1
                break
    probs = [mass for _, _, mass in bins]
    m = chi_square_counts(counts, probs, len(observations), unit, detail)
    return Measurement(
        sample_size=sample_size,
        unit=unit,
        statistic=m.statistic,
        statistic_name=m.statistic_name,
        df=m.df,
        p_value=m.p_value,
        log10_p=m.log10_p,
        detail=m.detail,
    )


def gap_test(values: bytes, hit: int, cells: int, unit: str, what: str) -> Measurement:
    """Knuth's gap test: the number of spins between consecutive ``hit`` outcomes is
    geometric with p = 1/cells."""
    p = 1.0 / cells
    gaps: list[int] = []
    last = -1
    for i, v in enumerate(values):
        if v == hit:
            if last >= 0:
                gaps.append(i - last - 1)
            last = i
    target = max(2, min(20, len(gaps) // 50))
    bins = _bins_by_probability(lambda g: 1.0 - (1.0 - p) ** (g + 1) if g >= 0 else 0.0, 0, target)
    detail = f"{len(gaps)} gaps between {what}, in {len(bins)} bins of equal probability"
    return _binned_chi_square(gaps, bins, unit, detail, len(values))


def coupon_collector_cdf(cells: int) -> Callable[[int], float]:
    """P(T <= t), T = draws until all ``cells`` values have been seen (exact)."""
    cache: dict[int, float] = {}

    def cdf(t: int) -> float:
        if t < cells:
            return 0.0
        if t not in cache:
            total = sum(
                Fraction((-1) ** j * math.comb(cells, j) * (cells - j) ** t, cells**t)
                for j in range(cells + 1)
            )
            cache[t] = float(total)
        return cache[t]

    return cdf


def coupon_collector(values: bytes, cells: int, unit: str) -> Measurement:
    """Knuth's coupon collector test: lengths of segments that each contain every value."""
    lengths: list[int] = []
    seen: set[int] = set()
    start = 0
    for i, v in enumerate(values):
        seen.add(v)
        if len(seen) == cells:
            lengths.append(i - start + 1)
            seen = set()
            start = i + 1
    target = max(2, min(12, len(lengths) // 60))
    bins = _bins_by_probability(coupon_collector_cdf(cells), cells, target)
    mean = sum(lengths) / len(lengths) if lengths else 0.0
    detail = (
        f"{len(lengths)} complete collections of {cells} values (mean length {mean:.1f}), "
        f"in {len(bins)} bins"
    )
    return _binned_chi_square(lengths, bins, unit, detail, len(values))


def big_six_symbols(sections: bytes) -> Measurement:
    """Symbol frequencies against their section counts (619a.1(b): 23/15/8/4/2/1/1 of 54)."""
    order = list(dict.fromkeys(BIG_SIX_ORDER))
    share = Counter(BIG_SIX_ORDER)
    index = {symbol: i for i, symbol in enumerate(order)}
    table = bytes(index[BIG_SIX_ORDER[s]] if s < len(BIG_SIX_ORDER) else 255 for s in range(256))
    counter = Counter(sections.translate(table))
    counts = [counter.get(i, 0) for i in range(len(order))]
    probs = [share[symbol] / len(BIG_SIX_ORDER) for symbol in order]
    detail = ", ".join(
        f"{symbol.value}: {counts[i]} (expected {probs[i] * len(sections):.0f})"
        for i, symbol in enumerate(order)
    )
    return chi_square_counts(counts, probs, len(sections), "spins", detail)
