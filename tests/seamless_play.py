"""What the tests of a server playing with the operator's wallet (docs/wallet.md) share: the
configuration's ``[auth]`` and ``[wallet]`` sections, a JWT player who bets on every round
of its tables and takes Down Under's decisions over a real WebSocket, and the check that
the operator's books and Croupier's agree to the unit afterwards."""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

import jwt
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake

from server.protocol.codec import decode_server, encode
from server.protocol.messages import (
    PROTOCOL_VERSION,
    Decide,
    Hello,
    Join,
    Joined,
    PlaceBet,
    TableEvent,
)
from tests.operator_wallet import OperatorWallet

__all__ = ["books_agree", "play", "seamless_sections", "token"]

# The options of a Down Under decision that put a stake on the table.
STAKED = ("double", "split")


def seamless_sections(wallet: OperatorWallet, jwt_secret: str, timeout_ms: int = 1000) -> str:
    """The ``[auth]`` and ``[wallet]`` sections: JWT players, their money ``wallet``'s."""
    return f"""
[auth]
mode = "jwt"
jwt_secret = "{jwt_secret}"

[wallet]
mode = "seamless"
url = "{wallet.url}"
secret_file = "{wallet.secret_file}"
timeout_ms = {timeout_ms}
"""


def token(player: str, jwt_secret: str) -> str:
    return jwt.encode({"sub": player, "exp": int(time.time()) + 3600}, jwt_secret, "HS256")


async def play(
    url: str,
    player: str,
    jwt_secret: str,
    spots: Mapping[str, list[str]],
    rng: random.Random,
    stop: asyncio.Event | None = None,
) -> int:
    """Bet on every round of each table of ``spots`` (its spots; ``{seat}`` the player's) and
    take Down Under's decisions (a Double Down or a split half the time: a decision's stake)
    until the connection dies — or, with ``stop``, connecting again until it is set. How
    many bets it sent."""
    sent = 0
    while True:
        seats: dict[str, int | None] = {}
        with contextlib.suppress(ConnectionClosed, OSError, InvalidHandshake, asyncio.TimeoutError):
            async with connect(url, open_timeout=2) as ws:
                await ws.send(
                    encode(Hello(version=PROTOCOL_VERSION, token=token(player, jwt_secret)))
                )
                for table in spots:
                    await ws.send(encode(Join(table=table)))
                while stop is None or not stop.is_set():
                    async with asyncio.timeout(None if stop is None else 1):
                        message = decode_server(await ws.recv(decode=False))
                    if isinstance(message, Joined):
                        seats[message.table] = message.snapshot.seat
                    if isinstance(message, TableEvent):
                        sent += await _answer(ws, message, player, spots, seats, rng)
        if stop is None or stop.is_set():
            return sent
        await asyncio.sleep(0.2)


async def _answer(
    ws: Any,
    message: TableEvent,
    player: str,
    spots: Mapping[str, list[str]],
    seats: Mapping[str, int | None],
    rng: random.Random,
) -> int:
    """A player's answer to one table event: bets when betting opens, a decision when the
    table asks this player for one. How many bets it sent."""
    data, table, round_id = message.data, message.table, message.round
    if message.event == "betting_opened":
        count = rng.randint(1, 2)
        for n in range(count):
            spot = rng.choice(spots[table]).format(seat=seats.get(table))
            amount = 100 * rng.randint(1, 20)
            await ws.send(
                encode(
                    PlaceBet(table=table, round=round_id, bet_id=f"b{n}", spot=spot, amount=amount)
                )
            )
        return count
    if message.event == "decision_requested" and data["player_id"] == player:
        options = list(data["options"])
        staked = [o for o in options if o in STAKED]
        choice = rng.choice(staked if staked and rng.random() < 0.5 else options)
        await ws.send(
            encode(Decide(table=table, round=round_id, spot=data["spot"], decision=choice))
        )
    return 0


def books_agree(
    ledger: Any, state: Mapping[str, Any], players: Iterable[str], start: int
) -> dict[str, dict[str, int]]:
    """Croupier's ``ledger`` (closed after) and the operator's ``state`` agree: the ledger
    reconciles and holds no open wager; each player's account, a transit account, is at 0;
    the operator holds no open debit and saw no anomaly; and each player's balance there is
    ``start`` − stakes taken + stakes returned + credits, each read from the ledger. What
    the ledger moved per player, by kind."""
    players = tuple(players)
    moves: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    try:
        assert ledger.reconcile() == {} and ledger.total() == 0
        assert ledger.balance("wagers:open") == 0
        for player in players:
            for _, t in ledger.history(f"player:{player}"):
                moves[player][t.kind] += t.amount
            assert ledger.balance(f"player:{player}") == 0  # a transit account, at rest
    finally:
        ledger.close()
    assert state["anomalies"] == [] and state["open_debits"] == [], state
    for player in players:
        m = moves[player]
        expected = start - m["wallet-debit"] + m["wallet-rollback"] + m["wallet-credit"]
        assert state["players"][player]["balance"] == expected, (player, dict(m))
    return moves
