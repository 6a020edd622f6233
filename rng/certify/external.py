"""External raw-stream batteries: NIST SP 800-22, dieharder, ent and rngtest.

Each tool is optional. When one is missing its rows are reported SKIPPED with the reason and
how to install it (Debian packages ``dieharder``, ``ent``, ``rng-tools5``; PyPI
``sp80022suite``). TestU01 and PractRand are not packaged for Debian 12 or PyPI and are left to
the lab, which receives the raw sample file for that purpose.

Results are read from each tool's **counts and p-values, never its exit status**: ``rngtest``
exits 1 whenever any 20,000-bit block fails, which a good generator does about 8 times in
10,000 blocks; dieharder exits 0 even when its input ran out. Rules:

- **dieharder**: one row per test; a test may print several p-values (ntuples, sub-tests).
  The smallest is multiplied by their number (Bonferroni). With dieharder's default 100
  psamples or more the p-values are made two-sided first (dieharder also flags p near 1);
  with fewer, only the lower tail is read (see ``dieharder_measurement``). Its own
  PASSED/WEAK/FAILED counts are shown. If the input ran out (``Error: EOF``), the row is
  SKIPPED: the sample was too small for that test.
- **rngtest**: the number of failed blocks against the rate a good generator shows,
  ``RNGTEST_FAILURE_RATE`` (7.8e-4: 311 failures in 400,000 blocks of ``/dev/urandom`` measured
  on the build machine), by the exact binomial upper tail.
- **ent**: its chi-square (255 df), the mean byte (normal, variance (256²-1)/12 per byte), the
  Monte Carlo value of π (ent pairs 24-bit coordinates from 6-byte groups; the hits inside
  the quarter circle are binomial with p = π/4) and the serial correlation coefficient
  (r·sqrt(n) normal), each turned into a p-value here.
- **SP 800-22**: see ``rng.certify.sp80022``.
"""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from importlib import metadata
from pathlib import Path

from rng.certify import sp80022
from rng.certify.outcome_tests import z_measurement
from rng.certify.results import Measurement
from rng.certify.stats import binomial_sf, chi2_log10_sf, chi2_sf

__all__ = [
    "DIEHARDER_TESTS",
    "RNGTEST_FAILURE_RATE",
    "DieharderJob",
    "DieharderLine",
    "EntJob",
    "ExternalJob",
    "ExternalRow",
    "RngtestJob",
    "Sp80022Job",
    "dieharder_measurement",
    "ent_measurements",
    "parse_dieharder",
    "parse_ent_terse",
    "parse_rngtest",
    "rngtest_measurement",
    "tool_versions",
]

RNGTEST_FAILURE_RATE = 8.0e-4  # 7.8e-4 measured, rounded up (a higher rate is more lenient)
RNGTEST_BLOCK_BYTES = 2500  # 20,000 bits; rngtest reads 4 more bytes first
# dieharder 3.31.1 test numbers and the names it prints (``dieharder -l``, ``-D test_name``).
DIEHARDER_TESTS: dict[int, str] = {
    0: "diehard_birthdays",
    1: "diehard_operm5",
    2: "diehard_rank_32x32",
    3: "diehard_rank_6x8",
    4: "diehard_bitstream",
    5: "diehard_opso",
    6: "diehard_oqso",
    7: "diehard_dna",
    8: "diehard_count_1s_str",
    9: "diehard_count_1s_byt",
    10: "diehard_parking_lot",
    11: "diehard_2dsphere",
    12: "diehard_3dsphere",
    13: "diehard_squeeze",
    15: "diehard_runs",
    16: "diehard_craps",
    17: "marsaglia_tsang_gcd",
    100: "sts_monobit",
    101: "sts_runs",
    102: "sts_serial",
    200: "rgb_bitdist",
    201: "rgb_minimum_distance",
    202: "rgb_permutations",
    203: "rgb_lagged_sum",
    204: "rgb_kstest_test",
    205: "dab_bytedistrib",
    206: "dab_dct",
    207: "dab_filltree",
    208: "dab_filltree2",
    209: "dab_monobit2",
}
_DIEHARDER_FIELDS = 508  # -D: the result table without the rate measurement (which reads ~40 MB)


