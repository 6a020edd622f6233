"""Benchmark: idle viewers per server process and server memory per connection.

Runs the real ``croupier serve --config F --port P --data-dir D`` (pinned to CPU 0), opens
viewers from a raw-protocol client process (CPU 1) that each say hello (a new demo player) and
join a table as a spectator, and reads the server's VmRSS from ``/proc/<pid>/status`` before
and after each step. Baseline, in the same run: a bare websockets server with the same
settings (``compression=None``, ``max_size`` 64 KiB, ``max_queue`` 32) holding the same number
of connections, which receive the same hello and join frames and ignore them.

The tables bet for an hour, so after the first ``betting_opened`` the viewers are idle.
``RLIMIT_NOFILE`` is raised to the hard limit for the processes this script starts; clients
connect from 127.0.0.2–127.0.0.251 so the ephemeral ports of one address are not exhausted.

    .venv/bin/python -m loadtests.bench_connections             # writes the connections section
    .venv/bin/python -m loadtests.bench_connections --steps 200,500 --no-write
"""

from __future__ import annotations

import argparse
import contextlib
import os
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from loadtests.report import machine_line, write_section
from loadtests.wsload import (
    PYTHON,
    ROOT,
    SERVER_CPU,
    free_port,
    loadavg,
    proc_cpu,
    proc_rss_kib,
    raise_nofile,
    server_child,
    swarm_child,
    tables_toml,
)

TARGET_CONNECTIONS, TARGET_KIB = 10_000, 20.0
TABLES = [f"idle-{i}" for i in range(10)]


def _get(port: int, path: str) -> int:
    with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        status = s.recv(64).split(b" ", 2)[1]
    return int(status)


@contextlib.contextmanager
def croupier_serve(config: Path, data_dir: Path) -> Iterator[tuple[int, int]]:
    """``croupier serve`` in a subprocess, pinned to the server CPU; yields (pid, port)."""
    port = free_port()
    proc = subprocess.Popen(
        [
            PYTHON,
            "-m",
            "server.cli.main",
            "serve",
            "--config",
            str(config),
            "--port",
            str(port),
            "--data-dir",
            str(data_dir),
            "--log-level",
            "warning",
        ],
        cwd=ROOT,
    )
    try:
        with contextlib.suppress(OSError):
            if len(os.sched_getaffinity(0)) > 1:
                os.sched_setaffinity(proc.pid, {SERVER_CPU})
        deadline = time.monotonic() + 30
        while True:
            try:
                if _get(port, "/readyz") == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline or proc.poll() is not None:
                raise RuntimeError("croupier serve did not become ready")
            time.sleep(0.1)
        yield proc.pid, port
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _settled_rss(pid: int) -> int:
    time.sleep(1.0)
    return proc_rss_kib(pid)


def _ramp(pid: int, port: int, steps: list[int], expect: int) -> list[dict[str, Any]]:
    rows = []
    with swarm_child(port) as swarm:
        # One connection first, so one-time costs (first login, first join) are not counted.
        swarm.call("open", viewers=1, tables=TABLES, expect=expect)
        base = _settled_rss(pid)
        opened = 1
        for step in steps:
            cpu0 = proc_cpu(pid)
            new = step - (opened - 1)
            reply = swarm.call("open", viewers=new, tables=TABLES, expect=expect)
            cpu = proc_cpu(pid) - cpu0
            opened = reply["open"]
            rss = _settled_rss(pid)
            rows.append(
                {
                    "connections": opened - 1,
                    "failed": reply["failed"],
                    "rss_mib": rss / 1024,
                    "kib_per_conn": (rss - base) / max(1, opened - 1),
                    "connect_cpu_ms": cpu * 1e3 / max(1, new),
                    "seconds": reply["seconds"],
                }
            )
        swarm.call("close")
    return rows


def run(steps: list[int]) -> dict[str, Any]:
    raise_nofile()
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "idle.toml"
        config.write_text(tables_toml(TABLES, betting=3600, pause=1, seats=7))
        with server_child("bare") as bare:
            baseline = _ramp(bare.pid, bare.hello["port"], steps, expect=0)
        time.sleep(2)
        with croupier_serve(config, Path(tmp) / "data") as (pid, port):
            croupier = _ramp(pid, port, steps, expect=2)
    return {"baseline": baseline, "croupier": croupier, "loadavg": loadavg()}


def render(result: dict[str, Any], steps: list[int]) -> str:
    arg = ",".join(str(s) for s in steps)
    lines = [
        "## Server: idle viewers per process and memory per connection",
        "",
        f"Command: `.venv/bin/python -m loadtests.bench_connections --steps {arg}` "
        f"({machine_line()}; load average at the end {result['loadavg']}).",
        "`croupier serve` with 10 tables betting for an hour; each viewer says hello (a new "
        "demo player) and joins a table as a spectator, then stays idle. KiB per connection = "
        "growth of the server's VmRSS since the first connection ÷ connections (1 s after each "
        "step). Baseline: a bare websockets server with the Service's settings, same clients, "
        "same run. Connect CPU = server CPU per connection opened in that step (handshake, "
        "hello, login, join).",
        "",
        "| Viewers | croupier RSS MiB | croupier KiB/conn | baseline KiB/conn | × baseline "
        "| croupier connect CPU ms | failed |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for c, b in zip(result["croupier"], result["baseline"], strict=True):
        lines.append(
            f"| {c['connections']:,} | {c['rss_mib']:.1f} | {c['kib_per_conn']:.1f} | "
            f"{b['kib_per_conn']:.1f} | {c['kib_per_conn'] / b['kib_per_conn']:.2f} | "
            f"{c['connect_cpu_ms']:.2f} | {c['failed']} |"
        )
    last = result["croupier"][-1]
    ok = last["connections"] >= TARGET_CONNECTIONS and last["kib_per_conn"] <= TARGET_KIB
    verdict = (
        "meets"
        if ok
        else ("MISSES" if last["connections"] >= TARGET_CONNECTIONS else "is not yet measured at")
    )
    lines += [
        "",
        f"Target: {TARGET_CONNECTIONS:,} idle viewers at ≤ {TARGET_KIB:g} KiB RSS each — "
        f"{verdict} it ({last['connections']:,} viewers at {last['kib_per_conn']:.1f} KiB).",
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--steps", default="1000,5000,10000", help="cumulative viewer counts to measure at"
    )
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    steps = [int(s) for s in args.steps.split(",")]
    text = render(run(steps), steps)
    print(text)
    if not args.no_write:
        write_section("server-connections", text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
