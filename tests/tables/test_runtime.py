"""The table runtime: rounds on an injected clock, money through the ledger, the journal
written before anything is revealed, and per-viewer views."""

from __future__ import annotations

import asyncio
import threading
import time

from server.core import commands as cmd
from server.core.commands import Tick
from server.journal import RoundStatus
from tests.tables.harness import Harness, RecordingViewer
from tests.threads import threads_calling


def run(coro: object) -> None:
    asyncio.run(coro)  # type: ignore[arg-type]


def test_a_roulette_round_from_bet_to_settlement() -> None:
    async def scenario() -> None:
        h = Harness("roulette", wheel="single_zero")
        h.fund("alice")
        alice, bob = RecordingViewer("alice"), RecordingViewer("bob")
        h.table.add_viewer(alice, "player")
        h.table.add_viewer(bob, "spectator")
        await h.start()
        round_id = h.table.round_id
        assert h.table.phase == "betting" and round_id == "t1.1"
        reply = await h.table.submit(
            cmd.Place("alice", round_id=round_id, bet_id="b1", spot="red", amount=500)
        )
        assert reply.refusal is None and reply.data["balance"] == 9_500
        again = await h.table.submit(
            cmd.Place("alice", round_id=round_id, bet_id="b1", spot="red", amount=500)
        )
        assert (
            again.data["retried"] and h.balance("alice") == 9_500
        )  # a retry is never charged twice
        await h.clock.advance(10)  # betting window over: no more bets, spin, settle
        assert h.journal.status(round_id) is RoundStatus.SETTLED
        settled = [e for e in alice.events("wager_settled")]
        assert len(settled) == 1
        returned = settled[0].data["settlement"]["returned"]
        assert returned in (0, 1_000)
        assert h.balance("alice") == 9_500 + returned
        assert h.ledger.total() == 0 and h.ledger.reconcile() == {}
        # Bob sees the ball land but nothing of Alice's bet.
        assert bob.events("ball_landed") and not bob.events("bet_accepted")
        assert not bob.events("wager_settled")
        kinds = [r.kind for r in h.journal.records(round_id)]
        assert kinds == ["opened", "bet", "closed", "spin", "settled"]
        seqs = [e.seq for e in alice.events()]
        assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
        await h.stop()

    run(scenario())


def test_a_rounds_settlements_are_one_write_of_the_ledger() -> None:
    """Every wager of a round settles in one ledger write (``Ledger.apost_many``), not one
    each: on PostgreSQL a bet's debit would otherwise queue behind a busy table's round."""

    async def scenario() -> None:
        h = Harness("roulette", wheel="single_zero")
        h.fund("alice")
        h.fund("bob")
        await h.start()
        r = h.table.round_id
        bets = [("alice", "b1", "red"), ("alice", "b2", "black"), ("bob", "b1", "odd")]
        for player, bet_id, spot in bets:
            reply = await h.table.submit(
                cmd.Place(player, round_id=r, bet_id=bet_id, spot=spot, amount=500)
            )
            assert reply.refusal is None
        writer = h.ledger._writer
        before = writer.writes
        await h.clock.advance(10)  # no more bets, spin, settle
        assert h.journal.status(r) is RoundStatus.SETTLED
        assert writer.writes - before == 1
        settled = {key for key, _ in h.ledger.round_transfers(r) if key.startswith("settle:")}
        assert len(settled) == 3  # each wager its own batch, under its own key
        assert h.ledger.balance("wagers:open") == 0
        assert h.ledger.total() == 0 and h.ledger.reconcile() == {}
        await h.stop()

    run(scenario())


