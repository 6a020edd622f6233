"""Benchmark: what a lobby read and a table's rules cost on a large floor.

Every ``list_tables`` answer carries a line for every table of the node, and every player
who sits down reads the lobby and the table's rules (docs/architecture.md, "The lobby").
``loadtests/bench_loadtest.py`` gives a trial one copy of the demo floor (13 tables) per 85
players, so at 4,000 users a node runs 494 tables and the lobby's cost is readers × tables.

A real ``Service`` runs the floor ``bench_loadtest`` serves for ``--users`` users, on a
manual clock moved 3 s into the first betting window (the lines kept then, and read 1 s
later), so that every table is betting and every line's countdown must be brought up to
date. Measured, CPU time per call (median of ``--repeat`` rounds of ``--reads`` calls):

* baseline — every table's line built from scratch, as ``Lobby.summary`` did before it kept
  lines (the seated set, phase and countdown read for every table), and the answer encoded;
* shipped — ``Lobby.answer``: the answer kept from the last read, the lines of the tables
  that did something since built again, the countdowns brought up to date;
* the rules of a roulette table (the layout's spots walked) built from scratch, against the
  shipped ``Lobby.rules`` and the copy a reply makes with its ``ref``.

    .venv/bin/python -m loadtests.bench_lobby                  # writes BENCHMARKS.md
    .venv/bin/python -m loadtests.bench_lobby --users 500 --no-write
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import msgspec

from loadtests.bench_loadtest import served
from loadtests.report import machine_line, write_section
from server.app.service import Service
from server.config import parse_config
from server.protocol.codec import encode
from server.protocol.messages import Lobby, Rules, TableSummary
from server.storage import writes_in_flight
from server.tables.clock import ManualClock
from server.tables.lobby import Lobby as TableLobby
from server.tables.lobby import table_line, table_rules
from server.tables.runtime import TableRuntime

RULES_TABLE = "roulette-double"


def _line_from_scratch(lobby: TableLobby, table: TableRuntime) -> TableSummary:
    """A lobby line as ``Lobby.summary`` built it for every read before 507b841: the
    seated set, phase and countdown read for the table, the line built anew."""
    now = table.clock.now()
    return table_line(
        table,
        len(table.core.seated(now)),
        table.phase,
        table.core.closes_in_ms(now),
        lobby.stations_only(table.id),
    )


def _rules_from_scratch(lobby: TableLobby, table_id: str) -> Rules:
    """A table's rules as ``Lobby.rules`` built them for every read before 507b841."""
    return table_rules(table_id, lobby.games[table_id], lobby.casino.table_settings[table_id])


def _rules_reply(lobby: TableLobby) -> bytes:
    """What ``get_rules`` answers now: the kept rules, a copy carrying the reply's ref."""
    rules = lobby.rules(RULES_TABLE)
    assert rules is not None
    return encode(msgspec.structs.replace(rules, ref=1))


# The share of tables that did something between two reads in ``lobby_busy``. A table emits
# an event every second or so and a busy node answers lobby reads many times a second, so a
# read finds a few tables changed; a tenth is the hard case. (The time includes emitting
# those events, which a read does not pay.)
BUSY_SHARE = 0.1


def _busy_read(lobby: TableLobby, tables: list[TableRuntime]) -> bytes:
    """A lobby read after a tenth of the tables emitted an event (each line shows it: its
    ``seq`` moved), picked afresh each time."""
    for table in random.sample(tables, int(len(tables) * BUSY_SHARE)):
        table.core.event("", "bench", {}, None)
    return lobby.answer(1)


def _per_call(call: Callable[[], Any], reads: int, repeat: int) -> float:
    """Median CPU milliseconds per call."""
    call()  # warm: the shipped lobby's lines are kept from here on
    times = []
    for _ in range(repeat):
        start = time.process_time()
        for _ in range(reads):
            call()
        times.append((time.process_time() - start) / reads * 1e3)
    return statistics.median(times)


