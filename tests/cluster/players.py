"""Players that keep playing through a cluster's failures (the multi-node tests): each logs
in through the load balancer, joins its table, bets on every round and answers every
decision; when its connection drops (its node was killed) it logs in again with its token,
through the load balancer, and carries on. It remembers every bet the server acknowledged."""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import Sequence
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
    Notice,
    PlaceBet,
    Rules,
    TableEvent,
    Welcome,
)

__all__ = ["Acked", "ChaosPlayer", "check_running", "each_bets", "stop_players"]


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
    notices: list[Notice] = field(default_factory=list)

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            with contextlib.suppress(OSError, WebSocketException, TimeoutError):
                await self._session(stop)
            await asyncio.sleep(0.1)

    async def _session(self, stop: asyncio.Event) -> None:
        async with connect(self.url, open_timeout=5, compression=None) as ws:
            self.connections += 1

            async def receive() -> object:
                """The next answer: a notice (a round recovered elsewhere, told once after
                the welcome) is kept, not taken for one."""
                while True:
                    m = decode_server(await asyncio.wait_for(ws.recv(), 10))
                    if not isinstance(m, Notice):
                        return m
                    self.notices.append(m)

            await ws.send(encode(Hello(version=PROTOCOL_VERSION, name="chaos", token=self.token)))
            welcome = await receive()
            assert isinstance(welcome, Welcome), welcome
            self.player_id, self.token = welcome.player_id, welcome.token
            await ws.send(encode(GetRules(table=self.table)))
            rules = await receive()
            if not isinstance(rules, Rules):
                self._count(rules)
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
                        if len(bets) > 1:  # each in turn last, the one a slow reply leaves late
                            self.rng.shuffle(bets)
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


def _failures(tasks: Sequence[asyncio.Task[None]]) -> list[BaseException]:
    return [
        error
        for task in tasks
        if task.done() and not task.cancelled() and (error := task.exception()) is not None
    ]


def _raise(failures: list[BaseException]) -> None:
    if len(failures) == 1:
        raise failures[0]
    if failures:
        raise BaseExceptionGroup("players crashed", failures)


def check_running(tasks: Sequence[asyncio.Task[None]]) -> None:
    """Fail at once if a player crashed (its error, e.g. an answer it did not expect): a
    player only ever stops when told to."""
    _raise(_failures(tasks))
    ended = [task.get_name() for task in tasks if task.done()]
    assert not ended, f"players stopped before they were told to: {ended}"


async def stop_players(stop: asyncio.Event, tasks: Sequence[asyncio.Task[None]]) -> None:
    """Tell the players to stop and wait for them; a player that crashed fails the test
    with its own error, never swallowed."""
    stop.set()
    await asyncio.gather(*tasks, return_exceptions=True)
    _raise(_failures(tasks))


async def each_bets(
    players: Sequence[ChaosPlayer],
    tasks: Sequence[asyncio.Task[None]],
    since: Sequence[int],
    *,
    what: str,
    timeout: float,
) -> None:
    """Until each player has more bets acknowledged than ``since`` counts for it (every
    player still running); after ``timeout`` seconds, an error saying ``what`` never
    happened and which players are still without one."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        check_running(tasks)
        idle = [p for p, n in zip(players, since, strict=True) if len(p.acked) <= n]
        if not idle:
            return
        if loop.time() > deadline:
            raise AssertionError(
                f"never happened in {timeout:g} s: {what}; without one: "
                + ", ".join(f"{p.player_id or '?'} at {p.table} (errors {p.errors})" for p in idle)
            )
        await asyncio.sleep(0.05)
