"""The Cammegh-style wheel adapter (``server.devices.adapters.cammegh``; its format is
unverified against the vendor's manual): ASCII status lines in, the wheel role's messages out,
and the table's commands to the wheel — then a real server with a Roulette table whose wheel
is a simulated Cammegh wheel on a serial line (a pty pair), played by a WebSocket bot."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from server.app.service import Service
from server.cli.main import main
from server.config import ConfigError, parse_config
from server.devices.adapters import ADAPTERS, LineIssue, Received
from server.devices.adapters.cammegh import MAX_LINE, CammeghWheel
from server.devices.cammegh_simulator import CammeghSimulator
from server.devices.messages import (
    DeviceFault,
    Prompt,
    Restart,
    StartSpin,
    WheelPhase,
    WheelResult,
    WheelWarning,
)
from server.devices.simulator import Faults, SimulatedDevice
from tests.devices.null_modem import null_modem
from tests.devices.test_device_tables import (
    assert_money_intact,
    play,
    records,
    running,
    synchronously,
    until,
)
from tests.games.test_sans_io import DEVICE_FORBIDDEN, _forbidden


def status(state: int, game: int, last: str = "0", flags: str = "0", sep: str = ";") -> bytes:
    return sep.join(["*X", str(state), f"{game:03d}", last, flags, "123", "1"]).encode() + b"\r\n"


def feed(wheel: CammeghWheel, *lines: bytes) -> Received:
    """Every line, merged into one ``Received``."""
    total = Received()
    for line in lines:
        got = wheel.receive(line)
        total.messages += got.messages
        total.issues += got.issues
        total.heard += got.heard
    return total


def of(kind: type, received: Received) -> list[Any]:
    return [m for m in received.messages if isinstance(m, kind)]


def a_game(game: int, result: str, sep: str = ";") -> list[bytes]:
    return [status(s, game, result if s == 5 else "0", sep=sep) for s in (2, 3, 4, 5, 1)]


# --- the codec -----------------------------------------------------------------------------------


def test_the_adapter_is_sans_io() -> None:
    for module in ("base.py", "cammegh.py", "__init__.py"):
        path = Path(__file__).parents[2] / "server" / "devices" / "adapters" / module
        assert not _forbidden(path, DEVICE_FORBIDDEN), path


@pytest.mark.parametrize("sep", [";", ":"])
def test_every_state_is_a_phase_and_the_result_goes_to_the_round_that_asked(sep: str) -> None:
    wheel = CammeghWheel()
    assert feed(wheel, status(1, 41, "7", sep=sep)).messages == [WheelPhase(phase="idle", game=41)]
    assert wheel.command(StartSpin(round="rou.1", game=42)) == b"*u 1\r\n"
    got = feed(wheel, *a_game(42, "17", sep))
    assert [m.phase for m in of(WheelPhase, got)] == [
        "spinning", "ball_launched", "no_more_bets", "result", "idle",
    ]  # fmt: skip
    assert of(WheelResult, got) == [WheelResult(round="rou.1", game=42, result="17")]
    assert got.issues == [] and got.heard == 5
    # The table closes (6) and opens again: a fault, then cleared.
    closed = feed(wheel, status(6, 42, "17", sep=sep), status(6, 42, "17", sep=sep))
    assert closed.messages == [
        WheelPhase(phase="closed", game=42),
        DeviceFault(code="closed", detail="the wheel reports the table closed"),
    ]
    reopened = feed(wheel, status(1, 42, "17", sep=sep))
    assert reopened.messages[0] == DeviceFault(code="closed", cleared=True)


def test_a_status_line_repeated_every_half_second_says_nothing_new() -> None:
    wheel = CammeghWheel()
    got = feed(wheel, *[status(4, 5)] * 6)
    assert got.messages == [WheelPhase(phase="no_more_bets", game=5)]
    assert got.heard == 6


def test_bytes_in_any_chunks_and_either_line_end() -> None:
    wheel = CammeghWheel()
    data = b"".join(a_game(1, "3")).replace(b"\r\n", b"\n")
    got = feed(wheel, *[data[i : i + 3] for i in range(0, len(data), 3)])
    assert [m.result for m in of(WheelResult, got)] == ["3"]
    assert got.heard == 5


def test_a_game_that_started_before_the_round_asked_gives_no_round() -> None:
    """Started before StartSpin (or unseen): its result is untagged, so the table ignores
    it; the next game, started after the command, is the round's."""
    wheel = CammeghWheel()
    got = feed(wheel, status(2, 8))
    wheel.command(StartSpin(round="r1", game=9))
    got = feed(wheel, status(3, 8), status(4, 8), status(5, 8, "30"))
    assert of(WheelResult, got) == [WheelResult(round="", game=8, result="30")]
    got = feed(wheel, *a_game(9, "0"))
    assert of(WheelResult, got) == [WheelResult(round="r1", game=9, result="0")]
    # A result seen with no start at all (the line just opened): no round either.
    fresh = CammeghWheel()
    fresh.command(StartSpin(round="r2", game=0))
    assert of(WheelResult, feed(fresh, status(5, 3, "12"))) == [
        WheelResult(round="", game=3, result="12")
    ]


