"""``croupier serve --demo-devices``: the demo lobby plus a Baccarat table dealt by a simulated
card-reading shoe, a Down Under table with a simulated Masque reader and a Roulette table on a
simulated automated wheel (issue #16, "Live tables with devices in the demo lobby")."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from websockets.asyncio.client import connect

from server.cli.demo_devices import DEVICES, STATION_TABLE, STATIONS, DemoDevices
from server.cli.main import main
from server.net.bot import run_bot
from server.protocol.codec import decode_server, encode
from server.protocol.messages import (
    PROTOCOL_VERSION,
    Hello,
    ListTables,
    Lobby,
    TableSummary,
    Welcome,
)
from tests.devices.test_device_tables import (
    assert_money_intact,
    records,
    running,
    synchronously,
)
from tests.net.processes import http_get, port_of, stop

DEVICE_TABLES = {"baccarat-shoe": "card", "down-under-reader": "hole_range", "roulette-wheel": "spin"}  # fmt: skip  # noqa: E501


@synchronously
async def test_the_demo_device_tables_are_dealt_by_their_simulators(tmp_path: Path) -> None:
    demo = DemoDevices()
    for slow, fast in (("betting_seconds = 15", "betting_seconds = 0.5"), ("decision_seconds = 12", "decision_seconds = 0.5")):  # fmt: skip  # noqa: E501
        demo.text = demo.text.replace(slow, fast)
    settings = demo.settings()
    assert {t.id for t in settings.tables} >= set(DEVICE_TABLES)  # and every virtual table
    assert len(settings.tables) > len(DEVICE_TABLES)
    async with running(tmp_path, demo.text) as service:
        demo.start(service.devices.port, seconds={})
        try:
            url = f"ws://127.0.0.1:{service.port}/ws"
            reports = await asyncio.gather(
                *(run_bot(url, table, 2, seed=1, timeout=60) for table in DEVICE_TABLES)
            )
        finally:
            await demo.stop()
    for report, (table, kind) in zip(reports, DEVICE_TABLES.items(), strict=True):
        assert_money_intact(service, report)
        device = next(d.id for d in DEVICES if d.table == table and d.role != "dealer_console")
        for played in report.played:
            answered = [p for k, p in records(service, played.round) if k == kind]
            assert answered and all(p["device"] == device for p in answered), (table, answered)


def test_demo_devices_refuses_a_configuration_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:  # fmt: skip  # noqa: E501
    assert main(["serve", "--demo-devices", "--config", str(tmp_path / "x.toml")]) == 2
    assert "--demo-devices adds simulated devices to the built-in demo" in capsys.readouterr().err


def test_croupier_serve_demo_devices_connects_every_simulated_device(tmp_path: Path) -> None:
    """The command a new user runs: every demo device is up, at its table, the four player
    stations of the Lucky Nines table among them, and their touchscreens' URLs printed."""
    croupier = Path(sys.executable).with_name("croupier")
    port_file, out_file, log = tmp_path / "port", tmp_path / "stdout", tmp_path / "stderr"
    command = [croupier, "serve", "--demo-devices", "--port", "0", "--port-file", port_file]
    with out_file.open("wb") as out, log.open("wb") as err:
        server = subprocess.Popen(
            [*command, "--data-dir", tmp_path / "data"],
            stdout=out,
            stderr=err,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
    try:
        port = port_of(server, port_file, log=log)
        deadline, listed = time.monotonic() + 60, []
        wanted = len(DEVICES) + len(STATIONS)
        while not (len(listed) == wanted and all(d["link"] == "up" for d in listed)):
            assert time.monotonic() < deadline and server.poll() is None, listed
            with contextlib.suppress(OSError):  # not answering yet
                listed = json.loads(http_get(f"http://127.0.0.1:{port}/devices")[1])["devices"]
            time.sleep(0.1)
        assert {(d["id"], d["role"], d["table"], d["link"]) for d in listed} == {
            (d.id, d.role, d.table, "up") for d in DEVICES
        } | {(s, "station", STATION_TABLE, "up") for s in STATIONS}
        # Each station's agent gets its touchscreen's token right after its hello.
        while out_file.read_text().count("touchscreen:") < len(STATIONS):
            assert time.monotonic() < deadline and server.poll() is None, out_file.read_text()
            time.sleep(0.1)
        # The lobby says which table seats its stations only, before anyone tries to sit.
        lines = asyncio.run(_lobby(f"ws://127.0.0.1:{port}/ws"))
        assert {t.table for t in lines if t.stations_only} == {STATION_TABLE}
        assert len(lines) > 1
    finally:
        stop(server, timeout=30)
    assert server.returncode == 0, log.read_text()[-2000:]
    printed = out_file.read_text()
    assert f"main display: http://127.0.0.1:{port}/display/{STATION_TABLE}" in printed
    for station in STATIONS:
        assert f"{station} touchscreen: http://127.0.0.1:{port}/station/{station}#token=" in printed


async def _lobby(url: str) -> list[TableSummary]:
    """The lobby as an outside client gets it: hello, then ``list_tables``."""
    async with connect(url, compression=None) as ws:
        await ws.send(encode(Hello(version=PROTOCOL_VERSION, name="lobby")))
        assert isinstance(decode_server(await ws.recv()), Welcome)
        await ws.send(encode(ListTables(ref=1)))
        while not isinstance(lobby := decode_server(await ws.recv()), Lobby):
            pass
        return lobby.tables
