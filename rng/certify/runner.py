"""``croupier rng certify``: run the battery on the generator and on the broken generators.

Order of work. The raw sample of each generator is written first and its external-tool runs
are queued on one worker thread (the tools are separate processes, so they use the second
core) while this thread deals, spins and runs the in-house tests. Every p-value test below
α = 0.01 is rerun once on fresh samples and fails only if the rerun is below α too
(``rng.certify.results``). The generator passes when no test fails and the second-level
Kolmogorov–Smirnov test of its first-run p-values is not below ``ALPHA_SECOND_LEVEL``; the
self-test passes when every broken generator fails at least one test. The exit status is 0
only when both hold.
"""

from __future__ import annotations

import platform
import resource
import secrets
import shutil
import sys
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

from rng.certify.battery import CHECKS, Check, SampleFile, SampleSet, external_jobs
from rng.certify.broken import broken_subjects
from rng.certify.external import ExternalJob, ExternalRow, tool_versions
from rng.certify.levels import LEVELS, SELF_TEST_SIZES, Sizes
from rng.certify.results import (
    ALPHA,
    ALPHA_INFORMATIONAL,
    Category,
    Measurement,
    TestResult,
    Verdict,
    decide,
    format_p,
)
from rng.certify.stats import ks_uniform
from rng.certify.stream import stream_command
from rng.certify.subject import Subject
from rng.sources import HmacDrbgSource, OsSource, RandomSource, seeded_source

__all__ = [
    "ALPHA_SECOND_LEVEL",
    "DETECTED",
    "NOT_DETECTED",
    "CertificationReport",
    "GeneratorRun",
    "certify",
    "make_subject",
]

# NIST SP 800-22 Rev. 1a, 4.2.2: the p-values of a battery are uniform when the p-value of
# their uniformity test is at least 0.0001.
ALPHA_SECOND_LEVEL = 0.0001
DETECTED = "FAILED as expected"
NOT_DETECTED = "NOT DETECTED"
SOURCE_DESCRIPTIONS = {
    "hmac-drbg": (
        "SP 800-90A HMAC_DRBG (SHA-256), rng.sources.HmacDrbgSource: seeded from the OS, "
        "personalization 'croupier rng certify', 512-byte requests, reseeded from the OS at "
        "every new deck and shoe as the tables do (the seed is never recorded)"
    ),
    "os": "the operating system CSPRNG (getrandom), rng.sources.OsSource",
}


@dataclass(slots=True)
class GeneratorRun:
    """Every result for one generator, its sample files and its verdict."""

    name: str
    description: str
    flaw: str | None
    results: list[TestResult] = field(default_factory=list)
    samples: list[SampleFile] = field(default_factory=list)
    verdict: str = ""

    @property
    def failures(self) -> list[TestResult]:
        return [r for r in self.results if r.verdict is Verdict.FAIL]


@dataclass(slots=True)
class CertificationReport:
    header: dict[str, object]
    generator: GeneratorRun
    second_level: TestResult
    self_test: list[GeneratorRun] | None
    verdict: str
    exit_status: int


class _Log:
    def __init__(self, stream: Callable[[str], None] | None) -> None:
        self.start = time.monotonic()
        self._write = stream or (lambda text: print(text, file=sys.stderr, flush=True))

    def __call__(self, message: str) -> None:
        self._write(f"[{time.monotonic() - self.start:6.1f}s] {message}")


def make_source(source_name: str) -> RandomSource:
    if source_name == "os":
        return OsSource()
    if source_name == "hmac-drbg":
        return HmacDrbgSource("croupier rng certify")
    raise ValueError(f"unknown source {source_name!r} (hmac-drbg or os)")