def test_a_restart_spins_the_same_game_again_for_its_round() -> None:
    wheel = CammeghWheel()
    wheel.command(StartSpin(round="r1", game=4))
    feed(wheel, status(1, 3), status(2, 4), status(3, 4))
    got = feed(wheel, status(4, 4, flags="8"))
    assert of(WheelWarning, got) == [
        WheelWarning(round="r1", warning="no_spin", detail="void game: the ball launch failed")
    ]
    assert wheel.command(Restart(round="r1", reason="no spin")) == b"*R\r\n"
    got = feed(wheel, b"*R ok\r\n", status(2, 4), status(3, 4), status(4, 4), status(5, 4, "22"))
    assert got.issues == []
    assert of(WheelResult, got) == [WheelResult(round="r1", game=4, result="22")]


def test_a_re_launch_the_wheel_makes_by_itself_keeps_the_round() -> None:
    wheel = CammeghWheel()
    wheel.command(StartSpin(round="r1", game=1))
    got = feed(wheel, status(2, 1), status(3, 1), status(2, 1), status(3, 1), status(5, 1, "9"))
    assert of(WheelResult, got) == [WheelResult(round="r1", game=1, result="9")]


@pytest.mark.parametrize(
    ("flags", "warnings"),
    [
        ("1", ["ball_not_sensed"]),
        ("2", ["no_spin"]),
        ("4", ["wheel_stopped"]),
        ("8", ["no_spin"]),
        ("F", ["ball_not_sensed", "no_spin", "wheel_stopped", "no_spin"]),
    ],
)
def test_each_warning_flag_is_a_warning_for_the_round(flags: str, warnings: list[str]) -> None:
    wheel = CammeghWheel()
    wheel.command(StartSpin(round="r7", game=2))
    got = feed(wheel, status(2, 2), status(3, 2, flags=flags), status(3, 2, flags=flags))
    assert [(w.round, w.warning) for w in of(WheelWarning, got)] == [("r7", w) for w in warnings]
    assert all(w.detail for w in of(WheelWarning, got))


def test_a_flag_warns_once_while_raised_and_again_when_raised_again() -> None:
    wheel = CammeghWheel()
    got = feed(wheel, status(3, 1, flags="1"), b"*W;1\r\n", b"*W 0\r\n", b"*W:1\r\n")
    assert [w.warning for w in of(WheelWarning, got)] == ["ball_not_sensed", "ball_not_sensed"]


def test_power_off_and_on_are_a_fault_and_its_clearing() -> None:
    wheel = CammeghWheel()
    got = feed(wheel, b"*P 0\r\n", b"*P 0\r\n", b"*P OK\r\n", b"*P 1\r\n")
    assert got.messages == [
        DeviceFault(code="power", detail="the wheel reports power off"),
        DeviceFault(code="power", cleared=True),
    ]
    assert got.heard == 4


def test_a_game_number_that_jumps_is_passed_on_and_reported() -> None:
    """The table holds on the jump (as for any wheel): the adapter reports it, and passes the
    result on with the number the wheel gave."""
    wheel = CammeghWheel()
    feed(wheel, *a_game(10, "5"))
    wheel.command(StartSpin(round="r2", game=11))
    got = feed(wheel, *a_game(17, "6"))
    assert got.issues == [LineIssue("game_jump", status(2, 17).decode().strip(), dropped=False)]
    assert of(WheelResult, got) == [WheelResult(round="r2", game=17, result="6")]


@pytest.mark.parametrize(
    ("lines", "reason"),
    [
        ([status(4, 3), status(3, 3)], "out_of_order"),  # the ball cannot leave no more bets
        ([status(5, 3, "1"), status(2, 3)], "out_of_order"),  # a decided game does not spin again
        ([status(5, 3, "1"), status(1, 3, "1"), status(5, 3, "1")], "out_of_order"),
        ([status(5, 3, "1"), status(5, 3, "2")], "result_changed"),
    ],
    ids=["backwards", "spun-after-result", "second-result", "result-changed"],
)
def test_a_line_out_of_order_is_dropped(lines: list[bytes], reason: str) -> None:
    wheel = CammeghWheel()
    got = feed(wheel, *lines)
    assert [i.reason for i in got.issues] == [reason]
    assert len(of(WheelResult, got)) <= 1  # one result per game, ever


