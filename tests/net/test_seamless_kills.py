"""A server playing with the operator's wallet (docs/wallet.md) is killed (SIGKILL) at random
points, 20 times (two chains of ten, each on a data directory and an operator of its own),
with players betting all along and the operator itself failing now and then: answering 503
before it applies a call, or applying it and never answering. Afterwards the operator's
books and Croupier's agree to the unit, for every player:

    operator balance − start = − stakes taken + stakes returned + credits

(each side of it read from Croupier's own ledger); every debit the operator holds is either
settled by a credit or rolled back (no open debit, no anomaly at the operator), and nothing is
left to send (``croupier wallet pending``)."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import pytest

from server.cli.main import main
from server.wallet.sqlite_ledger import SqliteLedger
from tests.net.processes import aport_of, port_file_in, serve_command
from tests.net.test_crash_recovery import _wait_healthy
from tests.operator_wallet import OperatorWallet
from tests.seamless_play import books_agree, play, seamless_sections

CHAINS = 2
KILLS = 10  # per chain: 20 in all
PLAYERS = ("p-0", "p-1", "p-2")
START = 10**9
JWT_SECRET = "seamless-kills-jwt-secret-0123456789"
SPOTS = {"rt": ["red", "black", "straight:7"], "b6": ["one", "two", "joker"], "du": ["bet:{seat}"]}


def tables(wallet: OperatorWallet) -> str:
    return (
        seamless_sections(wallet, JWT_SECRET, timeout_ms=400)
        + """
[[tables]]
id = "rt"
name = "Roulette"
game = "roulette"
betting_seconds = 0.3
pause_seconds = 0.05

[[tables]]
id = "b6"
name = "Big Six"
game = "big_six"
betting_seconds = 0.3
pause_seconds = 0.05

[[tables]]
id = "du"
name = "Down Under Blackjack"
game = "down_under_blackjack"
betting_seconds = 0.3
pause_seconds = 0.05
decision_seconds = 1
"""
    )


def decided_stakes(data: Path) -> int:
    """How many stakes that decisions added (``~double``, ``~split``, ``~insurance``) the
    ledger shows debited."""
    ledger = SqliteLedger(data / "ledger.sqlite")
    try:
        return sum(
            1
            for player in PLAYERS
            for key, t in ledger.history(f"player:{player}")
            if key.startswith("bet:") and t.kind == "wager" and "~" in (t.bet_id or "")
        )
    finally:
        ledger.close()


@pytest.mark.parametrize("chain", range(CHAINS))
def test_twenty_kills_leave_the_operator_s_books_and_ours_agreeing(
    chain: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rng = random.Random(20261129 + chain)
    (tmp_path / "operator").mkdir()
    wallet = OperatorWallet(tmp_path / "operator", auto_create=START)
    wallet.start()
    config = tmp_path / "tables.toml"
    config.write_text(tables(wallet))
    data = tmp_path / "data"
    bets = 0

    async def run_server(kill: int | None) -> None:
        """One life of the server: players bet until it is killed (``kill``: which
        kill this is) or, with None, until the outbox is empty and it is stopped."""
        nonlocal bets
        port_file = port_file_in(tmp_path / "ports")
        proc = await asyncio.create_subprocess_exec(
            *serve_command(config, data, port_file, "--log-level", "error"),
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
        )  # fmt: skip
        try:
            port = await aport_of(proc, port_file)
            await _wait_healthy(port)
            if kill is None:  # the last life: no players, the outbox sent, a clean stop
                await asyncio.sleep(3)
                proc.terminate()
                await proc.wait()
                return
            url = f"ws://127.0.0.1:{port}/ws"
            players = [asyncio.create_task(play(url, p, JWT_SECRET, SPOTS, rng)) for p in PLAYERS]
            await asyncio.sleep(rng.uniform(0.3, 1.5))
            proc.kill()
            await proc.wait()
            bets += sum(await asyncio.wait_for(asyncio.gather(*players), 10))
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()

    async def scenario() -> None:
        for kill in range(KILLS):
            # The operator fails now and then, before applying a call or after (its
            # answer never comes): both are unknown to Croupier, and are made good.
            wallet.knobs(
                latency_ms=rng.choice([0, 5, 20]),
                fail_rate={"*": 0.05},
                timeout_rate={"*": 0.05},
                hang_ms=800,
                seed=kill,
            )
            await run_server(kill)
        wallet.knobs(fail_rate={}, timeout_rate={}, latency_ms=0)
        await run_server(None)

    try:
        asyncio.run(scenario())
        assert main(["wallet", "pending", "--data-dir", str(data)]) == 0
        assert "nothing pending" in capsys.readouterr().out
        state = wallet.state()
        moves = books_agree(SqliteLedger(data / "ledger.sqlite"), state, PLAYERS, START)
        # The operator's own statement agrees with Croupier's record, call by call.
        statement = tmp_path / "statement.jsonl"
        statement.write_bytes(wallet.get("/_reference/statement").raw)
        args = ["wallet", "reconcile", "--data-dir", str(data), "--operator-statement"]
        assert main([*args, str(statement)]) == 0, capsys.readouterr().out
        assert "the operator's statement agrees" in capsys.readouterr().out
        # The players really did bet, and the kills and faults really landed: debits taken
        # and settled, debits returned, debits refused or unknown and rolled back.
        assert bets > 10 * KILLS
        assert state["debits"].get("settled", 0) > 5 * KILLS
        assert state["debits"].get("rolled_back", 0) > 0
        assert sum(moves[p]["wallet-credit"] for p in PLAYERS) > 0
        assert decided_stakes(data) > 0  # Double Downs and splits, debited at the operator
    finally:
        wallet.stop()