def make_subject(source_name: str, seed: str | None = None) -> Subject:
    """The generator under certification; with ``seed``, the same HMAC_DRBG seeded for a
    reproducible test run (``seeded_source`` refuses it in production mode)."""
    if seed is None:
        return Subject(
            make_source(source_name),
            name=source_name,
            description=SOURCE_DESCRIPTIONS.get(source_name, source_name),
        )
    if source_name != "hmac-drbg":
        raise ValueError("only the HMAC_DRBG can be seeded (--seed is a test mode)")
    return Subject(
        seeded_source(f"certify/{seed}"),
        name=source_name,
        description=(
            "SP 800-90A HMAC_DRBG (SHA-256), rng.sources.seeded_source: seeded from the fixed "
            f"value {seed!r} for a reproducible TEST run — not a certification submission"
        ),
    )


class _GeneratorBattery:
    """Runs the battery for one generator: in-house now, external on the worker."""

    def __init__(
        self,
        subject: Subject,
        sizes: Sizes,
        root: Path,
        folder: str,
        *,
        pool: ThreadPoolExecutor,
        log: _Log,
        generator_checks: bool,
        stream: list[str] | None,
    ) -> None:
        self.subject = subject
        self.sizes = sizes
        self.root = root
        self.folder = folder
        self.log = log
        self.generator_checks = generator_checks
        self.run = GeneratorRun(subject.name, subject.description, subject.flaw)
        self.first = self._samples(subject.name)
        self._retest_samples: SampleSet | None = None
        self._jobs: list[tuple[ExternalJob, Future[tuple[list[ExternalRow], float]]]] = []
        raw_path = self.first.raw_path()
        for job in external_jobs(sizes, stream):
            self._jobs.append((job, pool.submit(_timed, job, raw_path)))

    def _samples(self, tag: str) -> SampleSet:
        return SampleSet(self.subject, self.sizes, self.root, self.folder, tag, log=self.log)

    def _fresh(self) -> SampleSet:
        """Fresh samples for retests: made on the first retest and shared by the later ones
        (each retest still reads data its own first run never saw)."""
        if self._retest_samples is None:
            self._retest_samples = self._samples(f"{self.subject.name}-retest")
        return self._retest_samples

    def _record(self, result: TestResult) -> None:
        """Keep the result; say so only when it is not a plain pass (concise progress)."""
        self.run.results.append(result)
        m = result.first
        if result.verdict is Verdict.PASS and result.retest is None:
            return
        if result.verdict is Verdict.SKIPPED:
            if self.generator_checks:
                self.log(f"{self.subject.name}: {result.id} SKIPPED ({m.skipped})")
            return
        shown = f"p={format_p(m.p_value, m.log10_p)}" if m.p_value is not None else m.detail[:70]
        retest = ""
        if result.retest is not None:
            retest = f", retest p={format_p(result.retest.p_value, result.retest.log10_p)}"
        self.log(f"{self.subject.name}: {result.id} {result.verdict.value} ({shown}{retest})")

    def run_in_house(self) -> None:
        for check in CHECKS:
            if check.generator_only and not self.generator_checks:
                continue
            self._record(self._run_check(check))

    def _run_check(self, check: Check) -> TestResult:
        started = time.monotonic()
        first = check.run(self.first).with_files(self.first.file_of(*check.samples))
        retest: Measurement | None = None
        if first.below(ALPHA):
            fresh = self._fresh()
            retest = check.run(fresh).with_files(fresh.file_of(*check.samples))
        return TestResult(
            id=check.id,
            title=check.title,
            category=check.category,
            first=first,
            retest=retest,
            verdict=decide(first, retest),
            seconds=time.monotonic() - started,
            discrete=check.discrete,
        )

    def collect_external(self) -> None:
        for job, future in self._jobs:
            rows, seconds = future.result()
            retest_rows: dict[str, ExternalRow] = {}
            if any(row.measurement.below(ALPHA) for row in rows):
                fresh = self._fresh()
                retest_rows = {r.id: r for r in job.run(fresh.raw_path())}
                retest_rows = {
                    k: ExternalRow(v.id, v.title, _with_raw_file(v.measurement, fresh), v.discrete)
                    for k, v in retest_rows.items()
                }
            for row in rows:
                first = _with_raw_file(row.measurement, self.first)
                retest = None
                if row.measurement.below(ALPHA) and row.id in retest_rows:
                    retest = retest_rows[row.id].measurement
                self._record(
                    TestResult(
                        id=row.id,
                        title=row.title,
                        category=Category.EXTERNAL,
                        first=first,
                        retest=retest,
                        verdict=decide(first, retest),
                        seconds=seconds / max(1, len(rows)),
                        discrete=row.discrete,
                    )
                )

    def finish(self) -> GeneratorRun:
        self.run.samples[:0] = list(self.first.files.values())
        if self._retest_samples is not None:
            self.run.samples.extend(self._retest_samples.files.values())
        results = self.run.results
        counts = {v: sum(1 for r in results if r.verdict is v) for v in Verdict}
        self.log(
            f"{self.subject.name}: {counts[Verdict.PASS]} passed, {counts[Verdict.FAIL]} "
            f"failed, {counts[Verdict.SKIPPED]} skipped"
        )
        return self.run


