"""The round journal: a write-ahead record of every round's inputs.

Each round is journaled as the commands that drove its engine — opening, bets, "no more
bets", every card or wheel result *before* it is revealed, every decision — so that a round
can be replayed exactly (game recall, audit, ``croupier replay``) and, after a crash,
completed or voided (recovery). ``SqliteJournal`` is the embedded default.
"""

from server.journal.journal import Journal, JournalRecord, RoundStatus
from server.journal.sqlite_journal import SqliteJournal

__all__ = ["Journal", "JournalRecord", "RoundStatus", "SqliteJournal"]
