"""``croupier rng certify``: the lab-style statistical report (being written)."""

from __future__ import annotations

from pathlib import Path

__all__ = ["run_certification"]


def run_certification(*, out_dir: Path, level: str, source_name: str, self_test: bool) -> int:
    raise NotImplementedError("the certification battery is not written yet")
