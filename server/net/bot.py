"""``croupier bot``: a demo player that places random legal bets for N rounds.

Operators smoke-test a deployment with it, and the load tests build on it. It joins a table,
bets on each round (one to three wagers on the table's spots, amounts between the minimum
and five times it) and answers every decision the table asks of it. Once each of its rounds
is finished in the journal (the table opens its next round only after that), it asks the
server's game recall for the round, compares what the recall says it wagered and was paid
with what it saw itself, and reports the round (``on_round``); at the end the final balance
must equal the starting balance minus what it wagered plus what it was paid.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

from server.protocol.codec import decode_server, encode
from server.protocol.messages import (
    PROTOCOL_VERSION,
    BalanceChanged,
    BetAccepted,
    Decide,
    ErrorMessage,
    GetRecall,
    GetRules,
    Hello,
    Join,
    Joined,
    PlaceBet,
    Recall,
    Rules,
    ServerMessage,
    TableEvent,
    Welcome,
)

__all__ = ["BotReport", "BotRound", "run_bot"]


@dataclass
class BotRound:
    """One finished round the bot bet on, as it saw it and as the recall confirmed it."""

    round: str
    wagers: list[tuple[str, int]]  # (spot, amount), in the order accepted
    wagered: int
    returned: int
    result: str  # the round's result ("banker 7-5"), or "voided: <reason>"
    balance: int  # the bot's balance once the round was settled
    recall: str = "not checked"  # "ok", "missing" or "mismatch: ..."

    def line(self) -> str:
        """The line ``croupier bot`` prints for this round (amounts in minor units)."""
        wagers = ", ".join(f"{spot} {amount}" for spot, amount in self.wagers) or "none"
        return (
            f"{self.round}: wagers {wagers}; result {self.result}; "
            f"returned {self.returned}; balance {self.balance}; recall {self.recall}"
        )


@dataclass
class BotReport:
    table: str
    rounds: int = 0
    bets: int = 0
    wagered: int = 0
    returned: int = 0
    starting_balance: int = 0
    final_balance: int = 0
    errors: list[str] = field(default_factory=list)
    played: list[BotRound] = field(default_factory=list)

    @property
    def arithmetic_ok(self) -> bool:
        return self.final_balance == self.starting_balance - self.wagered + self.returned

    @property
    def recall_checked(self) -> int:
        """Rounds compared with the server's recall (matching or not)."""
        return sum(1 for r in self.played if r.recall != "not checked")

    @property
    def recall_matches(self) -> bool:
        """Every round played was found in the recall and matched it."""
        return all(r.recall == "ok" for r in self.played)

    def as_dict(self) -> dict[str, Any]:
        return {
            "table": self.table,
            "rounds": self.rounds,
            "bets": self.bets,
            "wagered": self.wagered,
            "won": self.returned - self.wagered,
            "returned": self.returned,
            "starting_balance": self.starting_balance,
            "final_balance": self.final_balance,
            "balance_arithmetic_ok": self.arithmetic_ok,
            "recall_rounds_checked": self.recall_checked,
            "recall_matches": self.recall_matches,
            "round_ids": [r.round for r in self.played],
            "errors": self.errors,
        }


