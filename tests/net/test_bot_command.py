"""``croupier bot`` as the README runs it: a real ``croupier serve`` on a non-default port, the
bot pointed at it with ``--port``, one line per round as the rounds finish, every round id in
``--json``, every round checked against the game recall, and a clear message when nothing
answers."""

from __future__ import annotations

import contextlib
import json
import re
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

from tests.net.processes import CROUPIER, serve, stop, wait_ready

# Short windows so that a dozen rounds take seconds: the demo lobby's games, fast. Not
# shorter: the bot bets as betting opens, and on a loaded machine 0.6 s was missed.
FAST = """
[server]
starting_balance = 100000

[[tables]]
id = "baccarat"
name = "Baccarat"
game = "baccarat"
betting_seconds = 1.2
pause_seconds = 0.1

[[tables]]
id = "war"
name = "Casino War"
game = "casino_war"
betting_seconds = 1.2
pause_seconds = 0.1
decision_seconds = 2
"""


@contextlib.contextmanager
def _serve(tmp: Path) -> Iterator[int]:
    config = tmp / "fast.toml"
    config.write_text(FAST)
    with (tmp / "serve.log").open("wb") as log:
        proc, port = serve(config, tmp / "data", "--log-level", "warning", output=log)
        try:
            wait_ready(port, proc)
            yield port
        finally:
            stop(proc)


@contextlib.contextmanager
def _closed_port() -> Iterator[int]:
    """A loopback port where nothing listens, and nothing can while it is held: bound by a
    socket of ours that never listens (a connection is refused at once)."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        yield int(held.getsockname()[1])


def _bot(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [CROUPIER, "bot", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _run_bot(*args: str) -> tuple[int, str, str]:
    with _bot(*args) as bot:
        out, err = bot.communicate(timeout=120)
    return bot.returncode, out, err


ROUND_LINE = re.compile(
    r"^(?P<round>baccarat\.\d+): wagers (?P<wagers>.+); result (?P<result>.+); "
    r"returned \d+; balance \d+; recall ok$"
)


def test_the_bot_finds_the_server_by_port_and_prints_each_round_as_it_finishes(
    tmp_path: Path,
) -> None:
    with _serve(tmp_path) as port:
        args = ("--port", str(port), "--table", "baccarat", "--rounds", "3", "--seed", "1")
        with _bot(*args) as bot:
            assert bot.stdout is not None
            # The first round's line arrives while the bot is still playing the others.
            first = bot.stdout.readline()
            still_playing = bot.poll() is None
            out, err = bot.communicate(timeout=60)
    assert bot.returncode == 0, out + err
    assert still_playing, "the first round's line came only at the end"
    lines = [first, *out.splitlines()]
    rounds = [m for line in lines if (m := ROUND_LINE.match(line.strip()))]
    assert len(rounds) == 3, lines
    assert all(m["wagers"] != "none" and m["result"] for m in rounds)
    assert "recall matches over 3 rounds" in out
    assert f"croupier replay {rounds[-1]['round']}" in out


def test_json_lists_every_round_and_the_recall_checks_every_one(tmp_path: Path) -> None:
    # More rounds than the recall's 10: each round is checked when it finishes, so none is
    # left out of the count, and stdout stays one JSON document.
    with _serve(tmp_path) as port:
        status, out, err = _run_bot(
            "--port", str(port), "--table", "war", "--rounds", "12", "--json"
        )
    assert status == 0, out + err
    summary = json.loads(out)
    assert summary["rounds"] == 12
    assert len(summary["round_ids"]) == len(set(summary["round_ids"])) == 12
    assert all(r.startswith("war.") for r in summary["round_ids"])
    assert summary["recall_rounds_checked"] == 12 and summary["recall_matches"] is True
    assert summary["balance_arithmetic_ok"] is True and summary["errors"] == []
    # The round lines went to standard error, one per round id.
    assert [line.split(":")[0] for line in err.splitlines()] == summary["round_ids"]


def test_nothing_listening_says_which_address_and_how_to_change_it() -> None:
    with _closed_port() as port:
        status, _, err = _run_bot("--port", str(port), "--table", "baccarat", "--rounds", "1")
    assert status == 1
    assert f"ws://127.0.0.1:{port}/ws" in err
    assert "--url" in err and "--port" in err


def test_url_still_overrides_host_and_port(tmp_path: Path) -> None:
    with _serve(tmp_path) as port:
        status, out, err = _run_bot(
            "--url", f"ws://127.0.0.1:{port}/ws", "--port", "1", "--table", "nope", "--rounds", "1"
        )
    # It reached the server, which says the table is unknown; port 1 was never tried.
    assert status == 1, err
    assert "error: " in out and "nope" in out and "cannot play" not in err, (out, err)
