"""The Must-Hit-By hit value at a table (631b.6(c)(3)): drawn from the certified RNG when the
round asks for it, journaled before it takes effect like a card, never sent to any viewer,
rebuilt from the journal by replay, and kept across a restart without a new draw."""

from __future__ import annotations

import asyncio
from typing import Any

from rng import seeded_source
from server.core import commands as cmd
from server.core.replay import replay_round
from server.games.baccarat.engine import BaccaratRound
from server.games.baccarat.table import BaccaratGame
from server.games.chance import CardRequest, MysteryHitRequest
from server.tables.games import build_game
from tests.tables.harness import Harness, RecordingViewer

OPTIONS: dict[str, Any] = {
    "mystery_bonus": "A-$1",
    "side_wagers": {"heavenly_9_progressive": ""},
}


def _ints(value: Any) -> list[int]:
    if isinstance(value, bool):
        return []
    if isinstance(value, int):
        return [value]
    if isinstance(value, dict):
        return [i for v in value.values() for i in _ints(v)]
    if isinstance(value, list | tuple):
        return [i for v in value for i in _ints(v)]
    if hasattr(value, "__struct_fields__"):
        return [i for f in value.__struct_fields__ for i in _ints(getattr(value, f))]
    return []


def test_the_hit_value_is_journaled_first_never_sent_and_replayed() -> None:
    async def scenario() -> None:
        h = Harness("baccarat", **OPTIONS)
        h.fund("alice")
        alice, sue = RecordingViewer("alice"), RecordingViewer("sue")
        h.table.add_viewer(alice, "player")
        h.table.add_viewer(sue, "spectator")
        await h.start()
        r = h.table.round_id
        assert r is not None
        for bet_id, spot in (("b1", "banker"), ("b2", "heavenly_9_progressive")):
            await h.table.submit(
                cmd.Place("alice", round_id=r, bet_id=bet_id, spot=spot, amount=100)
            )
        await h.clock.advance(10)
        records = h.journal.records(r)
        kinds = [rec.kind for rec in records]
        # Asked once, after "no more bets" and before any card: journaled before it counts.
        assert kinds.count("mystery_hit") == 1
        assert kinds.index("closed") < kinds.index("mystery_hit") < kinds.index("card")
        (hit,) = [rec.payload for rec in records if rec.kind == "mystery_hit"]
        assert (hit["low"], hit["high"]) == (10_001, 20_000)  # 631b.6(c)(4) A-$1: $100-$200
        game = h.table.game
        assert isinstance(game, BaccaratGame) and game.meters.mystery is not None
        assert game.meters.mystery.hit_value == hit["value"]
        # Never sent: no viewer's message names it or carries its value.
        for viewer in (alice, sue):
            assert viewer.messages
            for message in viewer.messages:
                assert "mystery_hit" not in repr(message) and "hit_value" not in repr(message)
                assert hit["value"] not in _ints(message), message
        # Replay on a table built afresh (as `croupier replay` does) rebuilds it from the
        # journal and reproduces what the player saw.
        fresh = build_game(h.settings, seeded_source(99))
        replayed = replay_round(fresh, r, records)
        assert replayed.finished == "settled"
        engine = replayed.engine
        assert isinstance(engine, BaccaratRound) and engine.meters.mystery is not None
        assert engine.meters.mystery.hit_value == hit["value"]
        again = replay_round(game, r, records)  # the live table's replay
        assert [type(e) for e in again.events] == [type(e) for e in replayed.events]
        await h.stop()

    asyncio.run(scenario())


class _Counting:
    """A source that counts what is drawn from it."""

    def __init__(self) -> None:
        self.source = seeded_source(7)
        self.name = "counting"
        self.draws = 0

    def randbelow(self, n: int) -> int:
        self.draws += 1
        return self.source.randbelow(n)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.source, name)


def test_a_restart_keeps_the_hit_value_without_drawing_or_asking() -> None:
    settings = Harness("baccarat", **OPTIONS).settings
    first = build_game(settings, seeded_source(1))
    assert isinstance(first, BaccaratGame) and first.meters.mystery is not None
    first.meters.mystery.set_hit_value(15_000)
    saved = first.meter_state()
    assert saved is not None
    source = _Counting()
    second = build_game(settings, source)
    second.restore_meters(saved)
    assert second.meter_state() == saved and source.draws == 0
    rnd = second.new_round("t1.2")
    rnd.open()
    rnd.close_betting()
    assert rnd.pending() == CardRequest("player")  # not asked again
    # A meter saved while waiting for its hit value asks for it after the restart.
    assert first.meters.mystery.contribute(first.meters.mystery.config.minimum_wager) is not None
    first.meters.mystery.hit_value = None
    waiting = first.meter_state()
    assert waiting is not None and "hit_value" not in waiting["mystery"]
    third = build_game(settings, source)
    third.restore_meters(waiting)
    rnd = third.new_round("t1.3")
    rnd.open()
    rnd.close_betting()
    assert rnd.pending() == MysteryHitRequest(10_001, 20_000) and source.draws == 0
