"""Full rounds over real WebSocket connections on loopback (issue: table server)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from server.protocol.messages import (
    BalanceChanged,
    BetAccepted,
    ErrorMessage,
    GetRecall,
    GetRules,
    Join,
    Joined,
    ListTables,
    Lobby,
    PlaceBet,
    Recall,
    Resume,
    Rules,
)
from tests.net.live import Client, advance, live_service


@pytest.mark.parametrize(
    ("table", "spot", "result_event"),
    [("rt", "red", "ball_landed"), ("b6", "two", "wheel_stopped")],
)
def test_a_full_round_over_websockets(
    tmp_path: Path, table: str, spot: str, result_event: str
) -> None:
    async def scenario() -> None:
        async with live_service(tmp_path) as service, Client.connect(service, "ann") as ann:
            await ann.send(ListTables(ref=1))
            lobby = await ann.expect(Lobby)
            assert {t.table for t in lobby.tables} == {"rt", "b6"}
            await ann.send(GetRules(table=table, ref=2))
            rules = await ann.expect(Rules)
            assert spot in rules.spots and rules.limits["minimum"] == 100
            await ann.send(Join(table=table, ref=3))
            joined = await ann.expect(Joined)
            round_id = joined.snapshot.round
            assert joined.snapshot.phase == "betting" and round_id
            await ann.send(
                PlaceBet(table=table, round=round_id, bet_id="b1", spot=spot, amount=1_000, ref=4)
            )
            ack = await ann.expect(BetAccepted)
            assert ack.balance == 99_000 and ack.ref == 4
            await advance(service, 10)
            await ann.event(result_event)
            settled = await ann.event("wager_settled")
            returned = settled.data["settlement"]["returned"]
            balance = await ann.expect(BalanceChanged)
            assert balance.balance == 99_000 + returned
            await ann.event("round_settled")
            await ann.send(GetRecall(table=table, ref=5))
            recall = await ann.expect(Recall)
            assert [(r.round, r.wagered, r.returned) for r in recall.rounds] == [
                (round_id, 1_000, returned)
            ]
            assert service.ledger.total() == 0 and service.ledger.reconcile() == {}

    asyncio.run(scenario())


def test_two_players_see_the_same_results_and_only_their_own_money(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with (
            live_service(tmp_path) as service,
            Client.connect(service, "ann") as ann,
            Client.connect(service, "bob") as bob,
            Client.connect(service, "sue") as sue,
        ):
            for client, role in ((ann, "player"), (bob, "player"), (sue, "spectator")):
                await client.send(Join(table="rt", role=role))
                joined = await client.expect(Joined)
            r = joined.snapshot.round
            await ann.send(
                PlaceBet(table="rt", round=r, bet_id="a", spot="straight:17", amount=500)
            )
            await bob.send(PlaceBet(table="rt", round=r, bet_id="a", spot="black", amount=700))
            await ann.expect(BetAccepted)
            await bob.expect(BetAccepted)
            await advance(service, 10)
            for client in (ann, bob, sue):
                await client.event("round_settled")
            landed = {c.events("ball_landed")[0].data["label"] for c in (ann, bob, sue)}
            assert len(landed) == 1  # everyone saw the same ball
            ann_bets = {
                e.data["settlement"]["wager"]["player_id"] for e in ann.events("wager_settled")
            }
            bob_bets = {
                e.data["settlement"]["wager"]["player_id"] for e in bob.events("wager_settled")
            }
            assert ann_bets == {ann.welcome.player_id} and bob_bets == {bob.welcome.player_id}
            # The spectator received no wager, balance or other player's data at all.
            assert not sue.events("bet_accepted") and not sue.events("wager_settled")
            assert not [m for m in sue.inbox if isinstance(m, BalanceChanged | BetAccepted)]
            for frame in sue.raw:
                assert ann.welcome.player_id.encode() not in frame
                assert bob.welcome.player_id.encode() not in frame

    asyncio.run(scenario())


def test_seats_are_limited_and_spectators_are_not(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with live_service(tmp_path) as service:
            clients = [Client.connect(service, f"p{n}") for n in range(3)]
            a, b, c = [await cm.__aenter__() for cm in clients]
            for client in (a, b):
                await client.send(Join(table="rt"))
                await client.expect(Joined)
            await c.send(Join(table="rt"))
            error = await c.expect(ErrorMessage)
            assert error.code == "table_full"
            await c.send(Join(table="rt", role="spectator"))
            await c.expect(Joined)
            for cm in reversed(clients):
                await cm.__aexit__(None, None, None)

    asyncio.run(scenario())


def test_a_dropped_player_resumes_and_gets_what_they_missed(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with live_service(tmp_path) as service:
            async with Client.connect(service, "ann") as ann:
                await ann.send(Join(table="rt"))
                joined = await ann.expect(Joined)
                r = joined.snapshot.round
                await ann.send(PlaceBet(table="rt", round=r, bet_id="a", spot="odd", amount=900))
                await ann.expect(BetAccepted)
                last_seq = max(e.seq for e in ann.events()) if ann.events() else joined.snapshot.seq
                token = ann.welcome.token
                player = ann.welcome.player_id
            # Away: the round is dealt and settled while the connection is down.
            await advance(service, 10)
            assert service.ledger.balance("wagers:open") == 0
            from websockets.asyncio.client import connect

            from server.protocol.messages import PROTOCOL_VERSION, Hello, Welcome

            async with connect(f"ws://127.0.0.1:{service.port}/ws") as ws:
                back = Client(ws)
                await back.send(Hello(version=PROTOCOL_VERSION, token=token))
                welcome = await back.expect(Welcome)
                assert welcome.player_id == player  # the same player again
                await back.send(Resume(table="rt", last_seq=last_seq))
                joined_again = await back.expect(Joined)
                assert joined_again.resumed
                missed = back.events("wager_settled")
                assert len(missed) == 1 and missed[0].data["settlement"]["wager"]["bet_id"] == "a"
                returned = missed[0].data["settlement"]["returned"]
                assert welcome.balance == 100_000 - 900 + returned

    asyncio.run(scenario())


def test_croupier_replay_reconstructs_a_played_round_card_by_card(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from server.cli.main import main
    from tests.net.live import TABLES

    async def scenario() -> str:
        async with live_service(tmp_path) as service, Client.connect(service, "ann") as ann:
            await ann.send(Join(table="rt"))
            r = (await ann.expect(Joined)).snapshot.round
            await ann.send(PlaceBet(table="rt", round=r, bet_id="b", spot="low", amount=200))
            await ann.expect(BetAccepted)
            await advance(service, 10)
            landed = await ann.event("ball_landed")
            await ann.event("round_settled")
            return f"{r} {landed.data['label']}"

    round_id, label = asyncio.run(scenario()).split()
    config = tmp_path / "tables.toml"
    config.write_text(TABLES)
    assert main(["replay", round_id, "--data-dir", str(tmp_path), "--config", str(config)]) == 0
    out = capsys.readouterr().out
    assert f"round {round_id} at table rt" in out and "settled" in out
    assert f"result={label}" in out and "ball_landed" in out and "spot=low" in out
    assert main(["replay", "rt.999", "--data-dir", str(tmp_path)]) == 2


def test_croupier_replay_of_a_voided_round_shows_each_stake_and_its_return(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue #14: a voided round's replay shows every acknowledged stake and its return,
    from the journal (the engine's void settlements) and from the ledger (the money)."""
    from server.cli.main import main
    from tests.net.live import TABLES

    async def scenario() -> str:
        async with live_service(tmp_path) as service, Client.connect(service, "ann") as ann:
            await ann.send(Join(table="rt"))
            r = (await ann.expect(Joined)).snapshot.round
            for bet_id, spot, amount in (("b1", "low", 200), ("b2", "straight:7", 300)):
                await ann.send(
                    PlaceBet(table="rt", round=r, bet_id=bet_id, spot=spot, amount=amount)
                )
                await ann.expect(BetAccepted)
            return str(r)  # the service stops mid-round: the round is voided

    round_id = asyncio.run(scenario())
    config = tmp_path / "tables.toml"
    config.write_text(TABLES)
    assert (
        main(["replay", round_id, "--data-dir", str(tmp_path), "--config", str(config), "--json"])
        == 0
    )
    result = json.loads(capsys.readouterr().out)
    assert result["status"] == "voided"
    settled = {
        e["settlement"]["wager"]["bet_id"]: (
            e["settlement"]["wager"]["amount"],
            e["settlement"]["returned"],
        )
        for e in result["events"]
        if e["event"] == "wager_settled"
    }
    assert settled == {"b1": (200, 200), "b2": (300, 300)}
    money = [(t["kind"], t["bet_id"], t["amount"]) for t in result["money"]]
    assert sorted(money) == [
        ("void", "b1", 200),
        ("void", "b2", 300),
        ("wager", "b1", 200),
        ("wager", "b2", 300),
    ]
    assert main(["replay", round_id, "--data-dir", str(tmp_path), "--config", str(config)]) == 0
    text = capsys.readouterr().out
    assert "money (the ledger's transfers for this round):" in text
    assert "void      bet b2" in text and "wager     bet b2" in text
