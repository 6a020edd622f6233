"""A table runtime on a manual clock with an in-memory ledger and journal, for tests."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rng import seeded_source
from server.core.commands import Join
from server.games.registry import GAMES
from server.games.table import TableSettings
from server.journal import SqliteJournal
from server.protocol.codec import decode_server
from server.protocol.messages import ServerMessage, TableEvent
from server.storage import writes_in_flight
from server.tables.clock import ManualClock
from server.tables.games import build_game
from server.tables.runtime import TableRuntime
from server.wallet import HOUSE, OPEN_WAGERS, PLAY_MONEY_ISSUER, SqliteLedger, Transfer
from server.wallet.ledger import player_account


@dataclass(eq=False)
class RecordingViewer:
    player_id: str
    messages: list[ServerMessage] = field(default_factory=list)

    def deliver(self, frame: bytes) -> None:
        self.messages.append(decode_server(frame))

    def events(self, name: str | None = None) -> list[TableEvent]:
        return [
            m
            for m in self.messages
            if isinstance(m, TableEvent) and (name is None or m.event == name)
        ]


class Harness:
    """With ``data_dir`` the ledger and journal are files there (another connection may open
    them, as an operator's tool would); otherwise private in-memory databases."""

    def __init__(
        self,
        game: str = "roulette",
        seed: int = 1,
        data_dir: Path | None = None,
        seats: int | None = None,
        **options: Any,
    ) -> None:
        self.clock = ManualClock(drain=writes_in_flight)
        self.ledger = SqliteLedger(data_dir / "ledger.sqlite" if data_dir else ":memory:")
        for account, negative in ((PLAY_MONEY_ISSUER, True), (HOUSE, True), (OPEN_WAGERS, False)):
            self.ledger.open_account(account, may_go_negative=negative)
        self.journal = SqliteJournal(data_dir / "journal.sqlite" if data_dir else ":memory:")
        self.settings = TableSettings(
            id="t1",
            name="Test table",
            game=game,
            betting_seconds=10,
            pause_seconds=2,
            decision_seconds=5,
            minimum=100,
            maximum=100_000,
            seats=seats or GAMES[game].seats.default,
            options=options,
        )
        self.table = TableRuntime(
            self.settings,
            build_game(self.settings, seeded_source(seed)),
            self.ledger,
            self.journal,
            self.clock,
        )
        self.task: asyncio.Task[None] | None = None

    def fund(self, player: str, amount: int = 10_000) -> None:
        """Give ``player`` money and a seat (as a connection joining as a player would: only
        seated players bet)."""
        self.table.seat(Join(player, "player"))
        self.ledger.open_account(player_account(player))
        self.ledger.post(
            f"grant:{player}",
            [Transfer(PLAY_MONEY_ISSUER, player_account(player), amount, "grant")],
        )

    def balance(self, player: str) -> int:
        return self.ledger.balance(player_account(player))

    async def start(self) -> None:
        self.task = asyncio.create_task(self.table.run())
        await self.clock.advance(0)

    async def stop(self) -> None:
        self.table.stop()
        assert self.task is not None
        await asyncio.wait_for(self.task, 5)
