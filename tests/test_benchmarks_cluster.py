"""The cluster benchmark keeps working at a tiny size (run by hand; no timing is asserted).

It starts real nodes, a redis-server and a PostgreSQL database of its own, clients and, for
the failover, real ``croupier serve`` processes, so it is marked slow. The fixtures below only
say whether Redis and PostgreSQL are there (skipped without them, failing in CI).
"""

from __future__ import annotations

import argparse
from typing import Any

import pytest

from loadtests import bench_cluster
from tests.redis_server import RedisServer

pytestmark = pytest.mark.slow

TINY = {
    "viewers": 20,
    "events": 20,
    "chunk": 10,
    "burst": 2,
    "repeat": 1,
    "publish_events": 20_000,
    "publish_bursts": "4,16",
    "publish_requests": 20_000,
    "one_at_a_time": 500,
    "consume_events": 4_800,
    "betack_viewers": 20,
    "betack_tables": 2,
    "rate": 200.0,
    "seconds": 1.5,
    "bettors": 2,
    "interval": 0.1,
    "kills": 1,
    "leases": "1",
}


@pytest.fixture(scope="module")
def result(redis_process: RedisServer, postgres_database: str) -> dict[str, Any]:
    args = argparse.Namespace(**TINY)
    out = bench_cluster.run(args, betting=1.0, pause=0.3)
    out["args"] = args
    return out


def test_fanout_rows_for_every_path(result: dict[str, Any]) -> None:
    rows = result["fanout"]["rows"]
    assert [r["path"] for r in rows] == list(bench_cluster.FANOUT_PATHS)
    assert all(r["complete"] == 1.0 and r["per_cpu_s"] > 0 and r["ratio"] > 0 for r in rows)


def test_publishing_rows(result: dict[str, Any]) -> None:
    publish = result["publish"]
    assert publish["base"] > 0 and publish["slow"] > 0
    assert [b["burst"] for b in publish["buses"]] == [4, 16]
    for bus in publish["buses"]:
        assert bus["events_per_s"] > 0 and bus["messages_per_s"] > 0 and bus["whole"] > 0
        assert bus["failures"] == 0 and 0 < bus["xadds_per_event"] <= 1


def test_consuming_rows(result: dict[str, Any]) -> None:
    rows = result["consume"]["rows"]
    assert [(r["kind"], r["batch"]) for r in rows] == [("plain", 1)] + [
        ("bus", b) for b in bench_cluster.BATCHES
    ]
    assert all(r["events"] == 4_800 and r["events_per_s"] > 0 for r in rows)


def test_bet_acks_on_both_nodes(result: dict[str, Any]) -> None:
    idle, loaded = result["betack"]["rows"]
    for row in (idle, loaded):
        assert row["owner"]["acks"] > 0 and row["remote"]["acks"] > 0
        assert row["owner"]["p99"] > 0 and row["remote"]["p99"] > 0
    assert loaded["frames_per_s"] > 0


def test_failover_times(result: dict[str, Any]) -> None:
    (row,) = result["failover"]["rows"]
    assert row["lease"] == 1.0 and len(row["running"]) == len(row["taken"]) == 1
    assert 0 < row["taken"][0] <= row["running"][0]


def test_the_section_names_its_command_and_targets(result: dict[str, Any]) -> None:
    args = result["args"]
    command = bench_cluster.command_line("loadtests.bench_cluster", args, bench_cluster.OPTIONS)
    text = bench_cluster.render(result, command, args)
    assert "--viewers 20" in command and f"`{command}`" in text
    verdicts = [line for line in text.splitlines() if line.endswith(("| meets |", "| MISSES |"))]
    for name in ("fan-out", "publishing", "consuming", "bet-ack", "failover"):
        assert any(line.startswith(f"| {name}") for line in verdicts), name
    assert "What this means" in text
