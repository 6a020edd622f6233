"""Benchmark: Baccarat rounds per CPU-second with every side wager on the table and settled.

Three measurements in the same run, on the same pre-drawn deals (the RNG is not timed; the
virtual shoe has its own benchmark):

* baseline — ``hands.play_out``: the deal and the third-card rule alone, no wagers;
* judging — every offered wager judged and settled in money (``side_wagers.judge`` then
  ``wagers.settle``, the engine's own settlement) on the completed coup: the rules'
  own cost;
* engine — a full ``BaccaratRound``: open, place one wager on every spot (plus a Banker
  wager), close, four to six chance requests answered, every wager settled, every event built.

Target (docs/architecture.md, "Performance targets"): ≥ 50,000 baccarat rounds with full
side-wager settlement per CPU-second.

    .venv/bin/python -m loadtests.bench_baccarat            # writes the baccarat section
    .venv/bin/python -m loadtests.bench_baccarat --no-write
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable, Sequence

from loadtests.report import machine_line, write_section
from rng.cards import ALL_CARDS, Card
from server.games.baccarat.config import TableConfig, Variant
from server.games.baccarat.engine import BaccaratRound, Meters
from server.games.baccarat.hands import play_out
from server.games.baccarat.side_wagers import SPOTS, judge
from server.games.wagers import Wager, settle

TARGET = 50_000


def _deals(n: int, decks: int = 8, seed: int = 631) -> list[list[Card]]:
    """``n`` deals of six cards, each drawn without replacement from a full shoe."""
    rnd = random.Random(seed)  # benchmark input only; never a game's randomness
    shoe = [card for card in ALL_CARDS for _ in range(decks)]
    return [rnd.sample(shoe, 6) for _ in range(n)]


def _rounds_per_cpu_second(run: Callable[[list[Card]], object], deals: Sequence[list[Card]], repeats: int = 5) -> float:  # fmt: skip  # noqa: E501
    samples = []
    for _ in range(repeats):
        start = time.process_time()
        for deal in deals:
            run(deal)
        samples.append(len(deals) / (time.process_time() - start))
    return statistics.median(samples)


def _wagers(config: TableConfig) -> list[Wager]:
    spots = ["banker", *config.spots]
    return [
        Wager(f"w{i}", "p1", spot, 500 if spot == "heavenly_9_progressive" else 1000)
        for i, spot in enumerate(spots)
    ]


def run(rounds: int) -> list[tuple[str, int, float]]:
    """Rows: (what, wagers per round, rounds per CPU-second)."""
    deals = _deals(rounds)
    rows = [("baseline: deal + third-card rule (play_out)", 0, _rounds_per_cpu_second(play_out, deals))]  # fmt: skip  # noqa: E501
    for variant in (Variant.STANDARD, Variant.RISING_PHOENIX):
        config = TableConfig.everything(variant)
        wagers = _wagers(config)
        routes = [(w, SPOTS[w.spot], config.paytable(w.spot)) for w in wagers]

        def judging(deal: list[Card], routes: list[tuple[Wager, object, object]] = routes) -> object:  # fmt: skip  # noqa: E501
            coup = play_out(deal)
            return [settle(w, judge(s, coup, t).outcome) for w, s, t in routes]  # type: ignore[arg-type]

        meters = Meters.for_table(config)

        def engine(deal: list[Card], config: TableConfig = config, wagers: list[Wager] = wagers, meters: Meters = meters) -> object:  # fmt: skip  # noqa: E501
            rnd = BaccaratRound(config, "r", meters)
            rnd.open()
            for wager in wagers:
                rnd.place(wager)
            rnd.close_betting()
            cards = iter(deal)
            while rnd.pending() is not None:
                rnd.provide_card(next(cards))
            return rnd

        name = variant.value
        rows.append((f"judging: every {name} wager, settled", len(wagers), _rounds_per_cpu_second(judging, deals)))  # fmt: skip  # noqa: E501
        rows.append((f"engine: full {name} round, every wager", len(wagers), _rounds_per_cpu_second(engine, deals)))  # fmt: skip  # noqa: E501
    return rows


def render(rows: list[tuple[str, int, float]], rounds: int) -> str:
    baseline = rows[0][2]
    lines = [
        "## Baccarat: rounds per CPU-second with every side wager settled",
        "",
        f"Command: `.venv/bin/python -m loadtests.bench_baccarat --rounds {rounds}` "
        f"({machine_line()}).",
        "Median of 5 passes over the same pre-drawn 8-deck deals; CPU time "
        "(`time.process_time`). One player, one wager on every spot the table offers plus a "
        "Banker wager; the standard table is fully automated (Lucky Nines) with Heavenly 9 "
        "and Harmony meters.",
        "",
        "| What | wagers per round | rounds per CPU-second | × baseline speed | target |",
        "|---|---:|---:|---:|---|",
    ]
    for label, wagers, per_second in rows:
        verdict = "—" if not wagers else ("meets" if per_second >= TARGET else "MISSES")
        lines.append(
            f"| {label} | {wagers} | {per_second:,.0f} | {per_second / baseline:.3f} | {verdict} |"
        )
    met = [label for label, wagers, per_second in rows if wagers and per_second >= TARGET]
    lines += [
        "",
        f"Target: ≥ {TARGET:,} rounds with full side-wager settlement per CPU-second "
        '(docs/architecture.md, "Performance targets"). '
        f"Rows meeting it: {', '.join(met) if met else 'none'}. A full engine "
        "round also validates every placement and builds a frozen event per bet, card, "
        'third-card decision and settlement; see docs/par-sheets.md, "Performance".',
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5000, help="deals per timing pass")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    text = render(run(args.rounds), args.rounds)
    print(text)
    if not args.no_write:
        write_section("baccarat", text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