class _Bot:
    def __init__(
        self,
        ws: ClientConnection,
        table: str,
        rounds: int,
        rng: random.Random,
        on_round: Callable[[BotRound], None] | None = None,
    ) -> None:
        self.ws = ws
        self.table = table
        self.target = rounds
        self.rng = rng
        self.on_round = on_round or (lambda played: None)
        self.report = BotReport(table)
        self.spots: list[str] = []
        self.minimum = self.maximum = 0
        self.balance = 0
        self.my_rounds: dict[str, dict[str, int]] = {}  # round -> wagered/returned
        self.my_wagers: dict[str, dict[str, tuple[str, int]]] = {}  # round -> bet_id -> wager
        self.unchecked: list[BotRound] = []  # finished, not yet asked of the recall
        self.awaiting_recall: dict[int, BotRound] = {}  # GetRecall ref -> the finished round
        self.ref = 0

    async def send(self, message: Any) -> None:
        await self.ws.send(encode(message))

    async def expect(self, kind: type) -> Any:
        while True:
            message = await self.receive()
            if isinstance(message, kind):
                return message

    async def receive(self) -> ServerMessage:
        message = decode_server(await self.ws.recv(decode=False))
        if isinstance(message, ErrorMessage):
            self.report.errors.append(f"{message.code}: {message.message}")
        elif isinstance(message, BalanceChanged):
            self.balance = message.balance
        return message

    async def run(self) -> BotReport:
        await self.send(Hello(version=PROTOCOL_VERSION, name="bot"))
        welcome: Welcome = await self.expect(Welcome)
        self.player = welcome.player_id
        self.balance = self.report.starting_balance = self.report.final_balance = welcome.balance
        await self.send(GetRules(table=self.table))
        rules = await self._expect_or_error(Rules)
        if rules is None:
            return self.report
        self.spots = rules.spots
        self.main_spots = rules.main_spots
        self.spot_limits = rules.spot_limits
        self.minimum, self.maximum = rules.limits["minimum"], rules.limits["maximum"]
        await self.send(Join(table=self.table, role="player"))
        joined = await self._expect_or_error(Joined)
        if joined is None:
            return self.report
        # Boxed games (Casino War, Down Under Blackjack): a seat is the player's betting box.
        seat = str(joined.snapshot.seat or "")
        self.spots = [spot.replace("{seat}", seat) for spot in self.spots]
        self.main_spots = [spot.replace("{seat}", seat) for spot in self.main_spots]
        self.spot_limits = {k.replace("{seat}", seat): v for k, v in self.spot_limits.items()}
        if joined.snapshot.phase == "betting" and joined.snapshot.round:
            await self.bet(joined.snapshot.round)
        # After the last round, wait for the next one to open: its round is in the recall then.
        while self.report.rounds < self.target or self.unchecked or self.awaiting_recall:
            message = await self.receive()
            if isinstance(message, BetAccepted):
                self.report.bets += 1
                self.balance = message.balance
            elif isinstance(message, TableEvent):
                await self.on_event(message)
            elif isinstance(message, Recall):
                self.check_recall(message)
        self.report.final_balance = self.balance
        return self.report

    async def _expect_or_error(self, kind: type) -> Any:
        while True:
            message = await self.receive()
            if isinstance(message, kind):
                return message
            if isinstance(message, ErrorMessage):
                return None

    async def on_event(self, event: TableEvent) -> None:
        if event.event == "betting_opened":
            # The table journals a round as finished before it opens the next one, so the
            # recall lists every round that finished before this event.
            await self.ask_recall()
            if self.report.rounds < self.target:
                await self.bet(event.round)
        elif event.event == "decision_requested" and event.data.get("player_id") == self.player:
            choice = self.rng.choice(event.data["options"])
            if choice == "war+tie":  # the optional Tie Wager on the War deal needs an amount
                choice = f"war+tie:{self.minimum}"
            await self.send(
                Decide(
                    table=self.table, round=event.round, spot=event.data["spot"], decision=choice
                )
            )
        elif event.event == "bet_accepted":
            # Every wager of ours, placed or added by a decision (a double, a War Wager):
            # the table sends these to their owner only.
            wager = event.data["wager"]
            amount = int(wager["amount"])
            self.report.wagered += amount
            self.my_rounds.setdefault(event.round, {"wagered": 0, "returned": 0})
            self.my_rounds[event.round]["wagered"] += amount
            mine = self.my_wagers.setdefault(event.round, {})
            mine[str(wager.get("bet_id", len(mine)))] = (str(wager["spot"]), amount)
        elif event.event == "bet_cancelled":
            wager = event.data["wager"]
            amount = int(wager["amount"])
            self.report.wagered -= amount
            self.my_rounds[event.round]["wagered"] -= amount
            self.my_wagers.get(event.round, {}).pop(str(wager.get("bet_id")), None)
        elif event.event == "wager_settled":
            returned = int(event.data["settlement"]["returned"])
            self.report.returned += returned
            self.my_rounds.setdefault(event.round, {"wagered": 0, "returned": 0})
            self.my_rounds[event.round]["returned"] += returned
        elif event.event in ("round_settled", "round_voided") and event.round in self.my_rounds:
            await self.finished(event)

    async def finished(self, event: TableEvent) -> None:
        """One of our rounds is over: count it; the next round's opening checks it."""
        self.report.rounds += 1
        mine = self.my_rounds[event.round]
        if event.event == "round_settled":
            result = str(event.data.get("result", ""))
        else:
            result = f"voided: {event.data.get('reason', '')}"
        played = BotRound(
            round=event.round,
            wagers=list(self.my_wagers.get(event.round, {}).values()),
            wagered=mine["wagered"],
            returned=mine["returned"],
            result=result,
            balance=self.balance,  # the settlements' balance messages came before this event
        )
        self.report.played.append(played)
        self.unchecked.append(played)

    async def ask_recall(self) -> None:
        for played in self.unchecked:
            self.ref += 1
            self.awaiting_recall[self.ref] = played
            await self.send(GetRecall(table=self.table, ref=self.ref))
        self.unchecked = []

    async def bet(self, round_id: str) -> None:
        used: set[str] = set()  # a box's spot holds one wager (Casino War, Down Under)
        for n in range(self.rng.randint(1, 3)):
            # Where the game requires one (631a.8(a)), the first wager is a main wager.
            pool = [
                s
                for s in (self.main_spots if n == 0 and self.main_spots else self.spots)
                if s not in used
            ]
            if not pool:
                return
            spot = self.rng.choice(pool)
            used.add(spot)
            limits = self.spot_limits.get(spot, {})
            minimum = limits.get("minimum", self.minimum)
            maximum = limits.get("maximum", self.maximum)
            # A Five Adjacent Numbers wager is five equal straight wagers (617a.3(e)(1)(iii)).
            unit = minimum * (5 if spot.startswith("five_adjacent") else 1)
            most = min(maximum, unit * 5, self.balance // 3) // unit
            if most < 1:
                return
            self.ref += 1
            await self.send(
                PlaceBet(
                    table=self.table,
                    round=round_id,
                    bet_id=f"{round_id}-{n}",
                    spot=spot,
                    amount=unit * self.rng.randint(1, most),
                    ref=self.ref,
                )
            )

    def check_recall(self, recall: Recall) -> None:
        """Compare the recall with the round we asked it about, then report the round."""
        played = self.awaiting_recall.pop(recall.ref or 0, None)
        if played is None:
            return
        item = next((r for r in recall.rounds if r.round == played.round), None)
        if item is None:
            played.recall = "missing"
            self.report.errors.append(f"the recall does not list {played.round}")
        elif (item.wagered, item.returned) != (played.wagered, played.returned):
            played.recall = f"mismatch: recall {item.wagered}/{item.returned}"
            self.report.errors.append(
                f"recall of {item.round} says wagered {item.wagered} returned {item.returned}; "
                f"the bot saw {played.wagered} and {played.returned}"
            )
        else:
            played.recall = "ok"
        self.on_round(played)


async def run_bot(
    url: str,
    table: str,
    rounds: int,
    *,
    seed: int | None = None,
    timeout: float = 600.0,
    on_round: Callable[[BotRound], None] | None = None,
) -> BotReport:
    """Play ``rounds`` rounds at ``table``; ``on_round`` hears of each as the recall confirms it."""
    rng = random.Random(seed)  # bets only: nothing about the game's outcomes
    async with connect(url, compression=None, max_size=1 << 20) as ws:
        bot = _Bot(ws, table, rounds, rng, on_round)
        return await asyncio.wait_for(bot.run(), timeout)
