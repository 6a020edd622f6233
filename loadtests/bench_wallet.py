"""Benchmark: calls to an operator's wallet, many in flight — latency that does not multiply
with load, and what a call costs the caller's CPU.

The reference operator wallet (``python -m reference.wallet``, its own process on CPU 1)
answers after ``--latency`` ms; this process (CPU 0) calls it through Croupier's client
(``server.wallet.operator.client``), as a table will for its bets' debits.

- **In flight.** ``--burst`` debits sent at once (80: a full table betting in the same
  instant), through a pool of ``--connections``, each timed from the call to its answer;
  against the same calls one at a time (a pool of one) — what a table taking one bet per
  write would wait. Issue #32's target for a table's burst at 150 ms: bet-ack p99 ≤ 450 ms,
  of which these calls are the wallet's part.
- **CPU per call.** ``--calls`` debits with the operator answering at once, 32 in flight:
  this process's CPU-seconds per call; against the same number of bets' debits posted to
  the embedded SQLite ledger on ``/dev/shm`` (``Ledger.apost``, 32 in flight), the durable
  write a bet costs today. The ratio says what each bet's operator call adds.

    .venv/bin/python -m loadtests.bench_wallet                 # writes the wallet section
    .venv/bin/python -m loadtests.bench_wallet --calls 500 --no-write
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from loadtests.report import Option, command_line, machine_line, option_parser, write_section
from loadtests.wsload import CLIENT_CPU, ROOT, SERVER_CPU, loadavg, percentile, pin

SECRET = b"bench-wallet-secret"
NS = "bench"


class Operator:
    """The reference wallet as a process of its own on ``CLIENT_CPU``."""

    def __init__(self, work: Path) -> None:
        secret = work / "secret"
        secret.write_bytes(SECRET)
        argv = [sys.executable, "-m", "reference.wallet", "--db", str(work / "wallet.sqlite")]
        argv += ["--secret-file", str(secret), "--auto-create", str(10**12)]
        self.process = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        self.url = json.loads(self.process.stdout.readline())["url"]
        os.sched_setaffinity(self.process.pid, {CLIENT_CPU % (os.cpu_count() or 1)})

    def knobs(self, **knobs: Any) -> None:
        from server.wallet.operator.contract import SIGNATURE_HEADER, encode, sign

        raw = encode(knobs)
        request = urllib.request.Request(
            f"{self.url}/_reference/knobs",
            data=raw,
            headers={SIGNATURE_HEADER: sign(SECRET, raw), "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as answer:
            assert answer.status == 200

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)
        assert self.process.stdout is not None
        self.process.stdout.close()


def _debits(tag: str, count: int) -> list[dict[str, Any]]:
    from server.wallet.operator import contract as c

    return [
        c.debit_body(
            c.debit_id(NS, f"{tag}.1", f"p{i % 80}", f"b{i}"),
            f"p{i % 80}",
            "USD",
            100,
            f"{tag}.1",
            tag,
            f"b{i}",
        )
        for i in range(count)
    ]


async def _burst(url: str, bodies: list[dict[str, Any]], connections: int) -> dict[str, Any]:
    """Every call of ``bodies`` at once: each one's milliseconds, the whole burst's."""
    from server.wallet.operator.client import OperatorWalletClient
    from server.wallet.operator.contract import Ok

    client = OperatorWalletClient(url, SECRET, connections=connections, timeout=30)

    async def one(body: dict[str, Any]) -> float:
        began = time.perf_counter()
        answer = await client.call("debit", body)
        assert isinstance(answer, Ok), answer
        return (time.perf_counter() - began) * 1e3

    try:
        began = time.perf_counter()
        times = await asyncio.gather(*(one(b) for b in bodies))
        return {"times": list(times), "total_ms": (time.perf_counter() - began) * 1e3}
    finally:
        await client.close()


async def _one_at_a_time(url: str, bodies: list[dict[str, Any]]) -> dict[str, Any]:
    """The calls of ``bodies`` one after another, as a table taking one bet per write."""
    from server.wallet.operator.client import OperatorWalletClient
    from server.wallet.operator.contract import Ok

    client = OperatorWalletClient(url, SECRET, connections=1, timeout=30)
    times: list[float] = []
    try:
        for body in bodies:
            began = time.perf_counter()
            answer = await client.call("debit", body)
            assert isinstance(answer, Ok), answer
            times.append((time.perf_counter() - began) * 1e3)
        return {"times": times, "total_ms": sum(times)}
    finally:
        await client.close()


async def _cpu_per_call(url: str, bodies: list[dict[str, Any]], in_flight: int) -> float:
    """This process's CPU-seconds per call, ``in_flight`` calls at a time."""
    from server.wallet.operator.client import OperatorWalletClient
    from server.wallet.operator.contract import Ok

    client = OperatorWalletClient(url, SECRET, connections=in_flight, timeout=30)
    queue = list(reversed(bodies))

    async def worker() -> None:
        while queue:
            answer = await client.call("debit", queue.pop())
            assert isinstance(answer, Ok), answer

    try:
        await client.call("balance", {"player_id": "p0", "currency": "USD"})  # warm
        began = time.process_time()
        await asyncio.gather(*(worker() for _ in range(in_flight)))
        return (time.process_time() - began) / len(bodies)
    finally:
        await client.close()