@pytest.mark.parametrize(
    "line",
    [
        b"*X;7;001;0;0;123;1",  # no state 7
        b"*X;2;001;0;0;123",  # a field missing
        b"*X;2;001:0;0;123;1",  # two separators in one line
        b"*X;2;abc;0;0;123;1",  # a game number that is no number
        b"*X;2;001;0;G;123;1",  # flags that are not hexadecimal
        b"*X;2;001;100;0;123;1",  # a winning number of three digits
        b"*W;Z",
        b"*P 2",
        b"X;2;001;0;0;123;1",  # no asterisk
        b"\xff\xfe*X;2;001;0;0;123;1",  # not ASCII
        b"*X;2;001;0;0;123;1\x00",  # a control character
    ],
)
def test_a_malformed_line_is_dropped_and_said_to_be(line: bytes) -> None:
    wheel = CammeghWheel()
    got = wheel.receive(line + b"\r\n")
    assert got.messages == [] and got.heard == 0
    assert [i.reason for i in got.issues] == ["malformed"]
    assert wheel.state is None  # nothing of it was used


def test_other_records_are_heard_and_ignored_and_garbage_never_grows() -> None:
    wheel = CammeghWheel()
    got = wheel.receive(b"*F 12\r\n*M stats\r\n")
    assert got.heard == 2 and [i.reason for i in got.issues] == ["unknown_record"] * 2
    got = wheel.receive(b"x" * (MAX_LINE + 5))
    assert [i.reason for i in got.issues] == ["too_long"]
    got = wheel.receive(b"y" * 1000 + b"\r\n" + status(2, 1))
    assert got.issues == [] and got.messages == [WheelPhase(phase="spinning", game=1)]
    wheel.receive(b"*X;3;00")
    wheel.line_opened()  # a partial line does not survive a reopened line
    assert wheel.receive(b"1;0;0;123;1\r\n").issues[0].reason == "malformed"


def test_the_winning_number_is_the_pockets_label() -> None:
    wheel = CammeghWheel()
    got = feed(wheel, status(5, 1, "05"), status(5, 2, "0"), status(5, 3, "00"))
    assert [m.result for m in of(WheelResult, got)] == ["5", "0", "00"]


def test_only_spin_commands_mean_anything_to_the_wheel() -> None:
    wheel = CammeghWheel()
    assert wheel.command(Prompt(table="t", text="hold")) == b""
    assert ADAPTERS["cammegh"]().role == "wheel"


def test_the_simulators_lines_are_what_the_adapter_reads() -> None:
    for sep in (";", ":"):
        sim = CammeghSimulator("unused", separator=sep)
        sim.state, sim.game, sim.last, sim.flags = 5, 12, "32", 9
        got = CammeghWheel().receive(sim.status_line().encode() + b"\r\n")
        assert got.issues == [] and got.heard == 1
        assert of(WheelResult, got) == [WheelResult(round="", game=12, result="32")]


# --- configuration -------------------------------------------------------------------------------

WHEEL = '[[devices]]\nid = "wheel-c"\nrole = "wheel"\nprotocol = "cammegh"\nserial = "/dev/ttyS3"\n'
TABLE = '[[tables]]\nid = "rou"\nname = "R"\ngame = "roulette"\n[tables.devices]\nwheel = "wheel-c"\n'  # fmt: skip  # noqa: E501


def test_a_cammegh_wheel_is_configured_without_a_key() -> None:
    settings = parse_config(WHEEL + TABLE, "c.toml")
    device = settings.devices[0]
    assert (device.protocol, device.serial, device.baudrate, device.key) == ("cammegh", "/dev/ttyS3", 9600, b"")  # fmt: skip  # noqa: E501


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (('serial = "/dev/ttyS3"\n', ""), "runs over a serial line: give serial"),
        (('role = "wheel"', 'role = "card_source"'), "serves a wheel, not a card_source"),
        (('protocol = "cammegh"\n', f'protocol = "cammegh"\nkey = "{"ab" * 16}"\n'), "has no key"),
        (
            ('protocol = "cammegh"', 'protocol = "kingwheel"'),
            "protocol must be one of croupier, cammegh",
        ),
    ],
)
def test_a_wrong_cammegh_setting_is_refused_with_its_name(change: tuple[str, str], message: str) -> None:  # fmt: skip  # noqa: E501
    text = WHEEL.replace(*change) + ('[[tables]]\nid = "t"\nname = "T"\ngame = "roulette"\n')
    with pytest.raises(ConfigError) as refused:
        parse_config(text, "c.toml")
    assert message in str(refused.value) and "device wheel-c" in str(refused.value)


