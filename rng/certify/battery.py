"""The battery: the samples each generator produces, and the in-house and external tests.

Samples are generated once per generator and shared by the tests that read them; a retest
asks for a fresh ``SampleSet``. Every sample a verdict depends on is written to the report
folder (``samples/``) with its SHA-256, as GLI-style submissions require for the "final
outcome" and "raw output" collection tools: a lab can re-run any test, or its own tools, on
exactly those files. File formats:

- ``raw-*.bin``: raw generator bytes, unscaled.
- ``decks-*.txt`` / ``shoes-*.txt``: one deck (or 8-deck shoe) per line, card codes in
  dealing order (``AS 10H KD …``), as ``croupier rng shoes`` writes them.
- ``small-deck-4-*.txt`` / ``small-deck-5-*.txt``: one dealt order of items 0..k-1 per line.
- ``roulette-37-*.txt`` / ``roulette-38-*.txt``: one pocket label per line.
- ``big-six-*.txt``: one section per line: its clockwise index and symbol.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rng.cards import ALL_CARDS
from rng.certify import kat, outcome_tests, predictability, raw_tests
from rng.certify.external import (
    DieharderJob,
    EntJob,
    ExternalJob,
    RngtestJob,
    Sp80022Job,
)
from rng.certify.levels import DIEHARDER_NTUPLES, Sizes
from rng.certify.results import Category, Measurement
from rng.certify.subject import DOUBLE_ZERO_WHEEL, SINGLE_ZERO_WHEEL, Subject
from rng.wheels import BIG_SIX_ORDER, RouletteWheel

__all__ = [
    "CHECKS",
    "Check",
    "SampleFile",
    "SampleSet",
    "external_jobs",
]

_MIB = 1 << 20


@dataclass(frozen=True, slots=True)
class SampleFile:
    """A sample written to the report folder."""

    path: str  # relative to the report folder
    description: str
    size: int
    sha256: str


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


_CARD_CODES = [card.code for card in ALL_CARDS]


class SampleSet:
    """The samples of one generator for one run (first run or a retest), made on demand."""

    def __init__(
        self,
        subject: Subject,
        sizes: Sizes,
        root: Path,
        folder: str,
        tag: str,
        *,
        log: Callable[[str], None] | None = None,
    ) -> None:
        self.subject = subject
        self.sizes = sizes
        self.root = root
        self.folder = folder
        self.tag = tag
        self.files: dict[str, SampleFile] = {}
        self._cache: dict[str, object] = {}
        self._log = log or (lambda message: None)
        self._quiet = tag.endswith("-retest")

    def _say(self, what: str) -> None:
        if not self._quiet:
            self._log(f"{self.subject.name}: {what}")

    # -- files --------------------------------------------------------------------------

    def _write(self, kind: str, ext: str, data: bytes, description: str) -> str:
        relative = f"{self.folder}/{kind}-{self.tag}.{ext}" if self.folder else f"{kind}.{ext}"
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        self.files[kind] = SampleFile(relative, description, len(data), _sha256(path))
        return relative

    def file_of(self, *kinds: str) -> tuple[str, ...]:
        return tuple(self.files[k].path for k in kinds if k in self.files)

    # -- samples ------------------------------------------------------------------------

    def raw(self) -> bytes:
        if "raw" not in self._cache:
            n = self.sizes.raw_file_bytes
            self._say(f"{n / _MIB:.0f} MiB of raw output")
            data = self.subject.raw_bytes(n)
            self._write("raw", "bin", data, f"{n} raw bytes from {self.subject.name}")
            self._cache["raw"] = data
        value = self._cache["raw"]
        assert isinstance(value, bytes)
        return value

    def raw_path(self) -> Path:
        self.raw()
        return self.root / self.files["raw"].path

    def _deals(self, kind: str, count: int, make: Callable[[], bytes], what: str) -> list[bytes]:
        if kind not in self._cache:
            self._say(f"{count} {what}")
            deals = [make() for _ in range(count)]
            if kind.startswith("small"):
                text = "\n".join(" ".join(map(str, d)) for d in deals)
            else:
                text = "\n".join(" ".join(_CARD_CODES[c] for c in d) for d in deals)
            self._write(kind, "txt", (text + "\n").encode(), f"{count} {what}")
            self._cache[kind] = deals
        value = self._cache[kind]
        assert isinstance(value, list)
        return value

    def decks(self) -> list[bytes]:
        return self._deals(
            "decks",
            self.sizes.decks,
            lambda: self.subject.deal_shoe(1),
            "single decks dealt lazily by VirtualShoe",
        )

    def shoes(self) -> list[bytes]:
        d = self.sizes.shoe_decks
        return self._deals(
            "shoes",
            self.sizes.shoes,
            lambda: self.subject.deal_shoe(d),
            f"{d}-deck shoes dealt lazily by VirtualShoe",
        )

    def small_deck(self, k: int) -> list[bytes]:
        count = self.sizes.small_deck_4 if k == 4 else self.sizes.small_deck_5
        return self._deals(
            f"small-deck-{k}",
            count,
            lambda: self.subject.deal_items(k),
            f"decks of {k} items dealt by take_one",
        )

    def roulette(self, wheel: RouletteWheel) -> bytes:
        kind = f"roulette-{len(wheel.pockets)}"
        if kind not in self._cache:
            n = self.sizes.spins
            self._say(f"{n} spins of the {len(wheel.pockets)}-pocket wheel")
            spins = self.subject.roulette(wheel, n)
            text = "\n".join(wheel.pockets[v].label for v in spins) + "\n"
            self._write(kind, "txt", text.encode(), f"{n} spins, pocket labels")
            self._cache[kind] = spins
        value = self._cache[kind]
        assert isinstance(value, bytes)
        return value

    def big_six(self) -> bytes:
        if "big-six" not in self._cache:
            n = self.sizes.spins
            self._say(f"{n} spins of the Big Six Wheel")
            spins = self.subject.big_six(n)
            text = "\n".join(f"{s} {BIG_SIX_ORDER[s].value}" for s in spins) + "\n"
            self._write("big-six", "txt", text.encode(), f"{n} spins, section and symbol")
            self._cache["big-six"] = spins
        value = self._cache["big-six"]
        assert isinstance(value, bytes)
        return value

    def raw_for_tests(self) -> bytes:
        return self.raw()[: self.sizes.raw_test_bytes]


@dataclass(frozen=True, slots=True)
class Check:
    """An in-house test: ``run`` reads what it needs from a ``SampleSet``.

    ``samples`` names the sample kinds it reads (for the report's file references);
    ``generator_only`` checks do not depend on the subject (the DRBG's own vectors) and run
    once, for the generator under certification; ``discrete`` p-values are left out of the
    second-level test."""

    id: str
    title: str
    category: Category
    samples: tuple[str, ...]
    run: Callable[[SampleSet], Measurement]
    generator_only: bool = False
    discrete: bool = False


CHECKS: tuple[Check, ...] = (
    # -- known answers ------------------------------------------------------------------
    Check(
        "kat-hmac-drbg-no-reseed",
        "HMAC_DRBG (SHA-256) CAVP vectors, no reseed",
        Category.KNOWN_ANSWER,
        (),
        lambda s: kat.hmac_drbg_vectors("no_reseed"),
        generator_only=True,
    ),
    Check(
        "kat-hmac-drbg-reseed",
        "HMAC_DRBG (SHA-256) CAVP vectors, with reseed",
        Category.KNOWN_ANSWER,
        (),
        lambda s: kat.hmac_drbg_vectors("pr_false"),
        generator_only=True,
    ),
    Check(
        "kat-drbg-startup-self-test",
        "HMAC_DRBG start-up known-answer test (SP 800-90A 11.3)",
        Category.KNOWN_ANSWER,
        (),
        lambda s: kat.drbg_startup_self_test(),
        generator_only=True,
    ),
    Check(
        "kat-scaling",
        "Scaling: randbelow on scripted bytes (810a.5(d))",
        Category.KNOWN_ANSWER,
        (),
        lambda s: kat.scaling_kat(s.subject),
    ),
    Check(
        "kat-lazy-deal",
        "Lazy deal: take_one and VirtualShoe on scripted bytes",
        Category.KNOWN_ANSWER,
        (),
        lambda s: kat.lazy_deal(s.subject),
    ),
    Check(
        "kat-wheel-mapping",
        "Wheels: draw to pocket and section (617a.1, 619a.1)",
        Category.KNOWN_ANSWER,
        (),
        lambda s: kat.wheel_mapping(s.subject),
    ),
    # -- cards --------------------------------------------------------------------------
    Check(
        "card-position-52x52",
        "Card × position chi-square, single decks",
        Category.OUTCOME,
        ("decks",),
        lambda s: outcome_tests.card_position(s.decks()),
    ),
    Check(
        "card-adjacency",
        "Adjacency: ordered pairs dealt consecutively",
        Category.OUTCOME,
        ("decks",),
        lambda s: outcome_tests.adjacency(s.decks()),
    ),
    Check(
        "card-fixed-points",
        "Permutation structure: fixed points ~ Poisson(1)",
        Category.OUTCOME,
        ("decks",),
        lambda s: outcome_tests.fixed_points(s.decks()),
    ),
    Check(
        "card-inter-deal-correlation",
        "Interplay: position correlation between consecutive decks",
        Category.OUTCOME,
        ("decks",),
        lambda s: outcome_tests.inter_deal_correlation(s.decks()),
    ),
    Check(
        "shoe-rank-position",
        "8-deck shoe: rank × position chi-square",
        Category.OUTCOME,
        ("shoes",),
        lambda s: outcome_tests.shoe_rank_position(s.shoes()),
    ),
    Check(
        "small-deck-4",
        "Small-deck permutation test, 4 items (24 orders)",
        Category.OUTCOME,
        ("small-deck-4",),
        lambda s: outcome_tests.small_deck_permutations(s.small_deck(4)),
    ),
    Check(
        "small-deck-5",
        "Small-deck permutation test, 5 items (120 orders)",
        Category.OUTCOME,
        ("small-deck-5",),
        lambda s: outcome_tests.small_deck_permutations(s.small_deck(5)),
    ),
    # -- roulette -----------------------------------------------------------------------
    Check(
        "roulette-37-pockets",
        "Roulette, single zero: pocket frequencies",
        Category.OUTCOME,
        ("roulette-37",),
        lambda s: outcome_tests.uniform_frequencies(
            s.roulette(SINGLE_ZERO_WHEEL), 37, "spins", "pockets"
        ),
    ),
    Check(
        "roulette-38-pockets",
        "Roulette, double zero: pocket frequencies",
        Category.OUTCOME,
        ("roulette-38",),
        lambda s: outcome_tests.uniform_frequencies(
            s.roulette(DOUBLE_ZERO_WHEEL), 38, "spins", "pockets"
        ),
    ),
    Check(
        "roulette-37-serial-pairs",
        "Roulette: consecutive pairs of pockets (serial test)",
        Category.OUTCOME,
        ("roulette-37",),
        lambda s: outcome_tests.serial_pairs(s.roulette(SINGLE_ZERO_WHEEL), 37, "spins"),
    ),
    Check(
        "roulette-37-runs-red-black",
        "Roulette: runs of red and black (Wald–Wolfowitz)",
        Category.OUTCOME,
        ("roulette-37",),
        lambda s: outcome_tests.runs_test(
            outcome_tests.colour_symbols(s.roulette(SINGLE_ZERO_WHEEL), SINGLE_ZERO_WHEEL),
            "spins",
            "red/black, zeros dropped",
        ),
    ),
    Check(
        "roulette-37-serial-correlation",
        "Roulette: serial correlation of consecutive spins",
        Category.OUTCOME,
        ("roulette-37",),
        lambda s: outcome_tests.serial_correlation(s.roulette(SINGLE_ZERO_WHEEL), "spins"),
    ),
    Check(
        "roulette-37-gap-zero",
        "Roulette: gaps between zeros (gap test)",
        Category.OUTCOME,
        ("roulette-37",),
        lambda s: outcome_tests.gap_test(s.roulette(SINGLE_ZERO_WHEEL), 0, 37, "spins", "zeros"),
    ),
    Check(
        "roulette-37-coupon-collector",
        "Roulette: spins until every pocket is seen (coupon collector)",
        Category.OUTCOME,
        ("roulette-37",),
        lambda s: outcome_tests.coupon_collector(s.roulette(SINGLE_ZERO_WHEEL), 37, "spins"),
    ),
    # -- big six ------------------------------------------------------------------------
    Check(
        "big-six-sections",
        "Big Six Wheel: section frequencies (54)",
        Category.OUTCOME,
        ("big-six",),
        lambda s: outcome_tests.uniform_frequencies(s.big_six(), 54, "spins", "sections"),
    ),
    Check(
        "big-six-symbols",
        "Big Six Wheel: symbol frequencies (23/15/8/4/2/1/1 of 54)",
        Category.OUTCOME,
        ("big-six",),
        lambda s: outcome_tests.big_six_symbols(s.big_six()),
    ),
    Check(
        "big-six-runs-high-low",
        "Big Six Wheel: runs above and below the middle section",
        Category.OUTCOME,
        ("big-six",),
        lambda s: outcome_tests.runs_test(
            outcome_tests.high_low_symbols(s.big_six(), 54), "spins", "sections 0–26 / 27–53"
        ),
    ),
    Check(
        "big-six-serial-correlation",
        "Big Six Wheel: serial correlation of consecutive spins",
        Category.OUTCOME,
        ("big-six",),
        lambda s: outcome_tests.serial_correlation(s.big_six(), "spins"),
    ),
    # -- raw stream ---------------------------------------------------------------------
    Check(
        "raw-byte-frequency",
        "Raw bytes: frequencies of the 256 values",
        Category.RAW,
        ("raw",),
        lambda s: raw_tests.byte_frequency(s.raw_for_tests()),
    ),
    Check(
        "raw-monobit",
        "Raw bits: proportion of ones (monobit)",
        Category.RAW,
        ("raw",),
        lambda s: raw_tests.monobit(s.raw_for_tests()),
    ),
    Check(
        "raw-bit-runs",
        "Raw bits: runs (Wald–Wolfowitz)",
        Category.RAW,
        ("raw",),
        lambda s: raw_tests.bit_runs(s.raw_for_tests()),
    ),
    Check(
        "raw-byte-pairs",
        "Raw bytes: non-overlapping pairs (65,536 cells)",
        Category.RAW,
        ("raw",),
        lambda s: raw_tests.byte_pairs(s.raw_for_tests()),
    ),
    Check(
        "raw-byte-serial-correlation",
        "Raw bytes: lag-1 serial correlation",
        Category.RAW,
        ("raw",),
        lambda s: raw_tests.byte_serial_correlation(s.raw_for_tests()),
    ),
    Check(
        "raw-ks-uniform",
        "Raw 32-bit words: Kolmogorov–Smirnov against U(0,1)",
        Category.RAW,
        ("raw",),
        lambda s: raw_tests.ks_words(s.raw(), s.sizes.ks_words),
    ),
    Check(
        "raw-maximum-of-5",
        "Raw 32-bit words: maximum of 5 (order statistic)",
        Category.RAW,
        ("raw",),
        lambda s: raw_tests.maximum_of_t(s.raw(), s.sizes.max_of_5_groups),
    ),
    # -- predictability -----------------------------------------------------------------
    Check(
        "predict-mt19937",
        "Predictability: MT19937 state recovery from 624 outputs",
        Category.PREDICTABILITY,
        ("raw",),
        lambda s: predictability.mt19937_prediction(s.raw()),
    ),
    Check(
        "predict-linear-complexity",
        "Predictability: linear complexity (Berlekamp–Massey)",
        Category.PREDICTABILITY,
        ("raw",),
        lambda s: predictability.linear_complexity(s.raw(), s.sizes.linear_complexity_bits),
    ),
)


def external_jobs(sizes: Sizes, stream_command: list[str] | None) -> list[ExternalJob]:
    """The external tool runs for one generator at ``sizes``."""
    jobs: list[ExternalJob] = [Sp80022Job(sizes.sp80022_bits, timeout=sizes.timeout)]
    stream = stream_command if sizes.dieharder_stream else None
    for test in sizes.dieharder_tests:
        ntuples: tuple[int | None, ...] = DIEHARDER_NTUPLES.get(test, (None,))
        for ntuple in ntuples:
            jobs.append(
                DieharderJob(
                    test,
                    sizes.dieharder_psamples,
                    ntuple=ntuple,
                    stream_command=stream,
                    timeout=sizes.timeout,
                )
            )
    jobs.append(EntJob(timeout=sizes.timeout))
    jobs.append(RngtestJob(sizes.rngtest_blocks, timeout=sizes.timeout))
    return jobs
