"""``croupier serve`` as an operator runs it: a real process, health, readiness, metrics,
a clear error for a bad configuration, and a clean stop on SIGTERM."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

from tests.net import exposition
from tests.net.processes import CROUPIER, free_port, http_get


def test_serve_answers_health_readiness_and_metrics_then_stops_cleanly(tmp_path: Path) -> None:
    port = free_port()
    with subprocess.Popen(
        [
            CROUPIER,
            "serve",
            "--port",
            str(port),
            "--data-dir",
            str(tmp_path),
            "--log-level",
            "info",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as proc:
        base = f"http://127.0.0.1:{port}"
        for _ in range(100):
            try:
                status, _ = http_get(base + "/healthz")
                break
            except OSError:
                time.sleep(0.1)
        assert status == 200
        assert http_get(base + "/readyz") == (200, "ready\n")
        status, metrics = http_get(base + "/metrics")
        assert status == 200
        parsed = exposition.parse(metrics)  # valid, and every metric says what it measures
        assert parsed.value("croupier_tables_running") == parsed.value("croupier_tables") > 0
        assert parsed.value("croupier_rounds_voided_total", game="baccarat", recovered="true") == 0
        status, page = http_get(base + "/")
        assert status == 200 and "Croupier" in page
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0
        logs = proc.stderr.read() if proc.stderr else ""
    assert '"message": "serving"' in logs and '"message": "stopping"' in logs
    assert (tmp_path / "ledger.sqlite").exists() and (tmp_path / "journal.sqlite").exists()


def test_a_bad_configuration_is_refused_with_its_reason(tmp_path: Path) -> None:
    config = tmp_path / "tables.toml"
    config.write_text('[[tables]]\nid = "x"\nname = "X"\ngame = "snap"\n')
    result = subprocess.run(
        [CROUPIER, "serve", "--config", str(config), "--data-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 2
    assert "unknown game 'snap'" in result.stderr and "table x" in result.stderr
