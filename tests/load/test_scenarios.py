"""The load-test scenarios (loadtests/scenarios/) run as an operator runs them — headless
Locust against a real ``croupier serve`` — for a few seconds each, and pass their money
check; and the money check finds a player whose balance does not add up."""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from loadtests.scenarios.money import Book, check_money
from server.config import demo_config_text
from tests.net.processes import serve, stop, wait_ready

ROOT = Path(__file__).resolve().parents[2]
LOCUST = Path(sys.executable).with_name("locust")
SCENARIOS = sorted(p.stem for p in (ROOT / "loadtests" / "scenarios").glob("[a-z]*.py")
                   if p.stem not in {"croupier", "floors", "money", "wsclient"})  # fmt: skip


# How long each scenario runs: six seconds, or as long as its own check needs on a loaded
# machine: a new shoe comes after four or five rounds of the meter tables; the hot table has
# one bettor among twelve users, and its bets must be seen acknowledged; the storm comes at
# three seconds, at a user's next round, and its reconnection may wait three more.
RUN_TIME = {"shoe_change_and_meter_hit": "14s", "hot_table": "10s", "reconnect_storm": "12s"}


def short_rounds(text: str) -> str:
    """A table file with one-second betting windows and short pauses and decisions."""
    short = "betting_seconds = 1\npause_seconds = 0.2\ndecision_seconds = 2"
    text = re.sub(r"(?m)^(pause|decision)_seconds = .*\n", "", text)
    return re.sub(r"betting_seconds = \d+", short, text)


@contextlib.contextmanager
def running(tmp_path: Path, text: str) -> Iterator[tuple[int, Path]]:
    config = tmp_path / "tables.toml"
    config.write_text(short_rounds(text))
    data = tmp_path / "data"
    process, port = serve(config, data)
    try:
        wait_ready(port, process)
        yield port, data
    finally:
        stop(process)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    """The demo lobby with short rounds, on its own port and data directory."""
    with running(tmp_path, demo_config_text()) as served:
        yield served


@pytest.mark.slow
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_a_scenario_runs_headless_and_its_money_checks(scenario: str, tmp_path: Path) -> None:
    """Each scenario against the tables it is written for: its own table file where it has
    one (loadtests/scenarios/<name>.toml), else the demo lobby."""
    own = ROOT / "loadtests" / "scenarios" / f"{scenario}.toml"
    text = own.read_text() if own.exists() else demo_config_text()
    with running(tmp_path, text) as (port, data):
        done = subprocess.run(
            [str(LOCUST), "-f", f"loadtests/scenarios/{scenario}.py", "--headless",
             "--host", f"ws://127.0.0.1:{port}/ws", "-u", "12", "-r", "12",
             "-t", RUN_TIME.get(scenario, "6s"),
             # A user's task under way at the end (a round; the storm's reconnection) is
             # finished, not cut short: a loaded machine may start it late.
             "--stop-timeout", "30",
             "--croupier-step-users", "12", "--croupier-storm-seconds", "3",
             "--only-summary", "--csv", str(tmp_path / "run"),
             "--croupier-data-dir", str(data), "--croupier-settle-seconds", "30"],
            cwd=ROOT, capture_output=True, text=True, timeout=180, check=False,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    checked = re.search(r"money check: (\d+) players, 0 mismatches", done.stderr)
    assert checked is not None and int(checked[1]) > 0, done.stderr[-3000:]
    stats = (tmp_path / "run_stats.csv").read_text()
    names = {line.split(",")[1] for line in stats.splitlines()[1:]}
    assert {"place_bet → bet_accepted", "round", "connect+hello+join"} <= names, stats
    if scenario == "reconnect_storm":
        assert "reconnect+resume" in names, stats
    failures = (tmp_path / "run_failures.csv").read_text().strip().splitlines()
    assert len(failures) == 1, failures  # the header only


def test_the_money_check_finds_a_balance_that_does_not_add_up(
    server: tuple[int, Path],
) -> None:
    """A real player of the server, whose book says one cent more than it was welcomed with:
    the check names the player and both figures; the true book passes."""
    from loadtests.scenarios.wsclient import WsClient
    from server.protocol.codec import decode_server, encode
    from server.protocol.messages import PROTOCOL_VERSION, Hello, Welcome

    port, _ = server
    url = f"ws://127.0.0.1:{port}/ws"
    ws = WsClient(url)
    ws.send(encode(Hello(version=PROTOCOL_VERSION, name="checked")))
    welcome = decode_server(ws.recv(10))
    ws.close()
    assert isinstance(welcome, Welcome) and welcome.token
    true = Book(welcome.player_id, welcome.token, "baccarat", welcome.balance, welcome.balance)
    assert check_money(url, [true], settle_seconds=0) == []
    wrong = Book(welcome.player_id, welcome.token, "baccarat", welcome.balance + 1, 0)
    (problem,) = check_money(url, [wrong], settle_seconds=0)
    assert welcome.player_id in problem
    assert f"balance {welcome.balance}, expected {welcome.balance + 1}" in problem


STEPPER = """
import time

import gevent
from locust import User, constant, events, task

from loadtests.scenarios.croupier import fire

MARKS = {"spawned": None, "stopping": False}


@events.spawning_complete.add_listener
def _spawned(user_count, **kwargs):
    MARKS["spawned"] = time.perf_counter()


@events.test_stopping.add_listener
def _stopping(environment, **kwargs):
    MARKS["stopping"] = True


class Stepper(User):
    wait_time = constant(0)

    @task
    def step(self) -> None:
        start = time.perf_counter()
        gevent.sleep(0.3)
        spawned = MARKS["spawned"]
        if MARKS["stopping"]:
            name = "ended while stopping"
        elif spawned is None or time.perf_counter() - spawned < 1.5:
            name = "ended in the first 1.5 s"
        else:
            name = "steady"
        fire(name, start)
"""


@pytest.mark.parametrize("steady", [False, True])
def test_the_steady_part_leaves_out_the_warm_up_and_the_stop(steady: bool, tmp_path: Path) -> None:
    """``--croupier-warmup-seconds`` restarts the statistics that long after every user
    started; ``--croupier-untimed-stop`` counts nothing that ends while Locust stops its
    users (bench_loadtest passes both): a user whose steps say when they ended."""
    (tmp_path / "stepper.py").write_text(STEPPER)
    options = ["--croupier-warmup-seconds", "2", "--croupier-untimed-stop"] if steady else []
    done = subprocess.run(
        [str(LOCUST), "-f", str(tmp_path / "stepper.py"), "--headless", "-u", "1", "-r", "1",
         "-t", "6s", "--stop-timeout", "2", "--reset-stats", *options,
         "--host", "ws://127.0.0.1:9/ws", "--csv", str(tmp_path / "run")],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    rows = (tmp_path / "run_stats.csv").read_text().splitlines()[1:]
    counted = {row.split(",")[1]: int(row.split(",")[2]) for row in rows}
    assert counted.get("steady", 0) > 0, rows
    assert (counted.get("ended in the first 1.5 s", 0) > 0) is not steady, rows
    summary = done.stdout + done.stderr  # the final summary counts what ended while stopping
    assert ("ended while stopping" in summary) is not steady, summary[-3000:]
