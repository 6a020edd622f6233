"""``croupier devices`` (the devices of a running server, one per line) and ``croupier device
simulate`` (a simulated card-reading shoe, hole-card reader, wheel, dealer console or player
station's agent, over TCP, TLS or a serial line; a wheel may speak the Cammegh-style ASCII
protocol instead)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import json
import ssl
import sys
import time
import urllib.error
import urllib.request
from dataclasses import fields
from pathlib import Path
from typing import Any

from server.devices.roles import registered

__all__ = ["register"]


def register(commands: Any) -> None:
    listing = commands.add_parser(
        "devices",
        help="list the devices of a running server: id, role, table, link, last heard, faults",
        description="List each device configured in a running server, one per line: id, role, "
        "table, link up/down, seconds since its last frame, faults.",
    )
    listing.add_argument("--url", default="http://127.0.0.1:8000", help="the server's HTTP address")
    listing.add_argument("--json", action="store_true", help="the server's answer as JSON")
    listing.set_defaults(handler=run_devices)

    device = commands.add_parser("device", help="electronic-table devices: simulators")
    sub = device.add_subparsers(dest="device_command", metavar="COMMAND", required=True)
    sim = sub.add_parser(
        "simulate",
        help="run a simulated device against a server",
        description="Connect a simulated device to a server's device port or serial line "
        "(docs/devices.md, 'Simulators' and 'Transports'), with fault knobs. A station "
        "(--role station: a player station's cabinet) reports its self-test after every "
        "welcome, prints the tickets the server asks for, and plays the station options "
        "below on a timeline, in seconds after it first connected. Runs until interrupted.",
    )
    # Every registered role's short name (server/devices/roles/): a new role is offered here
    # without a change to this file.
    sim.add_argument("--role", required=True, choices=[r.short for r in registered()])
    sim.add_argument("--device-id", help="the device's id (not for --protocol cammegh)")
    sim.add_argument("--server", help="HOST:PORT of the server's [device_link] (or --serial)")
    sim.add_argument(
        "--serial", help="a serial port instead of TCP: a device path or socket://HOST:PORT"
    )
    sim.add_argument("--baudrate", type=int, default=9600, help="with --serial (default 9600)")
    sim.add_argument(
        "--protocol",
        default="croupier",
        choices=["croupier", "cammegh"],
        help="the framed link (default), or a Cammegh-style ASCII wheel (--role wheel --serial)",
    )
    sim.add_argument("--tls-ca", type=Path, help="TLS: the CA that signed the server's certificate")
    sim.add_argument("--tls-cert", type=Path, help="TLS: the device's client certificate")
    sim.add_argument("--tls-key", type=Path, help="TLS: the client certificate's private key")
    sim.add_argument("--key", help="the device's key, hex (or --key-file)")
    sim.add_argument("--key-file", type=Path)
    sim.add_argument("--seed", type=int, default=0)
    sim.add_argument("--script", type=Path, help="a file of cards or results to produce, in order")
    sim.add_argument("--state", type=Path, help="non-volatile memory: resume after a restart")
    sim.add_argument("--decks", type=int, default=8, help="shoe: decks in the simulated shoe")
    sim.add_argument(
        "--wheel",
        default="single_zero",
        choices=["single_zero", "double_zero", "double_zero_as_single_zero", "big_six"],
    )
    sim.add_argument("--table", default="", help="console: the table it serves")
    sim.add_argument(
        "--decide",
        default="void",
        help="console: how to decide holds, in order of preference (e.g. confirm,void)",
    )
    sim.add_argument(
        "--staff", default="dealer-sim,supervisor-sim", help="console: DEALER,SUPERVISOR"
    )
    for knob in _knobs():
        sim.add_argument(
            f"--{knob.name.replace('_', '-')}",
            type=_kind(knob),
            default=None,
            help=_KNOB_HELP.get(knob.name),
        )
    station = sim.add_argument_group(
        "station (--role station)",
        "A player station's agent. For a station --door-open-at and --tilt-at are seconds "
        "after it first connected (for the other roles they count the messages sent), and "
        "--clear-after closes the door, clears the tilt and releases the attendant key that "
        "many seconds after each.",
    )
    station.add_argument(
        "--bills",
        type=_amounts,
        help="insert these bills (minor units, e.g. 2000,5000), one per second from 1 s",
    )
    station.add_argument(
        "--ticket",
        type=_ticket,
        action="append",
        metavar="VALIDATION:AMOUNT",
        help="insert a ticket, after the bills (may be repeated)",
    )
    station.add_argument("--attendant", help="the attendant who turns the key (--key-at)")
    station.add_argument(
        "--key-at",
        type=float,
        metavar="SECONDS",
        help="turn the attendant key at this time (released --clear-after later)",
    )
    station.add_argument(
        "--printer-fail",
        action="store_true",
        help="every ticket fails to print (ticket_print_failed: out of paper)",
    )
    station.add_argument(
        "--stack-fail",
        action="store_true",
        help="bills and tickets the server accepts are returned (the stacker jams)",
    )
    station.add_argument(
        "--self-test-fail", action="store_true", help="the self-test after each welcome fails"
    )
    station.add_argument(
        "--tickets-dir",
        type=Path,
        metavar="DIR",
        help="print tickets as DIR/<validation>.json (the ticket's fields)",
    )
    station.add_argument(
        "--print-screen",
        action="store_true",
        help="print the touchscreen's path and token when the server sends them",
    )
    sim.set_defaults(handler=run_simulate)


# Knobs whose meaning the field's name does not say alone.
_KNOB_HELP = {
    "door_open_at": "report the door open: after the N-th message sent; station: at SECONDS",
    "tilt_at": "report a tilt: after the N-th message sent; station: at SECONDS",
    "clear_after": "the door closed, tilt cleared (station: key released) SECONDS later",
    "disconnect_at": "close the connection after the N-th message sent",
    "power_loss_at": "lose power after the N-th message sent",
}
# Knobs that are seconds for a station and message counts for the other roles.
_TIMED_FOR_STATION = ("door_open_at", "tilt_at")
# The station's own options, refused for the other roles.
_STATION_OPTIONS = (
    "bills",
    "ticket",
    "attendant",
    "key_at",
    "printer_fail",
    "stack_fail",
    "self_test_fail",
    "tickets_dir",
    "print_screen",
)


def _amounts(text: str) -> tuple[int, ...]:
    try:
        amounts = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not amounts: {text!r} (e.g. 2000,5000)") from None
    if any(amount < 1 for amount in amounts):
        raise argparse.ArgumentTypeError(f"amounts are positive minor units: {text!r}")
    return amounts


def _ticket(text: str) -> tuple[str, int]:
    validation, _, amount = text.rpartition(":")
    if not validation or not amount.isdigit() or int(amount) < 1:
        raise argparse.ArgumentTypeError(f"not VALIDATION:AMOUNT: {text!r}")
    return validation, int(amount)


def _knobs() -> list[Any]:
    from server.devices.simulator import Faults

    return list(fields(Faults))


def _kind(knob: Any) -> Any:
    if knob.name in _TIMED_FOR_STATION:
        return float  # checked to be whole for the roles that count messages
    return float if "float" in str(knob.type) or knob.type is float else int


def run_devices(args: argparse.Namespace) -> int:
    url = args.url.rstrip("/") + "/devices"
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            data = json.loads(answer.read())
    except (urllib.error.URLError, OSError, ValueError) as exc:
        print(f"croupier devices: cannot read {url}: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(data, indent=2))
        return 0
    devices = data.get("devices", [])
    if not devices:
        print("no devices are configured")
        return 0
    now = time.time()
    for d in devices:
        heard = "never" if d["last_heard"] is None else f"{now - d['last_heard']:.1f}s ago"
        faults = ",".join(d["faults"]) or "-"
        print(
            f"{d['id']}\t{d['role']}\ttable={d['table'] or '-'}\tlink={d['link']}\t"
            f"heard={heard}\tfaults={faults}"
        )
    return 0


def _transport(args: argparse.Namespace) -> tuple[str, int, Any]:
    """``--server`` HOST and PORT, or ("", 0) with ``--serial``; the TLS context, if any."""
    from server.devices.serial_port import check_port_name
    from server.devices.tls import client_context

    if (args.server is None) == (args.serial is None):
        raise ValueError("give --server HOST:PORT or --serial PORT, one of them")
    tls_options = (args.tls_ca, args.tls_cert, args.tls_key)
    if args.serial is not None:
        if any(tls_options):
            raise ValueError("--tls-ca, --tls-cert and --tls-key are for --server (TCP)")
        problem = check_port_name(args.serial)
        if problem is not None:
            raise ValueError(f"--serial {args.serial!r}: {problem}")
        return "", 0, None
    host, _, port = args.server.rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"--server must be HOST:PORT, not {args.server!r}")
    if not any(tls_options):
        return host, int(port), None
    if args.tls_ca is None or (args.tls_cert is None) != (args.tls_key is None):
        raise ValueError("TLS needs --tls-ca, and --tls-cert with --tls-key")
    try:
        tls = client_context(args.tls_ca, args.tls_cert, args.tls_key)
    except ssl.SSLError as exc:
        raise ValueError(f"cannot load the TLS files: {exc.reason or exc}") from None
    return host, int(port), tls


def run_simulate(args: argparse.Namespace) -> int:
    from server.devices.simulator import Faults, SimulatedDevice

    try:
        host, port, tls = _transport(args)
        script = args.script.read_text().split() if args.script else None
        knobs = {k.name: getattr(args, k.name) for k in _knobs() if getattr(args, k.name) is not None}  # fmt: skip  # noqa: E501
        if args.role == "station":
            timeline = {name: knobs.pop(name, None) for name in (*_TIMED_FOR_STATION, "clear_after")}  # fmt: skip  # noqa: E501
        else:
            _whole_counts(args, knobs)
        if args.protocol == "cammegh":
            wheel = _cammegh_wheel(args, script, Faults(**knobs))
        elif not args.device_id:
            raise ValueError("give the device's id with --device-id")
        else:
            text = args.key_file.read_text().strip() if args.key_file else args.key
            if not text:
                raise ValueError("give the device's key with --key or --key-file")
            key = bytes.fromhex(text)
        staff = tuple(args.staff.split(",", 1))
        if len(staff) != 2 or staff[0] == staff[1]:
            raise ValueError("--staff must name two different people: DEALER,SUPERVISOR")
    except (ValueError, OSError) as exc:
        print(f"croupier device simulate: {exc}", file=sys.stderr)
        return 2
    if args.protocol == "cammegh":
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(wheel.run())
        return 0
    if args.role == "station":
        return _run_station(args, key, host, port, tls, Faults(**knobs), timeline)
    device = SimulatedDevice(
        args.device_id,
        args.role,
        key,
        host,
        port,
        **_link_options(args, tls, Faults(**knobs)),
        script=script,
        decks=args.decks,
        wheel=args.wheel,
        table=args.table,
        decide=tuple(args.decide.split(",")),
        staff=(staff[0], staff[1]),
        out=print,
    )
    return _until_stopped(args, device.run())


def _link_options(args: argparse.Namespace, tls: Any, faults: Any) -> dict[str, Any]:
    """What every framed simulator takes from the command line: its transport, seed,
    faults and non-volatile memory."""
    return {
        "serial": args.serial,
        "baudrate": args.baudrate,
        "tls": tls,
        "seed": args.seed,
        "faults": faults,
        "state": args.state,
    }


def _until_stopped(args: argparse.Namespace, run: Any) -> int:
    """Run a simulator until Ctrl-C (0), or until the server refuses it (1)."""
    from server.devices.simulator import DeviceRefused

    try:
        asyncio.run(run)
    except DeviceRefused as exc:
        print(
            f"croupier device simulate: the server refused {args.device_id}: {exc}", file=sys.stderr
        )
        return 1
    except KeyboardInterrupt:
        return 0
    return 0


def _whole_counts(args: argparse.Namespace, knobs: dict[str, Any]) -> None:
    """The station's options are refused for the other roles, and the knobs that count
    messages (``--door-open-at``, ``--tilt-at``) must be whole numbers."""
    for name in _STATION_OPTIONS:
        if getattr(args, name) not in (None, False):
            option = "--" + name.replace("_", "-")
            raise ValueError(f"{option} is for --role station")
    for name in _TIMED_FOR_STATION:
        value = knobs.get(name)
        if value is not None:
            if not float(value).is_integer():
                option = "--" + name.replace("_", "-")
                raise ValueError(f"{option} counts messages for --role {args.role}: a whole number")  # fmt: skip  # noqa: E501
            knobs[name] = int(value)


def _run_station(
    args: argparse.Namespace,
    key: bytes,
    host: str,
    port: int,
    tls: Any,
    faults: Any,
    timeline: dict[str, float | None],
) -> int:
    """A player station's agent: connected, then the options' timeline played."""
    from server.devices.station_simulator import StationScript, StationSimulator, play_script

    if (args.attendant is None) != (args.key_at is None):
        print("croupier device simulate: --attendant and --key-at go together", file=sys.stderr)
        return 2
    out = functools.partial(print, flush=True)  # a pipe (a test, a log) sees each line

    def screen(path: str, token: str) -> None:
        out(f"screen: {path}#token={token}")

    station = StationSimulator(
        args.device_id,
        key,
        host,
        port,
        **_link_options(args, tls, faults),
        out=out,
        self_test_fail=args.self_test_fail,
        printer_fail=args.printer_fail,
        stack_fail=args.stack_fail,
        tickets_dir=args.tickets_dir,
        on_screen=screen if args.print_screen else None,
    )
    script = StationScript(
        bills=args.bills or (),
        tickets=tuple(args.ticket or ()),
        door_open_at=timeline["door_open_at"],
        tilt_at=timeline["tilt_at"],
        clear_after=timeline["clear_after"],
        attendant=args.attendant or "",
        key_at=args.key_at,
    )

    async def both() -> None:
        await asyncio.gather(station.run(), play_script(station, script))

    return _until_stopped(args, both())


def _cammegh_wheel(args: argparse.Namespace, script: list[str] | None, faults: Any) -> Any:
    """A Cammegh-style wheel on ``--serial``: ASCII lines, no key, no device id."""
    from server.devices.cammegh_simulator import CammeghSimulator

    if args.role != "wheel" or args.serial is None:
        raise ValueError("--protocol cammegh is a wheel on a serial line: --role wheel --serial PORT")  # fmt: skip  # noqa: E501
    if args.key or args.key_file:
        raise ValueError("--protocol cammegh has no key (its line must be physically secured)")
    if args.wheel == "big_six":
        raise ValueError("--protocol cammegh is a roulette wheel, not a Big Six wheel")
    return CammeghSimulator(
        args.serial,
        baudrate=args.baudrate,
        seed=args.seed,
        script=script,
        faults=faults,
        wheel=args.wheel,
        out=print,
    )
