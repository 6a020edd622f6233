"""Benchmark: card draws per second and a full 8-deck shoe dealt, for each source.

Baseline, measured in the same run: ``secrets.SystemRandom().shuffle`` of a 416-card list
(CPython's OS-backed shuffle). Target (docs/architecture.md, "Performance targets"): a full
8-deck shoe dealt in ≤ 5 ms with the HMAC_DRBG.

    .venv/bin/python -m loadtests.bench_rng            # writes the rng section of BENCHMARKS.md
    .venv/bin/python -m loadtests.bench_rng --no-write
"""

from __future__ import annotations

import argparse
import secrets
import statistics
import time
from collections.abc import Callable

from loadtests.report import machine_line, write_section
from rng import BACCARAT, HmacDrbgSource, OsSource, RandomSource, VirtualShoe

SHOE_CARDS = 416
TARGET_MS = 5.0


def _cpu_per_call(fn: Callable[[], object], repeat: int, rounds: int = 7) -> float:
    """Median CPU seconds per call over ``rounds`` rounds of ``repeat`` calls."""
    samples = []
    for _ in range(rounds):
        start = time.process_time()
        for _ in range(repeat):
            fn()
        samples.append((time.process_time() - start) / repeat)
    return statistics.median(samples)


def _deal_shoe(source: RandomSource) -> Callable[[], object]:
    shoe = VirtualShoe(source, BACCARAT, 8)

    def deal() -> object:
        shoe.shuffle()
        return shoe.deal_all()

    return deal


def run(repeat: int) -> list[tuple[str, float, float]]:
    """Rows: (what, CPU ms per 8-deck shoe, ratio to the baseline's speed)."""
    system_random = secrets.SystemRandom()
    cards = list(range(SHOE_CARDS))
    baseline = _cpu_per_call(lambda: system_random.shuffle(cards), repeat)
    rows = [("secrets.SystemRandom().shuffle (baseline)", baseline * 1e3, 1.0)]
    for label, source in (
        ("VirtualShoe, HMAC_DRBG (SP 800-90A)", HmacDrbgSource("bench")),
        ("VirtualShoe, OS CSPRNG", OsSource()),
    ):
        per_shoe = _cpu_per_call(_deal_shoe(source), repeat)
        rows.append((label, per_shoe * 1e3, baseline / per_shoe))
    return rows


def render(rows: list[tuple[str, float, float]], repeat: int) -> str:
    lines = [
        "## RNG: dealing a full 8-deck shoe (416 cards)",
        "",
        f"Command: `.venv/bin/python -m loadtests.bench_rng --repeat {repeat}` ({machine_line()}).",
        "CPU time per shoe (median of 7 rounds); speed relative to the baseline in the same run.",
        "A lazily dealt shoe includes its burn cards and draws each card when needed.",
        "",
        "| What | CPU ms per shoe | card draws per CPU-second | × baseline speed |",
        "|---|---:|---:|---:|",
    ]
    for label, ms, ratio in rows:
        lines.append(f"| {label} | {ms:.3f} | {SHOE_CARDS / ms * 1e3:,.0f} | {ratio:.2f} |")
    drbg_ms = rows[1][1]
    verdict = "meets" if drbg_ms <= TARGET_MS else "MISSES"
    lines += [
        "",
        f"Target: an 8-deck shoe in ≤ {TARGET_MS:g} ms with the HMAC_DRBG — {verdict} it "
        f"({drbg_ms:.2f} ms).",
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=200, help="shoes per timing round")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    text = render(run(args.repeat), args.repeat)
    print(text)
    if not args.no_write:
        write_section("rng", text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
