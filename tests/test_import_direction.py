"""Imports run one way (docs/architecture.md, "Import direction"): the configuration and the
games never import the table runtime, which imports both."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


BELOW_TABLES = [ROOT / "server" / "config.py", *sorted((ROOT / "server" / "games").rglob("*.py"))]


@pytest.mark.parametrize("path", BELOW_TABLES, ids=lambda p: str(p.relative_to(ROOT)))
def test_config_and_games_do_not_import_the_tables(path: Path) -> None:
    upward = {
        n for n in _imports(path) if n.startswith(("server.tables", "server.net", "server.cli"))
    }
    assert not upward, f"{path} imports {sorted(upward)}"
