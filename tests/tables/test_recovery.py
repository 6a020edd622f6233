"""Recovery after a crash: every open round is completed (outcome journaled) or voided with
every wager returned; the ledger reconciles exactly; nothing is paid twice."""

from __future__ import annotations

import asyncio

from server.core import commands as cmd
from server.core.money import post_bet
from server.core.replay import replay_round
from server.core.views import event_name, public_data
from server.games.wagers import Wager
from server.journal import RoundStatus
from server.tables.recovery import recover_open_rounds
from tests.tables.harness import Harness, RecordingViewer


def _crash(h: Harness) -> None:
    """Kill the table task where it stands: no void, no clean-up (as a killed process)."""
    assert h.task is not None
    h.task.cancel()


def test_a_round_interrupted_during_betting_is_voided_and_its_wagers_returned() -> None:
    async def scenario() -> None:
        h = Harness("roulette")
        h.fund("alice")
        h.fund("bob")
        await h.start()
        r = h.table.round_id
        assert r is not None
        await h.table.submit(cmd.Place("alice", round_id=r, bet_id="a1", spot="red", amount=700))
        await h.table.submit(cmd.Place("bob", round_id=r, bet_id="a1", spot="black", amount=300))
        await h.table.submit(cmd.Cancel("bob", round_id=r, bet_id="a1"))
        await h.table.submit(cmd.Place("bob", round_id=r, bet_id="b2", spot="odd", amount=400))
        # A debit that reached the ledger an instant before the crash, never journaled:
        post_bet(h.ledger, r, Wager("lost", "alice", "even", 200))
        _crash(h)
        announced = []
        recovered = recover_open_rounds(h.journal, h.ledger, {"t1": h.table.game}, announced.append)
        assert [(x.round_id, x.outcome) for x in recovered] == [(r, "voided")]
        assert announced[0].players == ("alice", "bob")
        assert h.balance("alice") == 10_000 and h.balance("bob") == 10_000
        assert h.ledger.balance("wagers:open") == 0
        assert h.ledger.total() == 0 and h.ledger.reconcile() == {}
        assert h.journal.status(r) is RoundStatus.VOIDED and h.journal.open_rounds() == []
        # Recovering again changes nothing.
        assert recover_open_rounds(h.journal, h.ledger, {"t1": h.table.game}) == []
        assert h.balance("alice") == 10_000

    asyncio.run(scenario())


def test_a_round_whose_outcome_was_journaled_is_completed_not_voided() -> None:
    async def scenario() -> None:
        h = Harness("big_six")
        h.fund("alice")
        await h.start()
        r = h.table.round_id
        assert r is not None
        await h.table.submit(cmd.Place("alice", round_id=r, bet_id="b1", spot="one", amount=1_000))
        _crash(h)
        # Finish the round's journal by hand as the crashed process had: closed, spun — but
        # the settlement never reached the ledger.
        h.journal.append(r, "closed", {})
        h.journal.append(r, "spin", {"result": 1, "symbol": "$1", "bound": 54, "value": 1})
        recovered = recover_open_rounds(h.journal, h.ledger, {"t1": h.table.game})
        assert [(x.round_id, x.outcome) for x in recovered] == [(r, "completed")]
        assert h.balance("alice") == 11_000  # section 1 is a $1: 1 to 1 on 1,000
        assert h.ledger.total() == 0 and h.ledger.reconcile() == {}
        assert h.journal.status(r) is RoundStatus.SETTLED

    asyncio.run(scenario())


def test_replay_reproduces_the_events_of_a_played_round() -> None:
    """Journal replay gives back exactly what the live round sent (58 Pa. Code 810a.11)."""

    async def scenario() -> None:
        h = Harness("roulette", wheel="double_zero_as_single")
        h.fund("alice")
        alice = RecordingViewer("alice")
        h.table.add_viewer(alice, "player")
        await h.start()
        r = h.table.round_id
        assert r is not None
        await h.table.submit(
            cmd.Place("alice", round_id=r, bet_id="b1", spot="straight:17", amount=100)
        )
        await h.table.submit(
            cmd.Place("alice", round_id=r, bet_id="b2", spot="dozen:2", amount=300)
        )
        await h.clock.advance(10)
        live = [(m.event, m.data) for m in alice.events() if m.round == r]
        replayed = replay_round(h.table.game, r, h.journal.records(r))
        assert replayed.finished == "settled"
        again = [(event_name(e), public_data(e)) for e in replayed.events]
        assert again == live
        assert again[0][0] == "betting_opened" and again[-1][0] == "round_settled"
        await h.stop()

    asyncio.run(scenario())
