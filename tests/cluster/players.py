"""Players that keep playing through a cluster's failures (the multi-node tests): each logs
in through the load balancer, joins its table, bets on every round and answers every
decision; when its connection drops (its node was killed) it logs in again with its token,
through the load balancer, and carries on. It remembers every bet the server acknowledged."""

from __future__ import annotations

import asyncio
import contextlib
import random
from dataclasses import dataclass, field

from websockets.asyncio.client import connect
from websockets.exceptions import WebSocketException

from server.protocol.codec import decode_server, encode
from server.protocol.messages import (
    PROTOCOL_VERSION,
    BetAccepted,
    Decide,
    ErrorMessage,
    GetRules,
    Hello,
    Join,
    Joined,
    PlaceBet,
    Rules,
    TableEvent,
    Welcome,
)

__all__ = ["Acked", "ChaosPlayer"]


@dataclass(frozen=True)
class Acked:
    player_id: str
    round_id: str
    bet_id: str
    amount: int


@dataclass
class ChaosPlayer:
    url: str
    table: str
    rng: random.Random
    acked: list[Acked] = field(default_factory=list)
    errors: dict[str, int] = field(default_factory=dict)
    connections: int = 0
    rounds_seen: set[str] = field(default_factory=set)
    player_id: str = ""
    token: str | None = None
    side: tuple[str, ...] = ()  # side wagers it adds to its main wager (at their minimum)

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            with contextlib.suppress(OSError, WebSocketException, TimeoutError):
                await self._session(stop)
            await asyncio.sleep(0.1)

    async def _session(self, stop: asyncio.Event) -> None:
        async with connect(self.url, open_timeout=5, compression=None) as ws:
            self.connections += 1

            async def receive() -> object:
                return decode_server(await asyncio.wait_for(ws.recv(), 10))

            await ws.send(encode(Hello(version=PROTOCOL_VERSION, name="chaos", token=self.token)))
            welcome = await receive()
            assert isinstance(welcome, Welcome), welcome
            self.player_id, self.token = welcome.player_id, welcome.token
            await ws.send(encode(GetRules(table=self.table)))
            rules = await receive()
            if not isinstance(rules, Rules):
                return
            await ws.send(encode(Join(table=self.table, role="player")))
            joined = await receive()
            while isinstance(joined, TableEvent):  # events may come before the answer
                joined = await receive()
            if not isinstance(joined, Joined):
                self._count(joined)
                return
            seat = str(joined.snapshot.seat or "")
            spots = [s.replace("{seat}", seat) for s in (rules.main_spots or rules.spots)]
            minimum = int(rules.limits["minimum"])
            limits = {s: int(rules.spot_limits.get(s, {}).get("minimum", minimum)) for s in self.side}  # fmt: skip  # noqa: E501
            counter = 0
            while not stop.is_set():
                try:
                    message = await asyncio.wait_for(ws.recv(), 0.5)
                except TimeoutError:
                    continue
                m = decode_server(message)
                if isinstance(m, BetAccepted):
                    self.acked.append(Acked(self.player_id, m.round, m.bet_id, m.amount))
                elif isinstance(m, ErrorMessage):
                    self._count(m)
                elif isinstance(m, TableEvent):
                    self.rounds_seen.add(m.round)
                    if m.event == "betting_opened":
                        bets = [(self.rng.choice(spots), minimum), *limits.items()]
                        for spot, amount in bets:
                            counter += 1
                            bet_id = f"b{counter}-{self.rng.randrange(10**6)}"
                            await ws.send(
                                encode(
                                    PlaceBet(
                                        table=self.table,
                                        round=m.round,
                                        bet_id=bet_id,
                                        spot=spot,
                                        amount=amount,
                                    )
                                )
                            )
                    elif (
                        m.event == "decision_requested"
                        and m.data.get("player_id") == self.player_id
                    ):
                        options = [o for o in m.data["options"] if not o.startswith("war+tie")]
                        await ws.send(
                            encode(
                                Decide(
                                    table=self.table,
                                    round=m.round,
                                    spot=m.data["spot"],
                                    decision=self.rng.choice(options),
                                )
                            )
                        )

    def _count(self, message: object) -> None:
        code = message.code if isinstance(message, ErrorMessage) else type(message).__name__
        self.errors[code] = self.errors.get(code, 0) + 1
