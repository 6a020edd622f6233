"""Benchmark: this tree against an earlier commit, in the same run (new ÷ old).

A change that must not cost speed (a refactoring of the table layer, say) is judged by running
the same benchmarks on the commit before it and on the change, alternately on the same
machine, so that the machine's drift falls on both: passes run old-new, then new-old, and so
on, and each figure is the median of its passes. The old commit is checked out into a
temporary git worktree; each benchmark runs there with that tree's own code, in a fresh
process, through its ``run()``.

Measured (each benchmark's own section says what it does; here with shorter passes):

* baccarat — ``bench_baccarat``: full engine rounds per CPU-second, standard and Rising
  Phoenix tables, every wager; also as a multiple of the ``play_out`` baseline of that run;
* fanout — ``bench_fanout``: frames per server CPU-second through the shipped path
  (``TableRuntime._emit_raw``), 1,000 viewers;
* burst — ``bench_burst``: 80 players betting in one instant at one table, four burst
  rounds per pass as in ``bench_burst``'s own section (with two, a pass's p99 was the
  second-slowest of its 160 bets), on disk, on /dev/shm and on a one-node cluster
  (PostgreSQL and Redis): each burst's p99 (old ÷ new; issue #31's target is ≥ 2, the
  p99 at most half);
* betack — ``bench_betack``: bet-ack p99 with 5,000 viewers and 50,000 frames/s of
  broadcast, data under /dev/shm (lower is better: the ratio is old ÷ new, so that ≥ 1 means
  no slower), and the server's CPU share at that load (likewise old ÷ new).

Usage: ``.venv/bin/python -m loadtests.compare --base afa5c10 --passes 4``
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from loadtests.report import machine_line, write_section
from loadtests.wsload import PYTHON, ROOT, loadavg, median

# Each benchmark's figures, extracted inside the tree being measured: name -> (code, higher
# is better). The code runs in that tree's process and prints one JSON object.
PROBES: dict[str, tuple[str, dict[str, bool]]] = {
    "baccarat": (
        """
from loadtests.bench_baccarat import run
rows = {what: rps for what, _, rps in run(ROUNDS)}
base = rows["baseline: deal + third-card rule (play_out)"]
out = {}
for v in ("standard", "rising_phoenix"):
    rps = rows[f"engine: full {v} round, every wager"]
    out[f"{v} rounds per CPU-s"] = rps
    out[f"{v} × play_out"] = rps / base
""",
        {
            "standard rounds per CPU-s": True,
            "standard × play_out": True,
            "rising_phoenix rounds per CPU-s": True,
            "rising_phoenix × play_out": True,
        },
    ),
    "fanout": (
        """
from loadtests.bench_fanout import run
rows = {r.mode: r for r in run(1000, 400, 4, 1)["rows"]}
out = {"frames per server CPU-s": rows["asis"].frames_per_cpu_s}
""",
        # (Not the ratio to the baseline: issue #31 made the baseline the fair one, so an
        # older tree's baseline is another measure.)
        {"frames per server CPU-s": True},
    ),
    "betack": (
        """
from loadtests.bench_betack import run
rows = run(5000, 500, [50000.0], 20, 10, 0.25, ["/dev/shm"])["configs"][0]["rows"]
out = {"p99 ms at 50,000 frames/s": rows[-1]["p99"],
       "server CPU share at 50,000 frames/s": rows[-1]["cpu_share"],
       "p99 ms, no broadcast": rows[0]["p99"]}
""",
        {
            "p99 ms at 50,000 frames/s": False,
            "server CPU share at 50,000 frames/s": False,
            "p99 ms, no broadcast": False,
        },
    ),
    "burst": (
        """
