"""The process around ``croupier serve``: its logs as JSON lines, its garbage collector
kept from stalling the event loop, and its own CPU and memory for ``/metrics``."""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import resource
import time
import weakref
from typing import Any

__all__ = ["JsonLogFormatter", "configure_logging", "cpu_seconds", "resident_bytes", "tune_gc"]


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def resident_bytes() -> float:
    """The resident set size now (``/proc/self/statm``; the peak where there is no /proc)."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * resource.getpagesize()
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


class JsonLogFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, and any ``extra`` fields."""

    _standard = set(logging.LogRecord("", 0, "", 0, "", (), None).__dict__) | {"message"}

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in record.__dict__.items():
            if key not in self._standard:
                entry[key] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


# The collector's rhythm on the event loop (``tune_gc``): a young pass every YOUNG_EVERY
# seconds, a middle one every MIDDLE_EVERY young passes, a full one every FULL_EVERY middle
# passes (two hours).
YOUNG_EVERY = 0.025
MIDDLE_EVERY = 10
FULL_EVERY = 28_800


def tune_gc() -> None:
    """Keep Python's cyclic garbage collector from stalling the event loop (call it on the
    running loop, once the server has started; again on the same loop, it does nothing).

    With thousands of connections the collector's full passes walk millions of objects and
    stop every table for 100 ms and more (measured by loadtests/bench_betack.py). The objects
    that exist once the server has started are moved out of its reach (``gc.freeze``).

    Then the collector runs on a clock, from the event loop, not when its counts say. On
    3.11 the young generation's count is its allocations *less every deallocation of any
    generation*: on a busy node old objects die as fast as new ones are made (each
    connection's parser keeps a frame's generator until its next frame), so a young pass
    came due only every second or two, and then walked 24,000-39,000 objects (10-22 ms),
    and each tenth one the middle generation's 60,000-74,000 (15-57 ms): stalls each bet in
    flight waited out (``gc.callbacks`` in bench_betack at 50,000 frames/s, 2026-11-29).
    A young pass every 25 ms walks what 25 ms left (0.1-2 ms), a middle pass every 250 ms
    what ten of those kept (0.4-2.5 ms); the collector's own counts still trigger a pass
    should a burst allocate faster than that. What lives a quarter of a second reaches the
    old generation, which only a full pass walks: the clock runs one every two hours (with
    5,000 viewers at 50,000 frames/s one took 262-362 ms, the cost it had before), so that
    cyclic garbage there is freed; the collector's own rule (every 5,000 middle passes once
    the old generation has grown by a quarter) had made them about daily at that load.
    Reference counting still frees almost everything. The clock wakes an idle server 40
    times a second, each a pass over next to nothing."""
    loop = asyncio.get_running_loop()
    if loop in _CLOCKED:
        return
    _CLOCKED.add(loop)
    gc.collect()
    gc.freeze()
    # The thresholds are the safety net between the clock's passes: a young pass after 5,000
    # allocations, a middle one after 10 young ones, a full one after FULL_EVERY middle ones.
    gc.set_threshold(5_000, MIDDLE_EVERY, FULL_EVERY)
    passes = 0

    def collect() -> None:
        nonlocal passes
        # The next tick first: a pass that raised must not stop the clock.
        loop.call_later(YOUNG_EVERY, collect)
        passes += 1
        if passes % MIDDLE_EVERY:
            gc.collect(0)
        elif gc.get_count()[2] >= FULL_EVERY:
            gc.collect(2)  # the count of middle passes since the last full one
        else:
            gc.collect(1)

    loop.call_later(YOUNG_EVERY, collect)


# The loops whose collector runs on the clock (one clock per loop, however often asked).
_CLOCKED: weakref.WeakSet[asyncio.AbstractEventLoop] = weakref.WeakSet()


def configure_logging(level: str) -> None:
    handler = logging.StreamHandler()
    handler.setFormatter(JsonLogFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    logging.getLogger("websockets").setLevel(max(logging.WARNING, root.level))
