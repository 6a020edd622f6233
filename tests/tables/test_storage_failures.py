"""When the ledger or the journal cannot be written: the bet that needed the write is refused
with a clear error and no money moves; a failure after the table changed closes the table as
a crash would, and recovery completes the round. Faults are real SQLite errors, raised by a
trigger that another connection (an operator's tool, say) put into the file."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from server.journal import RoundStatus
from server.tables.recovery import recover_open_rounds
from server.wallet import OPEN_WAGERS
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
            "place", "alice", round_id=r, bet_id="b1", spot="red", amount=500
        )
        assert reply.error is not None and reply.error[0] == "storage_failed"
        assert "nothing was charged" in reply.error[1] and "disk on fire" in reply.error[1]
        assert h.balance("alice") == 10_000 and h.ledger.balance(OPEN_WAGERS) == 0
        assert not bob.events("bet_accepted") and not alice.events("bet_accepted")
        _heal(tmp_path / "ledger.sqlite", "no_wagers")
        # The table goes on, and the same bet id may be used again: nothing was recorded.
        ok = await h.table.submit("place", "alice", round_id=r, bet_id="b1", spot="red", amount=500)
        assert ok.error is None and ok.data["balance"] == 9_500
        await h.clock.advance(10)
        assert h.journal.status(r) is RoundStatus.SETTLED
        assert h.ledger.balance(OPEN_WAGERS) == 0
        assert h.ledger.total() == 0 and h.ledger.reconcile() == {}
        await h.stop()
        h.ledger.close()
        h.journal.close()

    run(scenario())


def test_a_bet_whose_journal_record_cannot_be_written_voids_its_round_before_any_card(
    tmp_path: Path,
) -> None:
    """The debit makes a bet stand, so it is acknowledged while its journal record is still
    on its way to disk; no card is journaled (no outcome recorded) before every bet record is
    durable. If one cannot be written the table closes at "no more bets" and recovery voids
    the round: every debited wager comes back, none is lost or paid twice."""

    async def scenario() -> None:
        h = Harness("roulette", data_dir=tmp_path, wheel="single_zero")
        h.fund("alice")
        await h.start()
        r = h.table.round_id
        assert r is not None
        _fail(tmp_path / "journal.sqlite", "no_bets", "records", "NEW.kind = 'bet'")
        reply = await h.table.submit(
            "place", "alice", round_id=r, bet_id="b1", spot="red", amount=500
        )
        assert reply.error is None and reply.data["balance"] == 9_500
        await h.clock.advance(0)  # the record's write has failed by now
        # No further bet is taken into a round that can only be voided: the table closes.
        refused = await h.table.submit(
            "place", "alice", round_id=r, bet_id="b2", spot="black", amount=500
        )
        assert refused.error is not None and refused.error[0] == "storage_failed"
        assert h.balance("alice") == 9_500  # b2 was not debited
        await h.clock.advance(10)
        assert not h.table.available and h.table.phase == "closed"
        assert h.journal.status(r) is RoundStatus.OPEN
        assert not [rec for rec in h.journal.records(r) if rec.kind in ("closed", "spin")]
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
                "place", player, round_id=r, bet_id="b1", spot=spot, amount=500
            )
            assert reply.error is None
        _fail(tmp_path / "ledger.sqlite", "no_settling", "transfers", "NEW.kind != 'wager'")
        await h.clock.advance(10)  # no more bets, spin, settle: the settlement fails
        assert not h.table.available and h.table.phase == "closed"
        assert h.journal.status(r) is RoundStatus.OPEN  # left for recovery, as after a crash
        refused = await h.table.submit(
            "place", "alice", round_id=r, bet_id="b2", spot="red", amount=500
        )
        assert refused.error is not None and refused.error[0] == "table_unavailable"
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
