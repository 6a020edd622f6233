"""The rule interpretations the code relies on are written in this repository
(docs/interpretations.md), and every citation of one points at an entry that exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "interpretations.md"
SOURCES = ("server", "rng", "tests", "docs", "loadtests", "client-web/src", "README.md")


def _files() -> list[Path]:
    found: list[Path] = []
    for name in SOURCES:
        path = ROOT / name
        candidates = [path] if path.is_file() else path.rglob("*")
        found += [p for p in candidates if p.suffix in (".py", ".md", ".ts") and p.is_file()]
    return found


def test_every_cited_interpretation_exists() -> None:
    entries = {int(n) for n in re.findall(r"^## (\d+)\. ", DOC.read_text(), re.MULTILINE)}
    assert entries == set(range(1, 16))
    cited = 0
    for path in _files():
        for match in re.finditer(
            r"docs/interpretations\.md,\s+(\d+)(?:[-–](\d+))?", path.read_text()
        ):
            first, last = int(match[1]), int(match[2] or match[1])
            assert set(range(first, last + 1)) <= entries, (path, match[0])
            cited += 1
    assert cited > 30


def test_no_citation_points_outside_the_repository() -> None:
    # The regulation folder's README is not part of this project; cite our own document.
    this = Path(__file__)
    stale = [p for p in _files() if p != this and "rules/README" in p.read_text()]
    assert stale == []
