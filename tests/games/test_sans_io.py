"""The rule engines and the table core are sans-I/O (docs/architecture.md, principle 1): no clock,
socket, randomness, serialisation or database reaches into ``server/games`` or
``server/core``."""

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

GAMES = Path(__file__).resolve().parents[2] / "server" / "games"
FORBIDDEN = {
    "asyncio",
    "socket",
    "time",
    "datetime",
    "random",
    "secrets",
    "json",
    "redis",
    "websockets",
    "sqlite3",
    "threading",
    "os",
    "rng.sources",
    "rng.shoe",
    "rng.wheels",
}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


MODULES = sorted(GAMES.rglob("*.py"))


def test_there_are_engine_modules() -> None:
    assert len(MODULES) >= 5


def _forbidden(path: Path, forbidden: set[str]) -> set[str]:
    """The modules (or their submodules) of ``forbidden`` that ``path`` imports."""
    return {
        name
        for name in _imports(path)
        if any(name == f or name.startswith(f + ".") for f in forbidden)
    }


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(GAMES)))
def test_engine_module_is_sans_io(path: Path) -> None:
    bad = _forbidden(path, FORBIDDEN)
    assert not bad, f"{path} imports {sorted(bad)}"


CORE = GAMES.parent / "core"
CORE_MODULES = sorted(CORE.rglob("*.py"))
# The table core (issue #15, its own layer since issue #30) is sans-I/O too: no event loop,
# clock, randomness, store, socket or wire protocol — it says what to do, an adapter does it.
# It may read card codes (``rng.cards``) and shape values with msgspec, as the journal's
# record types do.
CORE_FORBIDDEN = FORBIDDEN | {
    "server.storage",
    "server.pg_storage",
    "server.protocol",
    "server.net",
}


@pytest.mark.parametrize("path", CORE_MODULES, ids=lambda p: str(p.relative_to(CORE)))
def test_table_core_module_is_sans_io(path: Path) -> None:
    bad = _forbidden(path, CORE_FORBIDDEN)
    assert not bad, f"{path} imports {sorted(bad)}"


DEVICES = GAMES.parent / "devices"
# The device link's codec and state machine (issue #16) are sans-I/O like h11: bytes and
# ``now`` in, bytes and events out; the transports that drive them live beside them.
# Their message codec (msgspec) and the dealer that answers a table's chance requests from
# devices are pure too; they may read card codes (``rng.cards``) but draw nothing.
DEVICE_SANS_IO = ["frames.py", "link.py", "handshake.py", "messages.py", "dealing.py"]
DEVICE_FORBIDDEN = CORE_FORBIDDEN | {
    "rng.sources",
    "rng.shoe",
    "rng.wheels",
    "server.journal.journal",
    "server.tables.runtime",
}


@pytest.mark.parametrize("name", DEVICE_SANS_IO)
def test_device_link_module_is_sans_io(name: str) -> None:
    path = DEVICES / name
    bad = _forbidden(path, DEVICE_FORBIDDEN)
    assert not bad, f"{path} imports {sorted(bad)}"


# Per file is not enough: a light import can load heavy modules through a package's
# ``__init__`` (``server.journal`` once opened SQLite's module for the core's record types).
# So each of these is imported in a fresh interpreter and what it loaded is read from
# ``sys.modules``, against what a bare interpreter had already loaded (issue #30).
LOADED_NEVER = ["asyncio", "sqlite3", "socket", "selectors", "threading", "random", "secrets"]
ENGINES = {"round.py", "engine.py", "big_six_wheel.py", "wheel_round.py"}
PURE = [
    "server.core",
    "server.games.registry",  # every game's adapter, so every engine
    *sorted(
        ".".join(p.relative_to(GAMES.parents[1]).with_suffix("").parts)
        for p in GAMES.rglob("*.py")
        if p.name in ENGINES
    ),
]
_PROBE = """
import json, sys
before = set(sys.modules)
import importlib
importlib.import_module(sys.argv[1])
print(json.dumps(sorted(set(sys.modules) - before)))
"""


def _loaded_by(module: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-I", "-c", _PROBE, module],
        capture_output=True,
        text=True,
        check=True,
        cwd=GAMES.parents[1],
        env={"PYTHONPATH": str(GAMES.parents[1])},
    )
    return set(json.loads(out.stdout))


def test_the_pure_modules_are_the_engines_and_the_core() -> None:
    assert "server.games.roulette.round" in PURE and "server.games.casino_war.round" in PURE


@pytest.mark.parametrize("module", PURE)
def test_importing_it_loads_no_io_module(module: str) -> None:
    loaded = _loaded_by(module)
    assert module in loaded  # the probe imported what it names
    # (Only the modules named: ``_socket``, socket's C half, is loaded by typing_extensions
    # through msgspec just to read the type of a capsule — no socket module, no socket.)
    bad = {m for m in loaded if m.split(".")[0] in LOADED_NEVER}
    assert not bad, f"importing {module} loads {sorted(bad)}"
