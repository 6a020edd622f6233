"""Benchmark: a cluster of croupier nodes on Redis and PostgreSQL, against one node and
against Redis's own tools, every figure a ratio to a baseline measured in the same run.

1. **Fan-out across nodes.** Viewers of a table run by node A watch it from node B: A frames
   each event once and publishes it (``EventBus``: one PUBLISH per table and turn, one XADD
   per event), Redis hands it to B, B gives it to its viewers. Frames delivered per CPU-second
   of *every* process (both nodes, redis-server and the clients), against one node outside
   any cluster with the viewers on it (``bench_fanout``'s shipped path), measured the same
   way: ``--events`` card events in bursts of ``--burst`` per tick, ``--chunk`` events at a
   time with one chunk in flight, as fast as the clients take them.
2. **Publishing.** ``EventBus.publish`` as the tables call it, ``--burst`` events per tick
   over 16 tables, batched by the bus's own task (a turn's events, or a busy millisecond's:
   ``EventBus.linger``): events and messages per second,
   against ``redis-benchmark -P 16`` PUBLISH of the same payload (an event's share of a
   batch) and of one whole batch, and redis-py awaiting one ``publish`` at a time.
3. **Consuming.** A node's subscriber (``EventBus``) decoding batches of 1, 4 and 16 events
   and handing them to ``deliver``, against redis-py's plain ``PubSub.get_message`` loop:
   the consumer is stopped (SIGSTOP) while Redis queues ``--consume-events`` events for it,
   then drains them as fast as it can.
4. **Bet acknowledgement.** ``--betack-viewers`` spectators over ``--betack-tables`` roulette
   tables (real 15 s rounds) run by node A, half the viewers on A and half on B, A adding
   paced events for ``--rate`` frames/s in all; bettors on A (the owner) and on B (whose bets
   go to A through Redis, ``server.cluster.rpc``) bet at the same time at the same tables.
5. **Failover.** Three real ``croupier serve`` nodes (tests/cluster/nodes.py), players at
   every table; the owner of the busy table is killed with SIGKILL ``--kills`` times at a
   random moment of a round and restarted; time from the kill until another node holds the
   table's lease, and until it has opened a new round there (the table runs again).

Nodes run on CPU 0 and everything else (redis-server, clients, redis-benchmark's Redis side)
on CPU 1, as in the other server benchmarks; PostgreSQL is the machine's (tests/postgres.py).

    .venv/bin/python -m loadtests.bench_cluster               # writes the cluster section
    .venv/bin/python -m loadtests.bench_cluster --viewers 50 --events 50 --no-write ...
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loadtests.clusterload import (
    CHANNEL,
    PUBLISHER_NODE,
    batch_payload,
    bench_frame,
    command_calls,
    database,
    flood,
    node_child,
    redis_command,
    redis_server,
)
from loadtests.report import Option, command_line, machine_line, option_parser, write_section
from loadtests.wsload import (
    PYTHON,
    ROOT,
    SERVER_CPU,
    Child,
    loadavg,
    median,
    percentile,
    proc_cpu,
    swarm_child,
    tables_toml,
)

NODE_A, NODE_B = "bench-a", "bench-b"
FANOUT_TARGET = 0.7  # cluster path ÷ single node, frames per CPU-s of every process
PUBLISH_TARGET = 0.5  # EventBus events/s ÷ redis-benchmark -P 16 PUBLISH/s, same payload
CONSUME_TARGET = 100_000  # events/s a node takes from Redis
BETACK_TARGET = 2.0  # p99 of a bettor on another node ÷ p99 on the owner
BATCHES = (1, 4, 16)


def tables_on(owner: str, nodes: list[str], count: int, prefix: str) -> list[str]:
    """``count`` table ids that rendezvous hashing places on ``owner`` among ``nodes`` (so
    the benchmark knows which node runs which table, as the nodes compute it)."""
    from server.cluster.node import place

    ids: list[str] = []
    i = 0
    while len(ids) < count:
        table = f"{prefix}{i}"
        if place(table, nodes) == owner:
            ids.append(table)
        i += 1
    return ids


def _wait_owned(node: Child, tables: list[str], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not set(tables) <= set(node.call("owned")["owned"]):
        if time.monotonic() > deadline:
            raise RuntimeError(f"node never took {tables}: it runs {node.call('owned')}")
        time.sleep(0.1)


def open_viewers(
    swarm: Child, node: Child, viewers: int, tables: list[str], step: int = 20
) -> None:
    """``viewers`` more spectators of ``tables`` at ``node``, ``step`` at a time, and every one
    of them admitted. (A hundred logins at once exhaust the node's Redis connection pool —
    redis-py's default of 100 — and joins through another node are then refused.)"""
    before = node.call("viewers")["viewers"]
    for done in range(0, viewers, step):
        n = min(step, viewers - done)
        opened = swarm.call("open", viewers=n, tables=tables, expect=2)
        assert opened["failed"] == 0, opened
    seen = node.call("viewers")["viewers"] - before
    if seen != viewers:
        raise RuntimeError(f"the node admitted {seen} of {viewers} spectators")


def _cpu(pids: list[int]) -> list[float]:
    return [proc_cpu(pid) for pid in pids]


# --- 1. fan-out -------------------------------------------------------------------------------

FANOUT_PATHS = {
    "single": "one node, no cluster: viewers on the table's node (baseline)",
    "owner": "cluster, viewers on the owner (it publishes every event too)",
    "remote": "cluster, viewers on another node: owner → Redis → node → viewers",
    "single_chunk": "one node, no cluster, a whole chunk per tick (reference)",
}


def _drive(
    emitter: Child, swarm: Child, table: str, events: int, chunk: int, burst: int
) -> tuple[int, float]:
    """Emit ``events`` at ``table`` a chunk at a time, the next chunk going out once the
    viewers have the one before the last (one chunk in flight); frames delivered and wall
    seconds."""
    base = swarm.call("count")
    start = time.perf_counter()
    sent = 0
    while sent < events:
        n = min(chunk, events - sent)
        emitter.call("emit", table=table, events=n, burst=burst)
        if sent:
            swarm.call("wait", each=base["min"] + sent, timeout=60)
        sent += n
    got = swarm.call("wait", each=base["min"] + events, timeout=60)
    return got["total"] - base["total"], time.perf_counter() - start


def run_fanout(viewers: int, events: int, chunk: int, burst: int, repeat: int) -> dict[str, Any]:
    samples: dict[str, list[dict[str, Any]]] = {p: [] for p in FANOUT_PATHS}
    with (
        tempfile.TemporaryDirectory() as tmp,
        redis_server(Path(tmp) / "redis") as redis,
        database() as db,
    ):
        here, there = tables_on(NODE_A, [NODE_A, NODE_B], 2, "fan")
        config = Path(tmp) / "fanout.toml"
        config.write_text(tables_toml([here, there], betting=3600, pause=1))
        assert redis.process is not None
        redis_pid = redis.process.pid
        with (
            node_child(config, Path(tmp) / "single") as single,
            node_child(config, Path(tmp) / "a", redis.url, db, NODE_A) as a,
        ):
            _wait_owned(a, [here, there])
            with (
                node_child(config, Path(tmp) / "b", redis.url, db, NODE_B) as b,
                swarm_child(single.hello["port"]) as on_single,
                swarm_child(a.hello["port"]) as on_owner,
                swarm_child(b.hello["port"]) as on_remote,
            ):
                alone, cluster = [single.pid, on_single.pid], [a.pid, b.pid, redis_pid]
                paths = {
                    "single": (single, on_single, here, burst, alone),
                    "owner": (a, on_owner, here, burst, [*cluster, on_owner.pid]),
                    "remote": (a, on_remote, there, burst, [*cluster, on_remote.pid]),
                    "single_chunk": (single, on_single, here, chunk, alone),
                }
                for node, swarm, table in ((single, on_single, here), (a, on_owner, here)):
                    open_viewers(swarm, node, viewers, [table])
                open_viewers(on_remote, b, viewers, [there])
                for emitter, swarm, table, per_tick, _ in paths.values():  # warm-up
                    _drive(emitter, swarm, table, max(chunk, events // 10), chunk, per_tick)
                for _ in range(repeat):
                    for path, (emitter, swarm, table, per_tick, pids) in paths.items():
                        cpu0 = _cpu(pids)
                        delivered, wall = _drive(emitter, swarm, table, events, chunk, per_tick)
                        cpu = [c1 - c0 for c0, c1 in zip(cpu0, _cpu(pids), strict=True)]
                        samples[path].append(
                            {
                                "frames": delivered,
                                "wall": wall,
                                "cpu": max(sum(cpu), 0.01),
                                "shares": [c / wall for c in cpu],
                                "complete": delivered / (events * viewers),
                            }
                        )
    rows = []
    for path, runs in samples.items():
        shares = [median([r["shares"][i] for r in runs]) for i in range(len(runs[0]["shares"]))]
        rows.append(
            {
                "path": path,
                "per_cpu_s": median([r["frames"] / r["cpu"] for r in runs]),
                "per_wall_s": median([r["frames"] / r["wall"] for r in runs]),
                "shares": shares,
                "complete": min(r["complete"] for r in runs),
            }
        )
    base = rows[0]["per_cpu_s"]
    for row in rows:
        row["ratio"] = row["per_cpu_s"] / base
    return {"rows": rows}


# --- 2. publishing ----------------------------------------------------------------------------


_BENCHMARK = ["redis-benchmark", "-P", "16", "--csv"]


def redis_benchmark(port: int, payload_size: int, requests: int) -> float:
    """``redis-benchmark -P 16`` (50 connections) PUBLISHing ``payload_size`` bytes on the
    bus's channel, pinned to the publishers' CPU: requests per second. The payload is read
    from standard input (``-x``): ``-d`` sizes only the built-in tests' values, and
    ``-t publish`` is not one of them."""
    with tempfile.TemporaryFile() as payload:
        payload.write(b"x" * payload_size)
        payload.seek(0)
        done = subprocess.run(
            [*_BENCHMARK, "-p", str(port), "-n", str(requests), "-x", "PUBLISH", CHANNEL],
            stdin=payload,
            capture_output=True,
            text=True,
            check=True,
            preexec_fn=lambda: _pin_self(SERVER_CPU),
        )
    for line in done.stdout.splitlines():
        if line.startswith('"PUBLISH'):
            return float(line.split(",")[1].strip('"'))
    raise RuntimeError(f"no rate in redis-benchmark's output: {done.stdout!r}")


def _pin_self(cpu: int) -> None:
    from loadtests.wsload import pin

    pin(cpu)


def _script(argv: list[str], cpu: int = SERVER_CPU) -> dict[str, Any]:
    done = subprocess.run(
        [PYTHON, "-m", "loadtests.clusterload", *argv, "--cpu", str(cpu)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def run_publish(
    events: int, bursts: list[int], requests: int, single: int, repeat: int
) -> dict[str, Any]:
    """Interleaved passes: redis-benchmark with one event's bytes, the bus at each burst
    (and redis-benchmark with that run's whole message), redis-py one at a time."""
    frame = bench_frame()
    one = len(batch_payload(PUBLISHER_NODE, 1, frame))
    event_bytes = len(batch_payload(PUBLISHER_NODE, 2, frame)) - one
    base: list[float] = []
    slow: list[float] = []
    runs: dict[int, list[dict[str, Any]]] = {b: [] for b in bursts}
    with tempfile.TemporaryDirectory() as tmp, redis_server(Path(tmp) / "redis") as redis:
        for _ in range(repeat):
            base.append(redis_benchmark(redis.port, event_bytes, requests))
            for burst in bursts:
                published0 = command_calls(redis.port, "publish")
                xadds0 = command_calls(redis.port, "xadd")
                argv = ["publish", "--redis", redis.url, "--events", str(events)]
                alone = _script([*argv, "--burst", str(burst), "--no-flush"])
                bus = _script([*argv, "--burst", str(burst)])
                messages = command_calls(redis.port, "publish") - published0
                per_message = bus["events"] / max(messages, 1)
                message_bytes = one + round((per_message - 1) * event_bytes)
                runs[burst].append(
                    {
                        "events_per_s": bus["events"] / bus["seconds"],
                        "ratio": bus["events"] / bus["seconds"] / base[-1],
                        "alone_per_s": alone["events"] / alone["seconds"],
                        "alone_ratio": alone["events"] / alone["seconds"] / base[-1],
                        "messages_per_s": messages / bus["seconds"],
                        "cpu": bus["cpu"] / bus["seconds"],
                        "per_message": per_message,
                        "message_bytes": message_bytes,
                        "whole": redis_benchmark(
                            redis.port, message_bytes, max(requests // 4, 1000)
                        ),
                        "xadds_per_event": (command_calls(redis.port, "xadd") - xadds0)
                        / max(bus["events"], 1),
                        "failures": bus["failures"],
                    }
                )
                redis_command(redis.port, "FLUSHALL")  # the next run's seqs start over
            done = _script(
                ["publish", "--redis", redis.url, "--events", str(single), "--one-at-a-time",
                 "--size", str(event_bytes)]
            )  # fmt: skip
            slow.append(done["events"] / done["seconds"])
    buses = []
    for burst, samples in runs.items():
        row: dict[str, Any] = {k: median([r[k] for r in samples]) for k in samples[0]}
        row["burst"], row["failures"] = burst, sum(r["failures"] for r in samples)
        buses.append(row)
    return {"base": median(base), "slow": median(slow), "event_bytes": event_bytes, "buses": buses}


# --- 3. consuming -----------------------------------------------------------------------------


def _consume_once(redis: Any, kind: str, batch: int, events: int) -> dict[str, Any]:
    argv = [PYTHON, "-m", "loadtests.clusterload", "consume", "--redis", redis.url]
    argv += ["--kind", kind, "--events", str(events), "--batch", str(batch)]
    argv += ["--cpu", str(SERVER_CPU)]
    proc = subprocess.Popen(
        argv,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        ready = json.loads(proc.stdout.readline())
        assert ready.get("ready"), ready
        payload = batch_payload(PUBLISHER_NODE, batch, bench_frame())
        os.kill(proc.pid, signal.SIGSTOP)  # Redis queues every message for it meanwhile
        try:
            flood(redis.port, payload, events // batch)
        finally:
            os.kill(proc.pid, signal.SIGCONT)
        result: dict[str, Any] = json.loads(proc.stdout.readline())
        proc.wait(60)
        return result
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


def run_consume(events: int, repeat: int) -> dict[str, Any]:
    cases = [("plain", 1)] + [("bus", b) for b in BATCHES]
    samples: dict[tuple[str, int], list[dict[str, Any]]] = {c: [] for c in cases}
    with tempfile.TemporaryDirectory() as tmp, redis_server(Path(tmp) / "redis") as redis:
        # The consumer is stopped while Redis queues its messages: no output limit for that.
        redis_command(redis.port, "CONFIG", "SET", "client-output-buffer-limit", "pubsub 0 0 0")
        for _ in range(repeat):
            for kind, batch in cases:
                want = events // batch * batch
                samples[(kind, batch)].append(_consume_once(redis, kind, batch, want))
    rows = []
    for (kind, batch), runs in samples.items():
        rows.append(
            {
                "kind": kind,
                "batch": batch,
                "events_per_s": median([r["events"] / r["seconds"] for r in runs]),
                "messages_per_s": median([r["messages"] / r["seconds"] for r in runs]),
                "per_cpu_s": median([r["events"] / max(r["cpu"], 0.01) for r in runs]),
                "events": min(r["events"] for r in runs),
            }
        )
    base = rows[0]["events_per_s"]
    for row in rows:
        row["ratio"] = row["events_per_s"] / base
    return {"rows": rows, "payload": len(batch_payload(PUBLISHER_NODE, 1, bench_frame()))}


# --- 4. bet acknowledgement -------------------------------------------------------------------


def run_betack(
    viewers: int,
    n_tables: int,
    rate: float,
    seconds: float,
    bettors: int,
    interval: float,
    betting: float = 15,
    pause: float = 4,
) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    with (
        tempfile.TemporaryDirectory() as tmp,
        redis_server(Path(tmp) / "redis") as redis,
        database() as db,
    ):
        ids = tables_on(NODE_A, [NODE_A, NODE_B], n_tables, "bet")
        config = Path(tmp) / "betack.toml"
        config.write_text(tables_toml(ids, betting=betting, pause=pause, seats=7))
        assert redis.process is not None
        with node_child(config, Path(tmp) / "a", redis.url, db, NODE_A) as a:
            _wait_owned(a, ids)
            with (
                node_child(config, Path(tmp) / "b", redis.url, db, NODE_B) as b,
                swarm_child(a.hello["port"]) as on_a,
                swarm_child(b.hello["port"]) as on_b,
                swarm_child(a.hello["port"], realtime=True) as bet_a,
                swarm_child(b.hello["port"], realtime=True) as bet_b,
            ):
                open_viewers(on_a, a, viewers // 2, ids)
                open_viewers(on_b, b, viewers - viewers // 2, ids)
                time.sleep(1.0)
                bet_tables = [ids[i % n_tables] for i in range(bettors)]
                pids = [a.pid, b.pid, redis.process.pid]
                clients = (on_a, on_b, bet_a, bet_b)
                for r in (0.0, rate):
                    rows.append(
                        _betack_phase(
                            a,
                            b,
                            clients,
                            pids,
                            r,
                            seconds,
                            bet_tables,
                            interval,
                            viewers / n_tables,
                        )
                    )
                scheduling = str(bet_a.hello.get("scheduling", "normal"))
    return {"rows": rows, "scheduling": scheduling}


def _betack_phase(
    a: Child,
    b: Child,
    clients: tuple[Child, Child, Child, Child],
    pids: list[int],
    rate: float,
    seconds: float,
    tables: list[str],
    interval: float,
    per_table: float,
) -> dict[str, Any]:
    on_a, on_b, bet_a, bet_b = clients
    frames0 = on_a.call("count")["total"] + on_b.call("count")["total"]
    cpu0, wall0 = _cpu(pids), time.perf_counter()
    for node in (a, b):
        node.call("lag_start")
    a.call("pace", events_per_s=rate / per_table, seconds=seconds + 1.0)
    for bettors in (bet_a, bet_b):
        bettors.send(
            "bet", tables=tables, seconds=seconds, interval=interval, spot="red", amount=100
        )
    owner, remote = bet_a._read(), bet_b._read()
    paced = a.call("pace_result")
    lags = [node.call("lag_stop") for node in (a, b)]
    wall = time.perf_counter() - wall0
    cpu = [c1 - c0 for c0, c1 in zip(cpu0, _cpu(pids), strict=True)]
    frames = on_a.call("count")["total"] + on_b.call("count")["total"] - frames0
    sides = {}
    for side, result in (("owner", owner), ("remote", remote)):
        acks = result["acks"]
        sides[side] = {
            "acks": len(acks),
            "p50": percentile(acks, 0.50),
            "p99": percentile(acks, 0.99),
            "max": max(acks) if acks else float("nan"),
            "errors": result["errors"],
            "unanswered": result["unanswered"],
        }
    return {
        "rate": rate,
        "frames_per_s": frames / wall,
        "shed": paced.get("shed", 0),
        "shares": [c / wall for c in cpu],
        "lags": lags,
        **sides,
    }


# --- 5. failover ------------------------------------------------------------------------------

BUSY = "busy"


def failover_toml(lease: float) -> str:
    tables = [
        (BUSY, "baccarat"),
        ("roulette", "roulette"),
        ("war", "casino_war"),
        ("baccarat-2", "baccarat"),
    ]
    blocks = [f"[cluster]\nlease_seconds = {lease:g}\n\n[server]\nstarting_balance = 100000000\n"]
    for table, game in tables:
        blocks.append(
            f'[[tables]]\nid = "{table}"\nname = "{table}"\ngame = "{game}"\n'
            "betting_seconds = 0.8\npause_seconds = 0.2\nminimum = 100\nmaximum = 100000\n"
        )
    return "\n".join(blocks)


def run_failover(leases: list[float], kills: int, seed: int = 18) -> dict[str, Any]:
    rows = []
    for lease in leases:
        rows.append({"lease": lease, **_failover_once(lease, kills, random.Random(seed))})
    return {"rows": rows}


def _failover_once(lease: float, kills: int, rng: random.Random) -> dict[str, Any]:
    from redis import Redis

    from tests.cluster.nodes import Node, start_node
    from tests.cluster.players import ChaosPlayer
    from tests.cluster.test_kill import owner_of, rounds_opened

    @dataclass
    class RoamingPlayer(ChaosPlayer):
        """A ChaosPlayer that logs in again at the next node when its node goes away (the
        load balancer's part in tests/cluster/test_kill.py)."""

        urls: list[str] = field(default_factory=list)
        tries: int = 0

        async def _session(self, stop: asyncio.Event) -> None:
            self.url = self.urls[self.tries % len(self.urls)]
            self.tries += 1
            await super()._session(stop)

    taken: list[float] = []
    running: list[float] = []
    with (
        tempfile.TemporaryDirectory() as tmp,
        redis_server(Path(tmp) / "redis") as redis_proc,
        database() as db,
    ):
        config = Path(tmp) / "cluster.toml"
        config.write_text(failover_toml(lease))
        nodes: list[Node] = [
            start_node(Path(tmp), f"node-{n}", config, redis_proc.url, db) for n in (1, 2, 3)
        ]
        by_id = {node.node_id: node for node in nodes}
        redis = Redis.from_url(redis_proc.url)
        try:
            for node in nodes:
                node.wait_ready()
            urls = [f"ws://127.0.0.1:{node.port}/ws" for node in nodes]
            tables = re.findall(r'^id = "([^"]+)"', config.read_text(), re.M)

            async def play() -> None:
                players = [
                    RoamingPlayer(urls[0], t, random.Random(n), urls=urls[n:] + urls[:n])
                    for n, t in enumerate([*tables, BUSY, BUSY])
                ]
                stop = asyncio.Event()
                tasks = [asyncio.create_task(p.run(stop)) for p in players]
                try:
                    await asyncio.sleep(2)
                    for _ in range(kills):
                        await asyncio.sleep(rng.uniform(0.3, 1.5))  # a moment of a round
                        waited = time.monotonic()
                        while (victim := owner_of(redis, BUSY)) is None:  # being handed over
                            if time.monotonic() - waited > 30:
                                raise RuntimeError(f"{BUSY} stays without a node")
                            await asyncio.sleep(0.02)
                        opened = await asyncio.to_thread(rounds_opened, db, BUSY)
                        by_id[victim].kill()
                        killed = time.monotonic()
                        lease_at = None
                        while True:
                            owner = owner_of(redis, BUSY)
                            if owner not in (None, victim) and lease_at is None:
                                lease_at = time.monotonic()
                            if lease_at is not None and (
                                await asyncio.to_thread(rounds_opened, db, BUSY) > opened
                            ):
                                break
                            if time.monotonic() - killed > 60:
                                raise RuntimeError(f"{BUSY} never came back after a kill")
                            await asyncio.sleep(0.02)
                        running.append(time.monotonic() - killed)
                        taken.append(lease_at - killed)
                        by_id[victim].start()  # the operator's supervisor restarts it
                        await asyncio.to_thread(by_id[victim].wait_ready, 60)
                finally:
                    stop.set()
                    await asyncio.gather(*tasks, return_exceptions=True)

            asyncio.run(play())
        finally:
            redis.close()
            for node in nodes:
                node.kill()
    return {"taken": taken, "running": running}


# --- the section ------------------------------------------------------------------------------


def _verdict(ok: bool) -> str:
    return "meets" if ok else "MISSES"


def _spread(values: list[float]) -> list[float]:
    return [min(values), percentile(values, 0.5), percentile(values, 0.9), max(values)]


def render(result: dict[str, Any], command: str, args: argparse.Namespace) -> str:
    fan = {r["path"]: r for r in result["fanout"]["rows"]}
    pub = result["publish"]
    con = result["consume"]["rows"]
    bet = result["betack"]["rows"]
    fail = result["failover"]["rows"]
    remote = fan["remote"]
    bus = pub["buses"][0]
    pub_ratio = bus["ratio"]
    worst_bus = min(r["events_per_s"] for r in con if r["kind"] == "bus")
    loaded = bet[-1]
    bet_ratio = loaded["remote"]["p99"] / loaded["owner"]["p99"]
    fail_ok = all(max(r["taken"]) <= r["lease"] * 7 / 6 for r in fail)
    worst_fail = max(max(r["taken"]) / r["lease"] for r in fail)
    lines = [
        "## Cluster: nodes on Redis against one node and against Redis's own tools",
        "",
        f"Command: `{command}` ({machine_line()}; load average at the end {result['loadavg']}).",
        "Nodes pinned to CPU 0; redis-server (the run's own, no persistence) and the clients "
        "to CPU 1; redis-benchmark and the bus's publisher and subscriber, like a node, to "
        "CPU 0; PostgreSQL is the machine's. Each ratio is against a baseline measured in "
        "the same run; the module docstring of `loadtests/bench_cluster.py` gives each "
        "part's method.",
        "",
        "| Target | measured | |",
        "|---|---|---|",
        f"| fan-out across nodes ≥ {FANOUT_TARGET}× one node, in frames per CPU-second of "
        f"every process | {remote['ratio']:.2f}× | {_verdict(remote['ratio'] >= FANOUT_TARGET)} |",
        f"| publishing: `EventBus`, batched by turn and busy millisecond ({bus['burst']} "
        "events per tick), "
        f"≥ {PUBLISH_TARGET}× `redis-benchmark -P 16` PUBLISH of the same bytes per event "
        f"| {pub_ratio:.2f}× ("
        + ", ".join(f"{b['ratio']:.2f}× at {b['burst']} per tick" for b in pub["buses"][1:])
        + f") | {_verdict(pub_ratio >= PUBLISH_TARGET)} |",
        f"| consuming: ≥ {CONSUME_TARGET:,} table events/s per node (its worst case: one "
        f"event per message) | {worst_bus:,.0f} | {_verdict(worst_bus >= CONSUME_TARGET)} |",
        f"| bet-ack p99 on a node that does not own the table ≤ {BETACK_TARGET:g}× on the "
        f"owner ({args.betack_viewers:,} viewers, {args.rate:,.0f} frames/s) | "
        f"{bet_ratio:.2f}× | {_verdict(bet_ratio <= BETACK_TARGET)} |",
        "| failover: another node takes the table within a lease time and a tick (a sixth "
        "of the lease; `server/cluster/node.py`) | worst "
        f"{worst_fail:.2f} leases | {_verdict(fail_ok)} |",
        "",
        f"**1. Fan-out.** {args.viewers:,} spectators of one table (joined through the "
        f"protocol, on the node named); {args.events:,} `card_dealt` events per pass through "
        f"`TableRuntime._emit_raw`, {args.burst} per event-loop tick, {args.chunk} at a time "
        "with one such chunk in flight, as fast as the clients take them; median of "
        f"{args.repeat} interleaved passes. CPU of every process of the path "
        "(`/proc/<pid>/stat`); completeness = frames counted ÷ events × viewers (worst "
        "pass).",
        "",
        "| Path | frames per CPU-s, all processes | frames/s (wall) | CPU share: node A "
        "(owner) / node B / redis / clients | completeness | × one node |",
        "|---|---:|---:|---|---:|---:|",
    ]
    for key, label in FANOUT_PATHS.items():
        r = fan[key]
        shares = [f"{x:.0%}" for x in r["shares"]]
        if key.startswith("single"):
            shares = [shares[0], "—", "—", shares[1]]
        lines.append(
            f"| {label} | {r['per_cpu_s']:,.0f} | {r['per_wall_s']:,.0f} | "
            f"{' / '.join(shares)} | {r['complete']:.3f} | {r['ratio']:.2f} |"
        )
    lines += [
        "",
        f"**2. Publishing.** {args.publish_events:,} events per pass: `EventBus.publish` "
        "called as tables call it, over 16 tables, as fast as the bus takes them (the "
        "caller waits while 8,192 are queued), a given number per event-loop tick; the bus "
        "sends each batch (a turn's events, or a busy millisecond's: `EventBus.linger`) as "
        "one PUBLISH and one XADD per table (the history); a "
        f"{len(bench_frame())}-byte `card_dealt` frame, {pub['event_bytes']} bytes of the "
        "message per event. Messages counted by Redis (`INFO commandstats`). Baseline: "
        f"`redis-benchmark -p PORT -P 16 -n {args.publish_requests} --csv -x PUBLISH "
        f"{CHANNEL}` (50 connections; the payload on standard input: `-d` sizes only the "
        "built-in tests, which have no PUBLISH). Each figure is the median of "
        f"{args.repeat} interleaved passes, each ratio the median of the passes' own "
        "ratios to their baseline.",
        "",
        "| Publisher | events per tick | bytes per message | events per message | "
        "messages/s | events/s | × redis-benchmark, events/s | CPU share |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
        f"| `redis-benchmark -P 16` PUBLISH, one event's bytes (baseline) | — | "
        f"{pub['event_bytes']} | 1 | {pub['base']:,.0f} | {pub['base']:,.0f} | 1.00 | — |",
    ]
    for b in pub["buses"]:
        lines.append(
            f"| `EventBus`, batched by turn and busy millisecond | {b['burst']} | "
            f"{b['message_bytes']:,.0f} | {b['per_message']:,.1f} | "
            f"{b['messages_per_s']:,.0f} | {b['events_per_s']:,.0f} | "
            f"{b['ratio']:.2f} | {b['cpu']:.0%} |"
        )
    for b in pub["buses"]:
        lines.append(
            f"| the same caller, the bus never sending (the ticks' own cost: a ceiling) | "
            f"{b['burst']} | — | — | — | {b['alone_per_s']:,.0f} | "
            f"{b['alone_ratio']:.2f} | — |"
        )
    lines.append(
        f"| redis-py, `await publish()` one at a time (reference) | — | {pub['event_bytes']} "
        f"| 1 | {pub['slow']:,.0f} | {pub['slow']:,.0f} | {pub['slow'] / pub['base']:.3f} "
        "| — |"
    )
    lines += [
        "",
        "The bus's messages against `redis-benchmark -P 16` PUBLISHing a message of the "
        "same size: "
        + "; ".join(
            f"{b['burst']} per tick: {b['messages_per_s']:,.0f}/s against "
            f"{b['whole']:,.0f}/s ({b['messages_per_s'] / b['whole']:.3f}×)"
            for b in pub["buses"]
        )
        + ". History entries: "
        + ", ".join(f"{b['xadds_per_event']:.3f} XADD per event" for b in pub["buses"])
        + f"; batches lost: {sum(b['failures'] for b in pub['buses'])}.",
        "",
        f"**3. Consuming.** {args.consume_events:,} events per case, in messages of 1, 4 or "
        "16 events as the owner's bus publishes them, queued by Redis while the consumer is "
        "stopped (SIGSTOP), then drained as fast as it can; timed by the consumer from its "
        f"first message to its last, median of {args.repeat} passes. A one-event message is "
        f"{result['consume']['payload']} bytes.",
        "",
        "| Subscriber | events per message | messages/s | events/s | events per CPU-s "
        "| × redis-py, events/s | target |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for r in con:
        plain = r["kind"] == "plain"
        name = (
            "redis-py `PubSub.get_message` loop, counting messages (baseline)"
            if plain
            else "`EventBus` subscriber: decode the batch, hand it to `deliver`"
        )
        target = "—" if plain else _verdict(r["events_per_s"] >= CONSUME_TARGET)
        lines.append(
            f"| {name} | {r['batch']} | {r['messages_per_s']:,.0f} | {r['events_per_s']:,.0f} "
            f"| {r['per_cpu_s']:,.0f} | {r['ratio']:.2f} | {target} |"
        )
    lines += [
        "",
        f"**4. Bet acknowledgement.** {args.betack_viewers:,} spectators over "
        f"{args.betack_tables} roulette tables run by node A (real rounds: 15 s betting, 4 s "
        f"pause), half of them connected to A and half to B; {args.bettors} bettors on each "
        "node at the same tables, at the same time, each placing a bet every "
        f"{args.interval * 1e3:.0f} ms while betting is open, {args.seconds:g} s per phase; "
        "A adds paced public events for the broadcast asked, counted over both nodes' "
        "viewers. A bet on B goes to A through Redis (`server.cluster.rpc`) and its answer "
        "comes back the same way; every bet waits for its durable debit in PostgreSQL "
        "before its acknowledgement. Bettors' clients scheduled "
        f"{result['betack']['scheduling']} on CPU 1, as in bench_betack. Loop stalls: a "
        "task in each node sleeping 1 ms at a time, woken more than 10 ms late.",
        "",
        "| broadcast asked, frames/s | delivered, frames/s | bettor on | acks | p50 ms "
        "| p99 ms | max ms | × owner p99 | refused / unanswered | CPU share A / B / redis "
        "| loop stalls > 10 ms (longest, ms) A; B |",
        "|---:|---:|---|---:|---:|---:|---:|---:|---|---|---|",
    ]
    for r in bet:
        for side in ("owner", "remote"):
            x = r[side]
            refused = sum(x["errors"].values())
            codes = ", ".join(f"{k} {v}" for k, v in sorted(x["errors"].items()))
            lines.append(
                f"| {r['rate']:,.0f} | {r['frames_per_s']:,.0f} | "
                f"{'A, the owner' if side == 'owner' else 'B, not the owner'} | "
                f"{x['acks']:,} | {x['p50']:.2f} | {x['p99']:.2f} | {x['max']:.1f} | "
                f"{x['p99'] / r['owner']['p99']:.2f} | "
                f"{refused}{f' ({codes})' if codes else ''} / {x['unanswered']} | "
                f"{' / '.join(f'{c:.0%}' for c in r['shares'])} | "
                f"{r['lags'][0]['over_10ms']} ({r['lags'][0]['max']:.0f}); "
                f"{r['lags'][1]['over_10ms']} ({r['lags'][1]['max']:.0f}) |"
            )
    lines += [
        "",
        "**5. Failover.** Three `croupier serve` nodes (tests/cluster/nodes.py), four tables "
        "(0.8 s betting, 0.2 s pause), a player at every table and two more at the busy one, "
        "each logging in again at the next node when theirs goes away; the busy table's "
        f"owner killed with SIGKILL {args.kills} times per lease, 0.3–1.5 s after the table "
        "last came back, and restarted. *Lease taken*: from the kill until another node "
        "holds the table's lease; *runs again*: until that node has also opened a new round "
        "of it in the shared journal. Polled every 20 ms.",
        "",
        "| Lease | kills | lease taken, s: min / median / p90 / max | runs again, s: min "
        "| median | p90 | max | target: lease taken ≤ lease + tick |",
        "|---:|---:|---|---:|---:|---:|---:|---|",
    ]
    for r in fail:
        taken = " / ".join(f"{v:.2f}" for v in _spread(r["taken"]))
        running = " | ".join(f"{v:.2f}" for v in _spread(r["running"]))
        bound = r["lease"] * 7 / 6
        lines.append(
            f"| {r['lease']:g} s | {len(r['running'])} | {taken} | {running} | "
            f"{_verdict(max(r['taken']) <= bound)} (≤ {bound:.2f} s) |"
        )
    lines += ["", *_meaning(result, args)]
    return "\n".join(lines)


def _meaning(result: dict[str, Any], args: argparse.Namespace) -> list[str]:
    """The section's "what this means", from the figures."""
    fan = {r["path"]: r for r in result["fanout"]["rows"]}
    pub = result["publish"]
    con = {(r["kind"], r["batch"]): r for r in result["consume"]["rows"]}
    loaded = result["betack"]["rows"][-1]
    fail = result["failover"]["rows"]
    first, last = pub["buses"][0], pub["buses"][-1]
    extra = [median([a - b for a, b in zip(r["running"], r["taken"], strict=True)]) for r in fail]
    one = con[("bus", 1)]
    remote, chunked = fan["remote"], fan["single_chunk"]
    alone = pub["buses"][0]["alone_ratio"]
    bus_us = 1e6 / first["events_per_s"] - 1e6 / first["alone_per_s"]
    bus_share = (
        f"the bus's share: {bus_us:.2f} µs an event"
        if bus_us > 0
        else "the bus's own cost lost in the run-to-run spread of the caller's"
    )
    return [
        "What this means. *Fan-out*: crossing Redis costs per event, not per viewer: the "
        f"owner spent {remote['shares'][0]:.0%} of its CPU and Redis {remote['shares'][2]:.0%} "
        f"while node B delivered every frame, and the path came to {remote['ratio']:.2f}× one "
        "node. B hands out each bus message (often several of the owner's ticks) at once, "
        f"which is why it compares with one node given a whole chunk per tick "
        f"({chunked['ratio']:.2f}×) as much as with one at {args.burst} per tick. "
        f"*Publishing*: the publisher is bound by its own Python ({first['cpu']:.0%} of its "
        f"CPU). At {first['burst']} events per tick the caller's own ticks, with the bus "
        f"never sending, stop at {alone:.2f}× redis-benchmark's rate (the ceiling: "
        f"{1e6 / first['alone_per_s']:.2f} µs an event), and with the bus sending they came "
        f"to {first['ratio']:.2f}× ({bus_share}). A "
        f"busy bus sends at most one message a millisecond ({first['per_message']:,.0f} "
        "events each here), so a batch's fixed costs (the system calls, one XADD per table) "
        "fall on hundreds of events whatever the tick; at "
        f"{last['burst']} per tick {last['ratio']:.2f}×. Counted in "
        "messages the bus is far below redis-benchmark at the same message size, by design "
        "(one message per turn or busy millisecond); redis-py awaiting one `publish()` at a time "
        f"({pub['slow'] / pub['base']:.3f}×) is what publishing without batching gives. "
        "*Consuming*: read raw and parsed by hiredis, a node takes "
        f"{one['events_per_s']:,.0f} one-event messages a second, {one['ratio']:.1f}× "
        "redis-py's own subscriber, and more events still as messages carry more of them. "
        "*Bet acknowledgement*: a bet placed on a node that does not own the table makes "
        "two more Redis round trips (the command to the owner's list, the answer to the "
        "asker's) and waits for the same durable debit: p99 "
        f"{loaded['remote']['p99']:.2f} ms against {loaded['owner']['p99']:.2f} ms on the "
        f"owner, at {loaded['frames_per_s']:,.0f} frames/s delivered, both bettors timed in "
        "the same phase. Those tails, far above the medians ("
        f"{loaded['owner']['p50']:.2f} and {loaded['remote']['p50']:.2f} ms), are waits that "
        "hit both alike and are not the owner's event loop (its longest stall: "
        f"{loaded['lags'][0]['max']:.0f} ms); the reading notes under this section say what "
        "held them when they were measured. The "
        "tables node A takes at its start are spread over a round, as one node spreads its "
        "own (`ClusterNode._spread`). "
        "*Failover*: the lease decides it — a dead owner's lease runs out a "
        "lease time after its last renewal (at most a tick before the kill) and the next "
        "tick of another node takes the table; recovering the round in play and opening the "
        "next took a median "
        + " and ".join(
            f"{e * 1e3:.0f} ms (lease {r['lease']:g} s)" for e, r in zip(extra, fail, strict=True)
        )
        + " more.",
    ]


def run(args: argparse.Namespace, betting: float = 15, pause: float = 4) -> dict[str, Any]:
    """Every part, with ``args`` as the command line gives them (``betting``/``pause``: the
    bet-ack tables' rounds, shorter in the tests)."""
    return {
        "fanout": run_fanout(args.viewers, args.events, args.chunk, args.burst, args.repeat),
        "publish": run_publish(
            args.publish_events,
            [int(b) for b in args.publish_bursts.split(",")],
            args.publish_requests,
            args.one_at_a_time,
            args.repeat,
        ),
        "consume": run_consume(args.consume_events, args.repeat),
        "betack": run_betack(
            args.betack_viewers,
            args.betack_tables,
            args.rate,
            args.seconds,
            args.bettors,
            args.interval,
            betting,
            pause,
        ),
        "failover": run_failover([float(x) for x in args.leases.split(",")], args.kills),
        "loadavg": loadavg(),
    }


OPTIONS: list[Option] = [
    ("--viewers", int, 1000, "fan-out: spectators of the table"),
    ("--events", int, 400, "fan-out: events per pass"),
    ("--chunk", int, 40, "fan-out: events emitted at a time (one chunk in flight)"),
    ("--burst", int, 4, "fan-out: events per event-loop tick"),
    ("--repeat", int, 3, "passes (fan-out, publishing, consuming)"),
    ("--publish-events", int, 400_000, "publishing: events per pass"),
    (
        "--publish-bursts",
        str,
        "4,16,64",
        "publishing: events per tick, one run each (the first is the target's)",
    ),
    ("--publish-requests", int, 1_000_000, "publishing: redis-benchmark's -n"),
    ("--one-at-a-time", int, 20_000, "publishing: redis-py's one-at-a-time publishes"),
    ("--consume-events", int, 400_000, "consuming: events per case"),
    ("--betack-viewers", int, 1000, "bet-ack: spectators"),
    ("--betack-tables", int, 100, "bet-ack: tables"),
    ("--rate", float, 10_000, "bet-ack: broadcast frames/s asked"),
    ("--seconds", float, 30, "bet-ack: seconds per phase"),
    ("--bettors", int, 10, "bet-ack: bettors per node"),
    ("--interval", float, 0.25, "bet-ack: seconds between one bettor's bets"),
    ("--kills", int, 20, "failover: kills per lease"),
    ("--leases", str, "1,3", "failover: lease seconds, one kill test each"),
]


def main() -> int:
    parser = option_parser(__doc__.splitlines()[0], OPTIONS)
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    result = run(args)
    text = render(result, command_line("loadtests.bench_cluster", args, OPTIONS), args)
    print(text)
    if not args.no_write:
        write_section("cluster", text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
