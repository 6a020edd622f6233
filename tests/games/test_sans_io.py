"""The rule engines and the table core are sans-I/O (docs/architecture.md, principle 1): no clock,
socket, randomness, serialisation or database reaches into ``server/games`` or
``server/tables/core``."""

import ast
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


CORE = GAMES.parent / "tables" / "core"
CORE_MODULES = sorted(CORE.rglob("*.py"))
# The table core (issue #15) is sans-I/O too: no event loop, clock, randomness, store, socket
# or wire encoding — it says what to do, an adapter does it.
CORE_FORBIDDEN = FORBIDDEN | {"msgspec", "server.storage", "server.protocol", "server.net", "rng"}


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
DEVICE_FORBIDDEN = (CORE_FORBIDDEN - {"msgspec", "rng"}) | {
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
