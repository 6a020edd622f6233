"""Benchmark: device frames decoded per CPU-second, and card read → ``card_dealt`` latency.

1. Decoding (CPU time, ``time.process_time``). Realistic CardRead frames — the bodies the
   simulated shoe sends (``CardRead(card, count, round)`` from a shuffled 8-deck shoe), framed
   with the device's key as its ``Link`` frames them — go through the server's side of the
   link one frame per call, as the hub reads a shoe that sends a card at a time:
   ``FrameDecoder.feed`` alone, then ``Link.receive_data`` (CRCs, the MAC, sequencing and the
   ack-only reply it writes, with its MAC), then that plus ``decode_from_device`` (the hub's
   work per message, without the socket and the journal). Baseline, in the same run:
   ``decode_from_device`` of the same bodies alone — the message's msgspec validation that
   any transport needs — so each ratio is the whole link's speed against the message decoding
   alone. A second table gives the decoder's bytes per CPU-second on valid frames and on
   garbage (the worst case is a magic at every other byte: each is a header to check).

2. Latency over loopback TCP: a real ``Service`` (SQLite ledger and journal in a temporary
   directory, ``synchronous=FULL``) with one Baccarat table (``--betting`` s betting,
   ``--pause`` s pause, no bets placed: the cards are the same work either way) and a
   WebSocket spectator that joins through the protocol and decodes every MessagePack frame.
   *Device*: the table's ``card_source`` is a simulated card-reading shoe
   (``SimulatedDevice``, as in tests/devices/test_device_tables.py) on the device port.
   *Virtual*: the same table dealing from its virtual shoe (HMAC_DRBG). The service, the shoe
   and the viewer run in one process and one event loop, so every timestamp is
   ``time.perf_counter()`` of the same clock. Two figures, the same definition for both
   paths:

   - *card → viewer*: from the moment the card is known at its source — the shoe hands the
     ``CardRead`` to its link (the bytes go out in the same call), or the virtual shoe draws
     it — to the viewer receiving that card's ``card_dealt`` (matched in order, and by its
     code). Both include the journal's durable write of the card and the fan-out; the device
     path adds the TCP hop from the shoe, the frame, MAC and message checks and the device
     dealer's checks.
   - *no more bets → first card*: ``betting_closed`` to the round's first ``card_dealt``,
     both at the viewer: the device path adds the ``expect_cards`` round trip to the shoe.

   Passes alternate virtual, device, virtual, device … (a fresh service each), and the
   samples of all passes are pooled; the first round each viewer sees is not counted.

    .venv/bin/python -m loadtests.bench_devices            # writes the devices section
    .venv/bin/python -m loadtests.bench_devices --frames 2000 --seconds 5 --passes 1 --no-write
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import hashlib
import hmac
import logging
import random
import statistics
import struct
import tempfile
import time
import zlib
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from websockets.asyncio.client import connect

from loadtests.report import machine_line, write_section
from loadtests.wsload import loadavg, percentile
from rng.cards import ALL_CARDS
from server.app.service import Service
from server.config import parse_config
from server.devices.frames import MAGIC, MAX_BODY, VERSION, FrameDecoder, encode_frame
from server.devices.link import Delivered, Link
from server.devices.messages import CardRead, decode_from_device, encode_message
from server.devices.simulator import SimulatedDevice
from server.protocol.codec import decode_server, encode
from server.protocol.messages import PROTOCOL_VERSION, Hello, Join, TableEvent

KEY = bytes.fromhex("11" * 32)
READ = 65536  # the hub's read size


# --- 1. decoding -------------------------------------------------------------------------------


def card_read_bodies(n: int, seed: int = 1) -> list[bytes]:
    """``n`` CardRead bodies as the simulated shoe sends them: a shuffled 8-deck shoe, its
    count from 1, five or six cards a round."""
    rng = random.Random(seed)
    shoe = [card.code for card in ALL_CARDS for _ in range(8)]
    bodies: list[bytes] = []
    count, round_no = 0, 4000
    while len(bodies) < n:
        if count % len(shoe) == 0:
            rng.shuffle(shoe)
        card = shoe[count % len(shoe)]
        count += 1
        if len(bodies) % 5 == 0:
            round_no += 1
        read = CardRead(card=card, count=(count - 1) % len(shoe) + 1, round=f"bac.{round_no}")
        bodies.append(encode_message(read))
    return bodies


def _cpu_per_item(run: Callable[[], int], rounds: int = 7) -> float:
    """Median CPU seconds per item over ``rounds`` calls of ``run`` (which returns how many
    items it processed)."""
    samples = []
    for _ in range(rounds):
        gc.collect()
        start = time.process_time()
        items = run()
        samples.append((time.process_time() - start) / items)
    return statistics.median(samples)


@dataclass
class DecodeRow:
    label: str
    seconds_per_frame: float
    ratio: float = 0.0


def decoding(frames_per_round: int) -> tuple[list[DecodeRow], int]:
    """Rows (what, CPU seconds per frame, speed relative to the baseline) and the mean frame
    size in bytes."""
    bodies = card_read_bodies(frames_per_round)
    frames = [encode_frame(seq, 0, body, key=KEY) for seq, body in enumerate(bodies, 1)]
    stream = b"".join(frames)
    reads = [stream[i : i + READ] for i in range(0, len(stream), READ)]

    def baseline() -> int:
        for body in bodies:
            decode_from_device("card_source", body)
        return len(bodies)

    def decoder_only() -> int:
        decoder = FrameDecoder()
        for frame in frames:
            decoder.feed(frame)
        return len(frames)

    def link_only() -> int:
        link, now = Link(0.0, key=KEY), 0.0
        for frame in frames:
            link.receive_data(frame, now)
            link.data_to_send()
        assert link.received == len(frames)
        return len(frames)

    def hub_work(chunks: list[bytes]) -> Callable[[], int]:
        def run() -> int:
            link, now, n = Link(0.0, key=KEY), 0.0, 0
            for chunk in chunks:
                for event in link.receive_data(chunk, now):
                    if isinstance(event, Delivered):
                        decode_from_device("card_source", event.body)
                        n += 1
                link.data_to_send()
            assert n == len(frames)
            return n

        return run

    def mac_only() -> int:
        for frame in frames:
            hmac.compare_digest(
                hmac.new(KEY, frame[:-16], hashlib.sha256).digest()[:16], frame[-16:]
            )
        return len(frames)

    one_per_call = hub_work([bytes(f) for f in frames])
    per_read = READ // len(frames[0])
    base = _cpu_per_item(baseline)
    rows = [
        DecodeRow("baseline: `decode_from_device` of the body alone (msgspec)", base),
        DecodeRow(
            "HMAC-SHA256 of the frame alone (the MAC check, for scale)", _cpu_per_item(mac_only)
        ),
        DecodeRow(
            "`FrameDecoder.feed`, one frame per call (both CRCs)", _cpu_per_item(decoder_only)
        ),
        DecodeRow(
            "`Link.receive_data`, keyed: + MAC, sequencing, the ack it writes (with its MAC)",
            _cpu_per_item(link_only),
        ),
        DecodeRow(
            "`Link.receive_data` + `decode_from_device`, one frame per call (the hub's work)",
            _cpu_per_item(one_per_call),
        ),
        DecodeRow(
            f"the same, {READ // 1024} KiB reads (about {per_read} frames per call)",
            _cpu_per_item(hub_work(reads)),
        ),
    ]
    for row in rows:
        row.ratio = base / row.seconds_per_frame
    return rows, round(len(stream) / len(frames))


def _header(flags: int, length: int, seq: int) -> bytes:
    """A header that is right by its CRC."""
    fields = struct.pack(">2sBBIII", MAGIC, VERSION, flags, length, seq, 0)
    return fields + struct.pack(">I", zlib.crc32(fields))


def decoder_bytes() -> list[tuple[str, float, float]]:
    """(input, MB per CPU-second through ``FrameDecoder.feed`` in 64 KiB reads, reports per
    KiB of input)."""
    bodies = card_read_bodies(2000)
    valid = b"".join(encode_frame(seq, 0, b, key=KEY) for seq, b in enumerate(bodies, 1))
    inputs = [
        ("valid CardRead frames", valid),
        ("random bytes", random.Random(3).randbytes(len(valid))),
        ("a magic at every other byte (`CDCD…`)", MAGIC * (len(valid) // 2)),
        (
            "a header announcing a 16 KiB body every 23 bytes",
            (_header(2, MAX_BODY, 1) + b"CD\x01") * (len(valid) // 23),
        ),
    ]
    out = []
    for label, data in inputs:
        reads = [data[i : i + READ] for i in range(0, len(data), READ)]

        def run(reads: list[bytes] = reads) -> int:
            decoder = FrameDecoder()
            for chunk in reads:
                decoder.feed(chunk)
            return sum(map(len, reads))

        decoder = FrameDecoder()
        reports = sum(len(decoder.feed(chunk)) for chunk in reads)
        per_byte = _cpu_per_item(run, rounds=5)
        out.append((label, 1 / per_byte / 1e6, reports / (len(data) / 1024)))
    return out


# --- 2. latency --------------------------------------------------------------------------------

TABLE = "bac"
CONFIG = """
[server]
starting_balance = 100000

