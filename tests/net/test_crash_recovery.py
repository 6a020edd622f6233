"""The server process is killed (SIGKILL) at random points of rounds, 50 times (five chains
of ten kills, each chain on a data directory of its own, so that parallel test workers share
them out), with players betting all along. After every restart the ledger reconciles every
balance exactly, no round from before the kill is left open, and nothing is ever paid twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import sqlite3
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake

from server.journal.sqlite_journal import SqliteJournal
from server.protocol.codec import decode_server, encode
from server.protocol.messages import (
    PROTOCOL_VERSION,
    BetAccepted,
    Decide,
    Hello,
    Join,
    Joined,
    PlaceBet,
    TableEvent,
    Welcome,
)
from server.wallet.sqlite_ledger import SqliteLedger
from tests.net.processes import aport_of, port_file_in, serve_command

CHAINS = 5
KILLS = 10  # per chain: 50 kills in all
PLAYERS = 3
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
mystery_bonus = "A-$1"
[tables.options.side_wagers]
perfect_pairs = "A"
golden_talons = "A"
heavenly_9_progressive = ""

[[tables]]
id = "rt"
name = "Roulette"
game = "roulette"
betting_seconds = 0.25
pause_seconds = 0.05

[[tables]]
id = "b6"
name = "Big Six"
game = "big_six"
betting_seconds = 0.25
pause_seconds = 0.05

[[tables]]
id = "b21"
name = "21 Baccarat"
game = "twenty_one_baccarat"
betting_seconds = 0.25
pause_seconds = 0.05
[tables.options]
decks = 8
bonus_paytable = "D"

[[tables]]
id = "war"
name = "Casino War"
game = "casino_war"
betting_seconds = 0.25
pause_seconds = 0.05
decision_seconds = 0.2
seats = 6
[tables.options]
decks = 6

[[tables]]
id = "du"
name = "Down Under"
game = "down_under_blackjack"
betting_seconds = 0.25
pause_seconds = 0.05
decision_seconds = 0.2
seats = 6
[tables.options]
decks = 6
match_the_dealer = true
"""
# The first spot of each table is its main wager (631a.8(a)); "{seat}" is the player's box.
SPOTS = {
    "bac": ["banker", "player", "perfect_pairs_player", "golden_talons_banker"],
    "rt": ["red", "straight:7", "dozen:2", "split:0-00"],
    "b6": ["one", "two", "joker", "flag"],
    "b21": ["player", "banker", "tie", "bonus_player"],
    "war": ["initial:{seat}", "tie:{seat}"],
    "du": ["bet:{seat}", "match_the_dealer:{seat}"],
}


@dataclass
class Seen:
    """What the players were told, across every run of the server."""

    acked: set[tuple[str, str, str]] = field(default_factory=set)  # (round, player, bet id)
    seqs: dict[tuple[str, int], list[int]] = field(default_factory=lambda: defaultdict(list))
    # Some kills land the instant a player is told a bet was accepted: the moment an
    # acknowledged bet not yet journaled would be lost.
    acks_before_kill: int | None = None
    kill_now: asyncio.Event = field(default_factory=asyncio.Event)

    def note_ack(self, key: tuple[str, str, str]) -> None:
        self.acked.add(key)
        if self.acks_before_kill is not None:
            self.acks_before_kill -= 1
            if self.acks_before_kill <= 0:
                self.kill_now.set()


async def _player(
    url: str, token: str | None, rng: random.Random, run: int, seen: Seen
) -> str | None:
    """Bet on every round of every table until the connection dies, deciding at random when
    asked; returns the token. Notes each acknowledged bet and each event's seq."""
    seats: dict[str, int | None] = {}
    me = ""
    with contextlib.suppress(ConnectionClosed, OSError, InvalidHandshake, asyncio.TimeoutError):
        async with connect(url, open_timeout=2) as ws:
            await ws.send(encode(Hello(version=PROTOCOL_VERSION, name="crash", token=token)))
            while True:
                message = decode_server(await ws.recv(decode=False))
                if isinstance(message, Welcome):
                    token, me = message.token, message.player_id
                    for table in SPOTS:
                        await ws.send(encode(Join(table=table)))
                elif isinstance(message, Joined):
                    seats[message.table] = message.snapshot.seat
                elif isinstance(message, BetAccepted):
                    seen.note_ack((message.round, me, message.bet_id))
                elif isinstance(message, TableEvent):
                    seen.seqs[(message.table, run)].append(message.seq)
                    if message.event == "betting_opened":
                        await _bet(ws, message, seats.get(message.table), rng)
                    elif (
                        message.event == "decision_requested"
                        and message.data["player_id"] == me
                        and rng.random() < 0.8
                    ):
                        decision = rng.choice(list(message.data["options"]))
                        await ws.send(
                                encode(
                                    Decide(
                                        table=message.table, round=message.round,
                                        spot=message.data["spot"], decision=decision,
                                    )
                                )
                            )  # fmt: skip
    return token


async def _bet(
    ws: ClientConnection, opened: TableEvent, seat: int | None, rng: random.Random
) -> None:
    spots = [spot.format(seat=seat) for spot in SPOTS[opened.table]]
    for n in range(rng.randint(1, 3)):
        await ws.send(
            encode(
                PlaceBet(
                    table=opened.table,
                    round=opened.round,
                    bet_id=f"b{n}",
                    spot=spots[0 if n == 0 else rng.randrange(len(spots))],
                    amount=500 * rng.randint(1, 9),
                )
            )
        )


