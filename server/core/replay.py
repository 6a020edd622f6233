"""Rebuild a round from its journal: its typed records fed through the table core.

Engines are pure functions of their inputs, so replaying a round's records reproduces every
event it produced — the cards, the decisions, the settlements. Game recall, ``croupier
replay`` and crash recovery all use this one path, and it applies each record exactly as a
live table does (``server.core.table``).
"""

from __future__ import annotations

from collections.abc import Sequence

from server.core.rounds import Replayed
from server.core.rounds import replay_round as replay_records
from server.games.table import TableGame
from server.journal.journal import JournalRecord
from server.journal.records import record_from

__all__ = ["Replayed", "replay_round"]


def replay_round(game: TableGame, round_id: str, records: Sequence[JournalRecord]) -> Replayed:
    """Replay ``records`` (a round's journal, ``opened`` first) into a new engine; a record
    this version cannot read raises ``ValueError``."""
    return replay_records(game, round_id, [record_from(r.kind, r.payload) for r in records])
