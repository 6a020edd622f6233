"""The round journal: ordered, durable, and able to tell which rounds a crash left open."""

from pathlib import Path

import pytest

from server.journal import RoundStatus, SqliteJournal


def test_a_round_is_recorded_in_order_and_finished(tmp_path: Path) -> None:
    journal = SqliteJournal(tmp_path / "journal.sqlite")
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


def test_records_survive_a_reopen_and_open_rounds_are_found(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    journal = SqliteJournal(path)
    for n in range(3):
        journal.open_round("t", f"r{n}", {})
    journal.finish_round("r1", RoundStatus.VOIDED, {"reason": "device fault"})
    journal.close()
    again = SqliteJournal(path)
    assert again.open_rounds() == [("t", "r0"), ("t", "r2")]
    assert again.status("r1") is RoundStatus.VOIDED and again.status("nope") is None


def test_nothing_is_appended_to_a_finished_or_unknown_round() -> None:
    journal = SqliteJournal(":memory:")
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


def test_player_rounds_lists_the_last_ten_finished_newest_first() -> None:
    journal = SqliteJournal(":memory:")
    for n in range(12):
        journal.open_round("t", f"r{n}", {})
        journal.append(f"r{n}", "bet", {"player": "bob"}, player="bob")
        journal.finish_round(f"r{n}", RoundStatus.SETTLED, {})
    journal.open_round("t", "r12", {})
    journal.append("r12", "bet", {"player": "bob"}, player="bob")  # open: not recallable yet
    assert journal.player_rounds("bob") == [f"r{n}" for n in range(11, 1, -1)]
