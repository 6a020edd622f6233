"""The lobby and the rules over the wire: every reader sees each table as it is now — its
seats, phase, countdown and results — although a line is built again only when one of them
changed (``Lobby.summary``), and every reader gets the rules with its own ``ref``."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

from server.app.service import Service
from server.protocol.codec import encode
from server.protocol.messages import (
    BetAccepted,
    GetRecall,
    GetRules,
    Join,
    Joined,
    Leave,
    Left,
    ListTables,
    Lobby,
    PlaceBet,
    Recall,
    Rules,
    TableSummary,
)
from server.tables.clock import ManualClock
from server.tables.lobby import Lobby as FloorLobby
from server.tables.lobby import table_line
from tests.net.live import Client, advance, live_service


async def _line(client: Client, table: str, ref: int) -> TableSummary:
    await client.send(ListTables(ref=ref))
    lobby: Lobby = await client.expect(Lobby)
    assert lobby.ref == ref
    return next(t for t in lobby.tables if t.table == table)


def test_the_lobby_follows_seats_phase_countdown_and_results(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with (
            live_service(tmp_path) as service,
            Client.connect(service, "ann") as ann,
            Client.connect(service, "bob") as bob,
        ):
            first = await _line(ann, "rt", 1)
            assert (first.seated, first.phase, first.closes_in_ms) == (0, "betting", 10_000)
            assert first.last_results == []

            await advance(service, 3)  # nothing changed but the clock: the countdown did
            line = await _line(ann, "rt", 2)
            assert (line.seated, line.phase, line.closes_in_ms) == (0, "betting", 7_000)

            await bob.send(Join(table="rt", role="player", ref=1))
            await bob.expect(Joined)
            line = await _line(ann, "rt", 3)
            assert (line.seated, line.closes_in_ms) == (1, 7_000)
            await ann.send(Join(table="rt", role="spectator", ref=4))
            await ann.expect(Joined)
            assert (await _line(ann, "rt", 5)).seated == 1  # a spectator takes no seat

            await advance(service, 7)  # betting closes, the ball lands, the round settles
            settled = await ann.event("round_settled")
            line = await _line(ann, "rt", 6)
            assert line.last_results == [settled.data["result"]]
            assert line.phase != "betting" and line.closes_in_ms is None

            await bob.send(Leave(table="rt", ref=2))
            await bob.expect(Left)
            assert (await _line(ann, "rt", 7)).seated == 0

            await advance(service, 2)  # the next round opens: a new countdown
            await ann.event("betting_opened")
            line = await _line(ann, "rt", 8)
            assert (line.phase, line.closes_in_ms) == ("betting", 10_000)
            assert line.last_results == [settled.data["result"]]

    asyncio.run(scenario())


def test_a_dropped_player_s_seat_shows_until_the_hold_ends(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with live_service(tmp_path) as service, Client.connect(service, "ann") as ann:
            async with Client.connect(service, "bob") as bob:
                await bob.send(Join(table="rt", role="player", ref=1))
                await bob.expect(Joined)
            await asyncio.sleep(0.1)  # bob's connection is gone: his seat is held
            assert (await _line(ann, "rt", 1)).seated == 1
            await advance(service, 61)  # past the grace period, with no other change
            assert (await _line(ann, "b6", 2)).seated == 0
            assert (await _line(ann, "rt", 3)).seated == 0

    asyncio.run(scenario())


def test_every_reader_gets_the_rules_with_its_own_ref(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with (
            live_service(tmp_path) as service,
            Client.connect(service, "ann") as ann,
            Client.connect(service, "bob") as bob,
        ):
            await ann.send(GetRules(table="rt", ref=7))
            await bob.send(GetRules(table="rt", ref=9))
            first, second = await ann.expect(Rules), await bob.expect(Rules)
            assert (first.ref, second.ref) == (7, 9)
            assert first.spots == second.spots and "red" in first.spots
            assert first.paytables == second.paytables
            # the rules the lobby keeps are shared: a reply never changes them
            kept = service.lobby.rules("rt")
            assert kept is not None and kept.ref is None

    asyncio.run(scenario())


def test_a_finished_round_is_replayed_once_and_each_player_recalls_only_their_own(
    tmp_path: Path,
) -> None:
    """Recall (58 Pa. Code 810a.11) replays a finished round once for every reader: each
    player still gets only their own wagers, a second recall the same answer, and every
    answer is what a lobby replaying from scratch gives."""

    async def scenario() -> None:
        async with (
            live_service(tmp_path) as service,
            Client.connect(service, "ann") as ann,
            Client.connect(service, "bob") as bob,
        ):
            for client in (ann, bob):
                await client.send(Join(table="rt", role="player"))
                joined = await client.expect(Joined)
            r = joined.snapshot.round
            bets = {
                ann: [("a1", "red", 500), ("a2", "straight:17", 100)],
                bob: [("b1", "black", 700)],
            }
            for client, placed in bets.items():
                for bet_id, spot, amount in placed:
                    await client.send(PlaceBet(table="rt", round=r, bet_id=bet_id, spot=spot, amount=amount))  # fmt: skip  # noqa: E501
                    await client.expect(BetAccepted)
            await advance(service, 10)
            for client in (ann, bob):
                await client.event("round_settled")

            answers = {}
            for client, name in ((ann, "ann"), (bob, "bob")):
                for ref in (1, 2):
                    await client.send(GetRecall(table="rt", ref=ref))
                    answers[name, ref] = (await client.expect(Recall)).rounds
            assert list(service.lobby._finished_rounds) == [r]  # replayed once, for both
            fresh = FloorLobby(service.casino)  # nothing kept: every round replayed
            for name, client in (("ann", ann), ("bob", bob)):
                assert answers[name, 1] == answers[name, 2]
                player_id = client.welcome.player_id
                assert answers[name, 1] == fresh.recall(player_id, "rt")
                (round_,) = answers[name, 1]
                assert round_.round == r
                wanted = {(b, s, a) for b, s, a in bets[ann if name == "ann" else bob]}
                assert {(w["bet_id"], w["spot"], w["amount"]) for w in round_.wagers} == wanted
                assert round_.wagered == sum(a for _, _, a in wanted)
                assert round_.returned == sum(w["returned"] for w in round_.wagers)
            assert answers["ann", 1][0].cards == answers["bob", 1][0].cards

    asyncio.run(scenario())


def _from_scratch(service: Service, ref: int) -> bytes:
    """The lobby answer built from nothing: every table's seats, phase and countdown read
    now, every line made and the answer encoded, as before the lobby kept its answer."""
    lines = []
    for table in service.casino.tables.values():
        now = table.clock.now()
        core = table.core
        stations_only = service.lobby.stations_only(table.id)
        lines.append(
            table_line(
                table, len(core.seated(now)), core.phase, core.closes_in_ms(now), stations_only
            )
        )
    return encode(Lobby(tables=lines, ref=ref))


def test_the_kept_answer_is_the_answer_built_from_scratch_whatever_happens(
    tmp_path: Path,
) -> None:
    """A lobby read rebuilds only the lines of tables that did something since the last read
    (``Lobby.answer``): through a random walk of joins, leaves, dropped connections whose
    held seats end, rounds and plain waiting, every read is byte for byte the answer built
    from scratch."""

    async def scenario() -> None:
        rng = random.Random(31)
        async with live_service(tmp_path) as service, Client.connect(service, "ann") as ann:
            reads = 0
            open_: dict[str, tuple[Any, str, Client]] = {}  # player: connection, table, client
            for step in range(80):
                action = rng.choice(["join", "leave", "drop", "wait", "peek", "peek", "read"])
                name = rng.choice(["bob", "cy", "di", "ed"])
                if action == "join" and name not in open_:
                    table = rng.choice(["rt", "b6"])
                    context = Client.connect(service, name)
                    client = await context.__aenter__()
                    await client.send(Join(table=table, role="player", ref=step))
                    await client.next()  # joined, or table_full
                    open_[name] = (context, table, client)
                elif action in ("leave", "drop") and name in open_:
                    context, table, client = open_.pop(name)
                    if action == "leave":
                        await client.send(Leave(table=table, ref=step))
                        await client.next()
                    await context.__aexit__(None, None, None)  # a drop: the seat is held
                    await asyncio.sleep(0.05)  # the server sees the connection go
                elif action == "wait":
                    await advance(service, rng.choice([0.25, 1, 3, 7, 30, 61]))
                elif action == "peek":
                    # read while time passed but the tables have not acted on it yet (a busy
                    # event loop runs their alarms later): countdowns run down, held seats
                    # end, with no table doing anything — then let them catch up
                    clock = service.casino.clock
                    assert isinstance(clock, ManualClock)
                    clock._now += rng.choice([0.5, 4, 30, 61])
                    assert service.lobby.answer(step) == _from_scratch(service, step), step
                    await clock.advance(0)
                assert service.lobby.answer(step) == _from_scratch(service, step), step
                reads += 1
            for context, _, _ in open_.values():
                await context.__aexit__(None, None, None)
            assert reads == 80
            line = await _line(ann, "rt", 999)  # and over the wire, as a client decodes it
            assert line.table == "rt"

    asyncio.run(scenario())