async def _measure(users: int, reads: int, repeat: int) -> dict[str, Any]:
    text, _ = served("peak_evening", users)
    clock = ManualClock(drain=writes_in_flight)
    with tempfile.TemporaryDirectory(prefix="croupier-lobby-") as data:
        service = Service(parse_config(text, "lobby.toml"), Path(data), port=0, clock=clock)
        await service.start(stagger=False)
        try:
            await clock.advance(3)  # every table 3 s into its betting window
            lobby = service.lobby
            tables = list(service.casino.tables.values())
            lobby.answer(1)  # kept from here on: the check below reads the kept answer
            await clock.advance(1)  # whose countdowns must be brought up to date
            betting = sum(1 for t in tables if t.phase == "betting")
            shipped = [lobby.answer(1)]
            scratch = [encode(Lobby(tables=[_line_from_scratch(lobby, t) for t in tables], ref=1))]
            assert shipped == scratch, "the kept lines differ from lines built from scratch"
            rules = lobby.rules(RULES_TABLE)
            assert rules is not None
            assert encode(rules) == encode(_rules_from_scratch(lobby, RULES_TABLE))
            return {
                "users": users,
                "tables": len(tables),
                "betting": betting,
                "bytes": len(shipped[0]),
                "lobby_scratch": _per_call(
                    lambda: encode(
                        Lobby(tables=[_line_from_scratch(lobby, t) for t in tables], ref=1)
                    ),
                    reads,
                    repeat,
                ),
                "lobby_shipped": _per_call(partial(lobby.answer, 1), reads, repeat),
                "lobby_busy": _per_call(partial(_busy_read, lobby, tables), reads, repeat),
                "rules_scratch": _per_call(
                    lambda: encode(_rules_from_scratch(lobby, RULES_TABLE)), reads, repeat
                ),
                "rules_shipped": _per_call(partial(_rules_reply, lobby), reads, repeat),
            }
        finally:
            await service.stop()


def run(users: int = 4000, reads: int = 50, repeat: int = 5) -> dict[str, Any]:
    return asyncio.run(_measure(users, reads, repeat))


def render(r: dict[str, Any], command: str) -> str:
    def row(what: str, ms: float, base: float) -> str:
        return f"| {what} | {ms:.3f} | {base / ms:.2f}× |"

    return "\n".join(
        [
            "## Lobby: a read and a table's rules on a large floor",
            "",
            f"Command: `{command}` ({machine_line()}).",
            f"A `Service` with the floor `bench_loadtest` serves for {r['users']:,} users: "
            f"{r['tables']:,} tables, {r['betting']:,} of them betting (4 s into the window), "
            f"a lobby answer of {r['bytes']:,} bytes; CPU time per call, median of the "
            "rounds (module docstring of `loadtests/bench_lobby.py`). Baseline: each line "
            "(and the rules) built from scratch for every read, as before the lobby kept "
            "them; the shipped answers are checked byte for byte against it first.",
            "",
            "| What | CPU ms per call | × baseline speed |",
            "|---|---:|---:|",
            row("lobby read, every line built (baseline)", r["lobby_scratch"], r["lobby_scratch"]),
            row(
                "lobby read, shipped (`Lobby.answer`), no table changed since the last",
                r["lobby_shipped"],
                r["lobby_scratch"],
            ),
            row(
                f"lobby read, shipped, {BUSY_SHARE:.0%} of the tables changed since the last",
                r["lobby_busy"],
                r["lobby_scratch"],
            ),
            row(
                f"rules of `{RULES_TABLE}`, built (baseline)",
                r["rules_scratch"],
                r["rules_scratch"],
            ),
            row(
                f"rules of `{RULES_TABLE}`, shipped (kept; a copy with the ref)",
                r["rules_shipped"],
                r["rules_scratch"],
            ),
            "",
        ]
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=4000, help="bench_loadtest's floor for")
    parser.add_argument("--reads", type=int, default=50, help="calls per round")
    parser.add_argument("--repeat", type=int, default=5, help="rounds (median)")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    command = ".venv/bin/python -m loadtests.bench_lobby" + (
        "" if args.users == 4000 else f" --users {args.users}"
    )
    text = render(run(args.users, args.reads, args.repeat), command)
    print(text)
    if not args.no_write:
        write_section("lobby", text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
