"""A load-test run as an operator reads it: ``python -m loadtests.report RUN_DIR``.

Reads what a scenario run with ``--csv RUN_DIR/run`` left there — Locust's
``run_stats.csv``, ``run_stats_history.csv`` (per request with ``--csv-full-history``, else
the aggregate), ``run_failures.csv``, the servers' samples ``run_server.csv`` and, from
``step_to_failure``, ``run_capacity.json`` — and writes ``RUN_DIR/report.md`` with its charts
as SVG files beside it: users, requests per second, the bet acknowledgement's p50/p95/p99
(or the aggregate's), failures per second, and each server's CPU use and memory over time.
No plotting library: each chart is a few SVG polylines.
"""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

__all__ = ["report"]

BET = "place_bet → bet_accepted"
_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b")
_W, _H, _PAD = 720, 220, 48


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None  # Locust's "N/A"


def svg_chart(
    title: str, unit: str, series: Sequence[tuple[str, Sequence[tuple[float, float]]]]
) -> str:
    """One line chart: ``series`` of (name, [(seconds, value)]), on shared axes from zero."""
    points = [p for _, values in series for p in values]
    if not points:
        return ""
    t_max = max(t for t, _ in points) or 1.0
    v_max = max(v for _, v in points) or 1.0
    x = lambda t: _PAD + (_W - 2 * _PAD) * t / t_max  # noqa: E731
    y = lambda v: _H - _PAD + -(_H - 2 * _PAD) * v / v_max  # noqa: E731
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_W}" height="{_H}" '
        f'font-family="sans-serif" font-size="11">',
        f'<text x="{_PAD}" y="16" font-size="13">{title}</text>',
        f'<line x1="{_PAD}" y1="{_H - _PAD}" x2="{_W - _PAD}" y2="{_H - _PAD}" stroke="#999"/>',
        f'<line x1="{_PAD}" y1="{_PAD}" x2="{_PAD}" y2="{_H - _PAD}" stroke="#999"/>',
        f'<text x="4" y="{_PAD + 4}">{v_max:.4g}</text>',
        f'<text x="4" y="{_H - _PAD}">0 {unit}</text>',
        f'<text x="{_W - _PAD - 40}" y="{_H - _PAD + 16}">{t_max:.0f} s</text>',
    ]
    for n, (name, values) in enumerate(series):
        colour = _COLOURS[n % len(_COLOURS)]
        line = " ".join(f"{x(t):.1f},{y(v):.1f}" for t, v in values)
        parts.append(
            f'<polyline fill="none" stroke="{colour}" stroke-width="1.5" points="{line}"/>'
        )
        parts.append(
            f'<text x="{_W - _PAD - 150}" y="{_PAD + 14 * n}" fill="{colour}">{name}</text>'
        )
    parts.append("</svg>")
    return "\n".join(parts)


def report(run_dir: Path) -> Path:
    """Write ``run_dir/report.md`` and its charts; return the report's path."""
    histories = sorted(run_dir.glob("*_stats_history.csv"))
    if not histories:
        raise FileNotFoundError(
            f"no *_stats_history.csv in {run_dir}: run Locust with --csv {run_dir}/run"
        )
    prefix = str(histories[0]).removesuffix("_stats_history.csv")
    rows = list(csv.DictReader(histories[0].read_text(encoding="utf-8").splitlines()))
    start = min(float(r["Timestamp"]) for r in rows)
    by_name: dict[str, list[dict[str, str]]] = defaultdict(list)
    for row in rows:
        by_name[row["Name"]].append(row)
    aggregate = by_name.get("Aggregated", [])
    latency_rows = by_name.get(BET) or aggregate
    latency_name = BET if BET in by_name else "all requests"

    def over_time(rows: list[dict[str, str]], column: str) -> list[tuple[float, float]]:
        values = ((float(r["Timestamp"]) - start, _number(r[column])) for r in rows)
        return [(t, v) for t, v in values if v is not None]

    charts = {
        "users": ("Users", "users", [("users", over_time(aggregate, "User Count"))]),
        "requests": (
            "Requests per second",
            "req/s",
            [("all requests", over_time(aggregate, "Requests/s"))],
        ),
        "latency": (
            f"{latency_name}: response time",
            "ms",
            [(q, over_time(latency_rows, q)) for q in ("50%", "95%", "99%")],
        ),
        "failures": (
            "Failures per second",
            "failures/s",
            [("failures", over_time(aggregate, "Failures/s"))],
        ),
    }
    servers = Path(f"{prefix}_server.csv")
    if servers.exists():
        cpu: dict[str, list[tuple[float, float]]] = defaultdict(list)
        rss: dict[str, list[tuple[float, float]]] = defaultdict(list)
        last: dict[str, tuple[float, float]] = {}
        for row in csv.DictReader(servers.read_text(encoding="utf-8").splitlines()):
            t, name = float(row["timestamp"]) - start, row["server"]
            used = _number(row["process_cpu_seconds_total"])
            memory = _number(row["process_resident_memory_bytes"])
            if used is not None:
                if name in last and t > last[name][0]:
                    cpu[name].append((t, 100 * (used - last[name][1]) / (t - last[name][0])))
                last[name] = (t, used)
            if memory is not None:
                rss[name].append((t, memory / 2**20))
        charts["cpu"] = ("Server CPU", "% of a core", sorted(cpu.items()))
        charts["memory"] = ("Server memory (resident)", "MiB", sorted(rss.items()))
    lines = [f"# Load-test run: {run_dir}", ""]
    lines += _summary(Path(f"{prefix}_stats.csv"), Path(f"{prefix}_failures.csv"))
    capacity = Path(f"{prefix}_capacity.json")
    if capacity.exists():
        found = json.loads(capacity.read_text())
        lines += [
            "",
            f"**Capacity: {found['capacity_users']} users** (the last step that held)",
            "",
            "| Users | Requests | Error rate | Bet-ack p99 (ms) | Held |",
            "|---:|---:|---:|---:|---|",
        ]
        for s in found["steps"]:
            lines.append(
                f"| {s['users']} | {s['requests']} | {s['error_rate']:.3%} | "
                f"{s['bet_ack_p99_ms']} | {'yes' if s['held'] else 'no'} |"
            )
    lines.append("")
    for key, (title, unit, series) in charts.items():
        svg = svg_chart(title, unit, series)
        if svg:
            (run_dir / f"{key}.svg").write_text(svg)
            lines += [f"![{title}]({key}.svg)", ""]
    out = run_dir / "report.md"
    out.write_text("\n".join(lines))
    return out


def _summary(stats: Path, failures: Path) -> list[str]:
    lines = [
        "| Request | Count | Failures | p50 ms | p95 ms | p99 ms | Max ms |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    if stats.exists():
        for r in csv.DictReader(stats.read_text(encoding="utf-8").splitlines()):
            lines.append(
                f"| {r['Name']} | {r['Request Count']} | {r['Failure Count']} | "
                f"{r['50%']} | {r['95%']} | {r['99%']} | {r['Max Response Time']} |"
            )
    if failures.exists():
        rows = list(csv.DictReader(failures.read_text(encoding="utf-8").splitlines()))
        if rows:
            lines += ["", "| Failure | Occurrences |", "|---|---:|"]
            lines += [f"| {r['Name']}: {r['Error']} | {r['Occurrences']} |" for r in rows]
    return lines
