"""The browser client's codec fixtures are the server's encoding of today's messages.

``client-web/test/fixtures`` holds what ``client-web/scripts/make_fixtures.py`` writes: the
bytes ``server.protocol.codec.encode`` produces for representative messages, which the client's
Vitest tests decode (server messages) and reproduce byte for byte (client messages). If the
protocol changes, this test fails until the fixtures are written again (``npm --prefix
client-web run fixtures``) — and then the client's tests say whether the client still agrees.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

from rng.wheel_layouts import WheelType
from server.games.roulette.layout import WagerKind, parse_spot, placements
from server.protocol.codec import decode_client, decode_server

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "client-web" / "test" / "fixtures"
SCRIPT = ROOT / "client-web" / "scripts" / "make_fixtures.py"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_fixtures", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_committed_fixtures_are_what_the_server_encodes_today(tmp_path: Path) -> None:
    _script().write(tmp_path)
    fresh = sorted(p.relative_to(tmp_path) for p in tmp_path.glob("*/*") if p.is_file())
    committed = sorted(
        p.relative_to(FIXTURES) for d in ("server", "client") for p in (FIXTURES / d).glob("*")
    )
    assert fresh == committed, "run: npm --prefix client-web run fixtures"
    for name in fresh:
        assert (tmp_path / name).read_bytes() == (FIXTURES / name).read_bytes(), (
            f"{name} is stale: run npm --prefix client-web run fixtures"
        )


@pytest.mark.parametrize(
    "frame", sorted((FIXTURES / "client").glob("*.msgpack")), ids=lambda p: p.stem
)
def test_the_server_decodes_every_client_fixture(frame: Path) -> None:
    message = decode_client(frame.read_bytes())
    meaning = json.loads(frame.with_suffix(".json").read_text(encoding="utf-8"))
    assert type(message).__struct_config__.tag == meaning["type"]


@pytest.mark.parametrize(
    "frame", sorted((FIXTURES / "server").glob("*.msgpack")), ids=lambda p: p.stem
)
def test_every_server_fixture_is_a_valid_server_message(frame: Path) -> None:
    decode_server(frame.read_bytes())


@pytest.mark.parametrize("wheel", list(WheelType), ids=lambda w: w.value)
def test_the_client_roulette_layout_has_every_legal_wager_and_no_other(wheel: WheelType) -> None:
    """``client-web/test/fixtures/roulette-layout.json`` is the client's list of betting areas
    (its Vitest test checks the layout produces exactly that list)."""
    layout = json.loads((FIXTURES / "roulette-layout.json").read_text(encoding="utf-8"))
    client = layout[wheel.value]
    for spot in client:
        assert parse_spot(spot, wheel).spot == spot, f"{spot} is not in canonical form"
    legal = {p.spot for kind in WagerKind for p in placements(kind, wheel)}
    assert set(client) == legal
