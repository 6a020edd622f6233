"""Benchmark: what a player station's meters cost per round, a new station against one with
a year of rounds behind it (docs/electronic-tables.md, "Meters").

At every round end the stations count into each station's meters what its ledger account
holds and they do not yet (``StationStore.sync``). Each count reads only the account's
transfers after the row's cursor, so what it costs must not grow with the station's life.
Baseline, measured in the same run: the same count for a station with no history. Also
shown, for what the count read before cursors: the whole history of the old station's
account (``Ledger.history``), read once.

The year is written straight into a real ``ledger.sqlite`` (a round every 40 seconds, a
bet and its settlement each: about 790,000 rounds and 1.6 million transfers on the
station's account), its
``metered`` keys into ``stations.sqlite``, and counted once (what the first count after an
upgrade costs, shown too). Then each measured round posts a real bet and settlement for
each station (``Ledger.post``) and times the count of each.

    .venv/bin/python -m loadtests.bench_station_meters             # writes BENCHMARKS.md
    .venv/bin/python -m loadtests.bench_station_meters --no-write --year-rounds 20000
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import tempfile
import time
from functools import partial
from pathlib import Path

from loadtests.report import machine_line, write_section
from server.stations.meters import station_account
from server.stations.store import StationStore, open_station_store
from server.wallet.ledger import Transfer
from server.wallet.sqlite_ledger import SqliteLedger

YEAR_ROUNDS = 365 * 24 * 3600 // 40  # a round every 40 seconds
OPEN, HOUSE = "wagers:open", "house"
NEW, OLD = "st-new", "st-old"
STAKE, WIN = 1_000, 950


def _write_a_year(path: Path, station: str, rounds: int) -> None:
    """``rounds`` rounds of ``station`` straight into the ledger's tables (one transaction):
    each a bet and its settlement, won every other round; the balances kept right."""
    account = station_account(station)
    db = sqlite3.connect(path)
    with db:
        seq = db.execute("SELECT COALESCE(MAX(seq), 0) FROM batches").fetchone()[0]
        batches: list[tuple[int, str]] = []
        transfers: list[tuple[object, ...]] = []
        net = 0
        for n in range(rounds):
            round_id, bet = f"year.{n}", f"b{n}"
            seq += 1
            batches.append((seq, f"bet:{round_id}:{station}:{bet}"))
            transfers.append((seq, 0, account, OPEN, STAKE, "wager", round_id, bet))
            seq += 1
            batches.append((seq, f"settle:{round_id}:{station}:{bet}"))
            if n % 2:
                transfers.append((seq, 0, OPEN, account, STAKE, "win", round_id, bet))
                transfers.append((seq, 1, HOUSE, account, WIN, "winnings", round_id, bet))
                net += WIN
            else:
                transfers.append((seq, 0, OPEN, HOUSE, STAKE, "lose", round_id, bet))
                net -= STAKE
        db.executemany("INSERT INTO batches(seq, key) VALUES (?, ?)", batches)
        db.executemany(
            "INSERT INTO transfers(batch_seq, idx, source, destination, amount, kind, round_id, "
            "bet_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            transfers,
        )
        db.execute("UPDATE accounts SET balance = balance + ? WHERE name = ?", (net, account))
        db.execute("UPDATE accounts SET balance = balance - ? WHERE name = ?", (net, HOUSE))
    db.close()


def _one_round(ledger: SqliteLedger, station: str, n: int) -> str:
    """A real bet and its settlement (two durable posts); the round's id."""
    account, round_id = station_account(station), f"now.{n}"
    ledger.post(f"bet:{round_id}:{station}", [Transfer(account, OPEN, STAKE, "wager", round_id, "b")])  # fmt: skip  # noqa: E501
    ledger.post(
        f"settle:{round_id}:{station}",
        [
            Transfer(OPEN, account, STAKE, "win", round_id, "b"),
            Transfer(HOUSE, account, WIN, "winnings", round_id, "b"),
        ],
    )
    return round_id


def _count(store: StationStore, ledger: SqliteLedger, station: str) -> tuple[float, float]:
    """One count of the station's meters, as at a round end: (wall, CPU) seconds."""
    read = partial(ledger.history_after, station_account(station))
    wall, cpu = time.perf_counter(), time.process_time()
    store.write(store.sync(station, read, lambda round_id: True))
    return time.perf_counter() - wall, time.process_time() - cpu


