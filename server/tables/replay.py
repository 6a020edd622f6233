"""Rebuild a round from its journal: feed the recorded inputs to a fresh engine.

Engines are pure functions of their inputs, so replaying a round's records reproduces every
event it produced — the cards, the decisions, the settlements. Game recall, ``croupier
replay`` and crash recovery all use this one path.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from server.games.round import DecidingEngine, RoundEngine, WheelEngine
from server.games.wagers import Wager
from server.journal.journal import JournalRecord
from server.tables.games import GameTable

__all__ = ["Replayed", "replay_round"]


@dataclass
class Replayed:
    engine: RoundEngine
    events: list[object]
    finished: str | None  # "settled", "voided" or None (the journal ends mid-round)


def replay_round(game: GameTable, round_id: str, records: Sequence[JournalRecord]) -> Replayed:
    """Replay ``records`` (a round's journal, ``opened`` first) into a new engine."""
    engine = game.new_round(round_id, replay=True)
    events: list[object] = list(engine.open())
    finished = None
    for record in _standing(records):
        p = record.payload
        kind = record.kind
        if kind == "opened":
            continue
        if kind == "bet":
            events += engine.place(Wager(p["bet_id"], p["player"], p["spot"], p["amount"]))
        elif kind == "cancel":
            events += engine.cancel(p["player"], p["bet_id"])
        elif kind == "closed":
            events += engine.close_betting()
        elif kind == "card":
            events += engine.provide_card(game.answer_from_record(kind, p))
        elif kind == "spin":
            events += cast(WheelEngine, engine).provide_spin(game.answer_from_record(kind, p))
        elif kind == "mystery_hit":  # Baccarat's Must-Hit-By hit value, 631b.6(c)(3)
            events += cast(Any, engine).provide_mystery_hit(game.answer_from_record(kind, p))
        elif kind == "hole_range":
            reader = cast(Any, engine)  # Down Under Blackjack's Masque Card Reader, 685a.7(h)
            events += reader.provide_hole_range(game.answer_from_record(kind, p))
        elif kind == "decision":
            events += cast(DecidingEngine, engine).decide(p["player"], p["spot"], p["decision"])
        elif kind == "timeout":
            events += cast(DecidingEngine, engine).time_out(p["player"])
        elif kind == "settled":
            finished = "settled"
        elif kind == "voided":
            events += engine.void(p.get("reason", "voided"))
            finished = "voided"
        else:
            raise ValueError(f"round {round_id}: unknown journal record {kind!r}")
    return Replayed(engine, events, finished)


def _standing(records: Sequence[JournalRecord]) -> list[JournalRecord]:
    """The records without the bets that never stood: a ``bet`` followed by its
    ``bet_refused`` (the debit was refused, so the bet was never acknowledged)."""
    refused: set[int] = set()
    last_bet: dict[tuple[str, str], int] = {}
    for record in records:
        key = (str(record.payload.get("player")), str(record.payload.get("bet_id")))
        if record.kind == "bet":
            last_bet[key] = record.seq
        elif record.kind == "bet_refused" and key in last_bet:
            refused.add(last_bet.pop(key))
    return [r for r in records if r.seq not in refused and r.kind != "bet_refused"]