async def _ledger_cpu_per_post(count: int, in_flight: int) -> float:
    """CPU-seconds per bet debit posted to the embedded ledger on /dev/shm (all threads of
    this process: the writer thread's work is part of the cost)."""
    from server.wallet.ledger import OPEN_WAGERS, Transfer, player_account
    from server.wallet.sqlite_ledger import SqliteLedger

    parent = "/dev/shm" if Path("/dev/shm").is_dir() else None
    with tempfile.TemporaryDirectory(dir=parent) as tmp:
        ledger = SqliteLedger(Path(tmp) / "ledger.sqlite")
        try:
            ledger.open_account(OPEN_WAGERS, may_go_negative=True)
            for i in range(80):
                ledger.open_account(player_account(f"p{i}"), may_go_negative=True)
            queue = list(range(count))

            async def worker() -> None:
                while queue:
                    i = queue.pop()
                    transfer = Transfer(player_account(f"p{i % 80}"), OPEN_WAGERS, 100, "bet")
                    await ledger.apost(f"bet:{i}", [transfer])

            began = time.process_time()
            await asyncio.gather(*(worker() for _ in range(in_flight)))
            return (time.process_time() - began) / count
        finally:
            ledger.close()


def run(latencies: list[float], burst: int, connections: int, calls: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        operator = Operator(Path(tmp))
        try:
            bursts: dict[float, Any] = {}
            for latency in latencies:
                operator.knobs(latency_ms=latency)
                pooled = asyncio.run(
                    _burst(operator.url, _debits(f"in{latency:g}", burst), connections)
                )
                alone = asyncio.run(_one_at_a_time(operator.url, _debits(f"one{latency:g}", 10)))
                bursts[latency] = {"pooled": pooled, "alone": alone}
            operator.knobs(latency_ms=0)
            wallet_cpu = asyncio.run(_cpu_per_call(operator.url, _debits("cpu", calls), 32))
        finally:
            operator.stop()
    ledger_cpu = asyncio.run(_ledger_cpu_per_post(calls, 32))
    return {
        "bursts": bursts,
        "burst": burst,
        "connections": connections,
        "wallet_cpu": wallet_cpu,
        "ledger_cpu": ledger_cpu,
        "calls": calls,
        "loadavg": loadavg(),
    }


def render(result: dict[str, Any], command: str) -> str:
    burst, connections = result["burst"], result["connections"]
    lines = [
        "## Operator wallet calls: many in flight",
        "",
        f"Command: `{command}` ({machine_line()}; load average at the end {result['loadavg']}).",
        "The reference operator wallet (its own process, CPU 1) answers each call after the "
        "latency shown; Croupier's client (`server.wallet.operator.client`, CPU 0) calls it "
        "(module docstring of `loadtests/bench_wallet.py`). Issue #32's target for a table's "
        "burst of 80 bets at 150 ms is a bet-ack p99 ≤ 450 ms.",
        "",
        f"| latency | {burst} calls at once, pool of {connections}: p50 ms | p99 ms | "
        "whole burst ms | one at a time: ms per call | the burst one at a time would take ms |"
        " burst ÷ one at a time |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for latency, runs in result["bursts"].items():
        pooled, alone = runs["pooled"], runs["alone"]
        per_call = sum(alone["times"]) / len(alone["times"])
        serial = per_call * burst
        lines.append(
            f"| {latency:g} ms | {percentile(pooled['times'], 0.5):.1f} | "
            f"{percentile(pooled['times'], 0.99):.1f} | {pooled['total_ms']:.1f} | "
            f"{per_call:.1f} | {serial:.0f} | {pooled['total_ms'] / serial:.3f} |"
        )
    wallet_us, ledger_us = result["wallet_cpu"] * 1e6, result["ledger_cpu"] * 1e6
    lines += [
        "",
        f"CPU per call ({result['calls']} debits, 32 in flight, the operator answering at once): "
        f"**{wallet_us:.0f} µs** of the caller's CPU per operator call, against "
        f"{ledger_us:.0f} µs per bet debit posted to the embedded SQLite ledger on /dev/shm "
        f"(baseline, same run): **{wallet_us / ledger_us:.2f}×**.",
    ]
    return "\n".join(lines)


OPTIONS: list[Option] = [
    ("--latencies", str, "20,150", "the operator's latency, ms, each measured"),
    ("--burst", int, 80, "calls sent at once"),
    ("--connections", int, 128, "the client's pool"),
    ("--calls", int, 4000, "calls of the CPU measurement"),
]


def main() -> int:
    parser = option_parser(__doc__.splitlines()[0], OPTIONS)
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    latencies = [float(x) for x in args.latencies.split(",") if x]
    if not latencies or min(latencies) < 0 or args.burst < 1 or args.calls < 32:
        parser.error("--latencies >= 0, --burst >= 1, --calls >= 32")
    pin(SERVER_CPU)
    result = run(latencies, args.burst, args.connections, args.calls)
    text = render(result, command_line("loadtests.bench_wallet", args, OPTIONS))
    print(text)
    if not args.no_write:
        write_section("wallet", text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