def run(year_rounds: int, rounds: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="bench-meters-") as tmp:
        data = Path(tmp)
        ledger = SqliteLedger(data / "ledger.sqlite")
        store, _ = open_station_store(data)
        try:
            ledger.open_account(OPEN)
            ledger.open_account(HOUSE, may_go_negative=True)
            for station in (NEW, OLD):
                ledger.open_account(station_account(station))
            ledger.post("seed", [Transfer(HOUSE, station_account(s), 100_000_000, "bill_in") for s in (NEW, OLD)])  # fmt: skip  # noqa: E501
            started = time.perf_counter()
            _write_a_year(data / "ledger.sqlite", OLD, year_rounds)
            written = time.perf_counter() - started
            start = time.perf_counter()
            history = ledger.history(station_account(OLD))
            whole_read = time.perf_counter() - start
            first_count = _count(store, ledger, OLD)[0]
            _count(store, ledger, NEW)
            samples: dict[str, list[tuple[float, float]]] = {NEW: [], OLD: []}
            for n in range(rounds):
                for station in (NEW, OLD):  # interleaved: the machine's drift falls on both
                    _one_round(ledger, station, n)
                    samples[station].append(_count(store, ledger, station))
            assert ledger.reconcile() == {} and ledger.total() == 0
            meters = store.load(OLD).meters
            assert meters["games_played"] == year_rounds + rounds, meters
        finally:
            store.close()
            ledger.close()

    def median(station: str, which: int) -> float:
        return statistics.median(s[which] for s in samples[station])

    return {
        "year_rounds": year_rounds,
        "transfers": len(history),
        "written_s": written,
        "whole_read_ms": whole_read * 1e3,
        "first_count_ms": first_count * 1e3,
        "new_wall_ms": median(NEW, 0) * 1e3,
        "old_wall_ms": median(OLD, 0) * 1e3,
        "new_cpu_ms": median(NEW, 1) * 1e3,
        "old_cpu_ms": median(OLD, 1) * 1e3,
        "rounds": rounds,
    }


def render(r: dict[str, float]) -> str:
    year, rounds = int(r["year_rounds"]), int(r["rounds"])
    command = ".venv/bin/python -m loadtests.bench_station_meters"
    if year != YEAR_ROUNDS or rounds != 200:
        command += f" --year-rounds {year} --rounds {rounds}"
    wall_ratio = r["old_wall_ms"] / r["new_wall_ms"]
    cpu_ratio = r["old_cpu_ms"] / r["new_cpu_ms"]
    return "\n".join(
        [
            "## Stations: the meters' count per round, a year-old station against a new one",
            "",
            f"Command: `{command}` ({machine_line()}).",
            f"The old station has {year:,} rounds behind it"
            + (" (a year at a round every 40 s)" if year == YEAR_ROUNDS else "")
            + f": {int(r['transfers']):,} transfers on its account, written straight into "
            f"`ledger.sqlite` in {r['written_s']:.1f} s; then {rounds} rounds of each station, interleaved, "  # noqa: E501
            "each a real bet and settlement followed by the count a round end makes "
            "(`StationStore.sync`, a durable write of `stations.sqlite`). Medians per count; "
            "the new station is the baseline.",
            "",
            "| Station | wall ms per count | CPU ms per count | × new station (wall) | × new station (CPU) |",  # noqa: E501
            "|---|---:|---:|---:|---:|",
            f"| new, no history (baseline) | {r['new_wall_ms']:.2f} | {r['new_cpu_ms']:.2f} | 1.00 | 1.00 |",  # noqa: E501
            f"| a year of rounds | {r['old_wall_ms']:.2f} | {r['old_cpu_ms']:.2f} | {wall_ratio:.2f} | {cpu_ratio:.2f} |",  # noqa: E501
            "",
            f"Before cursors every count read the account's whole history: for the old station "
            f"that read alone takes {r['whole_read_ms']:,.0f} ms, every round. The first count "
            f"after upgrading a store from before cursors reads it once "
            f"({r['first_count_ms']:,.0f} ms here), then only what is new.",
        ]
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--year-rounds", type=int, default=YEAR_ROUNDS)
    parser.add_argument("--rounds", type=int, default=200, help="measured rounds per station")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    text = render(run(args.year_rounds, args.rounds))
    print(text)
    if not args.no_write:
        write_section("station-meters", text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