def test_bets_are_refused_with_clear_codes() -> None:
    async def scenario() -> None:
        h = Harness("roulette", wheel="double_zero")
        h.fund("alice", 1_000)
        await h.start()
        r = h.table.round_id
        cases = [
            (dict(round_id="t1.99", bet_id="x", spot="red", amount=500), "round_not_open"),
            (dict(round_id=r, bet_id="x", spot="split:1-5", amount=500), "illegal_placement"),
            (dict(round_id=r, bet_id="x", spot="red", amount=50), "below_minimum"),
            (dict(round_id=r, bet_id="x", spot="red", amount=200_000), "above_maximum"),
            (dict(round_id=r, bet_id="x", spot="red", amount=5_000), "insufficient_funds"),
        ]
        for args, code in cases:
            reply = await h.table.submit(cmd.Place("alice", **args))
            assert reply.refusal is not None and reply.refusal.code == code, (args, reply)
        assert h.balance("alice") == 1_000
        ok = await h.table.submit(
            cmd.Place("alice", round_id=r, bet_id="b1", spot="black", amount=500)
        )
        assert ok.refusal is None
        other = await h.table.submit(
            cmd.Place("alice", round_id=r, bet_id="b1", spot="red", amount=500)
        )
        assert other.refusal is not None and other.refusal.code == "duplicate_bet_id"
        cancel = await h.table.submit(cmd.Cancel("alice", round_id=r, bet_id="b1"))
        assert cancel.refusal is None and h.balance("alice") == 1_000
        reuse = await h.table.submit(
            cmd.Place("alice", round_id=r, bet_id="b1", spot="black", amount=500)
        )
        assert reuse.refusal is not None and reuse.refusal.code == "duplicate_bet_id"
        await h.clock.advance(10)
        late = await h.table.submit(
            cmd.Place("alice", round_id=r, bet_id="b2", spot="red", amount=500)
        )
        assert late.refusal is not None and late.refusal.code in ("betting_closed", "not_in_phase")
        assert h.ledger.total() == 0 and h.ledger.reconcile() == {}
        await h.stop()

    run(scenario())


def test_rounds_follow_each_other_and_repeat_bets() -> None:
    async def scenario() -> None:
        h = Harness("big_six")
        h.fund("alice")
        await h.start()
        first = h.table.round_id
        await h.table.submit(cmd.Place("alice", round_id=first, bet_id="a", spot="one", amount=100))
        await h.table.submit(
            cmd.Place("alice", round_id=first, bet_id="b", spot="joker", amount=200)
        )
        await h.clock.advance(10)
        await h.clock.advance(2)  # the pause between rounds
        second = h.table.round_id
        assert second == "t1.2" and h.table.phase == "betting"
        reply = await h.table.submit(cmd.Repeat("alice", round_id=second, prefix="rep"))
        assert reply.refusal is None and [b["spot"] for b in reply.data["bets"]] == ["one", "joker"]
        await h.clock.advance(10)
        assert h.journal.status(second) is RoundStatus.SETTLED
        assert h.ledger.total() == 0 and h.ledger.balance("wagers:open") == 0
        await h.stop()

    run(scenario())


def test_stopping_a_table_voids_the_open_round_and_returns_every_wager() -> None:
    async def scenario() -> None:
        h = Harness("roulette")
        h.fund("alice")
        await h.start()
        r = h.table.round_id
        await h.table.submit(cmd.Place("alice", round_id=r, bet_id="b1", spot="red", amount=700))
        assert h.balance("alice") == 9_300
        await h.stop()
        assert h.journal.status(r) is RoundStatus.VOIDED
        assert h.balance("alice") == 10_000 and h.ledger.balance("wagers:open") == 0

    run(scenario())


def test_a_table_task_cancelled_at_any_moment_of_its_wait_ends() -> None:
    """A cluster node abandons a table whose lease it lost by cancelling its task and
    waiting for it: the cancellation must end the task wherever it lands — also while the
    table is tidying up the waits it no longer needs (a deadline came first), which once
    swallowed it: the table played on and the node waited forever."""

    async def scenario() -> None:
        h = Harness("roulette")
        await h.start()
        h.table._deadline = h.clock.now()  # the deadline has come: the sleep ends at once
        for turns in range(8):  # each moment of _next, turn by turn
            task = asyncio.ensure_future(h.table._next())
            for _ in range(turns):
                await asyncio.sleep(0)
            requested = task.cancel()  # False once it has returned (a Tick)
            await asyncio.wait([task])
            assert task.cancelled() if requested else isinstance(task.result(), Tick), turns
        await h.stop()

    run(scenario())


