"""``croupier devices`` (the devices of a running server, one per line) and ``croupier device
simulate`` (a simulated card-reading shoe, hole-card reader, wheel or dealer console, over
TCP, TLS or a serial line; a wheel may speak the Cammegh-style ASCII protocol instead)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import ssl
import sys
import time
import urllib.error
import urllib.request
from dataclasses import fields
from pathlib import Path
from typing import Any

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
        "(docs/devices.md, 'Simulators' and 'Transports'), with fault knobs. Runs until "
        "interrupted.",
    )
    sim.add_argument("--role", required=True, choices=["shoe", "reader", "wheel", "console"])
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
        sim.add_argument(f"--{knob.name.replace('_', '-')}", type=_kind(knob), default=None)
    sim.set_defaults(handler=run_simulate)


def _knobs() -> list[Any]:
    from server.devices.simulator import Faults

    return list(fields(Faults))


def _kind(knob: Any) -> Any:
    return float if knob.type in ("float", float) else int


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
    from server.devices.simulator import DeviceRefused, Faults, SimulatedDevice

    try:
        host, port, tls = _transport(args)
        script = args.script.read_text().split() if args.script else None
        knobs = {k.name: getattr(args, k.name) for k in _knobs() if getattr(args, k.name) is not None}  # fmt: skip  # noqa: E501
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
    device = SimulatedDevice(
        args.device_id,
        args.role,
        key,
        host,
        port,
        serial=args.serial,
        baudrate=args.baudrate,
        tls=tls,
        seed=args.seed,
        script=script,
        faults=Faults(**knobs),
        state=args.state,
        decks=args.decks,
        wheel=args.wheel,
        table=args.table,
        decide=tuple(args.decide.split(",")),
        staff=(staff[0], staff[1]),
        out=print,
    )
    try:
        asyncio.run(device.run())
    except DeviceRefused as exc:
        print(
            f"croupier device simulate: the server refused {args.device_id}: {exc}", file=sys.stderr
        )
        return 1
    except KeyboardInterrupt:
        return 0
    return 0


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