@dataclass(frozen=True, slots=True)
class ExternalRow:
    """One row of an external battery: its id, a title, the measurement, whether its p-value
    is discrete or a Bonferroni-adjusted minimum (then left out of the second level)."""

    id: str
    title: str
    measurement: Measurement
    discrete: bool


class ExternalJob:
    """One invocation of one tool on a raw sample file; ``run`` returns its rows."""

    tool = "abstract"

    def row_ids(self) -> list[tuple[str, str, bool]]:  # pragma: no cover - overridden
        """(id, title, discrete) of every row this job reports."""
        raise NotImplementedError

    def missing(self) -> str | None:  # pragma: no cover - overridden
        """None when the tool can run, else why not."""
        raise NotImplementedError

    def execute(self, sample: Path) -> list[ExternalRow]:  # pragma: no cover - overridden
        raise NotImplementedError

    def run(self, sample: Path) -> list[ExternalRow]:
        reason = self.missing()
        if reason is not None:
            return self.skipped(reason)
        try:
            return self.execute(sample)
        except (OSError, subprocess.SubprocessError, ValueError, KeyError) as exc:
            return self.skipped(f"{self.tool} could not run: {exc}")

    def skipped(self, reason: str) -> list[ExternalRow]:
        return [
            ExternalRow(row_id, title, Measurement(0, "bytes", skipped=reason), discrete)
            for row_id, title, discrete in self.row_ids()
        ]


def _which(tool: str, package: str) -> str | None:
    if shutil.which(tool) is None:
        return f"{tool} is not installed (Debian: apt-get install {package})"
    return None


# -- dieharder -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DieharderLine:
    name: str
    ntuple: int
    tsamples: int
    psamples: int
    p_value: float
    assessment: str


def parse_dieharder(text: str) -> tuple[list[DieharderLine], bool]:
    """Result lines of dieharder's table output, and whether its input ran out (EOF)."""
    lines: list[DieharderLine] = []
    for raw in text.splitlines():
        if raw.lstrip().startswith("#") or "|" not in raw:
            continue
        fields = [f.strip() for f in raw.split("|")]
        if len(fields) < 6 or fields[0] == "test_name":
            continue
        try:
            lines.append(
                DieharderLine(
                    fields[0],
                    int(fields[1]),
                    int(fields[2]),
                    int(fields[3]),
                    float(fields[4]),
                    fields[5],
                )
            )
        except ValueError:
            continue
    return lines, "Error: EOF" in text


def dieharder_measurement(
    lines: Sequence[DieharderLine], sample_size: int, *, two_sided: bool = True
) -> Measurement:
    """One row for the p-values of one dieharder test (Bonferroni over its p-values).

    ``two_sided`` also counts p-values near 1 against the generator, as dieharder's own
    assessment does; use it only with dieharder's default 100 psamples or more. With fewer,
    dieharder's final Kolmogorov–Smirnov p-values pile up near 1 for a perfectly good source
    (measured here: ``-d 0 -p 5`` on /dev/urandom gave p > 0.999 in 7 runs of 30), so only
    the lower tail is read."""
    if two_sided:
        values = [min(1.0, 2.0 * min(line.p_value, 1.0 - line.p_value)) for line in lines]
    else:
        values = [line.p_value for line in lines]
    smallest = min(values)
    p = min(1.0, len(values) * smallest)
    assessments = [line.assessment for line in lines]
    counts = ", ".join(
        f"{assessments.count(a)} {a}" for a in ("PASSED", "WEAK", "FAILED") if a in assessments
    )
    first = lines[0]
    detail = (
        f"{len(lines)} p-value(s), psamples {first.psamples}, tsamples {first.tsamples}; "
        f"dieharder says {counts}; smallest {'two-sided ' if two_sided else ''}p "
        f"{smallest:.3g} × {len(lines)}"
    )
    return Measurement(
        sample_size=sample_size,
        unit="bytes",
        statistic=smallest,
        statistic_name="min two-sided p" if two_sided else "min p",
        p_value=p,
        detail=detail,
    )