def test_a_command_for_a_table_whose_task_was_cancelled_is_answered_at_once() -> None:
    """A cluster node abandons a table by cancelling its task mid-round: its core is neither
    finished nor closed, and a bet submitted afterwards (a connection still holding the
    table's door) was queued for a task that no longer reads its inbox — its player's
    connection waited for ever. It is refused at once (``table_unavailable``), and the door
    sees the table as finished."""

    async def scenario() -> None:
        h = Harness("roulette")
        h.fund("alice")
        await h.start()
        r = h.table.round_id
        assert h.task is not None and r is not None
        h.task.cancel()
        await asyncio.wait([h.task])
        assert not h.table.core.finished and h.table.finished
        reply = await asyncio.wait_for(
            h.table.submit(cmd.Place("alice", r, "b1", "red", 500)), timeout=5
        )
        assert reply.refusal is not None and reply.refusal.code == "table_unavailable"
        assert h.balance("alice") == 10_000

    run(scenario())


def test_a_burst_of_bets_is_written_together_and_acknowledged_once_durable(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Forty players bet in the same instant. The table takes every bet while the earlier
    ones are being written: with the ledger's writer held up, all forty debits queue behind
    it (one table step per write would queue one), no bet is acknowledged before its debit
    is durable, and once the writer goes on the forty are one group commit. The journal holds
    the bets in the order the table took them."""

    async def scenario() -> None:
        h = Harness("roulette", data_dir=tmp_path, seats=40, wheel="single_zero")
        players = [f"p{n}" for n in range(40)]
        for player in players:
            h.fund(player)
        await h.start()
        r = h.table.round_id
        writer = h.ledger._writer
        started, release = threading.Event(), threading.Event()
        blocker = writer.submit(lambda db: started.set() or release.wait(30))
        assert started.wait(10)  # the writer is busy: the debits queue behind it
        groups = writer.groups
        bets = [
            asyncio.ensure_future(
                h.table.submit(cmd.Place(p, round_id=r, bet_id="b", spot="red", amount=100))
            )
            for p in players
        ]
        give_up = time.monotonic() + 30
        while writer._queue.qsize() < len(players) and time.monotonic() < give_up:
            await asyncio.sleep(0.001)
        assert writer._queue.qsize() == len(players), "the table waited for each write"
        assert not any(b.done() for b in bets), "a bet was acknowledged before it was durable"
        release.set()
        replies = await asyncio.gather(*bets)
        assert blocker.result() is True
        assert all(reply.refusal is None for reply in replies)
        assert writer.groups - groups == 2  # the held-up write, then the forty together
        assert [r.payload["player"] for r in h.journal.records(r) if r.kind == "bet"] == players
        await h.clock.advance(10)
        assert h.journal.status(r) is RoundStatus.SETTLED
        assert h.ledger.total() == 0 and h.ledger.reconcile() == {}
        await h.stop()

    run(scenario())


def test_a_losing_players_balance_frame_is_read_off_the_event_loop_in_its_place() -> None:
    """A settlement's balance frame for a player it posted nothing to (a lost wager) needs
    the balance read from the ledger: a round trip with a shared database, so it is read
    on a worker thread, never on the event loop; each frame still follows its player's
    ``wager_settled`` and carries the balance after the round."""
    from server.protocol.messages import BalanceChanged

    async def scenario() -> None:
        h = Harness("roulette", wheel="single_zero")
        viewers = {}
        for player in ("alice", "bob"):
            h.fund(player)
            viewers[player] = RecordingViewer(player)
            h.table.add_viewer(viewers[player], "player")
        await h.start()
        r = h.table.round_id
        for player, spot in (("alice", "red"), ("bob", "black")):  # one loses (both on 0)
            reply = await h.table.submit(
                cmd.Place(player, round_id=r, bet_id="b1", spot=spot, amount=500)
            )
            assert reply.refusal is None
        read_on = threads_calling(h.ledger, "balance")
        await h.clock.advance(10)  # no more bets, spin, settle
        assert h.journal.status(r) is RoundStatus.SETTLED
        # a loser's balance, read elsewhere
        assert read_on and threading.current_thread() not in read_on
        for player, viewer in viewers.items():
            kinds = [
                "balance" if isinstance(m, BalanceChanged) else getattr(m, "event", None)
                for m in viewer.messages
            ]
            assert kinds[kinds.index("wager_settled") + 1] == "balance"
            (frame,) = [m for m in viewer.messages if isinstance(m, BalanceChanged)]
            assert frame.balance == h.balance(player) and frame.reason == "settlement"
        await h.stop()

    run(scenario())