# --- end to end ----------------------------------------------------------------------------------

CONFIG = """
[server]
starting_balance = 100000

[device_link]
port = 0
answer_seconds = 5
max_restarts = 1

[[devices]]
id = "wheel-c"
role = "wheel"
protocol = "cammegh"
serial = "{port}"
baudrate = 19200

[[devices]]
id = "console-c"
role = "dealer_console"
key = "{console_key}"

[[tables]]
id = "rou"
name = "Roulette on a Cammegh-style wheel"
game = "roulette"
betting_seconds = 0.6
pause_seconds = 0.2
[tables.options]
wheel = "single_zero"
[tables.devices]
wheel = "wheel-c"
dealer_console = "console-c"
"""
CONSOLE_KEY = "c0" * 16


@contextlib.asynccontextmanager
async def cammegh_table(tmp: Path, **sim: Any) -> AsyncIterator[tuple[Service, CammeghSimulator]]:
    async with (
        null_modem() as modem,
        running(tmp, CONFIG.format(port=modem.server, console_key=CONSOLE_KEY)) as service,
    ):
        wheel = CammeghSimulator(
            modem.device, baudrate=19200, status_every=0.1, phase_seconds=0.05, **sim
        )
        stop = asyncio.Event()
        task = asyncio.create_task(wheel.run(stop))
        try:
            channel = service.devices.channels["wheel-c"]
            await until(lambda: channel.up)
            assert channel.up
            yield service, wheel
        finally:
            stop.set()
            await task


@synchronously
async def test_a_cammegh_wheel_on_a_serial_line_settles_roulette(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async with cammegh_table(tmp_path, seed=11) as (service, wheel):
        report = await play(service, "rou", 3)
        code = await asyncio.to_thread(main, ["devices", "--url", f"http://127.0.0.1:{service.port}"])  # fmt: skip  # noqa: E501
        channel = service.devices.channels["wheel-c"]
    assert code == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("wheel-c\t"))
    assert "\twheel\ttable=rou\tlink=up\t" in line
    assert_money_intact(service, report)
    assert all(not r.result.startswith("voided") for r in report.played), report.as_dict()
    spins = [p for r in report.played for k, p in records(service, r.round) if k == "spin"]
    assert len(spins) == 3 and all(s["device"] == "wheel-c" for s in spins)
    assert [s["game"] for s in spins] == sorted(s["game"] for s in spins)
    assert wheel.commands.count("*u 1") >= 3
    assert channel.status()["transport"].startswith("serial:")


@synchronously
async def test_a_cammegh_wheel_that_falls_silent_is_down(tmp_path: Path) -> None:
    async with cammegh_table(tmp_path) as (service, wheel):
        channel = service.devices.channels["wheel-c"]
        assert channel.vendor is not None
        channel.vendor.silence_limit = 0.4
        wheel.status_every = 10.0  # it stops talking (after the line it is sending now)
        await until(lambda: not channel.up, 25 * 0.4)
        assert not channel.up and channel.status()["link"] == "down"
        assert channel.last_heard is not None


@synchronously
async def test_a_ball_not_sensed_restarts_the_cammegh_wheel_then_voids(tmp_path: Path) -> None:
    """The wheel's warning flag 1: the table sends ``*R`` (max_restarts = 1), then the round
    is void, every wager returned, and the table closed until a supervisor reopens it."""
    async with cammegh_table(tmp_path, faults=Faults(not_sensed=1.0)) as (service, wheel):
        port = service.devices.port
        console = SimulatedDevice("console-c", "console", bytes.fromhex(CONSOLE_KEY), "127.0.0.1", port, decide=("reopen",), table="rou")  # fmt: skip  # noqa: E501
        stop = asyncio.Event()
        task = asyncio.create_task(console.run(stop))
        report = await play(service, "rou", 2)
        stop.set()
        await task
    assert_money_intact(service, report)
    assert all("no spin" in r.result for r in report.played), report.as_dict()
    assert "*R" in wheel.commands
    assert all(r.returned == r.wagered for r in report.played)
