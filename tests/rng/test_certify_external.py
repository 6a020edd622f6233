"""External batteries: parsers on recorded outputs, SKIPPED when absent, and real runs."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest

from rng import seeded_source
from rng.certify import external, sp80022
from rng.certify.external import (
    DieharderJob,
    EntJob,
    RngtestJob,
    Sp80022Job,
    dieharder_measurement,
    ent_measurements,
    parse_dieharder,
    parse_ent_terse,
    parse_rngtest,
    rngtest_measurement,
)
from rng.certify.results import ALPHA

# dieharder 3.31.1, -D 508 (recorded, trailing blanks trimmed; one line edited to FAILED)
DIEHARDER_OUTPUT = """\
        test_name   |ntup| tsamples |psamples|  p-value |Assessment
#=============================================================================#
          sts_serial|   1|    100000|     100|0.61925479|  PASSED
          sts_serial|   2|    100000|     100|0.31406532|  PASSED
          sts_serial|   3|    100000|     100|0.00364880|   WEAK
          sts_serial|   3|    100000|     100|0.99999990|  FAILED
"""
DIEHARDER_EOF = """\
        test_name   |ntup| tsamples |psamples|  p-value |Assessment
#=============================================================================#
# stdin_input_raw(): Error: EOF
"""
# rngtest 5 on 1,000 blocks of /dev/urandom (recorded; it exited 1 because of these failures)
RNGTEST_OUTPUT = """\
rngtest 5
Copyright (c) 2004 by Henrique de Moraes Holschuh
This is free software; see the source for copying conditions.  There is NO warranty; \
not even for MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.