class DieharderJob(ExternalJob):
    """``dieharder -g 200 -d TEST [-n NTUPLE] -p PSAMPLES`` reading the sample on stdin, or a
    live stream from ``stream_command`` (the full battery reads more than any file holds)."""

    tool = "dieharder"

    def __init__(
        self,
        test: int,
        psamples: int | None,
        *,
        ntuple: int | None = None,
        stream_command: Sequence[str] | None = None,
        timeout: float | None = None,
    ) -> None:
        self.test = test
        self.psamples = psamples
        self.ntuple = ntuple
        self.stream_command = list(stream_command) if stream_command else None
        self.timeout = timeout

    @property
    def row_id(self) -> str:
        suffix = f"-n{self.ntuple}" if self.ntuple is not None else ""
        return f"dieharder-{DIEHARDER_TESTS.get(self.test, str(self.test))}{suffix}"

    def row_ids(self) -> list[tuple[str, str, bool]]:
        name = DIEHARDER_TESTS.get(self.test, f"test {self.test}")
        title = f"dieharder -d {self.test} ({name})"
        if self.ntuple is not None:
            title += f", ntuple {self.ntuple}"
        return [(self.row_id, title, True)]

    def missing(self) -> str | None:
        return _which("dieharder", "dieharder")

    def command(self) -> list[str]:
        cmd = ["dieharder", "-g", "200", "-d", str(self.test), "-D", str(_DIEHARDER_FIELDS)]
        if self.ntuple is not None:
            cmd += ["-n", str(self.ntuple)]
        if self.psamples is not None:
            cmd += ["-p", str(self.psamples)]
        return cmd

    def execute(self, sample: Path) -> list[ExternalRow]:
        if self.stream_command is None:
            with sample.open("rb") as stdin:
                done = subprocess.run(
                    self.command(),
                    stdin=stdin,
                    capture_output=True,
                    text=True,
                    timeout=self.timeout,
                    check=False,
                )
            output = done.stdout + done.stderr
            size = sample.stat().st_size
        else:
            producer = subprocess.Popen(
                self.stream_command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
            )
            try:
                done = subprocess.run(
                    self.command(),
                    stdin=producer.stdout,
                    capture_output=True,
                    text=True,
                    timeout=self.timeout,
                    check=False,
                )
            finally:
                producer.kill()
                producer.wait()
            output = done.stdout + done.stderr
            size = 0
        lines, eof = parse_dieharder(output)
        ((row_id, title, discrete),) = self.row_ids()
        if eof or not lines:
            reason = (
                f"the {size}-byte sample ran out before the test finished; it needs a larger one"
                if eof
                else f"dieharder printed no result: {output.strip()[-200:]!r}"
            )
            return [ExternalRow(row_id, title, Measurement(size, "bytes", skipped=reason), True)]
        two_sided = self.psamples is None or self.psamples >= 100
        measurement = dieharder_measurement(lines, size, two_sided=two_sided)
        command = " ".join(self.command()) + (" < sample" if self.stream_command is None else "")
        measurement = replace(measurement, detail=f"{measurement.detail}; command: {command}")
        return [ExternalRow(row_id, title, measurement, discrete)]


# -- rngtest -------------------------------------------------------------------------------


def parse_rngtest(text: str) -> dict[str, int]:
    """rngtest's counters: ``successes``, ``failures`` and one per FIPS 140-2 test."""
    counts: dict[str, int] = {}
    for line in text.splitlines():
        match = re.search(r"FIPS 140-2 (successes|failures):\s*(\d+)", line)
        if match:
            counts[match.group(1)] = int(match.group(2))
            continue
        match = re.search(r"FIPS 140-2\([^)]*\) ([A-Za-z ]+):\s*(\d+)", line)
        if match:
            counts[match.group(1).strip().lower()] = int(match.group(2))
    return counts


