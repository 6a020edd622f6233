"""The gate of a table with stations, on its own (docs/electronic-tables.md, "What a station
is"): its verdict is the one ``Refusal`` every refusal has (server/games/errors.py), so the
table passes it to the wire unchanged."""

from __future__ import annotations

import jwt
import pytest

from server.config import DeviceSettings
from server.games.errors import Refusal
from server.stations import screen_token
from server.stations.gate import Gate
from server.stations.station import CONNECTION, Station, new_lock
from server.stations.store import StationRow


def _station(station_id: str, *tables: str, up: bool = True) -> Station:
    settings = DeviceSettings(station_id, "station", b"k" * 16, tables=tables, seat=1)
    return Station(settings, StationRow(station_id), up=up, self_tested=up)


@pytest.fixture
def gate() -> Gate:
    stations = {"s1": _station("s1", "lucky"), "s2": _station("s2", "lucky", up=False)}
    return Gate(stations, {"lucky": ["s1", "s2"]})


def test_a_station_that_may_play_is_let_through(gate: Gate) -> None:
    for kind in ("place", "repeat", "decide", "cancel", "leave"):
        assert gate.gate("lucky", kind, "station:s1") is None
    assert gate.join_refusal("lucky", "station:s1", "player") is None


def test_a_table_with_stations_takes_bets_and_players_from_its_stations_only(gate: Gate) -> None:
    assert gate.gate("lucky", "place", "alice") == Refusal(
        "stations_only", "this table takes bets from its player stations only", "lucky"
    )
    assert gate.gate("lucky", "cancel", "alice") is None  # a cancel returns money
    assert gate.gate("other", "place", "alice") is None  # a table without stations
    assert gate.join_refusal("lucky", "alice", "player") is not None
    assert gate.join_refusal("lucky", "alice", "spectator") is None


def test_a_station_bets_at_its_own_tables_only(gate: Gate) -> None:
    assert gate.gate("other", "place", "station:s1") == Refusal(
        "stations_only", "station s1 plays lucky only", "other"
    )
    assert gate.join_refusal("other", "station:s1", "player") == "station s1 plays lucky only"


def test_a_station_that_may_not_play_is_refused_with_why(gate: Gate) -> None:
    refused = gate.gate("lucky", "place", "station:s2")
    assert refused == Refusal("station_locked", "station s2: the station is not connected", "s2")
    s1 = gate.stations["s1"]
    s1.locks.append(new_lock(CONNECTION, "the link is down", present=True))
    refused = gate.gate("lucky", "decide", "station:s1")
    assert isinstance(refused, Refusal) and refused.code == "station_locked"
    assert refused.message == "station s1: locked: connection" and refused.value == "s1"
    assert gate.gate("lucky", "cancel", "station:s1") is None  # bets placed before stand


def test_a_touchscreen_token_names_its_station_and_session_only() -> None:
    key = b"t" * 32
    claims = screen_token.claims(key, screen_token.mint(key, "s1", 7))
    assert claims is not None and claims["sub"] == "s1" and claims["session"] == 7
    player = jwt.encode({"sub": "alice", "aud": "croupier-player"}, key, "HS256")
    assert screen_token.claims(key, player) is None  # another audience
    assert screen_token.claims(b"x" * 32, screen_token.mint(key, "s1", 7)) is None
