"""The round journal: a write-ahead record of every round's inputs.

Each round is journaled as the commands that drove its engine — opening, bets, "no more
bets", every card or wheel result *before* it is revealed, every decision — so that a round
can be replayed exactly (game recall, audit, ``croupier replay``) and, after a crash,
completed or voided (recovery). ``SqliteJournal`` is the embedded default.

The names below are loaded on first use (``server/exports.py``): importing the
record types loads no store.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from server.exports import lazy

if TYPE_CHECKING:
    from server.journal.journal import Journal, JournalRecord, RoundStatus
    from server.journal.sqlite_journal import SqliteJournal

__all__ = ["Journal", "JournalRecord", "RoundStatus", "SqliteJournal"]

__getattr__ = lazy(
    __name__,
    {
        "Journal": "server.journal.journal",
        "JournalRecord": "server.journal.journal",
        "RoundStatus": "server.journal.journal",
        "SqliteJournal": "server.journal.sqlite_journal",
    },
)