def rngtest_measurement(counts: dict[str, int], sample_size: int) -> Measurement:
    """Failed blocks against ``RNGTEST_FAILURE_RATE`` (exact binomial upper tail)."""
    blocks = counts.get("successes", 0) + counts.get("failures", 0)
    if blocks == 0:
        raise ValueError("rngtest reported no blocks")
    failures = counts.get("failures", 0)
    per_test = ", ".join(
        f"{name} {counts[name]}"
        for name in ("monobit", "poker", "runs", "long run", "continuous run")
        if name in counts
    )
    expected = blocks * RNGTEST_FAILURE_RATE
    return Measurement(
        sample_size=sample_size,
        unit="bytes",
        statistic=float(failures),
        statistic_name="failed blocks",
        p_value=binomial_sf(failures, blocks, RNGTEST_FAILURE_RATE),
        detail=(
            f"{failures} of {blocks} blocks failed (expected {expected:.1f} at rate "
            f"{RNGTEST_FAILURE_RATE:g}); per test: {per_test}"
        ),
    )


class RngtestJob(ExternalJob):
    """``rngtest -c BLOCKS`` (FIPS 140-2 tests on 20,000-bit blocks) reading the sample."""

    tool = "rngtest"

    def __init__(self, blocks: int, *, timeout: float | None = None) -> None:
        self.blocks = blocks
        self.timeout = timeout

    def row_ids(self) -> list[tuple[str, str, bool]]:
        return [("rngtest-fips-140-2", f"rngtest FIPS 140-2 blocks ({self.blocks})", True)]

    def missing(self) -> str | None:
        return _which("rngtest", "rng-tools5")

    def execute(self, sample: Path) -> list[ExternalRow]:
        with sample.open("rb") as stdin:
            done = subprocess.run(
                ["rngtest", "-c", str(self.blocks)],
                stdin=stdin,
                capture_output=True,
                text=True,
                timeout=self.timeout,
                check=False,  # exit status 1 means "a block failed": read the counts instead
            )
        counts = parse_rngtest(done.stdout + done.stderr)
        ((row_id, title, discrete),) = self.row_ids()
        size = min(sample.stat().st_size, 4 + RNGTEST_BLOCK_BYTES * self.blocks)
        return [ExternalRow(row_id, title, rngtest_measurement(counts, size), discrete)]


# -- ent -----------------------------------------------------------------------------------


def parse_ent_terse(text: str) -> dict[str, float]:
    """``ent -t`` CSV: File-bytes, Entropy, Chi-square, Mean, Monte-Carlo-Pi,
    Serial-Correlation."""
    rows = [line.split(",") for line in text.strip().splitlines() if line.strip()]
    header = [r for r in rows if r[0] == "0"]
    values = [r for r in rows if r[0] == "1"]
    if not header or not values:
        raise ValueError(f"unexpected ent output: {text[:200]!r}")
    return {name: float(v) for name, v in zip(header[0][1:], values[0][1:], strict=True)}


_ENT_ROWS = (
    ("ent-chi-square", "ent: chi-square of byte frequencies", False),
    ("ent-mean", "ent: arithmetic mean of bytes", False),
    ("ent-monte-carlo-pi", "ent: Monte Carlo value of π", False),
    ("ent-serial-correlation", "ent: serial correlation coefficient", False),
)


def ent_measurements(values: dict[str, float]) -> dict[str, Measurement]:
    """p-values for ent's four statistics (see the module docstring)."""
    n = int(values["File-bytes"])
    entropy = values["Entropy"]
    x2 = values["Chi-square"]
    chi = Measurement(
        sample_size=n,
        unit="bytes",
        statistic=x2,
        statistic_name="X²",
        df=255,
        p_value=chi2_sf(x2, 255),
        log10_p=chi2_log10_sf(x2, 255),
        detail=f"entropy {entropy:.6f} bits per byte",
    )
    mean = values["Mean"]
    z_mean = (mean - 127.5) / math.sqrt((256**2 - 1) / 12.0 / n)
    points = n // 6
    quarter = math.pi / 4.0
    pi_estimate = values["Monte-Carlo-Pi"]
    hits = pi_estimate / 4.0 * points
    z_pi = (hits - points * quarter) / math.sqrt(points * quarter * (1 - quarter))
    r = values["Serial-Correlation"]
    return {
        "ent-chi-square": chi,
        "ent-mean": z_measurement(z_mean, n, "bytes", f"mean {mean:.4f} (127.5 = random)"),
        "ent-monte-carlo-pi": z_measurement(
            z_pi,
            n,
            "bytes",
            f"π ≈ {pi_estimate:.6f} from {points} points "
            f"(error {abs(pi_estimate - math.pi) / math.pi:.4%})",
        ),
        "ent-serial-correlation": z_measurement(
            r * math.sqrt(n), n, "bytes", f"serial correlation coefficient {r:+.6f}"
        ),
    }


