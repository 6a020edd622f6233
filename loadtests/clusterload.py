"""Machinery of the cluster benchmarks (loadtests/bench_cluster.py).

What a cluster run needs besides ``loadtests.wsload``'s clients and harness: a private
``redis-server`` (tests/redis_server.py) and PostgreSQL database (tests/postgres.py), croupier
cluster nodes as benchmark children, and the EventBus's publishing and subscribing sides
each in a process of its own. Children are this module run as a script, driven by JSON lines
on stdin like ``loadtests.wsload``'s:

    python -m loadtests.clusterload node --config F --data-dir D [--redis URL --database URL
        --node-id ID]                                     # a croupier node (a Service)
    python -m loadtests.clusterload publish --redis URL --events N --burst B --tables T
    python -m loadtests.clusterload consume --redis URL --kind bus|plain --events N --batch K

Node commands (besides ``wsload.ServerHarness``'s): ``owned`` (the tables it runs),
``emit`` (events at one table, ``burst`` per event-loop tick, returning once Redis has them),
``pace`` / ``pace_result`` (events across its tables at a steady rate), ``bus`` (its bus's
counters). ``publish`` and ``consume`` run once and print their result as one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from loadtests.wsload import (
    CLIENT_CPU,
    FANOUT_EVENT,
    PYTHON,
    ROOT,
    SERVER_CPU,
    YIELD_EVERY,
    Child,
    ServerHarness,
    _command_loop,
    pin,
    raise_nofile,
)

TABLE = "t0"  # the table whose events the consuming benchmarks carry
CHANNEL = f"croupier:events:{TABLE}"  # its channel on the EventBus, with the default prefix
PUBLISHER_NODE, OTHER_NODE = "bench-pub", "bench-other"

# --- Redis and PostgreSQL of the run's own --------------------------------------------------


@contextlib.contextmanager
def redis_server(workdir: Path, cpu: int = CLIENT_CPU) -> Iterator[Any]:
    """A ``redis-server`` of the run's own (tests/redis_server.py), pinned to ``cpu``."""
    import shutil

    from tests.redis_server import RedisServer

    binary = shutil.which("redis-server")
    if binary is None:
        raise RuntimeError("no redis-server on PATH (Debian package redis-server)")
    workdir.mkdir(parents=True, exist_ok=True)
    server = RedisServer(binary, workdir)
    server.start()
    try:
        assert server.process is not None
        place(server.process.pid, cpu)
        yield server
    finally:
        server.stop()


def place(pid: int, cpu: int) -> None:
    """Pin another process to one CPU (best effort, as ``wsload.pin``)."""
    with contextlib.suppress(AttributeError, OSError):
        if len(os.sched_getaffinity(0)) > 1 and cpu < (os.cpu_count() or 1):
            os.sched_setaffinity(pid, {cpu})


@contextlib.contextmanager
def database() -> Iterator[str]:
    """A PostgreSQL database of the run's own, migrated, dropped at the end (on the server
    the tests use: tests/postgres.py, ``CROUPIER_TEST_POSTGRES``)."""
    from server.pg_storage import migrate
    from tests.postgres import fresh_database

    with fresh_database() as url:
        migrate(url)
        yield url


def redis_command(port: int, *args: bytes | str) -> bytes:
    """One command on a fresh connection; the raw reply."""
    parts = [a.encode() if isinstance(a, str) else a for a in args]
    packed = b"*%d\r\n" % len(parts) + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(packed)
        reply = b""
        while not reply.endswith(b"\r\n"):
            chunk = s.recv(1 << 16)
            if not chunk:
                break
            reply += chunk
        return reply


def command_calls(port: int, command: str) -> int:
    """How many times Redis ran ``command`` (INFO commandstats)."""
    text = _info(port, "commandstats")
    for line in text.splitlines():
        if line.startswith(f"cmdstat_{command}:"):
            return int(line.split("calls=", 1)[1].split(",", 1)[0])
    return 0


def _info(port: int, section: str) -> str:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(f"INFO {section}\r\n".encode())
        data = b""
        while True:
            data += s.recv(1 << 16)
            head, _, rest = data.partition(b"\r\n")
            if head.startswith(b"$") and len(rest) >= int(head[1:]):
                return rest.decode()


# --- croupier nodes ---------------------------------------------------------------------------


