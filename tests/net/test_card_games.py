"""Casino War, Down Under Blackjack and 21 Baccarat over real WebSocket connections, with a
scripted shoe so the interesting hands happen: a War decision and a time-out, a Down Under
hand whose hole card is never sent before the dealer's turn."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterable
from pathlib import Path

from msgspec import msgpack

from rng.cards import Card, parse_cards
from rng.shoe import Draw
from server.app.service import Service
from server.protocol.messages import (
    BalanceChanged,
    BetAccepted,
    Decide,
    Join,
    Joined,
    PlaceBet,
    TableEvent,
)
from tests.net.live import Client, advance, live_service
from tests.threads import threads_calling

TABLES = """
[server]
starting_balance = 100000

[[tables]]
id = "war"
name = "Casino War"
game = "casino_war"
betting_seconds = 10
pause_seconds = 1
decision_seconds = 5

[[tables]]
id = "dub"
name = "Down Under Blackjack"
game = "down_under_blackjack"
betting_seconds = 10
pause_seconds = 1
decision_seconds = 5
[tables.options]
decks = 6
match_the_dealer = false

[[tables]]
id = "t21"
name = "21 Baccarat"
game = "twenty_one_baccarat"
betting_seconds = 10
pause_seconds = 1
"""


class ScriptedShoe:
    """Deals the given cards in order (the table's virtual shoe, replaced for a test)."""

    def __init__(self, cards: Iterable[Card]) -> None:
        self.cards = list(cards)
        self.seq = 0
        self.needs_reshuffle = False
        self.source = None

    def draw_recorded(self) -> Draw:
        card = self.cards.pop(0)
        self.seq += 1
        return Draw(self.seq, 52, card.index, card)


def script_shoe(service: Service, table: str, cards: str) -> None:
    game = service.casino.games[table]
    game.shoe = ScriptedShoe(parse_cards(cards))  # type: ignore[attr-defined]


def test_casino_war_a_tie_goes_to_war_and_a_silent_player_surrenders(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with (
            live_service(tmp_path, TABLES) as service,
            Client.connect(service, "ann") as ann,
            Client.connect(service, "bob") as bob,
        ):
            await ann.send(Join(table="war"))
            seat_a = (await ann.expect(Joined)).snapshot.seat
            await bob.send(Join(table="war"))
            joined = await bob.expect(Joined)
            seat_b, r = joined.snapshot.seat, joined.snapshot.round
            assert {seat_a, seat_b} == {1, 2}
            # 651a.8(c): one card to each box, then the dealer: both boxes tie the dealer's 9.
            # War deal (651a.9(f)): three burns, Ann's War card, then the dealer's.
            script_shoe(service, "war", "9H 9S 9D  2C 3C 4C  KH 5D")
            await ann.send(
                PlaceBet(table="war", round=r, bet_id="a", spot=f"initial:{seat_a}", amount=1_000)
            )
            await bob.send(
                PlaceBet(table="war", round=r, bet_id="b", spot=f"initial:{seat_b}", amount=600)
            )
            await ann.expect(BetAccepted)
            await bob.expect(BetAccepted)
            await advance(service, 10)  # no more bets; the original deal ties both boxes
            request = await ann.event("decision_requested")
            assert request.data["player_id"] == ann.welcome.player_id
            assert set(request.data["options"]) == {"war", "war+tie", "surrender"}
            # The decision's balance check reads the ledger: off the event loop (on a
            # cluster's PostgreSQL a round trip holding every connection of the node).
            read_on = threads_calling(service.ledger, "available")
            await ann.send(Decide(table="war", round=r, spot=request.data["spot"], decision="war"))
            await ann.expect(BalanceChanged)  # the War Wager was debited
            assert read_on and threading.current_thread() not in read_on
            await advance(service, 5)  # Bob never answers: he surrenders (651a.9(c)(1))
            await ann.event("round_settled")
            await bob.event("round_settled")
            assert any(
                e.data.get("default") == "surrender" for e in bob.events("decision_timed_out")
            )
            # Ann: Initial 1,000 forfeited, War Wager 1,000 won 2 to 1 on a K against a 5
            # (docs/interpretations.md, 12). Bob: surrendered half of 600.
            assert service.players.balance(ann.welcome.player_id) == 100_000 - 1_000 + 2_000
            assert service.players.balance(bob.welcome.player_id) == 100_000 - 300
            assert service.ledger.total() == 0 and service.ledger.reconcile() == {}
            assert service.ledger.balance("wagers:open") == 0

    asyncio.run(scenario())


def test_down_under_hole_card_is_never_sent_before_the_dealers_turn(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with (
            live_service(tmp_path, TABLES) as service,
            Client.connect(service, "ann") as ann,
            Client.connect(service, "sue") as sue,
        ):
            await ann.send(Join(table="dub"))
            joined = await ann.expect(Joined)
            seat, r = joined.snapshot.seat, joined.snapshot.round
            await sue.send(Join(table="dub", role="spectator"))
            await sue.expect(Joined)
            # 685a.7(e): player, dealer up card, player, dealer hole card (face down).
            # The hole card 6D reads Medium; the dealer then has 15 and draws the 7S: 22.
            script_shoe(service, "dub", "10S 9C 8H 6D 7S")
            await ann.send(
                PlaceBet(table="dub", round=r, bet_id="a", spot=f"bet:{seat}", amount=1_000)
            )
            await ann.expect(BetAccepted)
            await advance(service, 10)
            request = await ann.event("decision_requested")
            assert "stand" in request.data["options"]
            await ann.send(
                Decide(table="dub", round=r, spot=request.data["spot"], decision="stand")
            )
            await ann.event("round_settled")
            await sue.event("round_settled")
            for client in (ann, sue):
                reading = client.events("hole_card_range_read")
                assert [e.data["range"] for e in reading] == ["medium"]
                assert reading[0].data["light"]  # the reader's light, 685a.7(h)
                revealed_at = next(
                    i
                    for i, m in enumerate(client.inbox)
                    if isinstance(m, TableEvent) and m.event == "hole_card_revealed"
                )
                before = client.raw[: revealed_at + 1]
                hole = [e for e in client.events("card_dealt") if e.data.get("face_up") is False]
                assert len(hole) == 1 and "card" not in hole[0].data
                # No frame before the reveal carries the hole card's code: the code as
                # MessagePack writes it (a two-byte string), not the two bytes "6D" alone,
                # which a frame's random token or a number's bytes contain by chance.
                code = msgpack.encode("6D")
                assert not any(code in frame for frame in before[:-1])
                assert code in before[-1]
            # Dealer 22 (685a.7(o)): Ann's 18 of two unsplit cards, not both Large, pushes.
            assert service.players.balance(ann.welcome.player_id) == 100_000
            assert service.ledger.reconcile() == {}

    asyncio.run(scenario())


def test_21_baccarat_round_over_websockets(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with live_service(tmp_path, TABLES) as service, Client.connect(service) as ann:
            await ann.send(Join(table="t21"))
            r = (await ann.expect(Joined)).snapshot.round
            # 681a.7(e): P, B, P, B; the Player's 19 stands, the Banker's 12 takes one card.
            script_shoe(service, "t21", "10H 7C 9S 5D 3C")
            await ann.send(PlaceBet(table="t21", round=r, bet_id="p", spot="player", amount=500))
            await ann.send(
                PlaceBet(table="t21", round=r, bet_id="b", spot="bonus_banker", amount=100)
            )
            await ann.expect(BetAccepted)
            await ann.expect(BetAccepted)
            await advance(service, 10)
            await ann.event("round_settled")
            settled = {
                e.data["settlement"]["wager"]["bet_id"]: e.data["settlement"]["returned"]
                for e in ann.events("wager_settled")
            }
            # Player 19 beats Banker 15 (7-5-3): 1 to 1. Banker's 7-5-3 is no Bonus hand.
            assert settled == {"p": 1_000, "b": 0}
            assert service.players.balance(ann.welcome.player_id) == 100_000 + 500 - 100

    asyncio.run(scenario())