def _timed(job: ExternalJob, path: Path) -> tuple[list[ExternalRow], float]:
    started = time.monotonic()
    rows = job.run(path)
    return rows, time.monotonic() - started


def _with_raw_file(m: Measurement, samples: SampleSet) -> Measurement:
    if m.skipped is not None and m.sample_size == 0:
        return m
    return m.with_files(samples.file_of("raw"))


def second_level(results: list[TestResult]) -> TestResult:
    """Kolmogorov–Smirnov uniformity of the first-run p-values of the continuous tests."""
    p_values = [
        r.first.p_value
        for r in results
        if r.first.is_p_test and not r.discrete and r.first.p_value is not None
    ]
    if len(p_values) < 5:
        first = Measurement(len(p_values), "p-values", skipped="fewer than 5 p-values")
    else:
        d, p, n = ks_uniform(p_values)
        informational = sum(1 for v in p_values if v < ALPHA_INFORMATIONAL)
        first = Measurement(
            sample_size=n,
            unit="p-values",
            statistic=d,
            statistic_name="D",
            p_value=p,
            detail=(
                f"{n} first-run p-values of continuous tests (discrete and Bonferroni-"
                f"adjusted ones left out); {informational} below 0.05 (expected "
                f"{n * ALPHA_INFORMATIONAL:.1f}); judged at α = {ALPHA_SECOND_LEVEL}"
            ),
        )
    verdict = decide(first, None, ALPHA_SECOND_LEVEL)
    return TestResult(
        id="second-level-ks",
        title="Second level: Kolmogorov–Smirnov of the first-run p-values",
        category=Category.SECOND_LEVEL,
        first=first,
        verdict=verdict,
    )


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "unknown"