class ScriptChild(Child):
    """A child process of this module (``wsload.Child`` runs ``loadtests.wsload``)."""

    def __init__(self, argv: list[str], cpu: int) -> None:
        self.proc = subprocess.Popen(
            [PYTHON, "-m", "loadtests.clusterload", *argv, "--cpu", str(cpu)],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        self.hello = self._read()
        self.pid = self.proc.pid


def node_child(
    config: Path,
    data_dir: Path,
    redis_url: str | None = None,
    database_url: str | None = None,
    node_id: str | None = None,
    cpu: int = SERVER_CPU,
) -> ScriptChild:
    """A croupier node; without ``redis_url``, a single node outside any cluster."""
    argv = ["node", "--config", str(config), "--data-dir", str(data_dir)]
    if redis_url is not None:
        argv += ["--redis", redis_url, "--database", str(database_url), "--node-id", str(node_id)]
    return ScriptChild(argv, cpu)


class NodeHarness(ServerHarness):
    """A croupier ``Service`` — a cluster node when given Redis — and the benchmark's
    commands to it. Runs inside the node's process."""

    def __init__(self, redis_url: str | None, database_url: str | None, node_id: str | None):
        super().__init__("croupier")
        self.redis_url, self.database_url, self.node_id = redis_url, database_url, node_id
        self.pace_task: asyncio.Task[dict[str, Any]] | None = None

    async def start(self, config: str | None, data_dir: str | None, manual: bool) -> int:
        if self.redis_url is None:
            return await super().start(config, data_dir, manual)
        from server.app.process import tune_gc
        from server.app.service import Service
        from server.config import load_config

        assert config is not None and data_dir is not None
        self.service = Service(
            load_config(Path(config)),
            Path(data_dir),
            port=0,
            database_url=self.database_url,
            redis_url=self.redis_url,
            node_id=self.node_id,
        )
        await self.service.start()
        tune_gc()  # as `croupier serve` does
        return int(self.service.port)

    def _connections(self) -> list[Any]:
        cluster = self.service.cluster
        if cluster is None:
            return super()._connections()
        return [v.session.ws for door in cluster.doors.values() for v in door.viewers]

    def _owned(self) -> list[Any]:
        cluster = self.service.cluster
        tables = self.service.casino.tables
        ids = sorted(cluster.owned if cluster is not None else tables)
        return [tables[t] for t in ids if t in tables]

    async def emit(self, table_id: str, events: int, burst: int) -> dict[str, Any]:
        """``events`` public events at one table through the shipped path
        (``TableRuntime._emit_raw``: framed once, to this node's viewers and, in a cluster,
        to the bus), ``burst`` per event-loop tick; returns once Redis has them all."""
        table = self.service.casino.tables[table_id]
        start = time.perf_counter()
        done = 0
        while done < events:
            for _ in range(min(burst, events - done)):
                table._emit_raw(table.round_id or "", "card_dealt", FANOUT_EVENT, None)
            done += burst
            await asyncio.sleep(0)
        if self.service.cluster is not None:
            await self.service.cluster.bus.flush()
        return {"seconds": time.perf_counter() - start}

    async def pace(self, events_per_s: float, seconds: float, tick: float) -> dict[str, Any]:
        """Public events across every table this node runs, round robin, at a steady rate
        (the bet-ack benchmark's broadcast load, counted in events: in a cluster each goes
        to the viewers of every node). Like ``wsload``'s paced load it yields every few
        events and sheds what falls more than 50 ms behind."""
        tables = self._owned()
        if not tables or events_per_s <= 0:
            await asyncio.sleep(seconds)
            return {"events": 0, "shed": 0}
        start = time.perf_counter()
        events = shed = 0
        while (now := time.perf_counter()) - start < seconds:
            due = events_per_s * (now - start)
            behind = events_per_s * 0.05
            if due - events > behind:
                shed += int(due - events - behind)
                events = int(due - behind)
            while events < due:
                table = tables[events % len(tables)]
                table._emit_raw(table.round_id or "", "card_dealt", FANOUT_EVENT, None)
                events += 1
                if events % YIELD_EVERY == 0:
                    await asyncio.sleep(0)
            await asyncio.sleep(tick)
        return {"events": events - shed, "shed": shed, "seconds": time.perf_counter() - start}

    async def handle(self, cmd: dict[str, Any]) -> dict[str, Any]:
        op = cmd["cmd"]
        cluster = self.service.cluster
        if op == "owned":
            return {"owned": [t.id for t in self._owned()]}
        if op == "emit":
            return await self.emit(cmd["table"], cmd["events"], cmd["burst"])
        if op == "pace":
            self.pace_task = asyncio.create_task(
                self.pace(cmd["events_per_s"], cmd["seconds"], cmd.get("tick", 0.002))
            )
            return {"started": True}
        if op == "pace_result":
            assert self.pace_task is not None
            return await self.pace_task
        if op == "bus":
            if cluster is None:
                return {"published": 0, "received": 0, "failures": 0}
            bus = cluster.bus
            return {
                "published": bus.published,
                "received": bus.received,
                "failures": bus.publish_failures,
            }
        return await super().handle(cmd)


async def _node_main(args: argparse.Namespace) -> None:
    harness = NodeHarness(args.redis, args.database, args.node_id)
    port = await harness.start(args.config, args.data_dir, False)
    print(json.dumps({"port": port, "pid": os.getpid()}), flush=True)
    # Then exit without leaving the cluster: a hand-over would wait for the round in play.
    await _command_loop(harness.handle)


# --- the bus on its own: publishing and consuming ---------------------------------------------


def bench_frame() -> bytes:
    """The frame the benchmarks publish: a ``card_dealt`` TableEvent, as a table frames it."""
    from server.protocol.codec import encode
    from server.protocol.messages import TableEvent

    return encode(
        TableEvent(table="t0", seq=1, round="t0.1", event="card_dealt", data=FANOUT_EVENT)
    )


def batch_payload(node: str, events: int, frame: bytes, tables: int = 1) -> bytes:
    """One bus message as ``EventBus.flush`` publishes it: ``events`` events of ``tables``
    tables (one: each table's events go on its own channel, ``TABLE``'s first)."""
    import msgspec

    groups: dict[str, list[tuple[int, None, bytes]]] = {}
    for i in range(events):
        groups.setdefault(f"t{i % tables}", []).append((1000 + i, None, frame))
    return msgspec.msgpack.encode((node, list(groups.items())))


def _drop_queued(bus: Any) -> int:
    """Empty the bus's queue as a flush would, without sending it: how many events."""
    events, bus._pending, bus._unkept, bus.queued = bus.queued, {}, set(), 0
    return int(events)


async def _publish(args: argparse.Namespace) -> dict[str, Any]:
    """The owner's side: ``EventBus.publish`` as tables call it, ``burst`` events per
    event-loop tick across ``tables`` tables, as fast as the bus takes them (a bounded
    queue); the bus batches each turn into one PUBLISH and one XADD per table. With
    ``no_flush`` the bus is never started and its queue is dropped instead of sent: what
    the producer and its ticks cost alone."""
    from redis.asyncio import Redis

    from server.cluster.bus import EventBus

    redis = Redis.from_url(args.redis, socket_timeout=10, socket_connect_timeout=5)
    bus = EventBus(redis, PUBLISHER_NODE, lambda batch: None)
    if not args.no_flush:
        await bus.start()
    frame = bench_frame()
    tables = [f"t{i}" for i in range(args.tables)]
    seq = dropped = 0
    cpu0, start = time.process_time(), time.perf_counter()
    while seq < args.events:
        for _ in range(min(args.burst, args.events - seq)):
            seq += 1
            bus.publish(tables[seq % len(tables)], seq, None, frame)
        await asyncio.sleep(0)
        while bus.queued > 8192:  # the producer waits for the bus, not the reverse
            if args.no_flush:
                dropped += _drop_queued(bus)
            await asyncio.sleep(0)
    if args.no_flush:
        dropped += _drop_queued(bus)
    await bus.flush()  # after the batch in flight: every event is in Redis
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu0
    result = {
        "events": bus.published + dropped,
        "failures": bus.publish_failures,
        "seconds": seconds,
        "cpu": cpu,
    }
    if not args.no_flush:
        await bus.stop()
    await redis.aclose()
    return result


async def _publish_one_at_a_time(args: argparse.Namespace) -> dict[str, Any]:
    """redis-py as a reference: ``await redis.publish(channel, payload)``, one at a time."""
    from redis.asyncio import Redis

    redis = Redis.from_url(args.redis, socket_timeout=10, socket_connect_timeout=5)
    payload = b"x" * args.size
    await redis.ping()
    cpu0, start = time.process_time(), time.perf_counter()
    for _ in range(args.events):
        await redis.publish(CHANNEL, payload)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu0
    await redis.aclose()
    return {"events": args.events, "failures": 0, "seconds": seconds, "cpu": cpu}


async def _consume(args: argparse.Namespace) -> dict[str, Any]:
    """A node's side: ``EventBus``'s subscriber decoding every batch and handing its events
    to ``deliver`` (``kind == "bus"``), or redis-py's plain ``PubSub.get_message`` loop
    counting messages (``plain``). Says ``ready`` once subscribed, then times from the first
    message to the ``events``-th event."""
    from redis.asyncio import Redis

    from server.cluster.bus import EventBus

    redis = Redis.from_url(args.redis, socket_timeout=None, socket_connect_timeout=5)
    want = args.events
    state = {"events": 0, "messages": 0, "t0": 0.0, "c0": 0.0}
    done = asyncio.get_running_loop().create_future()

    def count(events: int) -> None:
        if not state["messages"]:
            state["t0"], state["c0"] = time.perf_counter(), time.process_time()
        state["messages"] += 1
        state["events"] += events
        if state["events"] >= want and not done.done():
            done.set_result((time.perf_counter(), time.process_time()))

    if args.kind == "bus":
        bus = EventBus(redis, OTHER_NODE, lambda batch: count(sum(len(e) for _, e in batch)))
        await bus.start()
        await bus.watch(TABLE)
        print(json.dumps({"ready": True}), flush=True)
        t1, c1 = await done
        await bus.stop()
    else:
        pubsub = redis.pubsub(ignore_subscribe_messages=True)
        await pubsub.subscribe(CHANNEL)
        print(json.dumps({"ready": True}), flush=True)
        while not done.done():
            message = await pubsub.get_message(timeout=1.0)
            if message is not None and message.get("type") == "message":
                count(args.batch)
        t1, c1 = done.result()
        await pubsub.aclose()  # type: ignore[no-untyped-call]
    await redis.aclose()
    return {
        "events": state["events"],
        "messages": state["messages"],
        "seconds": t1 - state["t0"],
        "cpu": c1 - state["c0"],
    }


def flood(port: int, payload: bytes, messages: int, chunk: int = 512) -> float:
    """PUBLISH ``payload`` ``messages`` times on the bus's channel as fast as one raw
    connection takes them (written in chunks of prebuilt RESP, replies counted by a reader
    thread); seconds until Redis answered them all."""
    command = b"*3\r\n$7\r\nPUBLISH\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (
        len(CHANNEL),
        CHANNEL.encode(),
        len(payload),
        payload,
    )
    block = command * chunk
    start = time.perf_counter()
    with socket.create_connection(("127.0.0.1", port), timeout=120) as s:
        replies = [0]

        def read() -> None:  # every reply is an integer: ":<n>\r\n"
            while replies[0] < messages:
                data = s.recv(1 << 16)
                if not data:
                    return
                replies[0] += data.count(b"\r\n")

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        sent = 0
        while sent < messages:
            n = min(chunk, messages - sent)
            s.sendall(block if n == chunk else command * n)
            sent += n
        reader.join(120)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="role", required=True)
    n = sub.add_parser("node")
    n.add_argument("--config", required=True)
    n.add_argument("--data-dir", required=True)
    n.add_argument("--redis")
    n.add_argument("--database")
    n.add_argument("--node-id")
    n.add_argument("--cpu", type=int, default=SERVER_CPU)
    p = sub.add_parser("publish")
    p.add_argument("--redis", required=True)
    p.add_argument("--events", type=int, required=True)
    p.add_argument("--burst", type=int, default=4)
    p.add_argument("--tables", type=int, default=16)
    p.add_argument("--one-at-a-time", action="store_true")
    p.add_argument("--no-flush", action="store_true", help="the producer alone")
    p.add_argument("--size", type=int, default=100, help="payload bytes (--one-at-a-time)")
    p.add_argument("--cpu", type=int, default=SERVER_CPU)
    c = sub.add_parser("consume")
    c.add_argument("--redis", required=True)
    c.add_argument("--kind", choices=["bus", "plain"], required=True)
    c.add_argument("--events", type=int, required=True)
    c.add_argument("--batch", type=int, default=1, help="events per message")
    c.add_argument("--cpu", type=int, default=SERVER_CPU)
    args = parser.parse_args()
    pin(args.cpu)
    raise_nofile()
    import logging

    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("asyncio").setLevel(logging.ERROR)
    if args.role == "node":
        asyncio.run(_node_main(args))
    elif args.role == "publish":
        run = _publish_one_at_a_time if args.one_at_a_time else _publish
        print(json.dumps(asyncio.run(run(args))), flush=True)
    else:
        print(json.dumps(asyncio.run(_consume(args))), flush=True)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
