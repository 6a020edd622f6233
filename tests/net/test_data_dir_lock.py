"""A data directory belongs to one ``croupier serve`` at a time (server/datadir.py).

A second server on the same directory — on the same port or another — is refused at once,
naming the directory and the PID that holds it, and never touches the first one's journal:
the first server goes on running every table with nothing voided. The lock is the kernel's,
so it is gone when its holder dies, ``kill -9`` included.
"""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from server.datadir import DataDirInUse, DataDirLock
from tests.net.exposition import parse
from tests.net.processes import CROUPIER, http_get, serve, wait_ready

TABLES = """
[[tables]]
id = "bac"
name = "Baccarat"
game = "baccarat"
betting_seconds = 0.3
pause_seconds = 0.1

[[tables]]
id = "rt"
name = "Roulette"
game = "roulette"
betting_seconds = 0.3
pause_seconds = 0.1
"""


def _rounds(data_dir: Path) -> dict[str, int]:
    with sqlite3.connect(f"file:{data_dir / 'journal.sqlite'}?mode=ro", uri=True) as db:
        rows = db.execute("SELECT status, COUNT(*) FROM rounds GROUP BY status").fetchall()
    return {status: count for status, count in rows}


def _metric(port: int, name: str) -> float:
    _, text = http_get(f"http://127.0.0.1:{port}/metrics")
    return parse(text).value(name)


def _until(condition: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.05)


def test_a_second_server_on_the_same_data_directory_is_refused_and_the_first_plays_on(
    tmp_path: Path,
) -> None:
    config = tmp_path / "tables.toml"
    config.write_text(TABLES)
    data = tmp_path / "data"
    first, port = serve(config, data)
    try:
        wait_ready(port, first)
        _until(lambda: _rounds(data).get("open", 0) > 0, "a round open in the journal")
        for second_port in (str(port), "0"):  # "address in use" and a free port alike
            command = [CROUPIER, "serve", "--config", config, "--data-dir", data]
            second = subprocess.run(
                [*command, "--port", second_port],
                capture_output=True,
                text=True,
                timeout=30,
            )
            assert second.returncode == 1
            assert str(data.resolve()) in second.stderr
            assert f"process {first.pid}" in second.stderr
            assert "recovered" not in second.stderr  # refused at once: it never ran recovery
        before = _rounds(data)
        # The first server plays on: more rounds settle, none was voided.
        _until(
            lambda: _rounds(data).get("settled", 0) > before.get("settled", 0),
            "another round settled by the first server",
        )
        assert "voided" not in _rounds(data)
        assert http_get(f"http://127.0.0.1:{port}/readyz") == (200, "ready\n")
        assert _metric(port, "croupier_tables_running") == 2
        assert _metric(port, "croupier_tables_stopped") == 0
        first.send_signal(signal.SIGTERM)
        assert first.wait(timeout=20) == 0
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    # Stopped cleanly, the directory is free again.
    third, port = serve(config, data)
    try:
        wait_ready(port, third)
    finally:
        third.kill()  # kill -9: the kernel releases the lock with the process
        third.wait()
    fourth, port = serve(config, data)
    try:
        wait_ready(port, fourth)
    finally:
        fourth.kill()
        fourth.wait()


def test_the_lock_names_its_holder_and_is_released(tmp_path: Path) -> None:
    with DataDirLock(tmp_path):
        with pytest.raises(DataDirInUse) as refused:
            DataDirLock(tmp_path)
        assert refused.value.pid is not None and str(tmp_path.resolve()) in str(refused.value)
    DataDirLock(tmp_path).release()  # free once released