async def _every_table_seen(seen: Seen, run: int) -> None:
    while not all((table, run) in seen.seqs for table in SPOTS):
        await asyncio.sleep(0.01)


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


def _check_acknowledged_bets(data: Path, seen: Seen) -> None:
    """Every bet a player was told was accepted is in its round's journal (and not refused),
    and its money ended exactly once in the ledger: settled, voided (returned) or cancelled."""
    with sqlite3.connect(data / "journal.sqlite") as db:
        rows = db.execute("SELECT round_id, kind, payload FROM records ORDER BY seq").fetchall()
        status = dict(db.execute("SELECT round_id, status FROM rounds").fetchall())
    journaled: set[tuple[str, str, str]] = set()
    for round_id, kind, payload in rows:
        fields = json.loads(payload)
        key = (round_id, fields.get("player"), fields.get("bet_id"))
        if kind == "bet":
            journaled.add(key)
        elif kind == "bet_refused":
            journaled.discard(key)
    missing = seen.acked - journaled
    assert not missing, f"acknowledged bets missing from the journal: {sorted(missing)[:5]}"
    with sqlite3.connect(data / "ledger.sqlite") as db:
        keys = [k for (k,) in db.execute("SELECT key FROM batches").fetchall()]
    ended: dict[str, list[str]] = defaultdict(list)
    for key in keys:
        kind, _, rest = key.partition(":")
        ended[rest].append(kind)
    for round_id, player, bet_id in seen.acked:
        kinds = sorted(ended[f"{round_id}:{player}:{bet_id}"])
        assert kinds in (["bet", "settle"], ["bet", "void"], ["bet", "cancel"]), (
            round_id, player, bet_id, kinds,
        )  # fmt: skip
        assert status[round_id] in ("settled", "voided")


def _check_sequence_numbers(seen: Seen) -> None:
    """No table ever used a seq twice: within a run they rise, and each run starts above
    everything any earlier run sent (docs/protocol.md, "Table events")."""
    for table in SPOTS:
        highest = 0
        runs = sorted(run for t, run in seen.seqs if t == table)
        for run in runs:
            # Each player saw the run's events in order (a resume may repeat none).
            seqs = seen.seqs[(table, run)]
            assert min(seqs) > highest, (table, run, min(seqs), highest)
            highest = max(seqs)
        assert runs == list(range(KILLS + 1)), (table, runs)


@pytest.mark.slow
@pytest.mark.parametrize("chain", range(CHAINS))
def test_fifty_kills_at_random_points_lose_nothing_and_pay_nothing_twice(
    chain: int, tmp_path: Path
) -> None:
    """Every game, three players; every acknowledged bet is journaled and settled or
    returned, and no sequence number is used twice (issue #14)."""
    rng = random.Random(20261125 + chain)
    config = tmp_path / "tables.toml"
    config.write_text(TABLES)
    data = tmp_path / "data"
    seen = Seen()

    async def scenario() -> None:
        tokens: list[str | None] = [None] * PLAYERS
        open_before: set[str] = set()
        for kill in range(KILLS + 1):
            port_file = port_file_in(tmp_path / "ports")
            proc = await asyncio.create_subprocess_exec(
                *serve_command(config, data, port_file, "--log-level", "error"),
                stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
            )  # fmt: skip
            try:
                port = await aport_of(proc, port_file)
                await _wait_healthy(port)
                # Recovery ran before the tables started: nothing from before is open.
                _check_money(data, open_before)
                url = f"ws://127.0.0.1:{port}/ws"
                players = [
                    asyncio.create_task(_player(url, token, rng, kill, seen)) for token in tokens
                ]
                # Every table has told the players of this run something before the kill is
                # armed, so that each run checks every table's sequence numbers.
                await asyncio.wait_for(_every_table_seen(seen, kill), 30)
                seen.kill_now.clear()
                if kill % 2:  # at a random point of some round
                    seen.acks_before_kill = None
                    await asyncio.sleep(rng.uniform(0.05, 1.5))
                else:  # the instant a player hears of the k-th accepted bet of this run
                    seen.acks_before_kill = rng.randint(1, 40)
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(seen.kill_now.wait(), 5)
                if kill == KILLS:
                    proc.terminate()  # the last stop is graceful: open rounds are voided
                else:
                    proc.kill()
                await proc.wait()
                got = await asyncio.wait_for(asyncio.gather(*players), 10)
                tokens = [new or old for new, old in zip(got, tokens, strict=True)]
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
        assert _check_no_double_payment(data) > 4 * KILLS  # and the players really did bet
        assert len(seen.acked) > 4 * KILLS
        _check_acknowledged_bets(data, seen)
        _check_sequence_numbers(seen)
        # The kills really landed mid-round: recovery finished many rounds, of every table.
        with sqlite3.connect(data / "journal.sqlite") as db:
            recovered = db.execute(
                "SELECT o.table_id, COUNT(*) FROM records r JOIN rounds o USING (round_id) "
                "WHERE r.payload LIKE '%\"recovered\":true%' GROUP BY o.table_id"
            ).fetchall()
        counts = dict(recovered)
        assert set(counts) == set(SPOTS) and sum(counts.values()) >= 2 * KILLS, counts

    asyncio.run(scenario())
