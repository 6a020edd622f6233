"""Result records of the certification battery and the verdict policy.

Policy (dieharder's, and what docs/certification.md states for the lab): every p-value test
is judged at α = 0.01. A test with p < α is rerun once on fresh data; it FAILS only if the
rerun also has p < α, and both p-values are reported. Tests without a p-value (known-answer
tests, the predictability tests) pass or fail outright. 58 Pa. Code 810a.5(c) asks for 95 %
confidence: the report also says which first-run p-values are below 0.05, for information.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from enum import Enum

__all__ = [
    "ALPHA",
    "ALPHA_INFORMATIONAL",
    "Category",
    "Measurement",
    "TestResult",
    "Verdict",
    "decide",
    "format_p",
]

ALPHA = 0.01
ALPHA_INFORMATIONAL = 0.05  # 58 Pa. Code 810a.5(c): 95 % confidence


class Category(Enum):
    KNOWN_ANSWER = "known-answer"
    OUTCOME = "outcome"
    RAW = "raw"
    PREDICTABILITY = "predictability"
    EXTERNAL = "external"
    SECOND_LEVEL = "second-level"


class Verdict(Enum):
    PASS = "PASS"
    FAIL = "FAIL"
    SKIPPED = "SKIPPED"


@dataclass(frozen=True, slots=True)
class Measurement:
    """One run of one test on one sample.

    ``p_value`` is None for tests that pass or fail outright (``passed``); ``log10_p`` keeps
    the size of p-values that underflow a double. ``skipped`` holds the reason a test could
    not run (tool absent, not applicable to the sample).
    """

    sample_size: int
    unit: str
    statistic: float | None = None
    statistic_name: str = ""
    df: float | None = None
    p_value: float | None = None
    log10_p: float | None = None
    passed: bool | None = None
    detail: str = ""
    skipped: str | None = None
    sample_files: tuple[str, ...] = ()

    @property
    def is_p_test(self) -> bool:
        return self.skipped is None and self.p_value is not None

    def below(self, alpha: float) -> bool:
        return self.p_value is not None and self.p_value < alpha

    def with_files(self, files: tuple[str, ...]) -> Measurement:
        return replace(self, sample_files=files)


@dataclass(slots=True)
class TestResult:
    """A test's first run, its retest if there was one, and the verdict."""

    __test__ = False  # not a pytest test class, whatever its name

    id: str
    title: str
    category: Category
    first: Measurement
    retest: Measurement | None = None
    verdict: Verdict = Verdict.SKIPPED
    seconds: float = 0.0
    #: p-values of this test are not continuous (exact binomial tails of small counts, and
    #: Bonferroni-adjusted minima): they are left out of the second-level uniformity test
    discrete: bool = False

    @property
    def p_value(self) -> float | None:
        return self.first.p_value


def decide(first: Measurement, retest: Measurement | None, alpha: float = ALPHA) -> Verdict:
    """The verdict for a first run and its optional retest, by the policy above."""
    if first.skipped is not None:
        return Verdict.SKIPPED
    if first.p_value is None:
        return Verdict.PASS if first.passed else Verdict.FAIL
    if first.p_value >= alpha:
        return Verdict.PASS
    if retest is None or retest.skipped is not None or retest.p_value is None:
        return Verdict.FAIL
    return Verdict.PASS if retest.p_value >= alpha else Verdict.FAIL


def format_p(p: float | None, log10_p: float | None = None) -> str:
    """A p-value for people: 4 significant digits, and 10^-x where it underflows."""
    if p is None:
        return "—"
    if p == 0.0 or (p < 1e-300 and log10_p is not None):
        if log10_p is not None and math.isfinite(log10_p):
            return f"10^{log10_p:.1f}"
        return "< 1e-300"
    if p >= 0.001:
        return f"{p:.4f}"
    return f"{p:.3e}"
