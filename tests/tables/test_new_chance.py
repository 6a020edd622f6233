"""A new kind of chance, declared once with the game that asks it (docs/architecture.md,
"Adding a game"): High Die (``tests/high_card/high_die.py``, defined in the tests alone) asks
a die's roll, a ``ChanceRequest`` no server file names. With no device, the table core asks
for it, the runtime draws it from the table's certified source, the journal keeps it as the
generic ``chance`` record with its draw, the engine takes it through ``provide`` — and replay,
``croupier replay`` and crash recovery rebuild it from the journal alone."""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from rng import seeded_source
from server.cli.main import main
from server.core import commands as cmd
from server.core.replay import replay_round
from server.core.views import event_name
from server.games import registry
from server.games.table import TableSettings
from server.journal import SqliteJournal
from server.journal.records import ChanceAnswered, payload_of, record_from
from server.tables.games import build_game
from server.tables.recovery import recover_open_rounds
from server.wallet import OPEN_WAGERS, SqliteLedger
from server.wallet.ledger import player_account
from tests.high_card.high_die import GAME, DieRoll, DieRolled, HighDieRound
from tests.tables.core_driver import Driver, perform_write
from tests.tables.test_core_crash_cuts import _crash_states, _fresh_stores, _grant, _keys

SETTINGS = TableSettings(
    "hd", "High Die", "high_die", betting_seconds=10, pause_seconds=1, seats=4, minimum=100
)
PLAYERS = ("ann", "bob")
ROUNDS = 3


@pytest.fixture(autouse=True)
def high_die() -> Iterator[None]:
    registry.register(GAME)
    try:
        yield
    finally:
        registry.unregister(GAME.name)


def _played(seed: int = 5, **stores: object) -> Driver:
    """``ROUNDS`` rounds at a High Die table, ann on the player, bob on the dealer."""
    d = Driver(SETTINGS, seed=seed, **stores)  # type: ignore[arg-type]
    for player in PLAYERS:
        d.fund(player, 10_000)
        d.seat(player)
    for _ in range(ROUNDS):
        round_id = d.core.round_id or ""
        for player, spot in zip(PLAYERS, ("player", "dealer"), strict=True):
            reply = d.play(cmd.Place, player, round_id=round_id, bet_id="b", spot=spot, amount=500)
            assert reply is not None and reply.refusal is None, reply
        d.run_until(d.now + SETTINGS.betting_seconds + SETTINGS.pause_seconds)
    return d


ROUND_IDS = [f"hd.{n}" for n in range(1, ROUNDS + 1)]


def test_the_kind_is_declared_with_its_game_alone() -> None:
    request = DieRoll("player")
    assert request.kind == "toy_die" and request.outcomes() == 6
    assert [request.outcome(v) for v in range(6)] == [1, 2, 3, 4, 5, 6]
    assert request.read(request.write(4)) == 4
    with pytest.raises(ValueError, match="shows 1 to 6"):
        request.read(7)
    assert registry.capabilities("high_die").asks(DieRoll)


def test_rounds_are_drawn_from_the_tables_source_journaled_first_and_settled() -> None:
    d = _played()
    source = seeded_source(5)  # the table's certified source, as the driver gave it
    for round_id in ROUND_IDS:
        records = d.journal.records(round_id)
        kinds = [r.kind for r in records]
        assert kinds == ["opened", "bet", "bet", "closed", "chance", "chance", "settled"]
        dice = [r.payload for r in records if r.kind == "chance"]
        # The runtime drew each face uniformly below the kind's outcomes, and says so.
        for payload in dice:
            assert payload == {
                "chance": "toy_die",
                "answer": payload["value"] + 1,
                "bound": 6,
                "value": source.randbelow(6),
            }
        # Shown only once journaled (the driver asserts each revealing event's order too).
        shown = [e for e in d.emits if e.round_id == round_id and e.name == "die_rolled"]
        assert [(e.data["target"], e.data["face"]) for e in shown] == [
            ("player", dice[0]["answer"]),
            ("dealer", dice[1]["answer"]),
        ]
    # The money moved as the faces say: even money to the higher roll, a push on a tie.
    expected = {"ann": 10_000, "bob": 10_000}
    for round_id in ROUND_IDS:
        player, dealer = (r.payload["answer"] for r in d.journal.records(round_id) if r.kind == "chance")  # fmt: skip  # noqa: E501
        if player != dealer:
            winner, loser = ("ann", "bob") if player > dealer else ("bob", "ann")
            expected[winner] += 500
            expected[loser] -= 500
    for player, balance in expected.items():
        assert d.ledger.balance(player_account(player)) == balance
    assert d.ledger.balance(OPEN_WAGERS) == 0 and d.ledger.reconcile() == {}
    assert [f.status for f in d.finished] == ["settled"] * ROUNDS
    d.close()


def test_the_generic_record_reads_back_as_it_was_written() -> None:
    record = ChanceAnswered(chance="toy_die", answer=3, bound=6, value=2)
    assert payload_of(record) == {"chance": "toy_die", "answer": 3, "bound": 6, "value": 2}
    assert record_from("chance", payload_of(record)) == record
    by_device = ChanceAnswered(chance="toy_die", answer=5, device="shaker-1")
    assert payload_of(by_device) == {"chance": "toy_die", "answer": 5, "device": "shaker-1"}


