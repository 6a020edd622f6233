"""Progressive meters are money owed to players: they persist across a restart exactly, and
players see their amounts (never a Must-Hit-By hit value)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from server.protocol.messages import BetAccepted, Join, Joined, PlaceBet
from tests.net.live import Client, advance, live_service

TABLES = """
[[tables]]
id = "h9"
name = "Heavenly 9"
game = "baccarat"
betting_seconds = 10
pause_seconds = 1
[tables.options]
mystery_bonus = "C-$5"
[tables.options.side_wagers]
heavenly_9_progressive = ""
harmony_progressive = "B"
"""


def test_meters_grow_are_shown_and_survive_a_restart(tmp_path: Path) -> None:
    async def first_run() -> dict[str, int]:
        async with live_service(tmp_path, TABLES) as service, Client.connect(service) as ann:
            await ann.send(Join(table="h9"))
            joined = await ann.expect(Joined)
            before = joined.snapshot.meters
            assert before["heavenly_9_progressive"] == 1_000_000  # 631b.2(i): $10,000 seed
            assert "hit_value" not in str(before)
            r = joined.snapshot.round
            for n, (spot, amount) in enumerate(
                [("banker", 1_000), ("heavenly_9_progressive", 700), ("harmony_progressive", 333)]
            ):
                await ann.send(
                    PlaceBet(table="h9", round=r, bet_id=f"b{n}", spot=spot, amount=amount)
                )
                await ann.expect(BetAccepted)
            await advance(service, 10)
            meters = (await ann.event("meters")).data
            # 10% of 700 to Heavenly 9 (unless this very round hit its jackpot).
            assert meters["heavenly_9_progressive"] in (1_000_070, 1_000_000)
            assert meters["harmony_progressive"] > 0 and "hit_value" not in meters
            state = service.casino.games["h9"].meter_state()
            assert state is not None
            return dict(state)

    saved = asyncio.run(first_run())

    async def second_run() -> None:
        async with live_service(tmp_path, TABLES) as service:
            # The exact state, fractions of a cent and the secret hit value included.
            assert service.casino.games["h9"].meter_state() == saved

    asyncio.run(second_run())
