"""The benchmark scripts keep working (they are run by hand; no timing is asserted here)."""

from pathlib import Path
from statistics import median

import pytest

from loadtests import bench_lobby, bench_rng, bench_station_meters, bench_wallet
from loadtests.report import write_section


def test_rng_benchmark_runs_and_renders_every_row() -> None:
    rows = bench_rng.run(repeat=1)
    text = bench_rng.render(rows, repeat=1)
    assert len(rows) == 3 and all(ms > 0 for _, ms, _ in rows)
    assert "HMAC_DRBG" in text and "baseline" in text


def test_lobby_benchmark_checks_the_kept_lines_against_lines_built_and_renders() -> None:
    """It checks itself first: the shipped lobby answer and rules, byte for byte, against
    the ones built from scratch, with every table betting (countdowns brought up to date)."""
    result = bench_lobby.run(users=170, reads=2, repeat=1)  # two copies of the demo floor
    assert result["tables"] == 26 and result["betting"] == 26 and result["bytes"] > 2_000
    text = bench_lobby.render(result, "bench_lobby --users 170")
    assert "26 tables, 26 of them betting" in text and "(baseline) | " in text


def test_station_meters_benchmark_counts_every_round_and_renders() -> None:
    """It checks itself: the year's rounds and the measured ones all counted (games played),
    the ledger reconciled."""
    result = bench_station_meters.run(year_rounds=500, rounds=3)
    assert result["transfers"] == 500 + 2 * 250 + 1  # the bets, each win's two, the seed
    text = bench_station_meters.render(result)
    assert "--year-rounds 500 --rounds 3" in text and "| a year of rounds |" in text


def test_write_section_replaces_only_its_own_section(tmp_path: Path) -> None:
    path = tmp_path / "BENCHMARKS.md"
    write_section("a", "first", path)
    write_section("b", "second", path)
    write_section("a", "third", path)
    text = path.read_text()
    assert "third" in text and "second" in text and "first" not in text
    assert text.count("<!-- bench:a -->") == 1


def test_compare_runs_a_benchmark_in_both_trees_and_renders_ratios() -> None:
    """The comparison checks out the base commit (here HEAD itself) and runs the benchmark in
    both trees; each row's ratio is its own median figures' (new ÷ old where higher is better,
    old ÷ new where lower is), and its verdict follows from the ratio. (How near 1 the ratio
    of the same code twice comes is a matter of the machine's noise: no timing is asserted.)"""
    from loadtests import compare

    result = compare.run("HEAD", ["baccarat"], passes=1, rounds=200)
    figures = result["figures"]["baccarat"]
    assert set(figures["old"]) == set(figures["new"]) == set(compare.PROBES["baccarat"][1])
    assert all(v[0] > 0 for v in figures["old"].values())
    text = compare.render(result, "HEAD", "baccarat", 1, 200)
    assert "| standard rounds per CPU-s |" in text and "--base HEAD --passes 1" in text
    rows = [line for line in text.splitlines() if line.startswith(("| standard", "| rising_phoenix"))]  # fmt: skip  # noqa: E501
    assert len(rows) == 4
    higher = compare.PROBES["baccarat"][1]
    for row in rows:
        key, _, _, ratio, _, verdict = (cell.strip() for cell in row.strip("|").split("|"))
        o, w = median(figures["old"][key]), median(figures["new"][key])
        assert float(ratio) == pytest.approx(w / o if higher[key] else o / w, abs=0.0005)
        assert verdict == ("meets" if float(ratio) >= 0.95 else "MISSES")


def test_wallet_benchmark_answers_every_call_and_renders() -> None:
    """Every call of each phase answered ok (the benchmark asserts it as it goes), each
    burst timed call by call, and both CPU figures measured."""
    result = bench_wallet.run([0, 30], burst=8, connections=4, calls=64)
    for runs in result["bursts"].values():
        assert len(runs["pooled"]["times"]) == 8 and len(runs["alone"]["times"]) == 10
    assert result["wallet_cpu"] > 0 and result["ledger_cpu"] > 0
    text = bench_wallet.render(result, "bench_wallet --burst 8")
    assert "| 30 ms |" in text and "(baseline, same run)" in text
