"""When the ledger or the journal cannot be written: the bet that needed the write is refused
with a clear error and no money moves; a failure after the table changed closes the table as
a crash would, and recovery completes the round. Faults are real SQLite errors, raised by a
trigger that another connection (an operator's tool, say) put into the file."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from pathlib import Path

import pytest

from server.core import commands as cmd
from server.core.replay import replay_round
from server.games.events import WagerSettled
from server.journal import RoundStatus
from server.tables.recovery import recover_open_rounds
from server.wallet import OPEN_WAGERS, PLAY_MONEY_ISSUER, Transfer
from server.wallet.ledger import player_account
from tests.tables.harness import Harness, RecordingViewer


def run(coro: object) -> None:
    asyncio.run(coro)  # type: ignore[arg-type]


def _fail(db_file: Path, name: str, table: str, when: str) -> None:
    with sqlite3.connect(db_file) as db:
        db.execute(
            f"CREATE TRIGGER {name} BEFORE INSERT ON {table} WHEN {when} "
            "BEGIN SELECT RAISE(ABORT, 'disk on fire'); END"
        )


def _heal(db_file: Path, name: str) -> None:
    with sqlite3.connect(db_file) as db:
        db.execute(f"DROP TRIGGER {name}")


def test_a_bet_whose_debit_cannot_be_written_is_refused_and_costs_nothing(
    tmp_path: Path,
) -> None:
    async def scenario() -> None:
        h = Harness("roulette", data_dir=tmp_path, wheel="single_zero")
        h.fund("alice")
        alice, bob = RecordingViewer("alice"), RecordingViewer("bob")
        h.table.add_viewer(alice, "player")
        h.table.add_viewer(bob, "spectator")
        await h.start()
        r = h.table.round_id
        _fail(tmp_path / "ledger.sqlite", "no_wagers", "transfers", "NEW.kind = 'wager'")
        reply = await h.table.submit(
            cmd.Place("alice", round_id=r, bet_id="b1", spot="red", amount=500)
        )
        assert reply.refusal is not None and reply.refusal.code == "storage_failed"
        assert (
            "nothing was charged" in reply.refusal.message
            and "disk on fire" in reply.refusal.message
        )
        assert h.balance("alice") == 10_000 and h.ledger.balance(OPEN_WAGERS) == 0
        assert not bob.events("bet_accepted") and not alice.events("bet_accepted")
        _heal(tmp_path / "ledger.sqlite", "no_wagers")
        # The table goes on, and the same bet id may be used again: nothing was recorded.
        ok = await h.table.submit(
            cmd.Place("alice", round_id=r, bet_id="b1", spot="red", amount=500)
        )
        assert ok.refusal is None and ok.data["balance"] == 9_500
        await h.clock.advance(10)
        assert h.journal.status(r) is RoundStatus.SETTLED
        assert h.ledger.balance(OPEN_WAGERS) == 0
        assert h.ledger.total() == 0 and h.ledger.reconcile() == {}
        await h.stop()
        h.ledger.close()
        h.journal.close()

    run(scenario())


def test_a_bet_whose_journal_record_cannot_be_written_is_not_acknowledged(
    tmp_path: Path,
) -> None:
    """A bet is acknowledged once its debit *and* its journal record are durable (issue
    #14: every acknowledged bet is in its round's journal). If the record cannot be written
    the bet is refused with ``storage_failed``, the table closes before any card, and
    recovery voids the round: the debit comes back, nothing is lost or paid twice."""

    async def scenario() -> None:
        h = Harness("roulette", data_dir=tmp_path, wheel="single_zero")
        h.fund("alice")
        viewer = RecordingViewer("alice")
        h.table.add_viewer(viewer, "player")
        await h.start()
        r = h.table.round_id
        assert r is not None
        _fail(tmp_path / "journal.sqlite", "no_bets", "records", "NEW.kind = 'bet'")
        reply = await h.table.submit(
            cmd.Place("alice", round_id=r, bet_id="b1", spot="red", amount=500)
        )
        assert reply.refusal is not None and reply.refusal.code == "storage_failed"
        assert "closed" in reply.refusal.message
        assert not viewer.events("bet_accepted")  # never announced either
        refused = await h.table.submit(
            cmd.Place("alice", round_id=r, bet_id="b2", spot="black", amount=500)
        )
        assert refused.refusal is not None and refused.refusal.code == "table_unavailable"
        await h.clock.advance(10)
        assert not h.table.available and h.table.phase == "closed"
        assert h.journal.status(r) is RoundStatus.OPEN
        assert not [rec for rec in h.journal.records(r) if rec.kind in ("closed", "spin")]
        # The debit was durable before the record failed: held until recovery returns it.
        assert h.balance("alice") == 9_500 and h.ledger.balance(OPEN_WAGERS) == 500
        await h.stop()
        _heal(tmp_path / "journal.sqlite", "no_bets")
        done = recover_open_rounds(h.journal, h.ledger, {"t1": h.table.game})
        assert [(d.round_id, d.outcome, d.players) for d in done] == [(r, "voided", ("alice",))]
        assert h.balance("alice") == 10_000 and h.ledger.balance(OPEN_WAGERS) == 0
        assert h.ledger.total() == 0 and h.ledger.reconcile() == {}
        h.ledger.close()
        h.journal.close()

    run(scenario())


def test_a_refused_debit_is_journaled_as_never_standing(tmp_path: Path) -> None:
    """The bet's record is written beside its debit; when the ledger refuses the debit the
    journal says so (``bet_refused``), and replay, recall and recovery skip that bet — the
    same bet id may be placed again once the money is there."""

    async def scenario() -> None:
        h = Harness("roulette", data_dir=tmp_path, wheel="single_zero")
        h.fund("alice", 300)
        await h.start()
        r = h.table.round_id
        assert r is not None
        poor = await h.table.submit(
            cmd.Place("alice", round_id=r, bet_id="b1", spot="red", amount=500)
        )
        assert poor.refusal is not None and poor.refusal.code == "insufficient_funds"
        h.ledger.post(
            "top-up:alice", [Transfer(PLAY_MONEY_ISSUER, player_account("alice"), 1_000, "grant")]
        )
        ok = await h.table.submit(
            cmd.Place("alice", round_id=r, bet_id="b1", spot="red", amount=500)
        )
        assert ok.refusal is None
        await h.clock.advance(10)
        assert h.journal.status(r) is RoundStatus.SETTLED
        kinds = [(rec.kind, rec.payload.get("bet_id")) for rec in h.journal.records(r)]
        assert kinds[:4] == [("opened", None), ("bet", "b1"), ("bet_refused", "b1"), ("bet", "b1")]
        replayed = replay_round(h.table.game, r, h.journal.records(r))
        settled = [e for e in replayed.events if isinstance(e, WagerSettled)]
        assert [(e.settlement.wager.bet_id, e.settlement.wager.amount) for e in settled] == [
            ("b1", 500)
        ]
        assert h.ledger.total() == 0 and h.ledger.reconcile() == {}
        await h.stop()
        h.ledger.close()
        h.journal.close()

    run(scenario())


def test_a_settlement_that_cannot_be_written_closes_the_table_for_recovery(
    tmp_path: Path,
) -> None:
    async def scenario() -> None:
        h = Harness("roulette", data_dir=tmp_path, wheel="single_zero")
        h.fund("alice")
        h.fund("bob")
        await h.start()
        r = h.table.round_id
        assert r is not None
        for player, spot in (("alice", "red"), ("bob", "black")):
            reply = await h.table.submit(
                cmd.Place(player, round_id=r, bet_id="b1", spot=spot, amount=500)
            )
            assert reply.refusal is None
        _fail(tmp_path / "ledger.sqlite", "no_settling", "transfers", "NEW.kind != 'wager'")
        await h.clock.advance(10)  # no more bets, spin, settle: the settlement fails
        assert not h.table.available and h.table.phase == "closed"
        assert h.journal.status(r) is RoundStatus.OPEN  # left for recovery, as after a crash
        refused = await h.table.submit(
            cmd.Place("alice", round_id=r, bet_id="b2", spot="red", amount=500)
        )
        assert refused.refusal is not None and refused.refusal.code == "table_unavailable"
        await h.stop()
        _heal(tmp_path / "ledger.sqlite", "no_settling")
        done = recover_open_rounds(h.journal, h.ledger, {"t1": h.table.game})
        assert [(d.round_id, d.outcome) for d in done] == [(r, "completed")]
        assert h.journal.status(r) is RoundStatus.SETTLED
        assert h.ledger.balance(OPEN_WAGERS) == 0
        assert h.ledger.total() == 0 and h.ledger.reconcile() == {}
        # One of red and black won (or the zero took both): never paid twice, never lost.
        assert h.balance("alice") + h.balance("bob") in (20_000, 19_000)
        h.ledger.close()
        h.journal.close()

    run(scenario())


def test_a_table_that_fails_for_any_other_reason_says_so_and_stops(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Its round finished under it (as a second server's recovery did before the data
    directory was locked, issue #14): the table must not die silently while still counted as
    running — it logs the failure, closes, and leaves the round to recovery."""

    async def scenario() -> None:
        h = Harness("roulette", data_dir=tmp_path, wheel="single_zero")
        await h.start()
        r = h.table.round_id
        with sqlite3.connect(tmp_path / "journal.sqlite") as db:
            db.execute("UPDATE rounds SET status = 'voided' WHERE round_id = ?", (r,))
        await h.clock.advance(10)  # "no more bets" cannot be journaled
        assert not h.table.available and h.table.phase == "closed"
        assert h.task is not None and h.task.done() and h.task.exception() is None
        await h.stop()
        h.ledger.close()
        h.journal.close()

    with caplog.at_level(logging.CRITICAL, logger="croupier.table"):
        run(scenario())
    assert any("table t1 failed" in m for m in caplog.messages)


def test_no_bet_is_acknowledged_before_its_journal_record_is_durable(tmp_path: Path) -> None:
    """Issue #14: after kill -9, acknowledged bets were missing from their round's journal
    (acked once the debit was durable, the record still queued). Here the journal's writer
    is held up by another process's write lock: the debit goes through, but the bet is not
    acknowledged until its record is on disk too."""

    async def scenario() -> None:
        h = Harness("roulette", data_dir=tmp_path, wheel="single_zero")
        h.fund("alice")
        await h.start()
        r = h.table.round_id
        assert r is not None
        blocker = sqlite3.connect(tmp_path / "journal.sqlite", isolation_level=None)
        blocker.execute("BEGIN IMMEDIATE")  # an operator's tool holding the write lock
        placing = asyncio.create_task(
            h.table.submit(cmd.Place("alice", round_id=r, bet_id="b1", spot="red", amount=500))
        )
        with sqlite3.connect(tmp_path / "ledger.sqlite") as ledger_db:
            for _ in range(500):  # until the debit is durable (real time: another thread)
                if ledger_db.execute("SELECT 1 FROM batches WHERE key LIKE 'bet:%'").fetchone():
                    break
                await asyncio.sleep(0.01)
            else:
                raise AssertionError("the debit was never written")
        await asyncio.sleep(0.1)  # ample time for an ack that needed only the debit
        assert not placing.done(), "acknowledged before its journal record was durable"
        assert not [rec for rec in h.journal.records(r) if rec.kind == "bet"]
        blocker.execute("COMMIT")
        blocker.close()
        reply = await asyncio.wait_for(placing, 15)
        assert reply.refusal is None
        assert [rec.payload["bet_id"] for rec in h.journal.records(r) if rec.kind == "bet"] == [
            "b1"
        ]
        await h.stop()
        h.ledger.close()
        h.journal.close()

    run(scenario())