def test_replay_rebuilds_each_round_from_its_journal_alone() -> None:
    d = _played()
    for round_id in ROUND_IDS:
        records = d.journal.records(round_id)
        fresh = build_game(SETTINGS, seeded_source(99))  # replay never draws
        replayed = replay_round(fresh, round_id, records)
        assert replayed.finished == "settled"
        engine = replayed.engine
        assert isinstance(engine, HighDieRound)
        faces = [r.payload["answer"] for r in records if r.kind == "chance"]
        assert [engine.faces["player"], engine.faces["dealer"]] == faces
        rolled = [e for e in replayed.events if isinstance(e, DieRolled)]
        assert [e.face for e in rolled] == faces
        # The events the table sent, in the order it sent them.
        sent = [e.name for e in d.emits if e.round_id == round_id]
        assert [event_name(e) for e in replayed.events] == sent
    d.close()


def test_a_journal_answering_another_kind_or_an_impossible_face_is_refused() -> None:
    d = _played()
    records = d.journal.records("hd.1")
    d.close()
    game = build_game(SETTINGS, seeded_source(99))
    n = next(i for i, r in enumerate(records) if r.kind == "chance")
    wrong_kind = dataclasses.replace(records[n], payload={"chance": "coin", "answer": 1})
    with pytest.raises(ValueError, match="a 'coin' answer, but it asks DieRoll"):
        replay_round(game, "hd.1", [*records[:n], wrong_kind])
    impossible = dataclasses.replace(records[n], payload={"chance": "toy_die", "answer": 9})
    with pytest.raises(ValueError, match="shows 1 to 6, not 9"):
        replay_round(game, "hd.1", [*records[:n], impossible])


def test_croupier_replay_shows_the_rolls(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip  # noqa: E501
    ledger = SqliteLedger(tmp_path / "ledger.sqlite")
    journal = SqliteJournal(tmp_path / "journal.sqlite")
    d = _played(ledger=ledger, journal=journal)
    d.close()
    ledger.close()
    journal.close()
    config = tmp_path / "tables.toml"
    config.write_text('[[tables]]\nid = "hd"\nname = "High Die"\ngame = "high_die"\nseats = 4\n')
    capsys.readouterr()
    args = ["replay", "hd.2", "--data-dir", str(tmp_path), "--config", str(config), "--json"]
    assert main(args) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["status"] == "settled" and shown["game"] == "high_die"
    dice = [r for r in shown["journal"] if r["kind"] == "chance"]
    rolled = [e for e in shown["events"] if e["event"] == "die_rolled"]
    assert [e["face"] for e in rolled] == [r["answer"] for r in dice] and len(dice) == 2
    assert {"wager", "winnings"} <= {t["kind"] for t in shown["money"]}


def test_recovery_after_a_crash_at_every_step_loses_nothing() -> None:
    """A crash after every write: recovery replays the journal's rolls through the table core,
    completes a round both rolls were journaled for, voids any other, and ends every wager
    exactly once."""
    played = _played()
    completed = 0
    for _, writes in _crash_states(played.writes):
        ledger, journal = _fresh_stores()
        for player in PLAYERS:
            _grant(ledger, player, 10_000)
        for write in writes:
            perform_write(ledger, journal, SETTINGS.id, write)
        game = build_game(SETTINGS, seeded_source(99))  # recovery never draws
        for item in recover_open_rounds(journal, ledger, {SETTINGS.id: game}):
            rolls = [r for r in journal.records(item.round_id) if r.kind == "chance"]
            assert item.outcome == ("completed" if len(rolls) == 2 else "voided"), item
            completed += item.outcome == "completed"
        assert journal.open_rounds() == []
        assert ledger.balance(OPEN_WAGERS) == 0 and ledger.reconcile() == {}
        keys = [key.split(":", 1) for key in _keys(ledger)]
        ends = Counter(wager for kind, wager in keys if kind in ("settle", "void", "cancel"))
        assert all(ends[wager] == 1 for kind, wager in keys if kind == "bet"), ends
        ledger.close()
        journal.close()
    assert completed > 0
    played.close()


def test_a_table_that_closed_mid_round_is_recovered_at_its_next_start() -> None:
    """The journal fails as the second roll is written: the table closes as a crash would
    leave it; its next start recovers the round (one roll: voided, every stake returned) and
    plays on, drawing from its new source."""
    d = Driver(SETTINGS, seed=8)
    for player in PLAYERS:
        d.fund(player, 10_000)
        d.seat(player)
    round_id = d.core.round_id or ""
    for player, spot in zip(PLAYERS, ("player", "dealer"), strict=True):
        d.play(cmd.Place, player, round_id=round_id, bet_id="b", spot=spot, amount=500)
    d.faults.arm("record", skip=2)  # "closed" and the first roll go through
    d.run_until(d.now + SETTINGS.betting_seconds)
    assert d.core.finished and not d.core.available
    assert [r.kind for r in d.journal.records(round_id)][-1] == "chance"
    (recovered,) = d.restart()
    assert (recovered.round_id, recovered.outcome) == (round_id, "voided")
    for player in PLAYERS:
        assert d.ledger.balance(player_account(player)) == 10_000
    next_round = d.core.round_id or ""
    assert next_round == "hd.2"
    for player, spot in zip(PLAYERS, ("player", "dealer"), strict=True):
        d.play(cmd.Place, player, round_id=next_round, bet_id="b", spot=spot, amount=500)
    d.run_until(d.now + SETTINGS.betting_seconds)
    assert [r.kind for r in d.journal.records(next_round)][-1] == "settled"
    assert d.ledger.reconcile() == {}
    d.close()
