"""Seats, boxes and repeated bets as an outside client meets them over a real WebSocket
(docs/protocol.md, "Betting boxes", `repeat_bets`, "Closing codes"): a dropped player's seat
held for 60 seconds and freed after, `leave` freeing it at once, another player's box
refused with `not_your_box`, a spectator's bet with `not_seated`, and `repeat_bets` placing
the previous round's wagers again under the ids it names."""

from __future__ import annotations

import asyncio
from pathlib import Path

from server.protocol.messages import (
    BetAccepted,
    ErrorMessage,
    Join,
    Joined,
    Leave,
    Left,
    PlaceBet,
    RepeatBets,
)
from tests.net.live import TABLES, Client, advance, live_service

WAR = (
    TABLES
    + """
[[tables]]
id = "war"
name = "Casino War"
game = "casino_war"
betting_seconds = 10
pause_seconds = 1
decision_seconds = 5
seats = 3
"""
)


async def _join(client: Client, table: str, role: str = "player") -> Joined | ErrorMessage:
    await client.send(Join(table=table, role=role))
    reply: Joined | ErrorMessage = await client.expect(Joined | ErrorMessage)
    return reply


def test_a_dropped_players_seat_is_held_60_seconds_and_leave_frees_it_at_once(
    tmp_path: Path,
) -> None:
    async def scenario() -> None:
        async with live_service(tmp_path) as service, Client.connect(service, "cy") as cy:
            # "rt" has two seats: ann's and bob's.
            async with Client.connect(service, "ann") as ann:
                assert isinstance(await _join(ann, "rt"), Joined)
                async with Client.connect(service, "bob") as bob:
                    assert isinstance(await _join(bob, "rt"), Joined)
                    full = await _join(cy, "rt")
                    assert isinstance(full, ErrorMessage) and full.code == "table_full"
                    # bob leaves on purpose: his seat is free at once
                    await bob.send(Leave(table="rt"))
                    await bob.expect(Left)
                    assert isinstance(await _join(cy, "rt"), Joined)
                    await cy.send(Leave(table="rt"))
                    await cy.expect(Left)
                    assert isinstance(await _join(bob, "rt"), Joined)
                # bob's connection dropped without a leave: his seat is held for him
            await asyncio.sleep(0.1)  # the server sees the drops
            # ann's dropped too; both seats are held
            await advance(service, 59)
            held = await _join(cy, "rt")
            assert isinstance(held, ErrorMessage) and held.code == "table_full", held
            await advance(service, 2)  # 61 s after the drops: both seats are free
            assert isinstance(await _join(cy, "rt"), Joined)
            async with Client.connect(service, "dee") as dee:
                assert isinstance(await _join(dee, "rt"), Joined)

    asyncio.run(scenario())


def test_a_player_bets_in_their_own_box_only_and_a_spectator_not_at_all(
    tmp_path: Path,
) -> None:
    async def scenario() -> None:
        async with (
            live_service(tmp_path, WAR) as service,
            Client.connect(service, "ann") as ann,
            Client.connect(service, "bob") as bob,
            Client.connect(service, "sue") as sue,
        ):
            a, b = await _join(ann, "war"), await _join(bob, "war")
            s = await _join(sue, "war", "spectator")
            assert isinstance(a, Joined) and isinstance(b, Joined) and isinstance(s, Joined)
            box_a, box_b, r = a.snapshot.seat, b.snapshot.seat, a.snapshot.round
            assert box_a is not None and box_b is not None and box_a != box_b
            assert s.snapshot.seat is None
            theirs = PlaceBet(table="war", round=r, bet_id="x", spot=f"initial:{box_b}", amount=100)  # fmt: skip  # noqa: E501
            await ann.send(theirs)
            refused = await ann.expect(ErrorMessage)
            assert refused.code == "not_your_box", refused
            await sue.send(PlaceBet(table="war", round=r, bet_id="s", spot=f"initial:{box_a}", amount=100))  # fmt: skip  # noqa: E501
            watcher = await sue.expect(ErrorMessage)
            assert watcher.code == "not_seated", watcher
            mine = PlaceBet(table="war", round=r, bet_id="y", spot=f"initial:{box_a}", amount=100)  # fmt: skip  # noqa: E501
            await ann.send(mine)
            accepted = await ann.expect(BetAccepted)
            assert (accepted.spot, accepted.balance) == (f"initial:{box_a}", 100_000 - 100)
            assert service.ledger.balance(f"player:{bob.welcome.player_id}") == 100_000

    asyncio.run(scenario())


def test_repeat_bets_places_the_previous_rounds_wagers_again(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with live_service(tmp_path) as service, Client.connect(service, "ann") as ann:
            joined = await _join(ann, "rt")
            assert isinstance(joined, Joined)
            first = joined.snapshot.round
            for bet_id, spot, amount in (("a", "red", 500), ("b", "straight:17", 100)):
                await ann.send(PlaceBet(table="rt", round=first, bet_id=bet_id, spot=spot, amount=amount))  # fmt: skip  # noqa: E501
                await ann.expect(BetAccepted)
            await advance(service, 10)
            await ann.event("round_settled")
            await advance(service, 1)
            opened = await ann.event("betting_opened")
            assert opened.round != first
            before = service.ledger.balance(f"player:{ann.welcome.player_id}")
            await ann.send(RepeatBets(table="rt", round=opened.round, bet_id_prefix="again"))
            again = [await ann.expect(BetAccepted) for _ in range(2)]
            assert sorted((b.bet_id, b.spot, b.amount, b.round) for b in again) == [
                ("again-1", "red", 500, opened.round),
                ("again-2", "straight:17", 100, opened.round),
            ]
            assert again[-1].balance == before - 600
            assert service.ledger.balance(f"player:{ann.welcome.player_id}") == before - 600

    asyncio.run(scenario())
