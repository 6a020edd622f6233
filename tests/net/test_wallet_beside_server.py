"""``croupier wallet credit|debit`` beside a live server (docs/operations.md, "Players and
money"): the wallet commands do not take the data directory's lock, so they must be safe
while the server takes bets on the same ledger — no overdraft, no table stopped, and the
ledger reconciles to the cent."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import threading
import time
from pathlib import Path

from websockets.asyncio.client import connect

from server.protocol.codec import decode_server, encode
from server.protocol.messages import (
    PROTOCOL_VERSION,
    BetAccepted,
    ErrorMessage,
    Hello,
    Join,
    PlaceBet,
    TableEvent,
    Welcome,
)
from server.wallet.ledger import player_account
from server.wallet.sqlite_ledger import SqliteLedger
from tests.net.processes import CROUPIER, serve, wait_ready

TABLES = """
[server]
starting_balance = 5000

[[tables]]
id = "rt"
name = "Roulette"
game = "roulette"
betting_seconds = 0.3
pause_seconds = 0.05
"""


async def _bet_every_round(url: str, rounds: int, stop: threading.Event) -> tuple[str, int, int]:
    """A demo player betting on red three times every round, for ``rounds`` rounds at least
    and until ``stop`` is set; (player id, accepted, refused)."""
    accepted = refused = 0
    async with connect(url) as ws:
        await ws.send(encode(Hello(version=PROTOCOL_VERSION, name="w")))
        player = ""
        seen = 0
        while seen < rounds or not stop.is_set():
            message = decode_server(await ws.recv(decode=False))
            if isinstance(message, Welcome):
                player = message.player_id
                await ws.send(encode(Join(table="rt")))
            elif isinstance(message, TableEvent) and message.event == "betting_opened":
                seen += 1
                for n in range(3):
                    await ws.send(
                        encode(
                            PlaceBet(
                                table="rt", round=message.round, bet_id=f"b{n}", spot="red",
                                amount=1000,
                            )
                        )
                    )  # fmt: skip
            elif isinstance(message, BetAccepted):
                accepted += 1
            elif isinstance(message, ErrorMessage) and message.code == "insufficient_funds":
                refused += 1
    return player, accepted, refused


def _wallet(data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [CROUPIER, "wallet", *args, "--data-dir", str(data)],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_wallet_credits_and_debits_beside_a_live_server_keep_the_ledger_whole(
    tmp_path: Path,
) -> None:
    config = tmp_path / "tables.toml"
    config.write_text(TABLES)
    data = tmp_path / "data"
    server, port = serve(config, data)
    try:
        wait_ready(port, server)

        async def scenario() -> tuple[str, int, int]:
            return await _bet_every_round(f"ws://127.0.0.1:{port}/ws", 12, stop)

        # The player bets on one thread of control while the operator credits and debits the
        # same account from other processes, as fast as they can, six times each at least
        # (each command is a process of its own: however slow the machine, the player plays
        # on until they are done).
        loop_result: list[tuple[str, int, int]] = []
        stop = threading.Event()

        def play() -> None:
            loop_result.append(asyncio.run(scenario()))

        playing = threading.Thread(target=play)
        playing.start()
        ledger = SqliteLedger(data / "ledger.sqlite")
        deadline = time.monotonic() + 60
        while not (players := _demo_players(ledger)):  # until the player's hello made it
            assert playing.is_alive() and time.monotonic() < deadline, "the player never came"
            time.sleep(0.02)
        assert len(players) == 1
        player = players[0]
        credited = debited = 0
        n = 0
        while playing.is_alive():
            if n == 6:
                stop.set()  # the player ends the round in play, at the twelfth at the least
            n += 1
            credit = _wallet(data, "credit", player, "700", "--reference", f"in-{n}")
            assert credit.returncode == 0, credit.stderr
            credited += 700
            debit = _wallet(data, "debit", player, "900", "--reference", f"out-{n}")
            if debit.returncode == 0:
                debited += 900
            else:
                assert "insufficient" in debit.stderr.lower() or "holds" in debit.stderr
        playing.join()
        _, accepted, _ = loop_result[0]
        assert accepted > 0 and n > 6
        # A repeated reference changes nothing.
        again = _wallet(data, "credit", player, "700", "--reference", "in-1")
        assert again.returncode == 0 and "nothing changed" in again.stdout
        status = _wallet(data, "balance", player)
        assert status.returncode == 0 and "ledger reconciles" in status.stdout
        assert ledger.balance(player_account(player)) >= 0
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=20) == 0
        assert ledger.reconcile() == {} and ledger.total() == 0
        assert ledger.balance("wagers:open") == 0
        history = ledger.history(player_account(player))
        moved_in = sum(t.amount for key, t in history if key.startswith("credit:"))
        moved_out = sum(t.amount for key, t in history if key.startswith("debit:"))
        assert (moved_in, moved_out) == (credited, debited)
        ledger.close()
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()


def _demo_players(ledger: SqliteLedger) -> list[str]:
    return [
        name.removeprefix("player:")
        for name, _ in _accounts(ledger)
        if name.startswith("player:demo-")
    ]


def _accounts(ledger: SqliteLedger) -> list[tuple[str, int]]:
    with ledger._lock:
        rows = ledger._db.execute("SELECT name, balance FROM accounts").fetchall()
    return [(str(r[0]), int(r[1])) for r in rows]
