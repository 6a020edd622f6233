"""The benchmark scripts keep working (they are run by hand; no timing is asserted here)."""

from pathlib import Path

from loadtests import bench_rng
from loadtests.report import write_section


def test_rng_benchmark_runs_and_renders_every_row() -> None:
    rows = bench_rng.run(repeat=1)
    text = bench_rng.render(rows, repeat=1)
    assert len(rows) == 3 and all(ms > 0 for _, ms, _ in rows)
    assert "HMAC_DRBG" in text and "baseline" in text


def test_write_section_replaces_only_its_own_section(tmp_path: Path) -> None:
    path = tmp_path / "BENCHMARKS.md"
    write_section("a", "first", path)
    write_section("b", "second", path)
    write_section("a", "third", path)
    text = path.read_text()
    assert "third" in text and "second" in text and "first" not in text
    assert text.count("<!-- bench:a -->") == 1
