"""NIST SP 800-22 Rev. 1a through the optional ``sp80022suite`` package (NIST's own C code).

``sp80022suite`` wraps the reference implementation of the 15 tests; it takes a sequence of
0/1 bytes. Some of its tests return the smallest of several p-values (the serial test 2,
cumulative sums 2, random excursions 8, random excursions variant 18, non-overlapping
templates 148): the battery multiplies those by their count (Bonferroni) so that each row's
p-value is a valid p-value.

The non-overlapping template test reads ``templates/template9`` relative to the working
directory, a file the package does not ship. It holds the 148 aperiodic 9-bit templates in
lexicographic order, which ``aperiodic_templates`` regenerates; the battery therefore runs in
a child process (``python -m rng.certify.sp80022 FILE NBITS``) whose working directory is a
temporary folder holding that file. The child also runs on the second core while the parent
computes the in-house tests, and prints its results as JSON.
"""

from __future__ import annotations

import importlib
import itertools
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

__all__ = [
    "PARAMETERS",
    "TESTS",
    "aperiodic_templates",
    "available",
    "bits_of",
    "run_tests",
    "write_templates",
]

#: (function name, display title, parameter or None, number of p-values it minimises over)
TESTS: tuple[tuple[str, str, int | None, int], ...] = (
    ("frequency", "Frequency (monobit)", None, 1),
    ("block_frequency", "Frequency within a block (M=128)", 128, 1),
    ("runs", "Runs", None, 1),
    ("longest_run_of_ones", "Longest run of ones in a block", None, 1),
    ("rank", "Binary matrix rank", None, 1),
    ("discrete_fourier_transform", "Discrete Fourier transform (spectral)", None, 1),
    ("non_overlapping_template_matchings", "Non-overlapping template matching (m=9)", 9, 148),
    ("overlapping_template_matchings", "Overlapping template matching (m=9)", 9, 1),
    ("universal", "Maurer's universal statistical", None, 1),
    ("linear_complexity", "Linear complexity (M=500)", 500, 1),
    ("serial", "Serial (m=16)", 16, 2),
    ("approximate_entropy", "Approximate entropy (m=10)", 10, 1),
    ("cumulative_sums", "Cumulative sums (forward and backward)", None, 2),
    ("random_excursions", "Random excursions", None, 8),
    ("random_excursions_variant", "Random excursions variant", None, 18),
)
PARAMETERS = {name: parameter for name, _, parameter, _ in TESTS}
_TEMPLATE_LENGTH = 9


def available() -> str | None:
    """None when ``sp80022suite`` can be imported, else the reason it cannot."""
    try:
        importlib.import_module("sp80022suite")
    except ImportError as exc:
        return f"the sp80022suite package is not installed ({exc}); pip install sp80022suite"
    return None


def aperiodic_templates(m: int) -> list[tuple[int, ...]]:
    """The m-bit templates that overlap no shifted copy of themselves, in lexicographic order
    (the contents of NIST STS ``templates/template<m>``; 148 for m = 9)."""
    return [
        bits
        for bits in itertools.product((0, 1), repeat=m)
        if all(bits[:k] != bits[m - k :] for k in range(1, m))
    ]


def write_templates(directory: Path, m: int = _TEMPLATE_LENGTH) -> Path:
    """Write ``directory/templates/template<m>`` in NIST's format (one template per line)."""
    path = directory / "templates" / f"template{m}"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(" ".join(map(str, t)) + "\n" for t in aperiodic_templates(m)))
    return path


def bits_of(data: bytes) -> bytes:
    """The bits of ``data``, most significant first, as bytes of 0 and 1."""
    n = 8 * len(data)
    text = format(int.from_bytes(data, "big"), f"0{n}b").encode()
    return text.translate(bytes.maketrans(b"01", b"\x00\x01"))


def run_tests(data: bytes) -> dict[str, dict[str, Any]]:
    """Run every test on ``data`` (the working directory must hold the templates).

    Returns ``{name: {"p": float}}`` or ``{name: {"error": str}}`` for a test that refused
    the sequence (random excursions needs at least 500 cycles, SP 800-22 2.14.4)."""
    suite = importlib.import_module("sp80022suite")
    bits = bits_of(data)
    results: dict[str, dict[str, Any]] = {}
    for name, _, parameter, _ in TESTS:
        function = getattr(suite, name)
        try:
            p = function(parameter, bits) if parameter is not None else function(bits)
        except (ValueError, MemoryError) as exc:
            results[name] = {"error": str(exc)}
        else:
            results[name] = {"p": float(p)}
    return results


def _main(argv: list[str]) -> int:
    path, nbits = Path(argv[0]), int(argv[1])
    data = path.read_bytes()[: nbits // 8]
    with tempfile.TemporaryDirectory(prefix="croupier-sp80022-") as tmp:
        write_templates(Path(tmp))
        os.chdir(tmp)
        results = run_tests(data)
        os.chdir("/")
    json.dump({"bits": 8 * len(data), "results": results}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
