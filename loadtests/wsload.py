"""Shared machinery of the server benchmarks: cheap clients, server harnesses, /proc readings.

Why it looks like this (see the performance notes in the design): on a 2-core machine the
load generator must cost far less per frame than the server, so viewers are raw asyncio
protocols speaking just enough RFC 6455 (a fixed handshake, a zero masking key, frames
counted by their headers and never decoded). The server runs in its own process, pinned to
CPU 0, the clients on CPU 1, and the server is measured from outside through
``/proc/<pid>/stat`` (utime + stime) and ``/proc/<pid>/status`` (VmRSS).

Child processes are this module run as a script; the benchmark drives them with one JSON
command per line on stdin and reads one JSON reply per line on stdout:

    python -m loadtests.wsload server --kind croupier --config F --data-dir D [--manual-clock]
    python -m loadtests.wsload server --kind bare
    python -m loadtests.wsload swarm --port P --viewers N --tables a,b,c

Server commands: ``fanout`` (emit events as fast as the clients take them, through one of
several delivery paths), ``load`` / ``stop`` (paced broadcast across tables), ``profile``.
Swarm commands: ``open``, ``count``, ``wait``, ``bet`` (bettors measuring place_bet →
bet_accepted), ``close``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

SERVER_CPU, CLIENT_CPU = 0, 1
# The paced broadcast load gives the event loop back after this many table events.
YIELD_EVERY = 8
ROOT = Path(__file__).resolve().parents[1]
PYTHON = sys.executable

# --- /proc readings and process placement -----------------------------------------------------

_TICKS = os.sysconf("SC_CLK_TCK")


def proc_cpu(pid: int) -> float:
    """User + system CPU seconds of a process (all its threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS


def proc_rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for {pid}")


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def pin(cpu: int) -> None:
    """Run this process on one CPU when the machine has more than one (best effort)."""
    with contextlib.suppress(AttributeError, OSError):
        if len(os.sched_getaffinity(0)) > 1 and cpu < (os.cpu_count() or 1):
            os.sched_setaffinity(0, {cpu})


def prefer(realtime: bool) -> str:
    """Schedule this process ahead of the load generators on its CPU: a measuring client
    (the bettors) must not add its own wake-up delay, behind a saturated swarm of viewers,
    to the round trips it times. SCHED_FIFO when permitted (root), else nice -10, else
    nothing; returns which. The measuring client does little work, so it starves nobody."""
    if not realtime:
        return "normal"
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
        return "SCHED_FIFO"
    except (AttributeError, OSError):
        pass
    try:
        os.nice(-10)
        return "nice -10"
    except OSError:
        return "normal (no permission to raise it)"


def raise_nofile(want: int = 65536) -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = min(want, hard) if hard != resource.RLIM_INFINITY else want
    if soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


# --- a minimal RFC 6455 client ----------------------------------------------------------------

_HANDSHAKE = (
    b"GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
)


def client_frame(payload: bytes, opcode: int = 0x2) -> bytes:
    """A masked client frame with the all-zero masking key (legal, and masking is a no-op)."""
    n = len(payload)
    if n < 126:
        head = bytes((0x80 | opcode, 0x80 | n))
    elif n < 65536:
        head = bytes((0x80 | opcode, 0x80 | 126)) + n.to_bytes(2, "big")
    else:
        head = bytes((0x80 | opcode, 0x80 | 127)) + n.to_bytes(8, "big")
    return head + b"\0\0\0\0" + payload


def server_frame(payload: bytes) -> bytes:
    """An unmasked binary frame as a server sends it (used by the coalescing prototype)."""
    n = len(payload)
    if n < 126:
        return bytes((0x82, n)) + payload
    if n < 65536:
        return bytes((0x82, 126)) + n.to_bytes(2, "big") + payload
    return bytes((0x82, 127)) + n.to_bytes(8, "big") + payload


class RawClient(asyncio.Protocol):
    """Counts the data frames it receives; hands payloads to ``on_message`` when set."""

    def __init__(self, on_message: Callable[[bytes], None] | None = None) -> None:
        self.on_message = on_message
        self.frames = 0
        self.buf = bytearray()
        self.upgraded = False
        self.transport: asyncio.Transport | None = None
        loop = asyncio.get_running_loop()
        self.opened: asyncio.Future[None] = loop.create_future()
        self.closed: asyncio.Future[None] = loop.create_future()
        self.waiter: tuple[int, asyncio.Future[None]] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        transport.write(_HANDSHAKE)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.opened.done():
            self.opened.set_exception(ConnectionError("closed before the handshake"))
        if not self.closed.done():
            self.closed.set_result(None)

    def send(self, payload: bytes) -> None:
        assert self.transport is not None
        self.transport.write(client_frame(payload))

    def wait_frames(self, n: int) -> asyncio.Future[None]:
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if self.frames >= n:
            fut.set_result(None)
        else:
            self.waiter = (n, fut)
        return fut

    def data_received(self, data: bytes) -> None:
        buf = self.buf
        buf += data
        if not self.upgraded:
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                return
            if b" 101 " not in buf[: buf.find(b"\r\n")]:
                self.opened.set_exception(
                    ConnectionError(bytes(buf[:end]).decode(errors="replace"))
                )
                assert self.transport is not None
                self.transport.close()
                return
            del buf[: end + 4]
            self.upgraded = True
            self.opened.set_result(None)
        i, n, on_message = 0, len(buf), self.on_message
        frames = 0
        while n - i >= 2:
            b0, length = buf[i], buf[i + 1] & 0x7F
            head = 2
            if length == 126:
                if n - i < 4:
                    break
                length, head = int.from_bytes(buf[i + 2 : i + 4], "big"), 4
            elif length == 127:
                if n - i < 10:
                    break
                length, head = int.from_bytes(buf[i + 2 : i + 10], "big"), 10
            end = i + head + length
            if end > n:
                break
            opcode = b0 & 0x0F
            if opcode in (1, 2, 0):
                frames += 1
                if on_message is not None:
                    on_message(bytes(buf[i + head : end]))
            elif opcode == 9 and self.transport is not None:  # ping: the server's keepalive
                self.transport.write(client_frame(bytes(buf[i + head : end]), 0xA))
            elif opcode == 8 and self.transport is not None:
                self.transport.close()
            i = end
        if i:
            del buf[:i]
        self.frames += frames
        if self.waiter is not None and self.frames >= self.waiter[0]:
            if not self.waiter[1].done():
                self.waiter[1].set_result(None)
            self.waiter = None


async def connect_raw(
    port: int, index: int, on_message: Callable[[bytes], None] | None = None
) -> RawClient:
    """Connect from 127.0.0.(2 + index % 250) so 10,000-connection runs do not exhaust the
    ephemeral ports of one source address (TIME_WAIT from earlier runs)."""
    loop = asyncio.get_running_loop()
    source = (f"127.0.0.{2 + index % 250}", 0)
    _, proto = await loop.create_connection(
        lambda: RawClient(on_message), "127.0.0.1", port, local_addr=source
    )
    await proto.opened
    return proto


# --- the swarm: viewers and bettors (client CPU) ----------------------------------------------


def _encode_client(message: Any) -> bytes:
    from server.protocol.codec import encode

    return encode(message)


class Swarm:
    def __init__(self, port: int) -> None:
        self.port = port
        self.viewers: list[RawClient] = []
        self.attempted = 0

    async def open(
        self, viewers: int, tables: list[str], expect: int, batch: int = 100
    ) -> dict[str, Any]:
        from server.protocol.messages import PROTOCOL_VERSION, Hello, Join

        hello = _encode_client(Hello(version=PROTOCOL_VERSION, name="viewer"))
        joins = [_encode_client(Join(table=t, role="spectator")) for t in tables]
        start = time.perf_counter()
        failed = 0
        first, stop = self.attempted, self.attempted + viewers
        for lo in range(first, stop, batch):
            hi = min(stop, lo + batch)
            got = await asyncio.gather(
                *(connect_raw(self.port, i) for i in range(lo, hi)), return_exceptions=True
            )
            ready = []
            for i, client in zip(range(lo, hi), got, strict=True):
                if isinstance(client, BaseException):
                    failed += 1
                    continue
                client.send(hello)
                if joins:
                    client.send(joins[i % len(joins)])
                ready.append(client)
            if expect:
                await asyncio.wait_for(asyncio.gather(*(c.wait_frames(expect) for c in ready)), 120)
            self.viewers.extend(ready)
        self.attempted = stop
        return {"open": len(self.viewers), "failed": failed, "seconds": time.perf_counter() - start}

    def count(self) -> dict[str, Any]:
        frames = [c.frames for c in self.viewers]
        return {"total": sum(frames), "min": min(frames, default=0), "n": len(frames)}

    async def wait(self, each: int, timeout: float) -> dict[str, Any]:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(
                asyncio.gather(*(c.wait_frames(each) for c in self.viewers)), timeout
            )
        return self.count()

    async def close(self) -> dict[str, Any]:
        for c in self.viewers:
            if c.transport is not None:
                c.transport.close()
        self.viewers.clear()
        await asyncio.sleep(0.2)
        return {"closed": True}


class Bettor:
    """A seated player who places a bet every ``interval`` seconds while betting is open and
    times place_bet → bet_accepted (or → the error that answers it)."""

    def __init__(self, port: int, index: int, table: str, spot: str, amount: int) -> None:
        self.port, self.index, self.table, self.spot, self.amount = (
            port,
            index,
            table,
            spot,
            amount,
        )
        self.round: str | None = None
        self.sent: dict[int, float] = {}
        self.acks: list[float] = []
        self.errors: dict[str, int] = {}
        self.ref = 0
        self.client: RawClient | None = None
        self.joined = asyncio.get_running_loop().create_future()

    def on_message(self, payload: bytes) -> None:
        from server.protocol.codec import decode_server
        from server.protocol.messages import BetAccepted, ErrorMessage, Joined, TableEvent

        now = time.perf_counter()
        message = decode_server(payload)
        if isinstance(message, TableEvent):
            if message.event == "betting_opened":
                self.round = message.round
            elif message.event == "betting_closed":
                self.round = None
        elif isinstance(message, BetAccepted | ErrorMessage) and message.ref in self.sent:
            started = self.sent.pop(message.ref)
            if isinstance(message, BetAccepted):
                self.acks.append((now - started) * 1e3)
            else:
                self.errors[message.code] = self.errors.get(message.code, 0) + 1
        elif isinstance(message, Joined):
            snap = message.snapshot
            self.round = snap.round if snap.phase == "betting" else None
            if not self.joined.done():
                self.joined.set_result(None)

    async def run(self, seconds: float, interval: float) -> None:
        from server.protocol.messages import PROTOCOL_VERSION, Hello, Join, PlaceBet

        self.client = await connect_raw(self.port, 10_000 + self.index, self.on_message)
        self.client.send(_encode_client(Hello(version=PROTOCOL_VERSION, name=f"b{self.index}")))
        self.client.send(_encode_client(Join(table=self.table, role="player")))
        await asyncio.wait_for(self.joined, 30)
        end = time.perf_counter() + seconds
        await asyncio.sleep(interval * (self.index % 10) / 10)  # spread the bettors out
        while time.perf_counter() < end:
            if self.round is not None:
                self.ref += 1
                frame = _encode_client(
                    PlaceBet(
                        table=self.table,
                        round=self.round,
                        bet_id=f"b{self.ref}",
                        spot=self.spot,
                        amount=self.amount,
                        ref=self.ref,
                    )
                )
                self.sent[self.ref] = time.perf_counter()
                self.client.send(frame)
            await asyncio.sleep(interval)
        await asyncio.sleep(0.5)  # let the last answers arrive
        if self.client.transport is not None:
            self.client.transport.close()


async def run_bettors(
    port: int, tables: list[str], seconds: float, interval: float, spot: str, amount: int
) -> dict[str, Any]:
    bettors = [Bettor(port, i, t, spot, amount) for i, t in enumerate(tables)]
    await asyncio.gather(*(b.run(seconds, interval) for b in bettors))
    acks = [a for b in bettors for a in b.acks]
    errors: dict[str, int] = {}
    for b in bettors:
        for code, n in b.errors.items():
            errors[code] = errors.get(code, 0) + n
    unanswered = sum(len(b.sent) for b in bettors)
    return {"acks": acks, "errors": errors, "unanswered": unanswered}


# --- server harnesses (server CPU) ------------------------------------------------------------

FANOUT_EVENT = {"target": "player", "card": "KH", "seq": 3, "face_up": True}


class ServerHarness:
    """A croupier Service (or a bare websockets server) plus the commands the benchmarks
    send it. Runs inside the server process."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.service: Any = None
        self.bare: set[Any] = set()
        self.load_task: asyncio.Task[dict[str, Any]] | None = None
        self.lag_task: asyncio.Task[list[float]] | None = None
        self._lags: list[float] = []
        self.profiler: Any = None

    async def start(self, config: str | None, data_dir: str | None, manual: bool) -> int:
        if self.kind == "bare":
            from websockets.asyncio.server import serve
            from websockets.exceptions import ConnectionClosed

            async def handler(ws: Any) -> None:
                self.bare.add(ws)
                try:
                    async for _ in ws:
                        pass
                except ConnectionClosed:
                    pass
                finally:
                    self.bare.discard(ws)

            # The same websockets settings as server/net/edge.py.
            self.server = await serve(
                handler,
                "127.0.0.1",
                0,
                compression=None,
                max_size=64 * 1024,
                max_queue=32,
                ping_interval=20,
                ping_timeout=20,
            )
            return int(self.server.sockets[0].getsockname()[1])
        from server.app.service import Service
        from server.config import load_config
        from server.storage import writes_in_flight
        from server.tables.clock import ManualClock, SystemClock

        clock: ManualClock | SystemClock = (
            ManualClock(drain=writes_in_flight) if manual else SystemClock()
        )
        assert config is not None and data_dir is not None
        from server.app.process import tune_gc

        self.service = Service(load_config(Path(config)), Path(data_dir), port=0, clock=clock)
        await self.service.start()
        tune_gc()  # as `croupier serve` does
        if isinstance(clock, ManualClock):
            await clock.advance(0)
        return int(self.service.port)

    # connections as each delivery path sees them

    def _connections(self) -> list[Any]:
        if self.kind == "bare":
            return list(self.bare)
        return [v.session.ws for t in self.service.casino.tables.values() for v in t.viewers]

    def _emitter(self, mode: str, table_id: str | None) -> Callable[[], int]:
        """A function emitting one public event, returning the frames it handed out."""
        from websockets.asyncio.server import broadcast

        from server.protocol.codec import encode
        from server.protocol.messages import TableEvent

        if self.kind == "bare":
            conns = list(self.bare)
            payload = encode(
                TableEvent(
                    table=table_id or "t", seq=1, round="t.1", event="card_dealt", data=FANOUT_EVENT
                )
            )
            if mode == "broadcast":  # websockets' own: the frame built once per connection

                def bare() -> int:
                    broadcast(conns, payload)
                    return len(conns)

                return bare
            from server.net.fanout import ws_binary_frame

            transports = [c.transport for c in conns]

            def framed_once() -> int:  # the fair baseline: framed once, written to each
                wire = ws_binary_frame(payload)
                for transport in transports:
                    transport.write(wire)
                return len(transports)

            return framed_once
        table = self.service.casino.tables[table_id]
        if mode == "asis":  # the production path: TableRuntime._emit_raw

            def asis() -> int:
                table._emit_raw(table.round_id or "", "card_dealt", FANOUT_EVENT, None)
                return len(table.viewers)

            return asis
        raise ValueError(f"unknown mode {mode!r}")

    async def fanout(self, mode: str, table: str | None, events: int, burst: int) -> dict[str, Any]:
        """Emit ``events`` public events in bursts of ``burst`` per event-loop tick, as fast
        as the clients take them: when the sampled connections hold more than 4 KiB each in
        user-space write buffers, wait a millisecond. Returns once every buffer is empty."""
        emit = self._emitter(mode, table)
        conns = self._connections()
        sample = [c.transport for c in conns[:: max(1, len(conns) // 64)] if c.transport]
        limit = 4096 * len(sample)
        frames = pauses = 0
        start = time.perf_counter()
        done = 0
        while done < events:
            for _ in range(min(burst, events - done)):
                frames += emit()
            done += burst
            await asyncio.sleep(0)
            while sum(t.get_write_buffer_size() for t in sample) > limit:
                pauses += 1
                await asyncio.sleep(0.001)
        all_transports = [c.transport for c in conns if c.transport]
        while any(t.get_write_buffer_size() for t in all_transports):
            await asyncio.sleep(0.002)
        return {"frames": frames, "seconds": time.perf_counter() - start, "pauses": pauses}

    async def _paced(
        self, rate: float, seconds: float, tick: float, mode: str = "asis"
    ) -> dict[str, Any]:
        """Emit public events across every watched table (round robin, through the shipped
        ``_emit_raw``) so that viewers receive ``rate`` frames a second in total (events ×
        that table's viewers). A server that falls more than 50 ms of load behind sheds the
        excess instead of bursting it later, so an overloaded run reports the rate it
        achieved rather than growing its backlog without end. ``mode`` picks the delivery
        path of these events (``_emitter``); the rounds' own events use the shipped one."""
        tables = [t for t in self.service.casino.tables.values() if t.viewers]
        emitters = [self._emitter(mode, t.id) for t in tables]
        if not tables or rate <= 0:
            await asyncio.sleep(seconds)
            return {"frames": 0, "events": 0, "shed": 0}
        start = time.perf_counter()
        frames = events = k = shed = 0
        while (now := time.perf_counter()) - start < seconds:
            due = rate * (now - start)
            if due - frames > rate * 0.05:
                shed += int(due - frames - rate * 0.05)
                frames = int(due - rate * 0.05)  # count the shed frames as done
            while frames < due:
                frames += emitters[k % len(emitters)]()
                k += 1
                events += 1
                if events % YIELD_EVERY == 0:
                    # Real tables emit from their own tasks, each a few frames at a time,
                    # interleaved with everything else the loop does; a backlog of due
                    # events must not run as one burst that holds the loop for milliseconds.
                    await asyncio.sleep(0)
            await asyncio.sleep(tick)
        return {
            "frames": frames - shed,
            "events": events,
            "shed": shed,
            "seconds": time.perf_counter() - start,
        }

    async def _lag_monitor(self, period: float = 0.001) -> list[float]:
        """How late the event loop wakes a 1 ms sleeper (ms): every stall in the server's
        loop — a long broadcast, a round step of many tables, a blocking commit — shows."""
        lags: list[float] = []
        self._lags = lags
        while True:
            start = time.perf_counter()
            await asyncio.sleep(period)
            lags.append((time.perf_counter() - start - period) * 1e3)

    def _lag_stop(self) -> dict[str, Any]:
        assert self.lag_task is not None
        self.lag_task.cancel()
        lags, self._lags = self._lags, []
        return {
            "p99": percentile(lags, 0.99),
            "max": max(lags, default=0.0),
            "over_10ms": sum(1 for v in lags if v > 10),
            "stalled_ms": sum(v for v in lags if v > 10),
        }

    async def handle(self, cmd: dict[str, Any]) -> dict[str, Any]:
        op = cmd["cmd"]
        if op == "lag_start":
            self.lag_task = asyncio.create_task(self._lag_monitor())
            return {"started": True}
        if op == "lag_stop":
            return self._lag_stop()
        if op == "fanout":
            return await self.fanout(cmd["mode"], cmd.get("table"), cmd["events"], cmd["burst"])
        if op == "load":
            self.load_task = asyncio.create_task(
                self._paced(
                    cmd["rate"], cmd["seconds"], cmd.get("tick", 0.002), cmd.get("mode", "asis")
                )
            )
            return {"started": True}
        if op == "load_result":
            assert self.load_task is not None
            return await self.load_task
        if op == "viewers":
            return {"viewers": len(self._connections())}
        if op == "profile_start":
            import cProfile

            self.profiler = cProfile.Profile()
            self.profiler.enable()
            return {"profiling": True}
        if op == "profile_stop":
            import io
            import pstats

            self.profiler.disable()
            out = io.StringIO()
            stats = pstats.Stats(self.profiler, stream=out)
            stats.sort_stats("tottime").print_stats(cmd.get("top", 25))
            return {"text": out.getvalue()}
        if op == "ping":
            return {"pong": True}
        raise ValueError(f"unknown command {op!r}")


# --- child process plumbing -------------------------------------------------------------------


async def _command_loop(handle: Callable[[dict[str, Any]], Any]) -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 24)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while line := await reader.readline():
        cmd = json.loads(line)
        if cmd.get("cmd") == "exit":
            break
        try:
            reply = await handle(cmd)
        except Exception as exc:  # report it to the benchmark rather than dying silently
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        print(json.dumps(reply), flush=True)


async def _server_main(args: argparse.Namespace) -> None:
    harness = ServerHarness(args.kind)
    port = await harness.start(args.config, args.data_dir, args.manual_clock)
    print(json.dumps({"port": port, "pid": os.getpid()}), flush=True)
    await _command_loop(harness.handle)


async def _swarm_main(args: argparse.Namespace) -> None:
    swarm = Swarm(args.port)

    async def handle(cmd: dict[str, Any]) -> dict[str, Any]:
        op = cmd["cmd"]
        if op == "open":
            return await swarm.open(cmd["viewers"], cmd.get("tables", []), cmd.get("expect", 0))
        if op == "count":
            return swarm.count()
        if op == "wait":
            return await swarm.wait(cmd["each"], cmd.get("timeout", 60))
        if op == "close":
            return await swarm.close()
        if op == "bet":
            return await run_bettors(
                swarm.port,
                cmd["tables"],
                cmd["seconds"],
                cmd["interval"],
                cmd["spot"],
                cmd["amount"],
            )
        raise ValueError(f"unknown command {op!r}")

    print(json.dumps({"pid": os.getpid(), "scheduling": args.scheduling}), flush=True)
    await _command_loop(handle)


class Child:
    """A child process driven by JSON lines (the parent side)."""

    def __init__(self, argv: list[str], cpu: int, realtime: bool = False) -> None:
        argv = [*argv, "--cpu", str(cpu), *(["--realtime"] if realtime else [])]
        self.proc = subprocess.Popen(
            [PYTHON, "-m", "loadtests.wsload", *argv],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        self.hello = self._read()
        self.pid = self.proc.pid

    def _read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"child {self.proc.args!r} exited ({self.proc.poll()})")
        reply: dict[str, Any] = json.loads(line)
        if "error" in reply:
            raise RuntimeError(reply["error"])
        return reply

    def send(self, cmd: str, **args: Any) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"cmd": cmd, **args}) + "\n")
        self.proc.stdin.flush()

    def call(self, cmd: str, **args: Any) -> dict[str, Any]:
        self.send(cmd, **args)
        return self._read()

    def close(self) -> None:
        with contextlib.suppress(BrokenPipeError, OSError):
            self.send("exit")
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()

    def __enter__(self) -> Child:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def server_child(
    kind: str, config: Path | None = None, data_dir: Path | None = None, manual_clock: bool = False
) -> Child:
    argv = ["server", "--kind", kind]
    if config is not None:
        argv += ["--config", str(config), "--data-dir", str(data_dir)]
    if manual_clock:
        argv.append("--manual-clock")
    return Child(argv, SERVER_CPU)


