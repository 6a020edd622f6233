"""Devices on serial lines (docs/devices.md, "Transports"): the framed link over a real serial
port (a pty pair wired back to back, opened with pyserial on both sides), a real server with a
Roulette table whose wheel is on the line, and a WebSocket player; a line that fails is opened
again with a back-off; the configuration and the simulator's options."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import serial

from server.app.service import Service
from server.cli.main import main
from server.config import ConfigError, parse_config
from server.devices import hub as hub_module
from server.devices.handshake import KnownDevice
from server.devices.hub import DeviceHub, SerialLine
from server.devices.serial_port import open_serial_connection
from server.devices.simulator import DeviceRefused, Faults, SimulatedDevice
from tests.devices.null_modem import null_modem
from tests.devices.test_device_tables import (
    assert_money_intact,
    number,
    play,
    records,
    running,
    synchronously,
    until,
)

KEY = "5e" * 16
CONFIG = """
[server]
starting_balance = 100000

[device_link]
port = 0
answer_seconds = 5

[[devices]]
id = "wheel-s"
role = "wheel"
key = "{key}"
serial = "{port}"
baudrate = 115200

[[tables]]
id = "rou"
name = "Roulette, the wheel on a serial line"
game = "roulette"
betting_seconds = 0.6
pause_seconds = 0.2
[tables.options]
wheel = "single_zero"
[tables.devices]
wheel = "wheel-s"
"""


@contextlib.asynccontextmanager
async def serial_wheel(tmp: Path, **sim: Any) -> AsyncIterator[tuple[Service, SimulatedDevice]]:
    async with null_modem() as modem, running(tmp, CONFIG.format(key=KEY, port=modem.server)) as service:  # fmt: skip  # noqa: E501
        key = bytes.fromhex(KEY)
        wheel = SimulatedDevice(
            "wheel-s", "wheel", key, "", 0, serial=modem.device, baudrate=115200, **sim
        )
        stop = asyncio.Event()
        task = asyncio.create_task(wheel.run(stop))
        try:
            await asyncio.wait_for(wheel.connected.wait(), 10)
            yield service, wheel
        finally:
            stop.set()
            await task


@synchronously
async def test_a_wheel_on_a_serial_line_settles_roulette(tmp_path: Path) -> None:
    async with serial_wheel(tmp_path, seed=5) as (service, _):
        channel = service.devices.channels["wheel-s"]
        assert channel.up and channel.status()["transport"].startswith("serial:/dev/")
        report = await play(service, "rou", 3)
    assert_money_intact(service, report)
    assert all(not r.result.startswith("voided") for r in report.played), report.as_dict()
    spins = [p for r in report.played for k, p in records(service, r.round) if k == "spin"]
    # One spin a round, numbered as the rounds (every round spins, with bets or not).
    assert [s["game"] for s in spins] == [number(r.round) for r in report.played]
    assert all(s["device"] == "wheel-s" for s in spins)


@synchronously
async def test_a_device_that_restarts_says_hello_again_on_the_open_line(tmp_path: Path) -> None:
    """A power loss with no non-volatile memory: the device starts a new session with a hello
    on the same line, which the server never closed; play goes on."""
    async with serial_wheel(tmp_path, seed=6, faults=Faults(power_loss_at=1)) as (service, sim):
        report = await play(service, "rou", 3)
        channel = service.devices.channels["wheel-s"]
        assert channel.connections >= 2 and channel.session == sim.session
    assert_money_intact(service, report)
    spins = [p for r in report.played for k, p in records(service, r.round) if k == "spin"]
    assert spins and all(s["device"] == "wheel-s" for s in spins)


@synchronously
async def test_a_device_on_a_serial_line_is_refused_over_tcp(tmp_path: Path) -> None:
    async with null_modem() as modem, running(tmp_path, CONFIG.format(key=KEY, port=modem.server)) as service:  # fmt: skip  # noqa: E501
        port = service.devices.port
        impostor = SimulatedDevice("wheel-s", "wheel", bytes.fromhex(KEY), "127.0.0.1", port)
        with pytest.raises(DeviceRefused) as refused:
            await asyncio.wait_for(impostor.run(), 5)
        assert refused.value.code == "wrong_transport"
        assert service.devices.refused == {"wrong_transport": 1}


@synchronously
async def test_another_devices_hello_on_a_serial_line_is_refused(tmp_path: Path) -> None:
    other_wheel = f'\n[[devices]]\nid = "wheel-x"\nrole = "wheel"\nkey = "{KEY}"\n'
    text = CONFIG.format(key=KEY, port="{port}") + other_wheel
    async with null_modem() as modem, running(tmp_path, text.format(port=modem.server)):
        other = SimulatedDevice("wheel-x", "wheel", bytes.fromhex(KEY), "", 0, serial=modem.device)  # fmt: skip  # noqa: E501
        with pytest.raises(DeviceRefused) as refused:
            await asyncio.wait_for(other.run(), 5)
        assert refused.value.code == "wrong_transport"
        assert "serial line" in str(refused.value)


def shoe_hub(port: str) -> DeviceHub:
    shoe = KnownDevice("shoe-s", "card_source", bytes.fromhex(KEY))
    return DeviceHub([shoe], None, port=0, lines=[SerialLine("shoe-s", port)])


@synchronously
async def test_a_serial_line_that_cannot_be_opened_is_tried_again_with_a_back_off(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Each wait twice the one before, up to the most (REOPEN_FIRST, REOPEN_MOST): the
    wait each failure announces, and at least that long between the attempts (a timer never
    fires early; how much longer is the machine's business)."""
    monkeypatch.setattr(hub_module, "REOPEN_FIRST", 0.05)
    monkeypatch.setattr(hub_module, "REOPEN_MOST", 0.2)
    tried: list[float] = []

    async def unplugged(port: str, baudrate: int) -> Any:
        tried.append(time.monotonic())
        raise serial.SerialException(f"could not open port {port}: No such file or directory")

    monkeypatch.setattr(hub_module, "open_serial_connection", unplugged)
    hub = shoe_hub("/dev/ttyUSB9")
    with caplog.at_level(logging.WARNING, logger="croupier.devices"):
        await hub.start()
        try:
            await until(lambda: len(tried) >= 6)
        finally:
            await hub.stop()
    waits = [r.retry_in for r in caplog.records if r.getMessage() == "serial line cannot be opened"]  # fmt: skip  # noqa: E501
    assert waits[:5] == [0.05, 0.1, 0.2, 0.2, 0.2], waits
    gaps = [b - a for a, b in itertools.pairwise(tried)][:5]
    assert len(gaps) == 5, tried
    for gap, wait in zip(gaps, waits, strict=False):
        assert gap >= wait * 0.99, (gaps, waits)  # 1 %: the clocks' rounding