[[tables]]
id = "bac"
name = "Baccarat"
game = "baccarat"
betting_seconds = {betting}
pause_seconds = {pause}
[tables.options]
decks = 8
"""
DEVICE_CONFIG = """
[device_link]
port = 0
answer_seconds = 5
hold_seconds = 30

[[devices]]
id = "shoe-1"
role = "card_source"
key = "{key}"
"""
DEVICE_TABLE = """
[tables.devices]
card_source = "shoe-1"
"""


class TimedShoe(SimulatedDevice):
    """The simulated shoe, noting when it hands each CardRead to its link."""

    def __init__(self, *args: Any, sources: deque[tuple[str, float]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.sources = sources

    def send(self, message: Any) -> None:
        if isinstance(message, CardRead):
            self.sources.append((message.card, time.perf_counter()))
        super().send(message)


@dataclass
class Samples:
    card: list[float] = field(default_factory=list)  # card known → card_dealt at the viewer
    first: list[float] = field(default_factory=list)  # betting_closed → first card_dealt
    rounds: int = 0
    mismatched: int = 0


def _time_virtual_shoe(service: Service, sources: deque[tuple[str, float]]) -> None:
    """Note when the table's virtual shoe draws each card (the ``ShoeDevice`` the game's
    ``deal_card`` asks)."""
    device = service.casino.tables[TABLE].stores.game.device  # type: ignore[attr-defined]
    draw_card = device.deal_card

    def deal_card() -> Any:
        draw = draw_card()
        sources.append((draw.card.code, time.perf_counter()))
        return draw

    device.deal_card = deal_card


async def _watch(url: str, sources: deque[tuple[str, float]], seconds: float) -> Samples:
    samples = Samples()
    async with connect(url, compression=None, max_size=1 << 20) as ws:
        await ws.send(encode(Hello(version=PROTOCOL_VERSION, name="viewer")))
        await ws.send(encode(Join(table=TABLE, role="spectator")))
        closed: dict[str, float] = {}
        seen_first: set[str] = set()
        counting = False
        end = None
        while True:
            frame = await asyncio.wait_for(ws.recv(decode=False), 15)
            now = time.perf_counter()
            message = decode_server(frame)
            if not isinstance(message, TableEvent):
                continue
            event = message.event
            if event == "betting_opened":
                if end is not None and now >= end:
                    return samples
                if not counting:  # the first round seen may have started before the viewer
                    counting, end = True, now + seconds
                    sources.clear()
                continue
            if not counting:
                continue
            if event == "betting_closed":
                closed[message.round] = now
            elif event == "card_dealt":
                code = str(message.data["card"])
                known = None
                while sources:  # the source's cards in order; a code that differs is a miss
                    source_code, at = sources.popleft()
                    if source_code == code:
                        known = at
                        break
                    samples.mismatched += 1
                if known is None:
                    samples.mismatched += 1
                    continue
                samples.card.append(now - known)
                if message.round not in seen_first and message.round in closed:
                    seen_first.add(message.round)
                    samples.first.append(now - closed[message.round])
            elif event in ("round_settled", "round_voided"):
                samples.rounds += 1


async def _pass(path: str, seconds: float, betting: float, pause: float) -> Samples:
    text = CONFIG.format(betting=betting, pause=pause)
    if path == "device":
        text = DEVICE_CONFIG.format(key=KEY.hex()) + text + DEVICE_TABLE
    sources: deque[tuple[str, float]] = deque()
    with tempfile.TemporaryDirectory() as tmp:
        service = Service(parse_config(text, str(Path(tmp) / "bench.toml")), Path(tmp) / "data", port=0)  # fmt: skip  # noqa: E501
        await service.start(stagger=False)
        stop = asyncio.Event()
        shoe_task = None
        try:
            if path == "device":
                shoe = TimedShoe(
                    "shoe-1", "shoe", KEY, "127.0.0.1", service.devices.port,
                    seed=7, sources=sources,
                )  # fmt: skip
                shoe_task = asyncio.create_task(shoe.run(stop))
                await asyncio.wait_for(shoe.connected.wait(), 10)
            else:
                _time_virtual_shoe(service, sources)
            return await _watch(f"ws://127.0.0.1:{service.port}/ws", sources, seconds)
        finally:
            stop.set()
            if shoe_task is not None:
                with contextlib.suppress(Exception):
                    await shoe_task
            await service.stop()


@dataclass
class LatencyRow:
    path: str
    samples: Samples
    ratio_card: tuple[float, float] = (0.0, 0.0)  # p50, p99 ÷ the virtual path's
    ratio_first: tuple[float, float] = (0.0, 0.0)


def latency(passes: int, seconds: float, betting: float, pause: float) -> list[LatencyRow]:
    pooled = {"virtual": Samples(), "device": Samples()}
    for _ in range(passes):
        for path in ("virtual", "device"):
            got = asyncio.run(_pass(path, seconds, betting, pause))
            into = pooled[path]
            into.card += got.card
            into.first += got.first
            into.rounds += got.rounds
            into.mismatched += got.mismatched
    rows = [LatencyRow(path, s) for path, s in pooled.items()]
    base = rows[0].samples
    for row in rows:
        s = row.samples
        row.ratio_card = tuple(  # type: ignore[assignment]
            percentile(s.card, q) / percentile(base.card, q) for q in (0.5, 0.99)
        )
        row.ratio_first = tuple(  # type: ignore[assignment]
            percentile(s.first, q) / percentile(base.first, q) for q in (0.5, 0.99)
        )
    return rows


# --- report ------------------------------------------------------------------------------------


def render(
    rows: list[DecodeRow],
    frame_size: int,
    bytes_rows: list[tuple[str, float, float]],
    lat: list[LatencyRow],
    args: argparse.Namespace,
) -> str:
    command = (
        f"`.venv/bin/python -m loadtests.bench_devices --frames {args.frames} --seconds "
        f"{args.seconds:g} --passes {args.passes} --betting {args.betting:g} --pause "
        f"{args.pause:g}`"
    )
    lines = [
        "## Devices: frames decoded per CPU-second, and card read → `card_dealt` latency",
        "",
        f"Command: {command} ({machine_line()}; load average at the end {loadavg()}).",
        "",
        f"**Decoding.** {args.frames:,} CardRead frames as the simulated shoe sends them "
        f"(8-deck shoe, `CardRead(card, count, round)`, MAC'd with the device key: {frame_size} "
        "bytes a frame), fed to the server's side of the link; CPU time (`time.process_time`), "
        "median of 7 rounds. Baseline, same run: `decode_from_device` of the same bodies "
        "alone (msgspec validation, which any transport needs).",
        "",
        "| What | CPU µs per frame | frames per CPU-second | × baseline speed |",
        "|---|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r.label} | {r.seconds_per_frame * 1e6:.2f} | {1 / r.seconds_per_frame:,.0f} "
            f"| {r.ratio:.2f} |"
        )
    lines += [
        "",
        "`FrameDecoder.feed` in 64 KiB reads, by input (the worst case for a serial line's "
        "noise or a hostile peer on the device port is a magic at every position: each one is "
        "a header whose CRC must be checked, and each skipped byte is reported):",
        "",
        "| Input | MB per CPU-second | reports per KiB |",
        "|---|---:|---:|",
    ]
    for label, mb, reports in bytes_rows:
        lines.append(f"| {label} | {mb:,.1f} | {reports:,.0f} |")
    virtual, device = lat[0].samples, lat[1].samples
    lines += [
        "",
        f"**Latency.** A real `Service` with one Baccarat table ({args.betting:g} s betting, "
        f"{args.pause:g} s pause, no bets), {args.passes} pass(es) of {args.seconds:g} s per "
        "path, alternating, pooled; a WebSocket spectator decodes every frame. *Virtual*: "
        "the table deals from its virtual shoe; *device*: from a simulated card-reading shoe "
        "over loopback TCP (MAC'd frames). Service, shoe and viewer share one process and "
        "event loop (one `perf_counter` clock). *card → viewer*: from the card known at its "
        "source (the shoe hands the `CardRead` to its link / the virtual shoe draws it) to "
        "the viewer receiving its `card_dealt`; *no more bets → first card*: `betting_closed` "
        "to the round's first `card_dealt`, both at the viewer (the device path includes the "
        "`expect_cards` round trip to the shoe). Both include the journal's durable write "
        "of each card (SQLite, `synchronous=FULL`, temporary directory). Ratios: device ÷ "
        "virtual (the baseline), lower is better.",
        "",
        "| Path | rounds | cards | card → viewer p50 ms | p99 ms | max ms | × virtual p50 / p99 "
        "| no more bets → first card p50 ms | p99 ms | × virtual p50 / p99 |",
        "|---|---:|---:|---:|---:|---:|---|---:|---:|---|",
    ]
    for row in lat:
        s = row.samples
        lines.append(
            f"| {row.path}{' (baseline)' if row.path == 'virtual' else ''} | {s.rounds} | "
            f"{len(s.card)} | {percentile(s.card, 0.5) * 1e3:.2f} | "
            f"{percentile(s.card, 0.99) * 1e3:.2f} | {max(s.card, default=float('nan')) * 1e3:.2f} | "  # noqa: E501
            f"{row.ratio_card[0]:.2f} / {row.ratio_card[1]:.2f} | "
            f"{percentile(s.first, 0.5) * 1e3:.2f} | {percentile(s.first, 0.99) * 1e3:.2f} | "
            f"{row.ratio_first[0]:.2f} / {row.ratio_first[1]:.2f} |"
        )
    missed = virtual.mismatched + device.mismatched
    lines += [
        "",
        f"Every `card_dealt` matched the next card its source produced ({missed} mismatches)."
        if missed == 0
        else f"{missed} `card_dealt` events did not match the next card of their source.",
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=20_000, help="frames per decoding round")
    parser.add_argument("--seconds", type=float, default=20.0, help="seconds per latency pass")
    parser.add_argument("--passes", type=int, default=2, help="latency passes per path")
    parser.add_argument("--betting", type=float, default=0.3, help="betting seconds a round")
    parser.add_argument("--pause", type=float, default=0.1, help="pause seconds a round")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    rows, frame_size = decoding(args.frames)
    bytes_rows = decoder_bytes()
    lat = latency(args.passes, args.seconds, args.betting, args.pause)
    text = render(rows, frame_size, bytes_rows, lat, args)
    print(text)
    if not args.no_write:
        write_section("devices", text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
