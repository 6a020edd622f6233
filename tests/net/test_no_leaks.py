"""Every outbound message of full rounds is inspected: no card is sent before it is dealt face
up (docs/architecture.md, "Reliability and security"), burned cards are never sent, and the
journal holds each card before any viewer sees it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from rng.cards import ALL_CARDS
from server.protocol.messages import BetAccepted, Join, Joined, PlaceBet, TableEvent
from tests.net.live import Client, advance, live_service

CODES = {card.code for card in ALL_CARDS}

BACCARAT = """
[[tables]]
id = "bac"
name = "Baccarat"
game = "baccarat"
betting_seconds = 10
pause_seconds = 1
[tables.options]
variant = "standard"
decks = 6
[tables.options.side_wagers]
perfect_pairs = "A"
five_treasures = "A"
"""


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list | tuple):
        return [s for v in value for s in _strings(v)]
    if hasattr(value, "__struct_fields__"):
        return [s for f in value.__struct_fields__ for s in _strings(getattr(value, f))]
    return []


def test_no_card_is_sent_before_it_is_dealt_face_up(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with (
            live_service(tmp_path, BACCARAT) as service,
            Client.connect(service, "ann") as ann,
            Client.connect(service, "sue") as sue,
        ):
            await ann.send(Join(table="bac"))
            await sue.send(Join(table="bac", role="spectator"))
            joined = await ann.expect(Joined)
            await sue.expect(Joined)
            for n in range(3):  # three rounds, each with a player and side wagers
                r = (await ann.event("betting_opened")).round if n else joined.snapshot.round
                await ann.send(
                    PlaceBet(table="bac", round=r, bet_id="m", spot="banker", amount=500)
                )
                await ann.send(
                    PlaceBet(
                        table="bac", round=r, bet_id="p", spot="perfect_pairs_player", amount=100
                    )
                )
                await ann.expect(BetAccepted)
                await advance(service, 10)
                await ann.event("round_settled")
                await sue.event("round_settled")
                await advance(service, 1)
            for client in (ann, sue):
                revealed: set[tuple[str, str]] = set()  # (round, card code) dealt face up
                for message in client.inbox:
                    round_id = getattr(message, "round", "") or ""
                    if isinstance(message, TableEvent) and message.event == "card_dealt":
                        assert message.data.get("face_up", True)
                        revealed.add((round_id, message.data["card"]))
                    if isinstance(message, TableEvent) and message.event == "shoe_shuffled":
                        assert isinstance(message.data["burned"], int)  # a count, never the cards
                        exposed = message.data.get("exposed")
                        assert exposed is None or exposed in CODES  # 631a.9: shown to all
                        continue
                    for text in _strings(message):
                        if text in CODES:
                            assert (round_id, text) in revealed, (text, message)
            # The journal held every card before it was revealed: each card record precedes
            # the settlement of its round, and every dealt card is in the journal.
            for round_id in {r for r, _ in revealed}:
                journaled = [
                    rec.payload["card"]
                    for rec in service.journal.records(round_id)
                    if rec.kind == "card"
                ]
                dealt = [m.data["card"] for m in ann.events("card_dealt") if m.round == round_id]
                assert journaled == dealt

    asyncio.run(scenario())
