"""Benchmark: bet acknowledgement latency while the server broadcasts to thousands of viewers.

A croupier ``Service`` (its own process, CPU 0, SystemClock: real roulette rounds with real
betting windows) has ``--tables`` tables with ``--viewers`` spectators spread over them
(raw-protocol clients, CPU 1). The server adds paced public events across the watched tables
so the viewers receive ``--rates`` frames a second in total, one phase per rate (through the
shipped ``TableRuntime._emit_raw``), on top of the rounds' own events. ``--bettors`` seated players
(a third process, CPU 1) each place a bet every ``--interval`` seconds while betting is open
and time ``place_bet`` → ``bet_accepted``. Every bet is posted to the ledger (SQLite,
``synchronous=FULL``) before it is acknowledged, and journaled before betting closes, as in
production.

Baseline, in the same run: the same bettors with no broadcast load. Frames/s achieved are
counted by the viewers' clients, not assumed.

    .venv/bin/python -m loadtests.bench_betack             # writes the bet-ack section
    .venv/bin/python -m loadtests.bench_betack --viewers 200 --tables 20 --rates 2000 \\
        --seconds 5 --no-write
"""

from __future__ import annotations

import argparse
import sqlite3
import tempfile
import time
from pathlib import Path
from typing import Any

from loadtests.report import machine_line, write_section
from loadtests.wsload import (
    Child,
    loadavg,
    percentile,
    proc_cpu,
    server_child,
    swarm_child,
    tables_toml,
)

TARGET_P99_MS = 10.0


def _phase(
    server: Child,
    viewers: Child,
    bettors: Child,
    rate: float,
    seconds: float,
    tables: list[str],
    interval: float,
    path: str,
) -> dict[str, Any]:
    frames0 = viewers.call("count")["total"]
    cpu0, wall0 = proc_cpu(server.pid), time.perf_counter()
    server.call("lag_start")
    server.call("load", rate=rate, seconds=seconds + 1.0, mode=path)
    result = bettors.call(
        "bet", tables=tables, seconds=seconds, interval=interval, spot="red", amount=100
    )
    load = server.call("load_result")
    lag = server.call("lag_stop")
    wall = time.perf_counter() - wall0
    cpu = proc_cpu(server.pid) - cpu0
    frames = viewers.call("count")["total"] - frames0
    acks = result["acks"]
    return {
        "rate": rate,
        "shed": load.get("shed", 0),
        "lag": lag,
        "frames_per_s": frames / wall,
        "paced_frames": load.get("frames", 0),
        "cpu_share": cpu / wall,
        "acks": len(acks),
        "errors": result["errors"],
        "unanswered": result["unanswered"],
        "p50": percentile(acks, 0.50),
        "p99": percentile(acks, 0.99),
        "max": max(acks) if acks else float("nan"),
    }


