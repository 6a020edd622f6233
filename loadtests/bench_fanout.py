"""Benchmark: table events delivered per server CPU-second, against a bare ``broadcast()``.

N spectators (hello + join, through the real protocol) watch one table of a real croupier
``Service``; the table's clock is a ManualClock so it never moves on its own, and the server
drives ``TableRuntime._emit_raw`` — the production fan-out path: one ``encode`` per event,
then ``viewer.deliver(frame)`` per viewer → ``websockets.broadcast([ws], frame)`` — with a
card_dealt event, ``--burst`` events per event-loop tick (a baccarat hand deals its cards in
one tick), as fast as the clients take them. Baseline, in the same run: a bare websockets
server (the same settings as the Service) calling ``websockets.broadcast(all, payload)`` with
the same encoded TableEvent framed once and written to each of the same number of the same
clients (the fair baseline: what a bare server does at best per event); bare
``websockets.broadcast(all, payload)``, which frames once per connection, for reference.

Server and clients are separate processes pinned to CPU 0 and CPU 1; server CPU is read from
``/proc/<pid>/stat``; clients count every frame (completeness).

    .venv/bin/python -m loadtests.bench_fanout              # writes the fan-out section
    .venv/bin/python -m loadtests.bench_fanout --viewers 200 --events 200 --repeat 1 --no-write
"""

from __future__ import annotations

import argparse
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loadtests.report import machine_line, write_section
from loadtests.wsload import (
    Child,
    loadavg,
    median,
    proc_cpu,
    server_child,
    swarm_child,
    tables_toml,
)

TARGET, STRETCH = 0.9, 1.4
MODES = {
    "baseline": "bare websockets server: the event framed once, written to each connection "
    "(baseline)",
    "broadcast": "bare `websockets.broadcast(all, payload)` (framed once per connection)",
    "asis": "croupier as shipped: `TableRuntime._emit_raw` → `server.net.fanout` (framed "
    "once; a connection's frames of a turn in one write)",
}
BARE = ("baseline", "broadcast")  # the modes a bare websockets server runs


@dataclass
class Row:
    mode: str
    frames_per_cpu_s: float
    frames_per_wall_s: float
    cpu_share: float
    completeness: float
    client_share: float
    ratio: float = 0.0


def _measure(
    server: Child, swarm: Child, mode: str, events: int, burst: int, viewers: int, table: str
) -> tuple[int, float, float, float]:
    before = swarm.call("count")["total"]
    client0 = proc_cpu(swarm.pid)
    cpu0 = proc_cpu(server.pid)
    reply = server.call("fanout", mode=mode, table=table, events=events, burst=burst)
    # /proc counts in clock ticks (10 ms): a tiny smoke-test pass may read zero.
    cpu = max(proc_cpu(server.pid) - cpu0, 0.01)
    expected = events * viewers
    got = swarm.call("wait", each=0, timeout=0)["total"]
    # Frames still crossing the loopback: wait for them (completeness), up to 30 s.
    want_total = before + expected
    if got < want_total:
        got = _wait_total(swarm, want_total)
    delivered = got - before
    return delivered, cpu, reply["seconds"], proc_cpu(swarm.pid) - client0


def _wait_total(swarm: Child, want_total: int, timeout: float = 30.0) -> int:

    end = time.monotonic() + timeout
    got = swarm.call("count")["total"]
    while got < want_total and time.monotonic() < end:
        time.sleep(0.05)
        got = swarm.call("count")["total"]
    return int(got)