def swarm_child(port: int, realtime: bool = False) -> Child:
    """A swarm of clients on the clients' CPU; ``realtime`` for a measuring one (``prefer``)."""
    return Child(["swarm", "--port", str(port)], CLIENT_CPU, realtime)


def tables_toml(
    tables: list[str], game: str = "roulette", betting: float = 15, pause: float = 4, seats: int = 7
) -> str:
    blocks = ["[server]\nstarting_balance = 100000000\n"]
    for t in tables:
        blocks.append(
            f'[[tables]]\nid = "{t}"\nname = "{t}"\ngame = "{game}"\n'
            f"betting_seconds = {betting}\npause_seconds = {pause}\nseats = {seats}\n"
            "minimum = 100\nmaximum = 100000\n"
        )
    return "\n".join(blocks)


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="role", required=True)
    s = sub.add_parser("server")
    s.add_argument("--kind", choices=["croupier", "bare"], required=True)
    s.add_argument("--config")
    s.add_argument("--data-dir")
    s.add_argument("--manual-clock", action="store_true")
    s.add_argument("--cpu", type=int, default=SERVER_CPU)
    w = sub.add_parser("swarm")
    w.add_argument("--port", type=int, required=True)
    w.add_argument("--cpu", type=int, default=CLIENT_CPU)
    w.add_argument("--realtime", action="store_true", help="schedule ahead of other clients")
    args = parser.parse_args()
    pin(args.cpu)
    args.scheduling = prefer(getattr(args, "realtime", False))
    raise_nofile()
    if args.role == "server":
        import logging

        logging.basicConfig(level=logging.WARNING)
        # A client that goes away mid-broadcast makes asyncio log every later write to it.
        logging.getLogger("asyncio").setLevel(logging.ERROR)
        asyncio.run(_server_main(args))
    else:
        asyncio.run(_swarm_main(args))


if __name__ == "__main__":
    main()
