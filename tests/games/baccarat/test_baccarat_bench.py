"""The Baccarat benchmark keeps working (run by hand; no timing is asserted here)."""

from loadtests import bench_baccarat


def test_baccarat_benchmark_runs_and_renders_every_row() -> None:
    rows = bench_baccarat.run(rounds=20)
    text = bench_baccarat.render(rows, rounds=20)
    assert len(rows) == 5 and all(per_second > 0 for _, _, per_second in rows)
    assert "engine: full standard round" in text and "50,000" in text
