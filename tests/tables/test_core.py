"""The table core, driven with no event loop: the moments the random tests reach rarely."""

from __future__ import annotations

from server.config import load_config
from server.core import commands as cmd
from server.core import effects as fx
from server.journal.journal import RoundStatus
from server.wallet import OPEN_WAGERS
from tests.tables.core_driver import Driver

TABLES = {t.id: t for t in load_config(None).tables}


def _bet(d: Driver, player: str, spot: str, amount: int = 1_000) -> fx.Reply | None:
    seat = d.core.seats.seat_of[player]
    round_id = d.core.round_id or ""
    return d.play(
        cmd.Place, player, round_id=round_id, bet_id="b", spot=spot.format(seat=seat), amount=amount
    )


def test_a_stop_while_the_table_waits_for_a_decision_voids_the_round() -> None:
    d = Driver(TABLES["down-under"], seed=5)
    d.fund("ann", 10_000)
    d.seat("ann")
    for _ in range(40):  # rounds until one asks ann for a decision
        reply = _bet(d, "ann", "bet:{seat}")
        assert reply is not None and reply.refusal is None
        d.run_until(d.now + d.settings.betting_seconds)
        if d.core.decisions:
            break
        d.run_until(d.now + 60)
    assert d.core.decisions, "no round asked for a decision"
    round_id = d.core.round_id
    d.send(cmd.Stop())
    assert d.core.finished and d.deadline is None
    assert d.journal.status(round_id) is RoundStatus.VOIDED
    assert d.ledger.balance(OPEN_WAGERS) == 0 and d.ledger.reconcile() == {}
    assert d.ledger.balance("player:ann") == 10_000 - sum(
        e.data["settlement"]["wager"]["amount"] - e.data["settlement"]["returned"]
        for e in d.emits
        if e.name == "wager_settled" and e.round_id != round_id
    )
    d.close()


def test_seat_commands_never_run_the_table() -> None:
    """A seat change may come while the adapter performs other effects: it must not advance
    the table even when the betting window has passed (only a tick does)."""
    d = Driver(TABLES["roulette-double"], seed=5)
    d.fund("ann", 10_000)
    d.seat("ann")
    round_id = d.core.round_id
    d.now += 60  # the window is long over, but nobody ticked yet
    assert d.core.handle(cmd.Drop("ann", "player"), d.now) == []
    assert d.core.handle(cmd.Join("ann", "player"), d.now) == []
    assert d.core.round_id == round_id and d.core.phase == "betting"
    d.send(cmd.Tick())
    assert d.core.round_id != round_id or d.core.phase != "betting"
    d.close()


def test_a_bet_waits_for_both_its_debit_and_its_record() -> None:
    """The core asks for the bet's journal record and its debit in one ``Wait`` and replies
    only after both answers."""
    d = Driver(TABLES["big-six"], seed=5)
    d.fund("ann", 10_000)
    d.seat("ann")
    effects = d.core.handle(cmd.Place("ann", d.core.round_id or "", "b1", "one", 500, cid=1), d.now)
    assert not [e for e in effects if isinstance(e, fx.Reply)]
    wait = effects[-1]
    assert isinstance(wait, fx.Wait)
    assert {type(e) for e in wait.effects} == {fx.AppendRecord, fx.Post}
    # Only the debit is answered as done, the record failed: no acknowledgement.
    results = tuple(
        fx.Failed("disk on fire") if isinstance(e, fx.AppendRecord) else None for e in wait.effects
    )
    replies = [e for e in d.core.handle(cmd.Done(results), d.now) if isinstance(e, fx.Reply)]
    assert (
        replies and replies[0].refusal is not None and replies[0].refusal.code == "storage_failed"
    )
    assert not d.core.available
    d.close()


def test_bets_in_flight_stand_after_the_window_closes_and_no_card_comes_before_them() -> None:
    """Three players' bets are all being written at once; the window closes meanwhile. The
    round waits: no "no more bets", no card, until every bet has its answer — then the bets
    (answered last first) stand, are announced, and the round plays them."""
    d = Driver(TABLES["baccarat"], seed=5)
    players = ("ann", "bob", "cy")
    for player in players:
        d.fund(player, 10_000)
        d.seat(player)
    round_id = d.core.round_id or ""
    d.holding = True
    cids = [
        d.submit(cmd.Place, p, round_id=round_id, bet_id="b", spot="banker", amount=500)
        for p in players
    ]
    assert len(d.held) == 3 and not d.replies  # all three written, none answered yet
    d.run_until(d.now + 60)  # the window passes
    assert d.core.phase == "betting" and d.deadline is None  # the answers move it on, not time
    assert [r.kind for r in d.journal.records(round_id)] == ["opened", "bet", "bet", "bet"]
    for wid in sorted(d.held, reverse=True):
        d.complete(wid)
    assert [d.replies[cid].refusal for cid in cids] == [None, None, None]
    names = [e.name for e in d.emits if e.round_id == round_id]
    assert names.count("bet_accepted") == 3
    assert names.index("card_dealt") > max(i for i, n in enumerate(names) if n == "bet_accepted")
    kinds = [r.kind for r in d.journal.records(round_id)]
    assert kinds[:5] == ["opened", "bet", "bet", "bet", "closed"]
    d.run_until(d.now + 60)
    assert d.journal.status(round_id) is RoundStatus.SETTLED
    assert d.ledger.balance(OPEN_WAGERS) == 0 and d.ledger.reconcile() == {}
    assert len([e for e in d.emits if e.name == "wager_settled" and e.round_id == round_id]) == 3
    d.close()


def test_a_players_commands_run_in_the_order_sent_and_others_meanwhile() -> None:
    """A player's second bet waits for the first's answer (replies keep the order sent);
    another player's bet does not."""
    d = Driver(TABLES["roulette-double"], seed=5)
    for player in ("ann", "bob"):
        d.fund(player, 10_000)
        d.seat(player)
    round_id = d.core.round_id or ""
    d.holding = True
    first = d.submit(cmd.Place, "ann", round_id=round_id, bet_id="b1", spot="red", amount=100)
    second = d.submit(cmd.Cancel, "ann", round_id=round_id, bet_id="b1")
    other = d.submit(cmd.Place, "bob", round_id=round_id, bet_id="b1", spot="odd", amount=100)
    assert len(d.held) == 2  # ann's first bet and bob's; ann's cancel waits its turn
    (ann_wid, bob_wid) = sorted(d.held)
    d.complete(bob_wid)
    assert list(d.replies) == [other]
    d.complete(ann_wid)
    while d.held:
        d.complete(min(d.held))
    assert d.answered[-3:] == [other, first, second]
    assert d.replies[second].refusal is None  # the cancel found the bet its player placed
    d.close()
