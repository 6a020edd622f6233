"""The server process is killed (SIGKILL) at random points of rounds, 50 times, with players
betting all along. After every restart the ledger reconciles every balance exactly, no round
from before the kill is left open, and nothing is ever paid twice (DESIGN.md, "Nothing lost").
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import socket
import sqlite3
import sys
from collections import defaultdict
from pathlib import Path

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake

from server.journal.sqlite_journal import SqliteJournal
from server.protocol.codec import decode_server, encode
from server.protocol.messages import PROTOCOL_VERSION, Hello, Join, PlaceBet, TableEvent, Welcome
from server.wallet.sqlite_ledger import SqliteLedger

CROUPIER = Path(sys.executable).with_name("croupier")
KILLS = 50
TABLES = """
[server]
starting_balance = 10000000

[[tables]]
id = "bac"
name = "Baccarat"
game = "baccarat"
betting_seconds = 0.25
pause_seconds = 0.05
[tables.options]
decks = 6
[tables.options.side_wagers]
perfect_pairs = "A"
golden_talons = "A"

[[tables]]
id = "rt"
name = "Roulette"
game = "roulette"
betting_seconds = 0.25
pause_seconds = 0.05
"""
SPOTS = {"bac": ["banker", "player", "perfect_pairs_player", "golden_talons_banker"],
         "rt": ["red", "straight:7", "dozen:2", "split:0-00"]}  # fmt: skip


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _player(url: str, token: str | None, rng: random.Random) -> str | None:
    """Bet on every round of both tables until the connection dies; returns the token."""
    with contextlib.suppress(ConnectionClosed, OSError, InvalidHandshake, asyncio.TimeoutError):
        async with connect(url, open_timeout=2) as ws:
            await ws.send(encode(Hello(version=PROTOCOL_VERSION, name="crash", token=token)))
            while True:
                message = decode_server(await ws.recv(decode=False))
                if isinstance(message, Welcome):
                    token = message.token
                    for table in SPOTS:
                        await ws.send(encode(Join(table=table)))
                elif isinstance(message, TableEvent) and message.event == "betting_opened":
                    for n in range(rng.randint(1, 3)):
                        spot = SPOTS[message.table][0 if n == 0 else rng.randrange(4)]
                        bet = PlaceBet(
                            table=message.table,
                            round=message.round,
                            bet_id=f"b{n}",
                            spot=spot,
                            amount=100 * rng.randint(1, 9),
                        )
                        await ws.send(encode(bet))
    return token


async def _wait_healthy(port: int) -> None:
    for _ in range(200):
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n")
            line = await reader.readline()
            writer.close()
            if b" 200 " in line:
                return
        except OSError:
            pass
        await asyncio.sleep(0.05)
    raise AssertionError("the server did not become ready")


def _check_money(data: Path, open_before: set[str]) -> None:
    """Reconcile and look for double payments, reading the files the server writes."""
    ledger = SqliteLedger(data / "ledger.sqlite")
    journal = SqliteJournal(data / "journal.sqlite")
    try:
        assert ledger.reconcile() == {}, "a cached balance disagrees with the ledger"
        assert ledger.total() == 0
        still_open = {r for _, r in journal.open_rounds()}
        assert not (still_open & open_before), f"rounds left open: {still_open & open_before}"
    finally:
        ledger.close()
        journal.close()


def _check_no_double_payment(data: Path) -> int:
    with sqlite3.connect(data / "ledger.sqlite") as db:
        rows = db.execute("SELECT b.key FROM batches b").fetchall()
    endings: dict[str, list[str]] = defaultdict(list)
    bets = 0
    for (key,) in rows:
        kind, _, rest = key.partition(":")
        if kind == "bet":
            bets += 1
        elif kind in ("settle", "void", "cancel"):
            endings[rest].append(kind)
    doubled = {bet: kinds for bet, kinds in endings.items() if len(kinds) > 1}
    assert not doubled, f"wagers ended twice: {doubled}"
    return bets


def test_fifty_kills_at_random_points_lose_nothing_and_pay_nothing_twice(tmp_path: Path) -> None:
    rng = random.Random(20261122)
    config = tmp_path / "tables.toml"
    config.write_text(TABLES)
    data = tmp_path / "data"

    async def scenario() -> None:
        token: str | None = None
        open_before: set[str] = set()
        for kill in range(KILLS + 1):
            port = _free_port()
            proc = await asyncio.create_subprocess_exec(
                str(CROUPIER), "serve", "--port", str(port), "--config", str(config),
                "--data-dir", str(data), "--log-level", "error",
                stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
            )  # fmt: skip
            try:
                await _wait_healthy(port)
                # Recovery ran before the tables started: nothing from before is open.
                _check_money(data, open_before)
                player = asyncio.create_task(_player(f"ws://127.0.0.1:{port}/ws", token, rng))
                await asyncio.sleep(rng.uniform(0.05, 1.2))  # a random point of some round
                if kill == KILLS:
                    proc.terminate()  # the last stop is graceful: open rounds are voided
                else:
                    proc.kill()
                await proc.wait()
                token = await asyncio.wait_for(player, 10) or token
            finally:
                if proc.returncode is None:
                    proc.kill()
                    await proc.wait()
            journal = SqliteJournal(data / "journal.sqlite")
            open_before = {r for _, r in journal.open_rounds()}
            journal.close()
        # After the graceful stop nothing is open and no money is held.
        assert open_before == set()
        ledger = SqliteLedger(data / "ledger.sqlite")
        assert ledger.balance("wagers:open") == 0 and ledger.reconcile() == {}
        ledger.close()
        assert _check_no_double_payment(data) > 50  # and the players really did bet
        # The kills really landed mid-round: recovery finished many rounds.
        with sqlite3.connect(data / "journal.sqlite") as db:
            recovered = db.execute(
                "SELECT kind, COUNT(*) FROM records WHERE payload LIKE '%\"recovered\":true%' "
                "GROUP BY kind"
            ).fetchall()
        counts = dict(recovered)
        assert counts.get("voided", 0) + counts.get("settled", 0) >= 25, counts

    asyncio.run(scenario())
