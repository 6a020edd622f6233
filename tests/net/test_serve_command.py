"""``croupier serve`` as an operator runs it: a real process, health, readiness, metrics,
a clear error for a bad configuration, and a clean stop on SIGTERM."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

from tests.net import exposition
from tests.net.processes import CROUPIER, http_get, port_of, wait_ready


def test_serve_answers_health_readiness_and_metrics_then_stops_cleanly(tmp_path: Path) -> None:
    """On ``--port 0`` it binds a free port itself and says which: in ``--port-file`` and in
    its "serving" log line (docs/operations.md)."""
    port_file, log = tmp_path / "port", tmp_path / "serve.log"
    data = tmp_path / "data"
    args = [CROUPIER, "serve", "--port", "0", "--port-file", port_file, "--data-dir", data]
    with log.open("wb") as out, subprocess.Popen(args, stdout=out, stderr=out) as proc:
        port = port_of(proc, port_file, log=log)
        base = f"http://127.0.0.1:{port}"
        assert http_get(base + "/healthz") == (200, "ok\n")
        wait_ready(port, proc)
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
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    serving = [line for line in lines if line["message"] == "serving"]
    assert [(s["host"], s["port"]) for s in serving] == [("127.0.0.1", port)]
    assert [line for line in lines if line["message"] == "stopping"]
    assert (data / "ledger.sqlite").exists() and (data / "journal.sqlite").exists()


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