def commit_probe(where: str, commits: int = 200) -> tuple[float, float]:
    """p50 and p99 ms of one durable SQLite commit (WAL, synchronous=FULL) under ``where`` —
    the storage the ledger and journal use; two (group) commits stand behind every bet ack."""
    with tempfile.TemporaryDirectory(dir=where) as tmp:
        db = sqlite3.connect(Path(tmp) / "probe.sqlite", isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=FULL")
        db.execute("CREATE TABLE t(x)")
        times = []
        for i in range(commits):
            start = time.perf_counter()
            db.execute("BEGIN IMMEDIATE")
            db.execute("INSERT INTO t VALUES (?)", (i,))
            db.execute("COMMIT")
            times.append((time.perf_counter() - start) * 1e3)
        db.close()
    return percentile(times, 0.5), percentile(times, 0.99)


def run(
    viewers: int,
    n_tables: int,
    rates: list[float],
    seconds: float,
    bettors: int,
    interval: float,
    data_dirs: list[str],
    path: str = "asis",
    realtime: bool = True,
) -> dict[str, Any]:
    configs = []
    scheduling = "normal"
    for where in data_dirs:
        probe = commit_probe(where)
        rows, scheduling = _run_one(
            viewers, n_tables, rates, seconds, bettors, interval, where, path, realtime
        )
        configs.append({"where": where, "commit": probe, "rows": rows})
    return {"configs": configs, "loadavg": loadavg(), "path": path, "scheduling": scheduling}


def _run_one(
    viewers: int,
    n_tables: int,
    rates: list[float],
    seconds: float,
    bettors: int,
    interval: float,
    data_dir: str,
    path: str,
    realtime: bool,
) -> tuple[list[dict[str, Any]], str]:
    tables = [f"t{i}" for i in range(n_tables)]
    with tempfile.TemporaryDirectory(dir=data_dir) as tmp:
        config = Path(tmp) / "betack.toml"
        config.write_text(tables_toml(tables, betting=15, pause=4, seats=7))
        with server_child("croupier", config, Path(tmp) / "data") as server:
            port = server.hello["port"]
            with (
                swarm_child(port) as swarm,
                swarm_child(port, realtime=realtime) as betting,
            ):
                opened = swarm.call("open", viewers=viewers, tables=tables, expect=2)
                assert opened["open"] == viewers, opened
                bet_tables = [tables[i % n_tables] for i in range(bettors)]
                time.sleep(1.0)
                rows = [
                    _phase(server, swarm, betting, r, seconds, bet_tables, interval, path)
                    for r in [0.0, *rates]
                ]
                scheduling = str(betting.hello.get("scheduling", "normal"))
    return rows, scheduling


def render(
    result: dict[str, Any],
    viewers: int,
    n_tables: int,
    rates: list[float],
    seconds: float,
    bettors: int,
    interval: float,
) -> str:
    dirs = ",".join(c["where"] for c in result["configs"])
    rate_arg = ",".join(f"{r:g}" for r in rates)
    lines = [
        "## Server: bet acknowledgement latency under broadcast load",
        "",
        f"Command: `.venv/bin/python -m loadtests.bench_betack --viewers {viewers} "
        f"--tables {n_tables} --rates {rate_arg} --seconds {seconds:g} --bettors {bettors} "
        f"--interval {interval:g} --data-dirs {dirs}"
        + ("" if result.get("scheduling", "normal") != "normal" else " --client-scheduling normal")
        + f"` ({machine_line()}; load average at the "
        f"end {result['loadavg']}).",
        f"{viewers:,} spectators over {n_tables} roulette tables (15 s betting, 4 s pause, "
        "real rounds, their starts spread over one round as `croupier serve` spreads them); "
        f"{bettors} seated bettors, one bet every "
        f"{interval * 1e3:.0f} ms while betting is open, {seconds:g} s per phase; round trip "
        "`place_bet` → `bet_accepted` timed by the client. The server adds paced public "
        "events through `TableRuntime._emit_raw`; *delivered* is what the viewers' clients "
        "counted (a server more than 50 ms behind sheds the excess rather than queueing it). "
        "Server pinned to CPU 0, clients to CPU 1; the bettors' process, the measuring "
        f"instrument, is scheduled {result.get('scheduling', 'normal')} on CPU 1 (`--client-"
        "scheduling`) so that its own wake-up behind the saturated viewers' swarm is not "
        "timed as server latency (the server is untouched). The ledger and journal (SQLite, WAL, "
        "`synchronous=FULL`) live under the data directory; the time of one durable commit "
        "there is probed first: every bet waits for two such commits made at the same time "
        "(its ledger debit and its journal record, each by its store's writer thread off "
        "the event loop and shared with whatever else is queued: group commit) before its "
        "ack. "
        "Baseline: the same bettors with no broadcast, same server, same run. Loop "
        "stalls: a task in the server sleeping 1 ms at a time records how late it wakes.",
        "",
        "| Data directory (commit p50/p99 ms) | broadcast asked, frames/s "
        "| delivered, frames/s | server CPU share | acks | p50 ms | p99 ms | max ms "
        "| × baseline p99 | refused / unanswered | loop stalls > 10 ms: count, total s, max ms |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for config in result["configs"]:
        idle = config["rows"][0]
        c50, c99 = config["commit"]
        where = f"{config['where']} ({c50:.2f}/{c99:.2f})"
        for r in config["rows"]:
            refused = sum(r["errors"].values())
            codes = ", ".join(f"{k} {v}" for k, v in sorted(r["errors"].items()))
            asked = f"{r['rate']:,.0f}" if r["rate"] else "0 (baseline)"
            lines.append(
                f"| {where} | {asked} | {r['frames_per_s']:,.0f} | "
                f"{r['cpu_share']:.0%} | {r['acks']:,} | {r['p50']:.2f} | {r['p99']:.2f} | "
                f"{r['max']:.1f} | {r['p99'] / idle['p99']:.2f} | "
                f"{refused}{f' ({codes})' if codes else ''} / {r['unanswered']} | "
                f"{r['lag']['over_10ms']}, {r['lag']['stalled_ms'] / 1e3:.2f}, "
                f"{r['lag']['max']:.0f} |"
            )
    lines.append("")
    for config in result["configs"]:
        loaded = config["rows"][-1]
        verdict = "meets" if loaded["p99"] <= TARGET_P99_MS else "MISSES"
        full = viewers >= 5000 and loaded["frames_per_s"] >= 50_000
        lines.append(
            f"Target: p99 ≤ {TARGET_P99_MS:g} ms with 5,000 viewers and 50,000 frames/s of "
            f"broadcast — with the data under {config['where']} it {verdict} it "
            f"({loaded['p99']:.2f} ms with {viewers:,} viewers and "
            f"{loaded['frames_per_s']:,.0f} frames/s delivered"
            + (")." if full else "; the full target load was not reached).")
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--viewers", type=int, default=5000)
    parser.add_argument("--tables", type=int, default=500)
    parser.add_argument(
        "--rates", default="20000,50000", help="broadcast frames/s asked, one phase each"
    )
    parser.add_argument("--seconds", type=float, default=30, help="per phase")
    parser.add_argument("--bettors", type=int, default=10)
    parser.add_argument("--interval", type=float, default=0.25, help="seconds between bets")
    parser.add_argument(
        "--data-dirs",
        default=f"{tempfile.gettempdir()},/dev/shm",
        help="comma-separated parents of the server's data folder, one run each "
        "(disk vs tmpfs separates fsync time from broadcast time)",
    )
    parser.add_argument(
        "--client-scheduling",
        default="realtime",
        choices=["realtime", "normal"],
        help="the bettors' client: ahead of the viewers on the clients' CPU (SCHED_FIFO, "
        "else nice -10, where permitted) or as any other process",
    )
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    rates = [float(r) for r in args.rates.split(",") if r]
    result = run(
        args.viewers,
        args.tables,
        rates,
        args.seconds,
        args.bettors,
        args.interval,
        [d for d in args.data_dirs.split(",") if d],
        "asis",
        args.client_scheduling == "realtime",
    )
    text = render(
        result, args.viewers, args.tables, rates, args.seconds, args.bettors, args.interval
    )
    print(text)
    if not args.no_write:
        write_section("server-betack", text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
