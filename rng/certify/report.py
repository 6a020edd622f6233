"""``report.json`` and ``report.md``: the certification report for a lab reviewer.

The JSON holds everything (one object per test with its statistic, p-value, verdict, retest
and the sample files it read); the Markdown is the same report laid out for people: the run,
the policy, one table per category, the second-level test, the self-test matrix (which test
caught which broken generator) and the sample files with their SHA-256.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from rng.certify.battery import SampleFile
from rng.certify.results import (
    ALPHA,
    ALPHA_INFORMATIONAL,
    Category,
    Measurement,
    TestResult,
    format_p,
)
from rng.certify.runner import ALPHA_SECOND_LEVEL, CertificationReport, GeneratorRun

__all__ = ["POLICY", "to_json", "to_markdown", "write_reports"]

POLICY = (
    f"Each test is judged at α = {ALPHA}. A test with p < α is rerun once on fresh data and "
    f"FAILS only if the rerun also has p < α (dieharder's approach); both p-values are "
    f"reported. Known-answer and predictability tests pass or fail outright. Tests that "
    f"minimise over several p-values (dieharder's sub-tests, some SP 800-22 tests) report "
    f"the smallest times their number (Bonferroni). The second-level Kolmogorov–Smirnov test "
    f"of the first-run p-values of the continuous tests is judged at α = {ALPHA_SECOND_LEVEL}. "
    f"58 Pa. Code 810a.5(c) asks for 95 % confidence: first-run p-values below "
    f"{ALPHA_INFORMATIONAL} are flagged for information. A tool that is not installed is "
    f"SKIPPED with the reason and does not fail the run. The generator passes when no test "
    f"FAILS; the self-test passes when every deliberately broken generator FAILS at least one "
    f"test. Exit status 0 only when both hold."
)


def _finite(value: float | None) -> float | None:
    if value is None or not math.isfinite(value):
        return None
    return value


def _measurement_json(m: Measurement) -> dict[str, Any]:
    return {
        "sample_size": m.sample_size,
        "unit": m.unit,
        "statistic": _finite(m.statistic),
        "statistic_name": m.statistic_name or None,
        "df": _finite(m.df),
        "p_value": _finite(m.p_value),
        "log10_p_value": _finite(m.log10_p),
        "passed": m.passed,
        "detail": m.detail,
        "skipped_reason": m.skipped,
        "sample_files": list(m.sample_files),
    }


def _result_json(r: TestResult) -> dict[str, Any]:
    first = _measurement_json(r.first)
    return {
        "id": r.id,
        "title": r.title,
        "category": r.category.value,
        "verdict": r.verdict.value,
        **first,
        "below_informational_alpha": (
            r.first.p_value is not None and r.first.p_value < ALPHA_INFORMATIONAL
        ),
        "retest": _measurement_json(r.retest) if r.retest is not None else None,
        "discrete_p_value": r.discrete,
        "seconds": round(r.seconds, 3),
    }


def _samples_json(samples: Iterable[SampleFile]) -> list[dict[str, Any]]:
    return [
        {"path": s.path, "description": s.description, "bytes": s.size, "sha256": s.sha256}
        for s in samples
    ]


def _run_json(run: GeneratorRun) -> dict[str, Any]:
    return {
        "name": run.name,
        "description": run.description,
        "flaw": run.flaw,
        "verdict": run.verdict,
        "caught_by": [r.id for r in run.failures],
        "tests": [_result_json(r) for r in run.results],
        "samples": _samples_json(run.samples),
    }


def to_json(report: CertificationReport) -> dict[str, Any]:
    return {
        "header": report.header,
        "policy": POLICY,
        "verdict": report.verdict,
        "exit_status": report.exit_status,
        "generator": _run_json(report.generator),
        "second_level": _result_json(report.second_level),
        "self_test": (
            [_run_json(run) for run in report.self_test] if report.self_test is not None else None
        ),
    }


# -- Markdown ------------------------------------------------------------------------------

_CATEGORY_TITLES = {
    Category.KNOWN_ANSWER: "Known-answer tests",
    Category.OUTCOME: "Game outcome tests",
    Category.RAW: "Raw stream tests (in-house)",
    Category.PREDICTABILITY: "Predictability tests",
    Category.EXTERNAL: "External batteries (SP 800-22, dieharder, ent, rngtest)",
}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _statistic(m: Measurement) -> str:
    if m.skipped is not None:
        return "—"
    if m.statistic is None:
        return "—"
    value = m.statistic
    shown = f"{value:.6g}" if abs(value) < 1e6 else f"{value:.4e}"
    name = f"{m.statistic_name} = " if m.statistic_name else ""
    df = f" (df {m.df:g})" if m.df is not None else ""
    return f"{name}{shown}{df}"


def _p(m: Measurement | None) -> str:
    if m is None:
        return ""
    if m.skipped is not None:
        return "—"
    if m.p_value is None:
        return "n/a"
    text = format_p(m.p_value, m.log10_p)
    if m.p_value < ALPHA_INFORMATIONAL:
        text += " †"
    return text


def _verdict(r: TestResult) -> str:
    if r.first.skipped is not None:
        return f"SKIPPED: {r.first.skipped}"
    word = f"**{r.verdict.value}**"
    if r.retest is not None:
        word += " (retested)"
    return word


def _results_table(results: list[TestResult]) -> list[str]:
    lines = [
        "| Test | Sample | Statistic | p-value | Retest p | Verdict | Details |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results:
        m = r.first
        sample = f"{m.sample_size:,} {m.unit}" if m.sample_size else "—"
        details = m.detail
        if m.sample_files:
            details += " (" + ", ".join(f"`{f}`" for f in m.sample_files) + ")"
        lines.append(
            "| "
            + " | ".join(
                _cell(x)
                for x in (
                    f"`{r.id}` {r.title}",
                    sample,
                    _statistic(m),
                    _p(m),
                    _p(r.retest),
                    _verdict(r),
                    details,
                )
            )
            + " |"
        )
    return lines


def _samples_table(samples: list[SampleFile]) -> list[str]:
    lines = ["| File | Contents | Bytes | SHA-256 |", "|---|---|---|---|"]
    for s in samples:
        lines.append(f"| `{s.path}` | {_cell(s.description)} | {s.size:,} | `{s.sha256}` |")
    return lines


def to_markdown(report: CertificationReport) -> str:
    h = report.header
    g = report.generator
    out: list[str] = [
        "# Croupier RNG certification report",
        "",
        f"**Verdict: {report.verdict}** — exit status {report.exit_status}.",
        "",
        "## Run",
        "",
        "| | |",
        "|---|---|",
    ]
    for key in (
        "tool",
        "croupier_version",
        "source",
        "source_description",
        "level",
        "self_test",
        "samples_kept",
        "python",
        "cryptography_version",
        "platform",
        "started",
        "duration_seconds",
        "cpu_seconds",
        "alpha",
        "alpha_informational",
        "alpha_second_level",
        "p_value_tests",
        "design_false_failure_probability",
        "mersenne_twister_seed",
    ):
        out.append(f"| {key.replace('_', ' ')} | {_cell(str(h.get(key)))} |")
    tools = h.get("external_tools")
    if isinstance(tools, dict):
        out.append(
            "| external tools | " + _cell(", ".join(f"{k}: {v}" for k, v in tools.items())) + " |"
        )
    out += [
        "",
        "## Policy",
        "",
        POLICY,
        "",
        "† marks a first-run p-value below 0.05 (810a.5(c) confidence level, informational).",
        "",
        f"## Generator under test: {g.name} — {g.verdict}",
        "",
        g.description,
        "",
    ]
    for category, title in _CATEGORY_TITLES.items():
        rows = [r for r in g.results if r.category is category]
        if rows:
            out += [f"### {title}", "", *_results_table(rows), ""]
    out += [
        "### Second level",
        "",
        *_results_table([report.second_level]),
        "",
    ]
    if report.self_test is not None:
        out += [
            "## Self-test: deliberately broken generators",
            "",
            "Each broken generator runs the same battery (smaller samples, and without the "
            "DRBG's own vectors); it must FAIL at least one test.",
            "",
            "| Generator | Flaw | Result | Caught by |",
            "|---|---|---|---|",
        ]
        for run in report.self_test:
            caught = ", ".join(f"`{r.id}`" for r in run.failures) or "—"
            out.append(f"| {run.name} | {_cell(run.flaw or '')} | **{run.verdict}** | {caught} |")
        out += ["", "### Verdict of every test on every broken generator", ""]
        names = [run.name for run in report.self_test]
        out.append("| Test | " + " | ".join(names) + " |")
        out.append("|---|" + "---|" * len(names))
        ids = list(dict.fromkeys(r.id for run in report.self_test for r in run.results))
        by_run = [{r.id: r for r in run.results} for run in report.self_test]
        for test_id in ids:
            cells = []
            for results in by_run:
                r = results.get(test_id)
                if r is None:
                    cells.append("")
                elif r.verdict.value == "FAIL":
                    shown = r.first.p_value is not None
                    p_text = f" {format_p(r.first.p_value, r.first.log10_p)}" if shown else ""
                    cells.append(f"**FAIL**{p_text}")
                else:
                    cells.append(r.verdict.value)
            out.append(f"| `{test_id}` | " + " | ".join(cells) + " |")
        out.append("")
    out += ["## Sample files", ""]
    if h.get("samples_kept") is False:
        out += [
            "**Not kept** (`--no-samples`): the files below were written for the run, read by "
            "the tests and external tools, then deleted. Their sizes and SHA-256 identify the "
            "data every verdict was computed on, but nobody can re-run a test on them; a "
            "certification submission keeps them (run without `--no-samples`).",
            "",
        ]
    out += [f"### {g.name}", "", *_samples_table(g.samples), ""]
    if report.self_test is not None:
        for run in report.self_test:
            out += [f"### Self-test: {run.name}", "", *_samples_table(run.samples), ""]
    out += [
        "## Final verdict",
        "",
        f"- Generator `{g.name}`: **{g.verdict}** "
        f"({sum(1 for r in g.results if r.verdict.value == 'PASS')} passed, "
        f"{len(g.failures)} failed, "
        f"{sum(1 for r in g.results if r.verdict.value == 'SKIPPED')} skipped; "
        f"second level {report.second_level.verdict.value})",
    ]
    if report.self_test is not None:
        for run in report.self_test:
            out.append(f"- Broken generator `{run.name}`: **{run.verdict}**")
    out += [f"- **{report.verdict}**", f"- Exit status: {report.exit_status}", ""]
    return "\n".join(out)


def write_reports(report: CertificationReport, out_dir: Path) -> tuple[Path, Path]:
    """Write ``report.json`` and ``report.md`` into ``out_dir``."""
    json_path = out_dir / "report.json"
    md_path = out_dir / "report.md"
    json_path.write_text(json.dumps(to_json(report), indent=2, ensure_ascii=False) + "\n")
    md_path.write_text(to_markdown(report))
    return json_path, md_path