def run(
    viewers: int, events: int, burst: int, repeat: int, profile: bool = False
) -> dict[str, Any]:
    """Rows (median over ``repeat`` interleaved passes) and, with ``profile``, the top of a
    cProfile of the shipped path."""
    table = "fanout"
    samples: dict[str, list[tuple[float, ...]]] = {m: [] for m in MODES}
    profile_text = ""
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "fanout.toml"
        config.write_text(tables_toml([table], betting=60, pause=1))
        with (
            server_child("bare") as bare,
            server_child("croupier", config, Path(tmp) / "data", manual_clock=True) as crp,
            swarm_child(bare.hello["port"]) as bare_swarm,
            swarm_child(crp.hello["port"]) as crp_swarm,
        ):
            opened = bare_swarm.call("open", viewers=viewers, tables=[table], expect=0)
            assert opened["open"] == viewers, opened
            opened = crp_swarm.call("open", viewers=viewers, tables=[table], expect=2)
            assert opened["open"] == viewers, opened
            for srv in (bare, crp):
                n = srv.call("viewers")["viewers"]
                assert n == viewers, f"server sees {n} viewers, expected {viewers}"
            # Warm-up (first writes grow kernel buffers; first calls fill caches).
            _measure(bare, bare_swarm, "baseline", max(10, events // 10), burst, viewers, table)
            _measure(crp, crp_swarm, "asis", max(10, events // 10), burst, viewers, table)
            for _ in range(repeat):
                for mode in MODES:
                    srv, sw = (bare, bare_swarm) if mode in BARE else (crp, crp_swarm)
                    delivered, cpu, wall, client = _measure(
                        srv, sw, mode, events, burst, viewers, table
                    )
                    samples[mode].append(
                        (
                            delivered / cpu,
                            delivered / wall,
                            cpu / wall,
                            delivered / (events * viewers),
                            client / wall,
                        )
                    )
            if profile:
                crp.call("profile_start")
                _measure(crp, crp_swarm, "asis", events, burst, viewers, table)
                profile_text = crp.call("profile_stop", top=22)["text"]
    rows = []
    for mode, values in samples.items():
        rows.append(
            Row(
                mode,
                median([v[0] for v in values]),
                median([v[1] for v in values]),
                median([v[2] for v in values]),
                min(v[3] for v in values),
                median([v[4] for v in values]),
            )
        )
    base = rows[0].frames_per_cpu_s
    for row in rows:
        row.ratio = row.frames_per_cpu_s / base
    return {"rows": rows, "profile": profile_text, "loadavg": loadavg()}


def render(result: dict[str, Any], viewers: int, events: int, burst: int, repeat: int) -> str:
    rows: list[Row] = result["rows"]
    asis = next(r for r in rows if r.mode == "asis")
    lines = [
        "## Server: fan-out, table events delivered per server CPU-second",
        "",
        f"Command: `.venv/bin/python -m loadtests.bench_fanout --viewers {viewers} "
        f"--events {events} --burst {burst} --repeat {repeat}` ({machine_line()}; "
        f"load average at the end {result['loadavg']}).",
        f"{viewers:,} spectators joined through the protocol; {events:,} public `card_dealt` "
        f"events in bursts of {burst} per event-loop tick, as fast as the clients take them. "
        "Server pinned to CPU 0, raw-protocol clients to CPU 1; server CPU from "
        "`/proc/<pid>/stat`; median of the interleaved passes. Completeness = frames the "
        "clients counted ÷ events × viewers (worst pass).",
        "",
        "| Delivery path | frames per server CPU-s | frames/s (wall) | server CPU share "
        "| client CPU share | completeness | × baseline |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {MODES[r.mode]} | {r.frames_per_cpu_s:,.0f} | {r.frames_per_wall_s:,.0f} | "
            f"{r.cpu_share:.0%} | {r.client_share:.0%} | {r.completeness:.3f} | {r.ratio:.2f} |"
        )
    verdict = "meets" if asis.ratio >= TARGET else "MISSES"
    stretch = "meets" if asis.ratio >= STRETCH else "misses"
    lines += [
        "",
        f"Target: ≥ {TARGET}× the baseline per server CPU-second (stretch ≥ {STRETCH}×) — the "
        f"shipped path {verdict} it ({asis.ratio:.2f}×) and {stretch} the stretch.",
        "The baseline is the fair one: a bare websockets server that encodes and frames the "
        "event once and writes the same bytes to every connection (`loadtests/wsload.py`, "
        "`ServerHarness._emitter`); `websockets.broadcast()`, which builds the frame once "
        "per connection, is shown for reference. The shipped path also gives each "
        "connection all its frames of an event-loop turn in one `transport.write` "
        "(`server/net/connection.py`, `_Outbox`): one system call instead of one a frame.",
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--viewers", type=int, default=1000)
    parser.add_argument("--events", type=int, default=400, help="events per pass")
    parser.add_argument("--burst", type=int, default=4, help="events per event-loop tick")
    parser.add_argument("--repeat", type=int, default=3, help="interleaved passes")
    parser.add_argument("--profile", action="store_true", help="print a cProfile of the server")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    result = run(args.viewers, args.events, args.burst, args.repeat, args.profile)
    text = render(result, args.viewers, args.events, args.burst, args.repeat)
    print(text)
    if result["profile"]:
        print("\n" + result["profile"])
    if not args.no_write:
        write_section("server-fanout", text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
