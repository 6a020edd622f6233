"""The process around ``croupier serve``: its logs as JSON lines, its garbage collector
kept from stalling the event loop, and its own CPU and memory for ``/metrics``."""

from __future__ import annotations

import gc
import json
import logging
import resource
import time
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


def tune_gc() -> None:
    """Keep Python's cyclic garbage collector from stalling the event loop.

    With thousands of connections the collector's full passes walk millions of objects and
    stop every table for 100 ms and more (measured by loadtests/bench_betack.py). The objects
    that exist once the server has started are moved out of its reach (``gc.freeze``) and
    full passes come due as rarely as before. The young generation is collected often, and
    so briefly: a pass costs in proportion to the objects allocated since the last one, and
    at 50,000 (this function's threshold until 2026-11-28) a pass of the server's young
    objects took 40-110 ms at 3,000 users (``gc.callbacks``, loadtests/bench_loadtest.py),
    each a stall every bet in flight waited out; at 5,000 a pass is a few milliseconds.
    Reference counting still frees almost everything."""
    gc.collect()
    gc.freeze()
    # Generation 1 after 10 young passes, a full pass after 5,000 of those: 250 million
    # allocations, as with (50_000, 50, 100) before.
    gc.set_threshold(5_000, 10, 5_000)


def configure_logging(level: str) -> None:
    handler = logging.StreamHandler()
    handler.setFormatter(JsonLogFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    logging.getLogger("websockets").setLevel(max(logging.WARNING, root.level))