def certify(
    *,
    out_dir: Path,
    level: str,
    source_name: str,
    self_test: bool,
    log: Callable[[str], None] | None = None,
    seed: str | None = None,
    keep_samples: bool = True,
) -> CertificationReport:
    """Run everything and return the report (``run_certification`` also writes it, and
    deletes the samples afterwards when not ``keep_samples``: the report says so)."""
    if level not in LEVELS:
        raise ValueError(f"unknown level {level!r}: one of {', '.join(LEVELS)}")
    sizes = LEVELS[level]
    logger = _Log(log)
    started_at = datetime.now(UTC)
    out_dir.mkdir(parents=True, exist_ok=True)
    if (out_dir / "report.json").exists() and (out_dir / "samples").is_dir():
        shutil.rmtree(out_dir / "samples")  # a previous run's samples: never mix them in
    subject = make_subject(source_name, seed)
    mt_seed = secrets.randbelow(1 << 16) if seed is None else 4242
    logger(
        f"certifying {source_name} at level {level}; samples in {out_dir / 'samples'}"
        + ("" if keep_samples else " (deleted at the end: --no-samples)")
    )
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="certify-tools") as pool:
        main = _GeneratorBattery(
            subject,
            sizes,
            out_dir,
            "samples",
            pool=pool,
            log=logger,
            generator_checks=True,
            stream=stream_command(source_name),
        )
        broken_batteries: list[_GeneratorBattery] = []
        if self_test:
            for broken in broken_subjects(
                (lambda: HmacDrbgSource("croupier rng certify self-test"))
                if seed is None
                else (lambda: seeded_source(f"certify-self-test/{seed}")),
                mt_seed,
            ):
                broken_batteries.append(
                    _GeneratorBattery(
                        broken,
                        SELF_TEST_SIZES[level],
                        out_dir,
                        "samples/self-test",
                        pool=pool,
                        log=logger,
                        generator_checks=False,
                        stream=None,
                    )
                )
        logger(f"{subject.name}: in-house tests")
        main.run_in_house()
        for battery in broken_batteries:
            logger(f"self-test: {battery.subject.name} ({battery.subject.flaw})")
            battery.run_in_house()
        logger("waiting for the external tools")
        main.collect_external()
        for battery in broken_batteries:
            battery.collect_external()
    generator = main.finish()
    level2 = second_level(generator.results)
    logger(f"{generator.name}: second-level KS {level2.verdict.value}")
    passed = not generator.failures and level2.verdict is not Verdict.FAIL
    generator.verdict = "PASS" if passed else "FAIL"
    runs: list[GeneratorRun] | None = None
    all_detected = True
    if self_test:
        runs = []
        for battery in broken_batteries:
            run = battery.finish()
            run.verdict = DETECTED if run.failures else NOT_DETECTED
            all_detected = all_detected and bool(run.failures)
            runs.append(run)
    exit_status = 0 if passed and all_detected else 1
    if passed and all_detected:
        verdict = f"PASS: {source_name} passed every test" + (
            "; every broken generator failed as expected" if self_test else ""
        )
    else:
        reasons = []
        if not passed:
            failed = [r.id for r in generator.failures]
            if level2.verdict is Verdict.FAIL:
                failed.append(level2.id)
            reasons.append(f"{source_name} failed {', '.join(failed)}")
        if runs is not None:
            missed = [r.name for r in runs if r.verdict == NOT_DETECTED]
            if missed:
                reasons.append(f"the battery did not detect {', '.join(missed)}")
        verdict = "FAIL: " + "; ".join(reasons)
    duration = time.monotonic() - logger.start
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    p_tests = sum(1 for r in generator.results if r.first.is_p_test)
    header: dict[str, object] = {
        "tool": "croupier rng certify",
        "croupier_version": _version("croupier"),
        "cryptography_version": _version("cryptography"),
        "source": source_name,
        "source_description": SOURCE_DESCRIPTIONS.get(source_name, source_name),
        "level": level,
        "self_test": self_test,
        "samples_kept": keep_samples,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "started": started_at.isoformat(timespec="seconds"),
        "duration_seconds": round(duration, 1),
        "cpu_seconds": {
            "this_process": round(own.ru_utime + own.ru_stime, 1),
            "external_tools": round(children.ru_utime + children.ru_stime, 1),
        },
        "alpha": ALPHA,
        "alpha_informational": ALPHA_INFORMATIONAL,
        "alpha_second_level": ALPHA_SECOND_LEVEL,
        "p_value_tests": p_tests,
        "design_false_failure_probability": round(
            1 - (1 - ALPHA * ALPHA) ** p_tests + ALPHA_SECOND_LEVEL, 5
        ),
        "external_tools": tool_versions(),
        "mersenne_twister_seed": mt_seed if self_test else None,
        "sizes": asdict(sizes),
        "self_test_sizes": asdict(SELF_TEST_SIZES[level]) if self_test else None,
    }
    logger(f"done in {duration:.1f}s: {verdict}")
    return CertificationReport(header, generator, level2, runs, verdict, exit_status)
