"""Imports run one way (docs/architecture.md, "Layers"): every package of the server sits in
one layer of ``LAYERS`` and imports only from the layers below it (and from itself). Every
import counts — at the top of a module, inside a function, for type checking only — so no
package cycle can form, and a package added without a place in the list fails here."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Bottom first. A module may import its own package and any package of a lower layer.
LAYERS: list[list[str]] = [
    ["rng"],  # certified randomness: imports nothing of the server (docs/rng.md)
    # Vocabulary with no dependencies: the version, store errors, the data directory's lock,
    # lazy package exports, the metrics registry, the wire messages and their codec.
    # and the prompt (a future that wakes what waits on it in the call that sets it).
    [
        "server",
        "server.stores",
        "server.datadir",
        "server.exports",
        "server.metrics",
        "server.prompt",
    ],
    ["server.protocol"],
    ["server.games"],  # the sans-I/O rule engines and their registry
    ["server.group_commit"],  # the group-commit writer both databases' stores use
    ["server.storage", "server.pg_storage"],  # durable writes: SQLite, PostgreSQL
    ["server.journal", "server.wallet"],  # the round journal and the ledger
    ["server.core"],  # the sans-I/O table core
    ["server.devices"],  # electronic-table devices: link, messages, dealing, hub
    ["server.config"],  # the operator's file → settings
    ["server.stations"],  # player stations: meters, tickets, their service
    ["server.tables"],  # the table runtime: the core's effects performed on the loop
    ["server.cluster"],  # many nodes on Redis and PostgreSQL
    ["server.net"],  # the WebSocket and HTTP edge
    ["server.app"],  # the composition root: one process's stores, tables, devices, cluster
    ["server.cli"],  # the croupier command
]
LAYER_OF = {package: n for n, layer in enumerate(LAYERS) for package in layer}


def _package(module: str) -> str | None:
    """The entry of ``LAYERS`` that ``module`` belongs to (the longest that matches), or None
    for a module outside the project (the standard library, a dependency)."""
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        if ".".join(parts[:n]) in LAYER_OF:
            return ".".join(parts[:n])
    return None


def _module_of(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(name: str) -> bool:
    path = ROOT.joinpath(*name.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def _imports(module: str, source: str, *, package: bool = False) -> set[str]:
    """Every module ``source`` (module ``module``) imports, relative imports resolved."""
    here = module.split(".") if package else module.split(".")[:-1]
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = here[: len(here) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            names.add(module)
            # ``from server import tables`` imports the package ``server.tables``
            names.update(
                f"{module}.{a.name}" for a in node.names if _is_module(f"{module}.{a.name}")
            )
    return names


MODULES = sorted([*(ROOT / "server").rglob("*.py"), *(ROOT / "rng").rglob("*.py")])


def test_every_package_has_a_layer() -> None:
    packages = {_module_of(p) for p in (ROOT / "server").glob("*/__init__.py")}
    modules = {_module_of(p) for p in (ROOT / "server").glob("*.py")} - {"server"}
    assert packages | modules <= set(LAYER_OF), (
        f"put {sorted((packages | modules) - set(LAYER_OF))} in LAYERS"
    )


def _upward(module: str, source: str, *, package: bool = False) -> list[str]:
    """What ``source`` (module ``module``) imports from its own layer or above."""
    home = _package(module)
    assert home is not None, f"{module} has no layer"
    return sorted(
        f"{name} (layer {LAYER_OF[target]}: {target})"
        for name in _imports(module, source, package=package)
        if (target := _package(name)) is not None
        and target != home
        and LAYER_OF[target] >= LAYER_OF[home]
    )


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_imports_run_down_the_layers(path: Path) -> None:
    module = _module_of(path)
    upward = _upward(module, path.read_text(), package=path.name == "__init__.py")
    assert not upward, f"{module} (layer {LAYER_OF[_package(module) or '']}) imports {upward}"


def test_the_check_sees_upward_imports() -> None:
    """The check itself can fail: imports up the layers, plain, relative, lazy or for type
    checking only, are all seen; imports down and within a package are not."""
    source = """
from typing import TYPE_CHECKING
from server.games.wagers import Wager
from . import viewers
if TYPE_CHECKING:
    from server.net.connection import Connection
def later():
    import server.app
    from ..cluster import node
"""
    found = _upward("server.tables.runtime", source)
    assert [f.split(" ")[0] for f in found] == [
        "server.app",
        "server.cluster",
        "server.cluster.node",
        "server.net.connection",
    ]


REFERENCE = sorted((ROOT / "reference").rglob("*.py"))


@pytest.mark.parametrize("path", REFERENCE, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_reference_services_stand_apart(path: Path) -> None:
    """A reference service (``reference/``: the outside parties the tests play, such as an
    operator's wallet) is written from the contract in docs/, not from the server's code:
    it imports nothing of the server, its randomness or its tests."""
    module = _module_of(path)
    ours = sorted(
        name
        for name in _imports(module, path.read_text(), package=path.name == "__init__.py")
        if name.split(".")[0] in ("server", "rng", "tests", "loadtests")
    )
    assert not ours, f"{module} imports {ours}"


def test_the_server_never_imports_a_reference_service() -> None:
    found = sorted(
        f"{_module_of(p)} imports {name}"
        for p in MODULES
        for name in _imports(_module_of(p), p.read_text(), package=p.name == "__init__.py")
        if name.split(".")[0] == "reference"
    )
    assert REFERENCE and not found, found
