"""``python -m loadtests.report RUN_DIR``: a run's CSV files become report.md and its charts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loadtests.report import main
from loadtests.run_report import report

HISTORY = """Timestamp,User Count,Type,Name,Requests/s,Failures/s,50%,66%,75%,80%,90%,95%,98%,99%,99.9%,99.99%,100%,Total Request Count,Total Failure Count,Total Median Response Time,Total Average Response Time,Total Min Response Time,Total Max Response Time,Total Average Content Size
1000,0,,Aggregated,0.0,0.0,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,0,0,0,0,0,0,0
1001,10,WS,place_bet → bet_accepted,5.0,0.0,3,3,4,4,5,6,7,8,9,9,9,5,0,3,3,1,9,10
1001,10,,Aggregated,7.0,0.5,3,3,4,4,5,6,7,8,9,9,9,7,1,3,3,1,9,10
1003,20,WS,place_bet → bet_accepted,9.0,0.0,4,4,5,5,6,7,8,11,12,12,12,14,0,4,4,1,12,10
1003,20,,Aggregated,12.0,0.0,4,4,5,5,6,7,8,11,12,12,12,20,1,4,4,1,12,10
"""  # noqa: E501
STATS = """Type,Name,Request Count,Failure Count,Median Response Time,Average Response Time,Min Response Time,Max Response Time,Average Content Size,Requests/s,Failures/s,50%,66%,75%,80%,90%,95%,98%,99%,99.9%,99.99%,100%
WS,place_bet → bet_accepted,14,0,4,4,1,12,10,3.5,0,4,4,5,5,6,7,8,11,12,12,12
,Aggregated,20,1,4,4,1,12,10,5,0.25,4,4,5,5,6,7,8,11,12,12,12
"""  # noqa: E501
FAILURES = """Method,Name,Error,Occurrences
WS,connect+hello+join,ConnectionRefusedError(111),1
"""
SERVER = """timestamp,server,process_cpu_seconds_total,process_resident_memory_bytes,croupier_connections_open
1000,http://a/metrics,1.0,104857600,0
1002,http://a/metrics,2.0,209715200,10
"""  # noqa: E501


def test_a_run_becomes_a_report_with_its_charts(tmp_path: Path) -> None:
    for name, text in [
        ("run_stats_history.csv", HISTORY),
        ("run_stats.csv", STATS),
        ("run_failures.csv", FAILURES),
        ("run_server.csv", SERVER),
    ]:
        (tmp_path / name).write_text(text)
    steps = [
        {
            "users": 10,
            "requests": 7,
            "failures": 0,
            "error_rate": 0.0,
            "bet_ack_p99_ms": 8.0,
            "held": True,
        }
    ]
    (tmp_path / "run_capacity.json").write_text(json.dumps({"capacity_users": 10, "steps": steps}))
    text = report(tmp_path).read_text()
    assert "| place_bet → bet_accepted | 14 | 0 | 4 | 7 | 11 | 12 |" in text
    assert "| connect+hello+join: ConnectionRefusedError(111) | 1 |" in text
    assert "**Capacity: 10 users**" in text and "| 10 | 7 | 0.000% | 8.0 | yes |" in text
    for chart in ("users", "requests", "latency", "failures", "cpu", "memory"):
        assert f"({chart}.svg)" in text
        assert (tmp_path / f"{chart}.svg").read_text().startswith("<svg")
    # one second of CPU over two seconds of wall time: half a core; 200 MiB at the end
    cpu = (tmp_path / "cpu.svg").read_text()
    assert ">50</text>" in cpu  # the axis' top: the highest value
    assert ">200</text>" in (tmp_path / "memory.svg").read_text()


def test_a_folder_without_a_run_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main([str(tmp_path)])
    assert exited.value.code == 2
    assert "run Locust with --csv" in capsys.readouterr().err