@synchronously
async def test_a_serial_line_that_drops_is_opened_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """``socket://``: a terminal server that hangs up at once; the hub opens the line again
    and again."""
    monkeypatch.setattr(hub_module, "REOPEN_FIRST", 0.05)
    opened: list[float] = []

    async def drop(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        opened.append(time.monotonic())
        writer.close()

    terminal = await asyncio.start_server(drop, "127.0.0.1", 0)
    port = terminal.sockets[0].getsockname()[1]
    hub = shoe_hub(f"socket://127.0.0.1:{port}")
    await hub.start()
    try:
        await until(lambda: len(opened) >= 3)
    finally:
        await hub.stop()
        terminal.close()
        await terminal.wait_closed()
    assert len(opened) >= 3
    channel = hub.channels["shoe-s"]
    assert channel.status()["transport"] == f"serial:socket://127.0.0.1:{port}"
    assert not channel.up and channel.connections == 0


@synchronously
async def test_a_serial_port_over_a_socket_url_carries_bytes_both_ways() -> None:
    received: asyncio.Queue[bytes] = asyncio.Queue()

    async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        data = await reader.read(100)
        await received.put(data)
        writer.write(data.upper())
        await writer.drain()
        writer.close()

    terminal = await asyncio.start_server(echo, "127.0.0.1", 0)
    port = terminal.sockets[0].getsockname()[1]
    reader, writer = await open_serial_connection(f"socket://127.0.0.1:{port}")
    writer.write(b"*x;1\r\n")
    assert await asyncio.wait_for(received.get(), 5) == b"*x;1\r\n"
    assert await asyncio.wait_for(reader.read(100), 5) == b"*X;1\r\n"
    # The terminal server hung up: the line ends like a TCP connection, and says why.
    assert await asyncio.wait_for(reader.read(100), 5) == b""
    assert "socket disconnected" in writer.get_extra_info("error")
    writer.close()
    await writer.wait_closed()
    terminal.close()
    await terminal.wait_closed()


# --- configuration and command line ------------------------------------------------------------

SHOE = f'[[devices]]\nid = "shoe-1"\nrole = "card_source"\nkey = "{KEY}"\n'
TABLE = '[[tables]]\nid = "t1"\nname = "T"\ngame = "baccarat"\n'


def test_a_device_on_a_serial_line_is_configured_with_its_port_and_speed() -> None:
    text = SHOE + 'serial = "socket://10.0.0.9:4001"\nbaudrate = 19200\n' + TABLE
    device = parse_config(text, "c.toml").devices[0]
    assert (device.serial, device.baudrate, device.protocol) == ("socket://10.0.0.9:4001", 19200, "croupier")  # fmt: skip  # noqa: E501
    assert parse_config(SHOE + TABLE, "c.toml").devices[0].serial is None


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("serial = 3\n", "serial must be text"),
        ('serial = ""\n', "the serial port is empty"),
        ('serial = "loop://"\n', "loop:// is not supported"),
        ('serial = "ttyUSB0"\n', "a device path must be absolute"),
        ('serial = "rfc2217://host:2217"\n', "rfc2217:// is not supported"),
        ("baudrate = 9600\n", "baudrate is for a device on a serial line"),
        ('serial = "/dev/ttyS0"\nbaudrate = 0\n', "baudrate must be a whole number >= 50"),
        ('serial = "/dev/ttyS0"\nbaudrate = 9600.5\n', "baudrate must be a whole number"),
        ('serial = "/dev/ttyS0"\nbaudrate = 5000000\n', "baudrate must be at most 4000000"),
        ('protocol = "modbus"\n', "protocol must be one of croupier, cammegh"),
    ],
)
def test_a_wrong_serial_setting_is_refused_with_its_name(extra: str, message: str) -> None:
    with pytest.raises(ConfigError) as refused:
        parse_config(SHOE + extra + TABLE, "c.toml")
    assert message in str(refused.value) and "(device shoe-1)" in str(refused.value)


