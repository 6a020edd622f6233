"""Sample sizes per level: ``tiny`` (unit tests), ``quick`` (CI, about a minute of CPU),
``full`` (the lab run, hours), and the smaller sizes of the self-test's broken generators.

docs/certification.md tabulates them. The quick sizes follow the notes' plan (1.5): tens of
thousands of decks, 200,000 spins, 8 Mbit for SP 800-22, a small dieharder subset on the
sample file; full adds a million decks and spins, a 256 MiB raw file and dieharder's whole
``-a`` battery on a live stream.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DIEHARDER_NTUPLES", "LEVELS", "SELF_TEST_SIZES", "Sizes"]

_MIB = 1 << 20


@dataclass(frozen=True, slots=True)
class Sizes:
    """How much of everything one generator produces at one level."""

    decks: int
    small_deck_4: int
    small_deck_5: int
    shoes: int
    spins: int
    raw_file_bytes: int
    raw_test_bytes: int
    ks_words: int
    max_of_5_groups: int
    linear_complexity_bits: int
    sp80022_bits: int
    dieharder_tests: tuple[int, ...]
    dieharder_psamples: int | None
    dieharder_stream: bool
    rngtest_blocks: int
    shoe_decks: int = 8
    timeout: float | None = 600.0


_QUICK_DIEHARDER = (0, 8, 15, 100, 101, 102)
# ``dieharder -a`` of 3.31.1, test by test (14, "Do Not Use", is left out as -a does).
_ALL_DIEHARDER = (
    *range(0, 14),
    15,
    16,
    17,
    100,
    101,
    102,
    200,
    201,
    202,
    203,
    204,
    205,
    206,
    207,
    208,
    209,
)
# ntuples ``dieharder -a`` runs for the tests that take one
DIEHARDER_NTUPLES: dict[int, tuple[int, ...]] = {
    200: tuple(range(1, 13)),
    201: (2, 3, 4, 5),
    202: (2, 3, 4, 5),
    203: tuple(range(0, 33)),
}

LEVELS: dict[str, Sizes] = {
    # For unit tests only: seconds, not minutes.
    "tiny": Sizes(
        decks=2_000,
        small_deck_4=4_800,
        small_deck_5=12_000,
        shoes=60,
        spins=20_000,
        raw_file_bytes=3 * _MIB,
        raw_test_bytes=1 * _MIB,
        ks_words=20_000,
        max_of_5_groups=20_000,
        linear_complexity_bits=20_000,
        sp80022_bits=1 << 20,
        dieharder_tests=(0, 100),
        dieharder_psamples=5,
        dieharder_stream=False,
        rngtest_blocks=1_000,
    ),
    "quick": Sizes(
        decks=40_000,
        small_deck_4=48_000,
        small_deck_5=120_000,
        shoes=600,
        spins=200_000,
        raw_file_bytes=16 * _MIB,
        raw_test_bytes=8 * _MIB,
        ks_words=100_000,
        max_of_5_groups=100_000,
        linear_complexity_bits=50_000,
        sp80022_bits=8 << 20,
        dieharder_tests=_QUICK_DIEHARDER,
        dieharder_psamples=30,
        dieharder_stream=False,
        rngtest_blocks=1_000,
    ),
    "full": Sizes(
        decks=1_000_000,
        small_deck_4=1_200_000,
        small_deck_5=1_200_000,
        shoes=20_000,
        spins=1_000_000,
        raw_file_bytes=256 * _MIB,
        raw_test_bytes=64 * _MIB,
        ks_words=1_000_000,
        max_of_5_groups=1_000_000,
        linear_complexity_bits=100_000,
        sp80022_bits=64 << 20,
        dieharder_tests=_ALL_DIEHARDER,
        dieharder_psamples=None,
        dieharder_stream=True,
        rngtest_blocks=100_000,
        timeout=None,
    ),
}
# The self-test's broken generators: enough to fail them beyond doubt (the full level does
# not need more). Linear complexity needs more than 2 × 19,937 bits to expose MT19937.
SELF_TEST_SIZES: dict[str, Sizes] = {
    "tiny": Sizes(
        decks=3_000,
        small_deck_4=4_800,
        small_deck_5=12_000,
        shoes=30,
        spins=30_000,
        raw_file_bytes=3 * _MIB,
        raw_test_bytes=1 * _MIB,
        ks_words=20_000,
        max_of_5_groups=20_000,
        linear_complexity_bits=50_000,
        sp80022_bits=1 << 20,
        dieharder_tests=(0, 100),
        dieharder_psamples=5,
        dieharder_stream=False,
        rngtest_blocks=1_000,
    ),
    "quick": Sizes(
        decks=10_000,
        small_deck_4=12_000,
        small_deck_5=30_000,
        shoes=100,
        spins=60_000,
        raw_file_bytes=6 * _MIB,
        raw_test_bytes=4 * _MIB,
        ks_words=50_000,
        max_of_5_groups=50_000,
        linear_complexity_bits=50_000,
        sp80022_bits=1 << 20,
        dieharder_tests=_QUICK_DIEHARDER,
        dieharder_psamples=10,
        dieharder_stream=False,
        rngtest_blocks=1_000,
    ),
}
SELF_TEST_SIZES["full"] = SELF_TEST_SIZES["quick"]
