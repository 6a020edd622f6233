"""``croupier rng certify``: the lab-style statistical report on the random number generator.

What GLI-style labs run on a gaming RNG (58 Pa. Code 810a.5; 25 CFR 547.14(b); AGCO 21.1),
in one command: known-answer tests; card, roulette and Big Six outcome tests through the
production dealing and spinning code; in-house raw-stream and predictability tests; the
external batteries NIST SP 800-22, dieharder, ent and rngtest where installed; the raw and
outcome samples with their SHA-256; and a self-test showing that deliberately broken
generators fail. See docs/certification.md.

This package uses the standard library only (``sp80022suite`` is optional); it never imports
``server``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

__all__ = ["run_certification"]


def run_certification(
    *,
    out_dir: Path,
    level: str,
    source_name: str,
    self_test: bool,
    seed: str | None = None,
    keep_samples: bool = True,
) -> int:
    """Run the battery at ``level`` ("quick", "full", or "tiny" for unit tests), write
    ``out_dir/report.json``, ``out_dir/report.md`` and ``out_dir/samples/``, and return the
    exit status: 0 only when the generator passes and (with ``self_test``) every broken
    generator fails. ``seed`` makes a reproducible test run (a seeded HMAC_DRBG, refused in
    production mode); a certification run never uses it. Without ``keep_samples`` the
    sample files (which the external tools read during the run) are deleted at the end; the
    report still lists each with its size and SHA-256, and says they were not kept. The last
    lines printed say where the reports are and where the samples are, and their size."""
    # Imported here so that ``python -m rng.certify.stream`` and ``python -m
    # rng.certify.sp80022`` (the child processes) start without loading the whole battery.
    from rng.certify.report import write_reports
    from rng.certify.runner import certify

    report = certify(
        out_dir=out_dir,
        level=level,
        source_name=source_name,
        self_test=self_test,
        seed=seed,
        keep_samples=keep_samples,
    )
    samples = out_dir / "samples"
    files = [f for f in samples.rglob("*") if f.is_file()] if samples.is_dir() else []
    size = sum(f.stat().st_size for f in files)
    if not keep_samples:
        shutil.rmtree(samples, ignore_errors=True)
    json_path, md_path = write_reports(report, out_dir)
    print(f"report: {md_path} and {json_path}", flush=True)
    print(_samples_line(samples, size, len(files), kept=keep_samples), flush=True)
    return report.exit_status


def _samples_line(folder: Path, size: int, count: int, *, kept: bool) -> str:
    """The last line of ``croupier rng certify``: where the samples are and how big."""
    amount = f"{size / 1e6:.1f} MB in {count} files"
    if kept:
        return (
            f"samples: {amount} in {folder}/ (each listed with its SHA-256 in the report; "
            "--no-samples deletes them at the end of the run)"
        )
    return (
        f"samples: not kept (--no-samples): {amount} were written to {folder}/ for the run "
        "and deleted; the report lists each with its size and SHA-256"
    )
