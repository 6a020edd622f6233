"""The server benchmarks keep working at a tiny size (run by hand; no timing is asserted).

Each one starts real server and client processes on loopback, so they are marked slow.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from loadtests import bench_betack, bench_connections, bench_fanout
from loadtests.wsload import RawClient, client_frame, server_frame

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


def test_raw_client_counts_frames_split_across_reads() -> None:
    async def go() -> tuple[int, list[bytes]]:
        got: list[bytes] = []
        client = RawClient(got.append)
        client.data_received(b"HTTP/1.1 101 Switching Protocols\r\n\r\n")
        stream = server_frame(b"a" * 5) + server_frame(b"b" * 300) + server_frame(b"c" * 70000)
        for i in range(0, len(stream), 7):
            client.data_received(stream[i : i + 7])
        return client.frames, got

    frames, got = asyncio.run(go())
    assert frames == 3 and [len(p) for p in got] == [5, 300, 70000]
    assert client_frame(b"xy")[:2] == bytes((0x82, 0x82))  # FIN+binary, masked, length 2


def test_fanout_benchmark_runs_and_renders_every_row() -> None:
    result = bench_fanout.run(viewers=20, events=20, burst=2, repeat=1)
    rows = result["rows"]
    assert [r.mode for r in rows] == list(bench_fanout.MODES)
    assert all(r.completeness == 1.0 and r.frames_per_cpu_s > 0 for r in rows)
    text = bench_fanout.render(result, 20, 20, 2, 1)
    assert "baseline" in text and "--viewers 20" in text


def test_connections_benchmark_runs_and_renders() -> None:
    result = bench_connections.run([10, 30])
    assert [r["connections"] for r in result["croupier"]] == [10, 30]
    assert all(r["failed"] == 0 for r in result["croupier"] + result["baseline"])
    text = bench_connections.render(result, [10, 30])
    assert "KiB/conn" in text and "--steps 10,30" in text


def test_betack_benchmark_runs_and_renders(tmp_path: Path) -> None:
    result = bench_betack.run(
        viewers=20,
        n_tables=2,
        rates=[200.0],
        seconds=1.5,
        bettors=2,
        interval=0.1,
        data_dirs=[str(tmp_path)],
    )
    idle, loaded = result["configs"][0]["rows"]
    assert idle["acks"] > 0 and loaded["acks"] > 0
    text = bench_betack.render(result, 20, 2, [200.0], 1.5, 2, 0.1)
    assert "p99" in text and "under broadcast" in text


def test_burst_benchmark_times_every_bet_of_each_deployment(tmp_path: Path) -> None:
    """Three bettors and a lone player, one burst and one lone round, on /dev/shm and on a
    one-node cluster (PostgreSQL and Redis of the run's own): every bet answered and timed,
    the cluster's ratio against /dev/shm rendered."""
    from loadtests import bench_burst

    result = bench_burst.run(3, 1, ["shm", "postgres"], str(tmp_path))
    for kind in ("shm", "postgres"):
        run = result["deployments"][kind]
        assert len(run["burst"]) == 3 and len(run["lone"]) == 1, (kind, run)
        assert run["errors"] == {} and run["unanswered"] == 0
        assert all(0 < t < 30_000 for t in run["burst"] + run["lone"])
    text = bench_burst.render(result, "bench_burst --players 3")
    assert "| postgres | burst | 3 |" in text and "| shm | lone | 1 |" in text


def test_burst_benchmark_with_the_operator_s_wallet(tmp_path: Path) -> None:
    """The wallet deployment: JWT players, every bet an HTTP debit at the reference
    operator wallet (answering after 20 ms here); every bet answered and timed, and the
    p99's ratio to the latency rendered."""
    from loadtests import bench_burst

    result = bench_burst.run(3, 1, ["wallet"], str(tmp_path), wallet_latency=20)
    run = result["deployments"]["wallet"]
    assert len(run["burst"]) == 3 and len(run["lone"]) == 1, run
    assert run["errors"] == {} and run["unanswered"] == 0
    assert all(t >= 20 for t in run["burst"] + run["lone"])  # each waited for the operator
    text = bench_burst.render(result, "bench_burst --deployments wallet")
    assert "## Burst at one table with the operator's wallet" in text
    assert "that latency; issue #32's target is ≤ 3×" in text
    # With the operator answering at once the verdict is the calls' own cost (no ratio).
    at_once = bench_burst.render(result | {"wallet_latency": 0.0}, "bench_burst")
    assert "what the calls themselves cost, the operator answering at once" in at_once
