"""The load-test scenarios as an operator runs them against its own wallet: players with the
platform's tokens (``--croupier-jwt-secret-file``) on a server whose players' money is the
reference operator wallet's, 20 ms away; the money check reads every player's balance in
the operator's books too — and finds a credit that never reached them."""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import jwt
import pytest

from loadtests.scenarios.money import Book, OperatorWallet, check_money
from loadtests.scenarios.wsclient import WsClient
from server.config import demo_config_text
from server.protocol.codec import decode_server, encode
from server.protocol.messages import PROTOCOL_VERSION, Hello, Join, PlaceBet, TableEvent, Welcome
from tests.load.test_scenarios import short_rounds
from tests.net.processes import serve, stop, wait_ready
from tests.operator_wallet import OperatorWallet as ReferenceWallet
from tests.seamless_play import seamless_sections

ROOT = Path(__file__).resolve().parents[2]
LOCUST = Path(sys.executable).with_name("locust")
JWT_SECRET = "load-test-platform-secret-0123456789"
OPENING = 1_000_000


def seamless(wallet: ReferenceWallet) -> str:
    """The demo lobby with short rounds, JWT players and the operator's wallet."""
    tables = demo_config_text().partition("[[tables]]")
    return seamless_sections(wallet, JWT_SECRET) + short_rounds(tables[1] + tables[2])


@contextlib.contextmanager
def operator_and_server(tmp_path: Path) -> Iterator[tuple[ReferenceWallet, int, Path]]:
    (tmp_path / "operator").mkdir()
    wallet = ReferenceWallet(tmp_path / "operator", auto_create=OPENING)
    wallet.start()
    wallet.knobs(latency_ms=20)
    config = tmp_path / "tables.toml"
    config.write_text(seamless(wallet))
    data = tmp_path / "data"
    process, port = serve(config, data)
    try:
        wait_ready(port, process)
        yield wallet, port, data
    finally:
        stop(process)
        wallet.stop()


@pytest.mark.slow
def test_peak_evening_in_operator_mode_checks_the_operator_s_books(tmp_path: Path) -> None:
    jwt_secret = tmp_path / "jwt.secret"
    jwt_secret.write_text(JWT_SECRET)
    with operator_and_server(tmp_path) as (wallet, port, data):
        done = subprocess.run(
            [str(LOCUST), "-f", "loadtests/scenarios/peak_evening.py", "--headless",
             "--host", f"ws://127.0.0.1:{port}/ws", "-u", "12", "-r", "12", "-t", "8s",
             "--stop-timeout", "30", "--only-summary", "--csv", str(tmp_path / "run"),
             "--croupier-jwt-secret-file", str(jwt_secret),
             "--croupier-wallet", wallet.url,
             "--croupier-wallet-secret-file", str(wallet.secret_file),
             "--croupier-data-dir", str(data), "--croupier-settle-seconds", "30"],
            cwd=ROOT, capture_output=True, text=True, timeout=180, check=False,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )  # fmt: skip
        state = wallet.state()
    assert done.returncode == 0, done.stderr[-3000:]
    checked = re.search(r"money check: (\d+) players, 0 mismatches", done.stderr)
    assert checked is not None and int(checked[1]) > 0, done.stderr[-3000:]
    # The players were the operator's: each opened there, each stake debited there.
    players = [p for p in state["players"] if p.startswith("locust-")]
    assert len(players) >= int(checked[1])
    assert state["calls"].get("debit", 0) > 0 and state["calls"].get("credit", 0) > 0
    assert state["anomalies"] == [] and state["open_debits"] == []
    failures = (tmp_path / "run_failures.csv").read_text().strip().splitlines()
    assert len(failures) == 1, failures  # the header only


def _won_a_round(ws: WsClient, book: Book) -> None:
    """Bet red and black at the double-zero wheel until a round returns something (36 in
    38), keeping ``book`` as a load-test player keeps it."""
    ws.send(encode(Join(table="roulette-double")))
    while True:
        message = decode_server(ws.recv(30))
        if not isinstance(message, TableEvent):
            continue
        data, r = message.data, message.round
        if message.event == "betting_opened":
            for n, spot in enumerate(("red", "black")):
                ws.send(encode(PlaceBet(table=message.table, round=r, bet_id=f"b{n}",
                                        spot=spot, amount=100)))  # fmt: skip
        elif message.event == "bet_accepted" and data["wager"]["player_id"] == book.player_id:
            book.wagered[r] += int(data["wager"]["amount"])
        elif message.event == "wager_settled":
            book.returned[r] += int(data["settlement"]["returned"])
        elif message.event == "round_settled" and r in book.wagered:
            book.settled.add(r)
            if book.returned[r]:
                return


def test_the_money_check_finds_a_credit_that_never_reached_the_operator(tmp_path: Path) -> None:
    """A player who won while the operator turns every credit away: the server counts the
    round's credit as on its way, so the balance it gives adds up; the operator's own books
    do not, and the check says so. Once the credit lands, the check passes."""
    with operator_and_server(tmp_path) as (wallet, port, _):
        url = f"ws://127.0.0.1:{port}/ws"
        token = jwt.encode(
            {"sub": "p-check", "exp": int(time.time()) + 600}, JWT_SECRET, algorithm="HS256"
        )
        ws = WsClient(url)
        ws.send(encode(Hello(version=PROTOCOL_VERSION, token=token)))
        welcome = decode_server(ws.recv(10))
        assert isinstance(welcome, Welcome) and welcome.balance == OPENING
        book = Book("p-check", token, "roulette-double", OPENING, OPENING)
        wallet.knobs(fail_before={"credit": 10_000})  # 503 before applying any credit
        _won_a_round(ws, book)
        ws.close()
        operator = OperatorWallet(wallet.url, wallet.secret)
        (problem,) = check_money(url, [book], settle_seconds=0, wallet=operator)
        expected = OPENING + sum(book.returned.values()) - sum(book.wagered.values())
        held = OPENING - sum(book.wagered.values())
        assert f"p-check at roulette-double: the operator's wallet holds {held}" in problem
        assert f"expected {expected}" in problem
        wallet.knobs(fail_before={})
        assert check_money(url, [book], settle_seconds=30, wallet=operator) == []
        # An answer not signed with the shared secret is not taken as the operator's.
        wrong = OperatorWallet(wallet.url, b"not-the-shared-secret")
        (problem,) = check_money(url, [book], settle_seconds=0, wallet=wrong)
        assert "p-check" in problem and ("not signed" in problem or "did not answer" in problem)
