"""A game defined in the tests alone (``tests/high_card``), registered from here, runs on a
real service: the configuration accepts it within its seat limit, the lobby lists it, its
rounds settle over WebSockets with recall, and ``croupier par-sheet`` lists it — a new game
is one package plus one registry entry on the server (docs/architecture.md)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from server.cli.main import main
from server.config import ConfigError, parse_config
from server.games import registry
from server.protocol.messages import (
    BalanceChanged,
    BetAccepted,
    GetRecall,
    GetRules,
    Join,
    Joined,
    ListTables,
    Lobby,
    PlaceBet,
    Recall,
    Rules,
)
from tests.high_card.table import GAME
from tests.net.live import Client, advance, live_service

TABLES = """
[[tables]]
id = "hc"
name = "High Card"
game = "high_card"
betting_seconds = 10
pause_seconds = 1
seats = 4

[[tables]]
id = "war"
name = "Casino War"
game = "casino_war"
"""


@pytest.fixture
def high_card() -> Iterator[None]:
    registry.register(GAME)
    try:
        yield
    finally:
        registry.unregister(GAME.name)


def test_an_unregistered_game_is_refused_when_the_file_is_read() -> None:
    with pytest.raises(ConfigError, match=r"table hc\): unknown game 'high_card'"):
        parse_config(TABLES, "tables.toml")


@pytest.mark.usefixtures("high_card")
def test_its_seat_limit_comes_from_its_entry() -> None:
    with pytest.raises(ConfigError, match="at most 4 \\(the test game's own bound\\)"):
        parse_config(TABLES.replace("seats = 4", "seats = 5"), "tables.toml")


@pytest.mark.usefixtures("high_card")
def test_a_registered_game_is_played_on_a_live_service(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with live_service(tmp_path, TABLES) as service, Client.connect(service) as ann:
            await ann.send(ListTables(ref=1))
            lobby = {t.table: t for t in (await ann.expect(Lobby)).tables}
            assert (lobby["hc"].game, lobby["hc"].seats, lobby["hc"].boxed) == (
                "high_card",
                4,
                False,
            )
            assert lobby["war"].boxed  # the wire says which tables have betting boxes
            await ann.send(GetRules(table="hc", ref=2))
            rules = await ann.expect(Rules)
            assert rules.spots == ["player", "dealer"] and rules.seats == 4 and not rules.boxed
            await ann.send(Join(table="hc", ref=3))
            round_id = (await ann.expect(Joined)).snapshot.round
            await ann.send(
                PlaceBet(table="hc", round=round_id, bet_id="b1", spot="player", amount=1_000)
            )
            assert (await ann.expect(BetAccepted)).balance == 99_000
            await advance(service, 10)
            cards = [(await ann.event("card_dealt")).data["target"] for _ in range(2)]
            assert cards == ["player", "dealer"]
            settled = await ann.event("wager_settled")
            returned = settled.data["settlement"]["returned"]
            assert returned in (0, 1_000, 2_000)
            assert (await ann.expect(BalanceChanged)).balance == 99_000 + returned
            await ann.event("round_settled")
            await ann.send(GetRecall(table="hc", ref=4))
            recall = (await ann.expect(Recall)).rounds
            assert [(r.round, r.game, r.returned) for r in recall] == [
                (round_id, "high_card", returned)
            ]
            assert set(recall[0].cards) == {"player", "dealer"}
            assert service.ledger.total() == 0 and service.ledger.reconcile() == {}

    asyncio.run(scenario())


@pytest.mark.usefixtures("high_card")
def test_the_par_sheet_command_lists_it(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["par-sheet", "high_card", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["wager"], r["house_edge"]) for r in rows] == [("player", 0.0), ("dealer", 0.0)]
