"""The round journal, embedded (SQLite) and shared (PostgreSQL), by one suite: ordered,
durable, and able to tell which rounds a crash left open."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from server.journal import RoundStatus, SqliteJournal
from server.journal.pg_journal import PgJournal

Opener = Callable[[], Any]


@pytest.fixture(params=["sqlite", "postgres"])
def journal_at(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opener]:
    """Opens a journal on the test's store (again and again: a restart, another node)."""
    opened: list[Any] = []

    def open_journal() -> Any:
        if request.param == "sqlite":
            journal: Any = SqliteJournal(tmp_path / "journal.sqlite")
        else:
            journal = PgJournal(request.getfixturevalue("postgres_url"))
        opened.append(journal)
        return journal

    yield open_journal
    for journal in opened:
        journal.close()


def test_a_round_is_recorded_in_order_and_finished(journal_at: Opener) -> None:
    journal = journal_at()
    journal.open_round("bac-1", "r1", {"game": "baccarat"})
    journal.append(
        "r1",
        "bet",
        {"player": "alice", "bet_id": "b1", "spot": "banker", "amount": 500},
        player="alice",
    )
    journal.append("r1", "closed", {})
    journal.append("r1", "card", {"card": "AS", "bound": 416, "value": 17})
    assert journal.open_rounds() == [("bac-1", "r1")]
    journal.finish_round("r1", RoundStatus.SETTLED, {"result": "banker 7-5"})
    kinds = [r.kind for r in journal.records("r1")]
    assert kinds == ["opened", "bet", "closed", "card", "settled"]
    assert journal.records("r1")[3].payload == {"card": "AS", "bound": 416, "value": 17}
    assert journal.open_rounds() == [] and journal.status("r1") is RoundStatus.SETTLED
    assert journal.player_rounds("alice") == ["r1"]
    assert journal.last_round("bac-1") == "r1"


def test_records_survive_a_reopen_and_open_rounds_are_found(journal_at: Opener) -> None:
    journal = journal_at()
    for n in range(3):
        journal.open_round("t", f"r{n}", {})
    journal.finish_round("r1", RoundStatus.VOIDED, {"reason": "device fault"})
    journal.close()
    again = journal_at()
    assert again.open_rounds() == [("t", "r0"), ("t", "r2")]
    assert again.status("r1") is RoundStatus.VOIDED and again.status("nope") is None


def test_nothing_is_appended_to_a_finished_or_unknown_round(journal_at: Opener) -> None:
    journal = journal_at()
    journal.open_round("t", "r1", {})
    journal.finish_round("r1", RoundStatus.SETTLED, {})
    with pytest.raises(ValueError, match="already settled"):
        journal.append("r1", "card", {"card": "KD"})
    with pytest.raises(ValueError, match="never opened"):
        journal.append("r9", "card", {"card": "KD"})
    with pytest.raises(ValueError, match="already journaled"):
        journal.open_round("t", "r1", {})
    with pytest.raises(ValueError):
        journal.finish_round("r1", RoundStatus.OPEN, {})


def test_player_rounds_lists_the_last_ten_finished_newest_first(journal_at: Opener) -> None:
    journal = journal_at()
    for n in range(12):
        journal.open_round("t", f"r{n}", {})
        journal.append(f"r{n}", "bet", {"player": "bob"}, player="bob")
        journal.finish_round(f"r{n}", RoundStatus.SETTLED, {})
    journal.open_round("t", "r12", {})
    journal.append("r12", "bet", {"player": "bob"}, player="bob")  # open: not recallable yet
    assert journal.player_rounds("bob") == [f"r{n}" for n in range(11, 1, -1)]


def test_table_state_is_kept_and_replaced(journal_at: Opener) -> None:
    journal = journal_at()
    assert journal.load_state("t", "meters") is None
    journal.save_state("t", "meters", {"heavenly_9": "1000/1"})
    journal.save_state("t", "meters", {"heavenly_9": "1005/1"})
    assert journal_at().load_state("t", "meters") == {"heavenly_9": "1005/1"}


def test_the_awaitable_writes_are_the_same_writes(journal_at: Opener) -> None:
    import asyncio

    journal = journal_at()

    async def play() -> None:
        await journal.aopen_round("t", "r1", {})
        await journal.aappend("r1", "bet", {"player": "ann"}, player="ann")
        await journal.asave_state("t", "epoch", {"epoch": 3})
        await journal.afinish_round("r1", RoundStatus.VOIDED, {"reason": "test"})

    asyncio.run(play())
    again = journal_at()
    assert [r.kind for r in again.records("r1")] == ["opened", "bet", "voided"]
    assert again.player_rounds("ann") == ["r1"] and again.load_state("t", "epoch") == {"epoch": 3}
