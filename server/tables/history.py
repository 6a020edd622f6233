"""A round's whole story for a dispute: its journal, its events replayed card by card, its
money in the ledger and, with the operator's wallet, every call made for it and its answer.
``croupier replay`` prints it; the operator's round history API serves it
(docs/wallet.md, "Round history for disputes")."""

from __future__ import annotations

from typing import Any

from rng.sources import HmacDrbgSource
from server.config import ServerSettings
from server.core.replay import replay_round
from server.core.views import event_name, public_data, to_wire
from server.journal.journal import Journal
from server.tables.games import build_game
from server.wallet.ledger import Ledger

__all__ = ["HistoryError", "player_rounds", "round_history"]

MAX_ROUNDS = 1000  # a player's rounds in one answer at most


class HistoryError(Exception):
    """The round cannot be told: unknown, or its table is not in the configuration."""


def round_history(
    journal: Journal, ledger: Ledger | None, settings: ServerSettings, round_id: str
) -> dict[str, Any]:
    """Everything recorded of ``round_id`` (``HistoryError`` for a round that is not)."""
    records = journal.records(round_id)
    if not records:
        raise HistoryError(f"no round {round_id!r}")
    status = journal.status(round_id)
    linked = journal.meter_settlement(round_id)  # what a linked meter paid
    table_id = records[0].table_id
    table = next((t for t in settings.tables if t.id == table_id), None)
    if table is None:
        raise HistoryError(f"table {table_id!r} is not in {settings.source}")
    game = build_game(table, HmacDrbgSource("replay"))  # the source is never drawn from
    events = replay_round(game, round_id, records).events
    if linked is not None:  # the shared meters' awards, not the table copy's
        events = game.relinked(events, linked)
    result: dict[str, Any] = {
        "round": round_id,
        "table": table_id,
        "game": game.game,
        "variant": game.variant,
        "status": status.value if status else None,
        "journal": [{"seq": r.seq, "kind": r.kind, **r.payload} for r in records],
        "events": [{"event": event_name(e), **public_data(e)} for e in events],
        "money": [] if ledger is None else _money(ledger, round_id),
    }
    calls = getattr(ledger, "calls_of_round", None)
    if calls is not None:  # the operator's wallet: each call and its answer
        result["wallet"] = calls(round_id)
    wired: dict[str, Any] = to_wire(result)
    return wired


def player_rounds(
    journal: Journal, player_id: str, since: str | None = None, limit: int = 100
) -> list[str]:
    """The rounds ``player_id`` played and that are over, oldest first, ``limit`` at most:
    those that finished after round ``since``, or the last ``limit`` without it (the last
    id of an answer is the next ``since``). ``HistoryError`` for a ``since`` that is not
    among the player's last ``MAX_ROUNDS`` rounds."""
    limit = max(1, min(limit, MAX_ROUNDS))
    newest_first = journal.player_rounds(player_id, limit=MAX_ROUNDS if since else limit)
    if since is None:
        return newest_first[::-1]
    if since not in newest_first:
        raise HistoryError(f"{since!r} is not among the last {MAX_ROUNDS} rounds of {player_id}")
    return newest_first[: newest_first.index(since)][::-1][:limit]


def _money(ledger: Ledger, round_id: str) -> list[dict[str, Any]]:
    """Every transfer of the round in the ledger: each stake debited, and what came back
    (settled, voided, cancelled) — the money side of the journal's story."""
    return [
        {
            "key": key,
            "kind": t.kind,
            "bet_id": t.bet_id,
            "amount": t.amount,
            "source": t.source,
            "destination": t.destination,
        }
        for key, t in ledger.round_transfers(round_id)
    ]