def test_two_devices_cannot_share_a_serial_line() -> None:
    second = SHOE.replace("shoe-1", "shoe-2")
    line = 'serial = "/dev/ttyUSB0"\n'
    with pytest.raises(ConfigError) as refused:
        parse_config(SHOE + line + second + line + TABLE, "c.toml")
    assert "serial '/dev/ttyUSB0' is already the line of device shoe-1" in str(refused.value)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--server", "127.0.0.1:1", "--serial", "/dev/null"], "one of them"),
        ([], "give --server HOST:PORT or --serial PORT"),
        (["--serial", "/dev/ttyS0", "--tls-ca", "ca.crt"], "are for --server (TCP)"),
        (["--server", "127.0.0.1:1", "--tls-cert", "c.crt"], "TLS needs --tls-ca"),
        (["--serial", "/dev/ttyS0", "--protocol", "cammegh", "--role", "shoe"], "--role wheel"),
        (["--serial", "/dev/ttyS0", "--protocol", "cammegh", "--key", "ab"], "has no key"),
        (["--serial", "loop://"], "loop:// is not supported"),
    ],
)
def test_the_simulators_transport_options_are_checked(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["device", "simulate", "--device-id", "w1", "--key", KEY]
    if "--role" not in args:
        base += ["--role", "wheel"]
    if "--key" in args:
        base = ["device", "simulate", "--role", "wheel"]
    assert main(base + args) == 2
    assert message in capsys.readouterr().err