rngtest: starting FIPS tests...
rngtest: bits received from input: 20000032
rngtest: FIPS 140-2 successes: 994
rngtest: FIPS 140-2 failures: 6
rngtest: FIPS 140-2(2001-10-10) Monobit: 0
rngtest: FIPS 140-2(2001-10-10) Poker: 1
rngtest: FIPS 140-2(2001-10-10) Runs: 2
rngtest: FIPS 140-2(2001-10-10) Long run: 3
rngtest: FIPS 140-2(2001-10-10) Continuous run: 0
rngtest: input channel speed: (min=250.967; avg=1935.412; max=19073.486)Mibits/s
rngtest: FIPS tests speed: (min=88.714; avg=182.075; max=190.735)Mibits/s
rngtest: Program run time: 114747 microseconds
"""
# ent -t on 4,000,000 bytes of /dev/urandom; the verbose run said the chi-square "would
# exceed this value 99.69 percent of the times"
ENT_TERSE = """\
0,File-bytes,Entropy,Chi-square,Mean,Monte-Carlo-Pi,Serial-Correlation
1,4000000,7.999964,197.576832,127.551303,3.143325,0.000615
"""


def test_parse_dieharder_reads_every_result_line() -> None:
    lines, eof = parse_dieharder(DIEHARDER_OUTPUT)
    assert not eof
    assert [(line.ntuple, line.assessment) for line in lines] == [
        (1, "PASSED"),
        (2, "PASSED"),
        (3, "WEAK"),
        (3, "FAILED"),
    ]
    assert lines[0].name == "sts_serial" and lines[0].psamples == 100
    assert lines[2].p_value == pytest.approx(0.0036488)


def test_dieharder_rows_are_judged_by_their_p_values_with_bonferroni() -> None:
    lines, _ = parse_dieharder(DIEHARDER_OUTPUT)
    two_sided = dieharder_measurement(lines, 1000)
    assert two_sided.p_value == pytest.approx(4 * 2 * 1e-7, rel=1e-3)  # the FAILED line
    assert "2 PASSED, 1 WEAK, 1 FAILED" in two_sided.detail
    lower_tail = dieharder_measurement(lines, 1000, two_sided=False)
    assert lower_tail.p_value == pytest.approx(4 * 0.0036488)


def test_dieharder_eof_is_detected() -> None:
    lines, eof = parse_dieharder(DIEHARDER_EOF)
    assert eof and not lines


def test_rngtest_is_read_by_its_counts() -> None:
    counts = parse_rngtest(RNGTEST_OUTPUT)
    assert counts == {
        "successes": 994,
        "failures": 6,
        "monobit": 0,
        "poker": 1,
        "runs": 2,
        "long run": 3,
        "continuous run": 0,
    }
    m = rngtest_measurement(counts, 2_500_004)
    assert m.statistic == 6.0
    # P(X >= 6) for Binomial(1000, 8e-4)
    expected = 1 - sum(math.comb(1000, k) * 8e-4**k * (1 - 8e-4) ** (1000 - k) for k in range(6))
    assert m.p_value == pytest.approx(expected, rel=1e-9)
    zero = rngtest_measurement({"successes": 1000, "failures": 0}, 2_500_004)
    assert zero.p_value == 1.0


def test_ent_statistics_become_p_values() -> None:
    values = parse_ent_terse(ENT_TERSE)
    assert values["File-bytes"] == 4_000_000
    rows = ent_measurements(values)
    assert rows["ent-chi-square"].p_value == pytest.approx(0.9969, abs=5e-5)
    mean_z = (127.551303 - 127.5) / math.sqrt((256**2 - 1) / 12 / 4_000_000)
    assert rows["ent-mean"].statistic == pytest.approx(mean_z)
    assert rows["ent-serial-correlation"].statistic == pytest.approx(0.000615 * 2000)
    assert rows["ent-monte-carlo-pi"].p_value is not None
    assert rows["ent-monte-carlo-pi"].p_value > ALPHA


@pytest.mark.parametrize(("m", "count"), [(2, 2), (3, 4), (4, 6), (5, 12), (8, 74), (9, 148)])
def test_aperiodic_templates_match_nist_counts(m: int, count: int) -> None:
    assert len(sp80022.aperiodic_templates(m)) == count


def test_nist_template_file_format(tmp_path: Path) -> None:
    path = sp80022.write_templates(tmp_path)
    lines = path.read_text().splitlines()
    assert path.name == "template9" and len(lines) == 148
    assert lines[0] == "0 0 0 0 0 0 0 0 1"
    assert all(len(line) == 17 for line in lines)  # 2m-1 characters: fseek assumes 2m per line


def test_bits_of_is_msb_first() -> None:
    assert sp80022.bits_of(b"\x81\x02") == bytes([1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0])


ALL_JOBS = [
    DieharderJob(100, 10),
    RngtestJob(1_000),
    EntJob(),
    Sp80022Job(1 << 20),
]


def test_missing_tools_are_skipped_with_a_reason(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(external.shutil, "which", lambda tool: None)
    monkeypatch.setattr(sp80022, "available", lambda: "sp80022suite is not installed")
    sample = tmp_path / "raw.bin"
    sample.write_bytes(b"\x00" * 1000)
    for job in ALL_JOBS:
        rows = job.run(sample)
        assert rows and len(rows) == len(job.row_ids())
        for row in rows:
            assert row.measurement.skipped is not None
            assert "not installed" in row.measurement.skipped


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("external") / "raw.bin"
    path.write_bytes(seeded_source("certify external tools").random_bytes(6 << 20))
    return path


def _need(tool: str) -> None:
    if shutil.which(tool) is None:
        pytest.skip(f"{tool} is not installed (Debian package: see docs/certification.md)")


def test_real_dieharder_run(sample: Path) -> None:
    _need("dieharder")
    (row,) = DieharderJob(100, 10).run(sample)
    assert row.id == "dieharder-sts_monobit"
    assert row.measurement.p_value is not None and row.measurement.skipped is None
    assert "command: dieharder -g 200 -d 100" in row.measurement.detail


def test_real_dieharder_reports_a_sample_too_small(tmp_path: Path) -> None:
    _need("dieharder")
    small = tmp_path / "small.bin"
    small.write_bytes(seeded_source("small").random_bytes(100_000))
    (row,) = DieharderJob(203, 10).run(small)
    assert row.measurement.skipped is not None and "ran out" in row.measurement.skipped


def test_real_rngtest_run_is_read_despite_its_exit_status(sample: Path) -> None:
    _need("rngtest")
    (row,) = RngtestJob(1_000).run(sample)
    assert row.measurement.skipped is None
    assert "of 1000 blocks failed" in row.measurement.detail


def test_real_ent_run(sample: Path) -> None:
    _need("ent")
    rows = EntJob().run(sample)
    assert [r.id for r in rows] == [
        "ent-chi-square",
        "ent-mean",
        "ent-monte-carlo-pi",
        "ent-serial-correlation",
    ]
    assert all(r.measurement.p_value is not None for r in rows)
    assert rows[0].measurement.sample_size == 6 << 20


def test_real_sp80022_run(sample: Path) -> None:
    if sp80022.available() is not None:
        pytest.skip(str(sp80022.available()))
    rows = Sp80022Job(1 << 20).run(sample)
    assert len(rows) == 15
    ran = [r for r in rows if r.measurement.skipped is None]
    # random excursions may be "not applicable" (fewer than 500 cycles); the rest must run
    assert len(ran) >= 13
    assert all(r.measurement.p_value is not None for r in ran)
    template = next(r for r in rows if r.id == "sp800-22-non-overlapping-template-matchings")
    assert "× 148 (Bonferroni)" in template.measurement.detail


def test_unexpected_tool_output_is_skipped_not_a_crash(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    sample = tmp_path / "raw.bin"
    sample.write_bytes(b"\x00" * 1000)
    monkeypatch.setattr(external.shutil, "which", lambda tool: f"/usr/bin/{tool}")

    def garbage(*args: object, **kwargs: object) -> object:
        class Done:
            stdout = "something else entirely"
            stderr = ""

        return Done()

    monkeypatch.setattr(external.subprocess, "run", garbage)
    for job in (EntJob(), RngtestJob(10), DieharderJob(0, 5)):
        for row in job.run(sample):
            assert row.measurement.skipped is not None, row