import tempfile
from loadtests.bench_burst import run
from loadtests.wsload import CLIENT_CPU, percentile, pin, raise_nofile
pin(CLIENT_CPU)
raise_nofile()
runs = run(80, 4, ["disk", "shm", "postgres"], tempfile.gettempdir())["deployments"]
out = {f"{kind} burst p99 ms": percentile(r["burst"], 0.99) for kind, r in runs.items()}
""",
        {"disk burst p99 ms": False, "shm burst p99 ms": False, "postgres burst p99 ms": False},
    ),
}
# The ratio each comparison must reach (default: no slower, within 5%). A burst of bets at
# one table is what issue #31 set out to speed up: its p99 at most half the old one's.
TARGETS: dict[str, float] = {"burst": 2.0}


def measure(tree: Path, bench: str, rounds: int) -> dict[str, float]:
    probe = PROBES[bench][0]
    code = f"ROUNDS = {rounds}\n{probe}\nimport json\nprint('RESULT ' + json.dumps(out))"
    done = subprocess.run(
        [PYTHON, "-c", code], cwd=tree, capture_output=True, text=True, check=False
    )
    for line in done.stdout.splitlines():
        if line.startswith("RESULT "):
            result: dict[str, float] = json.loads(line[len("RESULT ") :])
            return result
    raise RuntimeError(f"{bench} in {tree} failed:\n{done.stdout}\n{done.stderr}")


def run(base: str, benches: list[str], passes: int, rounds: int) -> dict[str, Any]:
    figures: dict[str, dict[str, dict[str, list[float]]]] = {
        b: {"old": {}, "new": {}} for b in benches
    }
    with tempfile.TemporaryDirectory() as tmp:
        old = Path(tmp) / "base"
        subprocess.run(
            ["git", "worktree", "add", "--detach", "-q", str(old), base], cwd=ROOT, check=True
        )
        try:
            for n in range(passes):
                for bench in benches:
                    order = [("old", old), ("new", ROOT)]
                    for label, tree in order if n % 2 == 0 else reversed(order):
                        for key, value in measure(tree, bench, rounds).items():
                            figures[bench][label].setdefault(key, []).append(value)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(old)], cwd=ROOT)
    return {"figures": figures, "loadavg": loadavg()}


def render(result: dict[str, Any], base: str, bench: str, passes: int, rounds: int) -> str:
    """One benchmark's comparison, as its own section of BENCHMARKS.md."""
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    rounds_arg = f" --rounds {rounds}" if bench == "baccarat" else ""
    lines = [
        f"## {bench}: this tree against an earlier commit, same run (new ÷ old)",
        "",
        f"Command: `.venv/bin/python -m loadtests.compare --base {base} --passes {passes} "
        f"--only {bench}{rounds_arg}` ({machine_line()}; load average at the end "
        f"{result['loadavg']}). Old: {base}; new: the working tree at {head}.",
        "Passes alternate old-new and new-old; each figure is the median of its passes "
        "(module docstring of `loadtests/compare.py` for what each one runs). *Ratio* is new "
        "÷ old where higher is better and old ÷ new where lower is better, so ≥ 1 always "
        "means the change is no slower; target "
        f"≥ {TARGETS.get(bench, 0.95):g}.",
        "",
        "| Figure | old | new | ratio | passes (old; new) | target |",
        "|---|---:|---:|---:|---|---|",
    ]
    old, new = result["figures"][bench]["old"], result["figures"][bench]["new"]
    for key, higher in PROBES[bench][1].items():
        o, w = median(old[key]), median(new[key])
        ratio = w / o if higher else o / w
        spread = f"{_list(old[key])}; {_list(new[key])}"
        verdict = "meets" if ratio >= TARGETS.get(bench, 0.95) else "MISSES"
        lines.append(f"| {key} | {_fmt(o)} | {_fmt(w)} | {ratio:.3f} | {spread} | {verdict} |")
    return "\n".join(lines)


def _fmt(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:.3f}"


def _list(values: list[float]) -> str:
    return " ".join(_fmt(v) for v in values)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="the commit to compare against")
    parser.add_argument("--passes", type=int, default=4)
    parser.add_argument("--only", default=",".join(PROBES), help="benchmarks, comma-separated")
    parser.add_argument("--rounds", type=int, default=5000, help="baccarat deals per pass")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    benches = [b for b in args.only.split(",") if b]
    unknown = [b for b in benches if b not in PROBES]
    if unknown:
        parser.error(f"unknown benchmark {', '.join(unknown)}; choose from {', '.join(PROBES)}")
    result = run(args.base, benches, args.passes, args.rounds)
    for bench in benches:
        text = render(result, args.base, bench, args.passes, args.rounds)
        print(text + "\n")
        if not args.no_write:
            write_section(f"compare-{bench}", text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
