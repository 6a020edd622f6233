"""Journal records applied to a round's engine — one path for live play and replay — and the
ledger batches a round's events move money by.

A live table (``TableCore``) applies a record once it is durable; ``replay_round`` applies a
round's journaled records to a fresh engine for game recall, ``croupier replay`` and crash
recovery. Both go through ``apply_record``, so a replayed round is the round that was played.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from server.core.effects import Post
from server.core.money import settle_key, settlement_transfers
from server.core.views import event_name
from server.games.chance import ChanceRequest
from server.games.events import WagerSettled
from server.games.round import ChanceEngine, DecidingEngine, RoundEngine, WheelEngine
from server.games.wagers import Wager
from server.journal import records as rec
from server.wallet.ledger import HOUSE, Transfer, player_account

if TYPE_CHECKING:
    from server.games.table import TableGame

__all__ = ["Replayed", "apply_record", "money_posts", "replay_round"]


def money_posts(round_id: str, events: Iterable[object]) -> list[Post]:
    """The ledger batches that the events move money by: each wager's settlement and each
    progressive award, under keys that make a repeated post (recovery) a no-op."""
    posts: list[Post] = []
    for event in events:
        if isinstance(event, WagerSettled):
            s = event.settlement
            transfers = tuple(settlement_transfers(round_id, s))
            posts.append(Post(settle_key(round_id, s.wager), transfers))
        elif event_name(event) == "progressive_awarded":
            e: Any = event
            if isinstance(e.amount, int) and e.amount > 0:
                to = player_account(e.player_id)
                award = Transfer(HOUSE, to, e.amount, "progressive", round_id, e.bet_id)
                posts.append(Post(f"award:{round_id}:{e.player_id}:{e.bet_id}:{e.meter}", (award,)))
    return posts


def apply_record(game: TableGame, engine: RoundEngine, record: rec.Record) -> Sequence[object]:
    """What ``record`` does to the round's engine; the same for a live table (after the record
    is durable) and for replay."""
    match record:
        case rec.Bet(player=player, bet_id=bet_id, spot=spot, amount=amount):
            return engine.place(Wager(bet_id, player, spot, amount))
        case (
            rec.Cancel(player=player, bet_id=bet_id) | rec.BetRefused(player=player, bet_id=bet_id)
        ):
            return engine.cancel(player, bet_id)
        case rec.Closed():
            return engine.close_betting()
        case rec.CardDrawn():
            return engine.provide_card(game.answer_from_record("card", rec.payload_of(record)))
        case rec.Spin():
            answer = game.answer_from_record("spin", rec.payload_of(record))
            return cast(WheelEngine, engine).provide_spin(answer)
        case rec.HoleRangeRead():
            reader: Any = engine  # Down Under Blackjack's Masque Card Reader, 685a.7(h)
            return cast(
                Sequence[object],
                reader.provide_hole_range(
                    game.answer_from_record("hole_range", rec.payload_of(record))
                ),
            )
        case rec.MysteryHit():
            mystery: Any = engine  # Baccarat's Must-Hit-By meter asks for it, 631b.6(c)(3)
            answer = game.answer_from_record("mystery_hit", rec.payload_of(record))
            return cast(Sequence[object], mystery.provide_mystery_hit(answer))
        case rec.Decision(player=player, spot=spot, decision=decision):
            return cast(DecidingEngine, engine).decide(player, spot, decision)
        case rec.Timeout(player=player):
            return cast(DecidingEngine, engine).time_out(player)
        case rec.Voided(reason=reason):
            return engine.void(reason)
        case rec.Opened() | rec.Settled() | rec.Held() | rec.StaffDecision():
            return ()  # the round's frame, and the audit of device holds: nothing to play
        case rec.ChanceAnswered(chance=kind, answer=data):
            return _provide(engine, kind, data)
    raise ValueError(f"round {engine.round_id}: cannot apply {record!r}")


def _provide(engine: RoundEngine, kind: str, data: Any) -> Sequence[object]:
    """Any other kind of chance a game declares: the answer to the request the round asks
    now, read as the request's kind reads it (``ValueError`` for a journal that answers
    another kind, or with something that cannot answer it)."""
    request = engine.pending()
    if not isinstance(request, ChanceRequest) or request.kind != kind:
        raise ValueError(f"round {engine.round_id}: a {kind!r} answer, but it asks {request!r}")
    return cast(ChanceEngine, engine).provide(request, request.read(data))


@dataclass
class Replayed:
    engine: RoundEngine
    events: list[object]
    finished: str | None  # "settled", "voided" or None (the journal ends mid-round)


def replay_round(game: TableGame, round_id: str, records: Sequence[rec.Record]) -> Replayed:
    """Rebuild a round from its journal records (``opened`` first) through the same record
    application as live play. A bet followed by its ``bet_refused`` never stood: it is left
    out, as it never reached a viewer."""
    engine = game.new_round(round_id, replay=True)
    events: list[object] = list(engine.open())
    finished = None
    for record in _standing(records):
        events += apply_record(game, engine, record)
        if isinstance(record, rec.Settled | rec.Voided):
            finished = record.kind
    return Replayed(engine, events, finished)


def _standing(records: Sequence[rec.Record]) -> list[rec.Record]:
    """The records without the bets that never stood (a ``bet`` then its ``bet_refused``)."""
    refused: set[int] = set()
    last_bet: dict[tuple[str, str], int] = {}
    for n, record in enumerate(records):
        if isinstance(record, rec.Bet):
            last_bet[(record.player, record.bet_id)] = n
        elif isinstance(record, rec.BetRefused):
            placed = last_bet.pop((record.player, record.bet_id), None)
            if placed is not None:
                refused.add(placed)
    return [
        r for n, r in enumerate(records) if n not in refused and not isinstance(r, rec.BetRefused)
    ]