class EntJob(ExternalJob):
    """``ent -t`` on the whole sample file."""

    tool = "ent"

    def __init__(self, *, timeout: float | None = None) -> None:
        self.timeout = timeout

    def row_ids(self) -> list[tuple[str, str, bool]]:
        return list(_ENT_ROWS)

    def missing(self) -> str | None:
        return _which("ent", "ent")

    def execute(self, sample: Path) -> list[ExternalRow]:
        done = subprocess.run(
            ["ent", "-t", str(sample)],
            capture_output=True,
            text=True,
            timeout=self.timeout,
            check=False,
        )
        measurements = ent_measurements(parse_ent_terse(done.stdout))
        return [
            ExternalRow(row_id, title, measurements[row_id], discrete)
            for row_id, title, discrete in _ENT_ROWS
        ]


# -- SP 800-22 -----------------------------------------------------------------------------


class Sp80022Job(ExternalJob):
    """The 15 SP 800-22 tests on the first ``nbits`` bits of the sample, in a child process."""

    tool = "sp80022suite"

    def __init__(self, nbits: int, *, timeout: float | None = None) -> None:
        self.nbits = nbits
        self.timeout = timeout

    def row_ids(self) -> list[tuple[str, str, bool]]:
        return [
            (f"sp800-22-{name.replace('_', '-')}", f"SP 800-22: {title}", count > 1)
            for name, title, _, count in sp80022.TESTS
        ]

    def missing(self) -> str | None:
        return sp80022.available()

    def execute(self, sample: Path) -> list[ExternalRow]:
        done = subprocess.run(
            [sys.executable, "-m", "rng.certify.sp80022", str(sample), str(self.nbits)],
            capture_output=True,
            text=True,
            timeout=self.timeout,
            check=True,
        )
        report = json.loads(done.stdout)
        bits = int(report["bits"])
        rows = []
        for (row_id, title, discrete), (name, _, _, count) in zip(
            self.row_ids(), sp80022.TESTS, strict=True
        ):
            result = report["results"][name]
            if "error" in result:
                reason = f"not applicable to this sequence: {result['error']}"
                if "cycles" in result["error"]:
                    reason += " (SP 800-22 2.14.4 needs at least 500 cycles)"
                measurement = Measurement(bits // 8, "bytes", skipped=reason)
            else:
                raw_p = float(result["p"])
                p = min(1.0, count * raw_p)
                detail = f"{bits} bits"
                if count > 1:
                    detail += f"; smallest of {count} p-values {raw_p:.4g} × {count} (Bonferroni)"
                measurement = Measurement(
                    sample_size=bits // 8,
                    unit="bytes",
                    statistic=raw_p,
                    statistic_name="p (NIST)" if count == 1 else "min p (NIST)",
                    p_value=p,
                    detail=detail,
                )
            rows.append(ExternalRow(row_id, title, measurement, discrete))
        return rows


# -- versions ------------------------------------------------------------------------------


def _first_match(command: Sequence[str], pattern: str) -> str | None:
    try:
        done = subprocess.run(list(command), capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.search(pattern, done.stdout + done.stderr)
    return match.group(0) if match else None


def tool_versions() -> dict[str, str]:
    """What each external tool reports about itself ("absent" when missing)."""
    versions: dict[str, str] = {}
    checks: dict[str, Callable[[], str | None]] = {
        "dieharder": lambda: _first_match(["dieharder", "-l"], r"dieharder version [\d.]+"),
        "rngtest": lambda: _first_match(["rngtest", "-V"], r"rngtest \S+"),
        "ent": lambda: "ent (Fourmilab, prints no version)",
    }
    for tool, check in checks.items():
        versions[tool] = (check() or "installed") if shutil.which(tool) else "absent"
    try:
        versions["sp80022suite"] = f"sp80022suite {metadata.version('sp80022suite')}"
    except metadata.PackageNotFoundError:
        versions["sp80022suite"] = "absent"
    return versions
