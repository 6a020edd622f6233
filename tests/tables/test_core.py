"""The table core, driven with no event loop: the moments the random tests reach rarely."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from server.config import load_config
from server.core import commands as cmd
from server.core import effects as fx
from server.games.errors import MAIN_WAGER_REQUIRED
from server.journal import SqliteJournal
from server.journal.journal import RoundStatus
from server.wallet import OPEN_WAGERS, SqliteLedger
from server.wallet.ledger import OperatorRefused
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
    """A player's cancel waits for the answer of the bet before it (replies keep the order
    sent); another player's bet does not."""
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


def _bets_held(d: Driver, player: str, bets: list[tuple[str, str, int]]) -> list[int]:
    """``player``'s bets (bet id, spot, amount) sent at once, their answers held: the cids."""
    round_id = d.core.round_id or ""
    d.holding = True
    return [
        d.submit(cmd.Place, player, round_id=round_id, bet_id=b, spot=spot, amount=amount)
        for b, spot, amount in bets
    ]


def _answer_all(d: Driver) -> None:
    """Hand the core every held answer, last first (a refused bet's own record included)."""
    while d.held:
        d.complete(max(d.held))


def _finish_round(d: Driver, round_id: str) -> None:
    """Play ``round_id`` to its end and stop at the next round's betting."""
    d.holding = False
    for _ in range(600):
        if d.journal.status(round_id) is RoundStatus.SETTLED and d.core.phase == "betting":
            break
        d.advance(0.5)
    assert d.journal.status(round_id) is RoundStatus.SETTLED and d.core.round_id != round_id
    assert d.ledger.balance(OPEN_WAGERS) == 0 and d.ledger.reconcile() == {}


def test_a_players_bets_are_written_together_and_answered_in_the_order_sent() -> None:
    """Three bets of one player are all being written at once; their writes finish last
    first, and the replies still go out first first. They stand in the order sent: the
    journal's, and what "repeat" places again in the next round."""
    d = Driver(TABLES["roulette-double"], seed=5)
    d.fund("ann", 10_000)
    d.seat("ann")
    round_id = d.core.round_id or ""
    cids = _bets_held(d, "ann", [("b1", "red", 100), ("b2", "odd", 200), ("b3", "black", 300)])
    assert len(d.held) == 3 and not d.replies  # all three written at once
    last, middle, first = sorted(d.held, reverse=True)
    d.complete(last)
    d.complete(middle)
    assert not d.replies  # held back behind the first bet's answer
    d.complete(first)
    assert d.answered[-3:] == cids
    assert [d.replies[c].data["bet_id"] for c in cids] == ["b1", "b2", "b3"]  # type: ignore[index]
    bets = [r.payload for r in d.journal.records(round_id) if r.kind == "bet"]
    assert [b["bet_id"] for b in bets] == ["b1", "b2", "b3"]
    _finish_round(d, round_id)
    reply = d.play(cmd.Repeat, "ann", round_id=d.core.round_id or "", prefix="r")
    assert reply is not None and reply.refusal is None and reply.data is not None
    assert [(b["spot"], b["amount"]) for b in reply.data["bets"]] == [
        ("red", 100),
        ("odd", 200),
        ("black", 300),
    ]
    d.close()


@pytest.mark.parametrize("refused", ["first", "second"])
def test_a_bet_the_ledger_refuses_beside_others_is_undone_and_the_others_stand(
    refused: str,
) -> None:
    """Two bets of one player written together, the balance covering one: the ledger
    refuses the one it cannot cover, the table undoes it (never announced) and the other
    stands; the replies keep the order sent, whichever write is answered first."""
    d = Driver(TABLES["roulette-double"], seed=5)
    d.fund("ann", 1_000)
    d.seat("ann")
    round_id = d.core.round_id or ""
    amounts = (1_500, 800) if refused == "first" else (800, 500)
    cids = _bets_held(d, "ann", [("b1", "red", amounts[0]), ("b2", "odd", amounts[1])])
    assert len(d.held) == 2
    _answer_all(d)  # the second's answer first
    codes = [r.refusal.code if r.refusal else None for r in (d.replies[c] for c in cids)]
    assert codes == (
        ["insufficient_funds", None] if refused == "first" else [None, "insufficient_funds"]
    )
    assert d.answered[-2:] == cids
    stood = "b2" if refused == "first" else "b1"
    announced = [e.data["wager"]["bet_id"] for e in d.emits if e.name == "bet_accepted"]
    assert announced == [stood]
    assert d.ledger.balance("player:ann") == 1_000 - amounts[0 if stood == "b1" else 1]
    _finish_round(d, round_id)
    d.close()


def test_a_resent_bet_waits_for_the_first_and_the_bets_sent_after_it_wait_with_it() -> None:
    """A bet sent again with the same id waits for the first's answer, and is acknowledged
    as sent again, charged once; the player's bets sent after it (a side wager here) wait
    behind it, in the order sent."""
    d = Driver(TABLES["baccarat"], seed=5)
    d.fund("ann", 100_000)
    d.seat("ann")
    side = next(s for s in d.game.sample_spots() if d.game.depends_on(s))
    round_id = d.core.round_id or ""
    cids = _bets_held(
        d,
        "ann",
        [
            ("b1", "banker", 1_000),
            ("b2", "player", 500),
            ("b1", "banker", 1_000),
            ("b3", side, 500),
        ],
    )
    assert len(d.held) == 2  # b1 and b2 together; the resent b1 and the side wager behind it wait
    (b1, b2) = sorted(d.held)
    d.complete(b2)
    assert len(d.held) == 1 and not d.replies
    d.complete(b1)  # the resent b1 answers at once; the side wager is written now
    assert len(d.held) == 1
    d.complete(min(d.held))
    replies = [d.replies[c] for c in cids]
    assert [r.refusal for r in replies] == [None] * 4
    assert [r.data["retried"] for r in replies] == [False, False, True, False]  # type: ignore[index]
    assert d.answered[-4:] == cids
    assert d.ledger.balance("player:ann") == 100_000 - 2_000
    _finish_round(d, round_id)
    d.close()


class _RefusingLedger(SqliteLedger):
    """The embedded ledger, but a bet whose debit's key ends with ``refuse`` is refused as
    an operator's wallet refuses one (``limit_reached``)."""

    refuse: tuple[str, ...] = ()

    def post_write(self, key: str, transfers: Any) -> Any:
        if key.startswith("bet:") and key.endswith(self.refuse):
            raise OperatorRefused("limit_reached", "the player's wager limit is reached")
        return super().post_write(key, transfers)


@pytest.mark.parametrize("main_first", [True, False], ids=["main-answered-first", "side-first"])
@pytest.mark.parametrize("refused", [False, True], ids=["main-taken", "main-refused"])
def test_a_side_wager_is_written_beside_its_main_wager_and_shares_its_fate(
    refused: bool, main_first: bool
) -> None:
    """A side wager needs its main wager (631a.8(a)); sent together, both are written at
    once (an operator's wallet answers them in parallel), and the side wager is answered
    once the main wager's fate is known, after it. The main wager refused, the side wager
    is withdrawn: its stake comes back, the journal says neither stood, and it is refused
    (``main_wager_required``) — nothing of either was broadcast."""
    ledger = _RefusingLedger(":memory:")
    ledger.refuse = (":b1",) if refused else ()
    d = Driver(TABLES["baccarat"], seed=5, ledger=ledger, journal=SqliteJournal(":memory:"))
    d.fund("ann", 100_000)
    d.seat("ann")
    side = next(s for s in d.game.sample_spots() if d.game.depends_on(s))
    round_id = d.core.round_id or ""
    emitted = len(d.emits)
    cids = _bets_held(d, "ann", [("b1", "banker", 1_000), ("b2", side, 500)])
    assert len(d.held) == 2  # written together
    first, second = sorted(d.held)
    for wid in (first, second) if main_first else (second, first):
        d.complete(wid)
        assert [c for c in d.answered if c in cids] in ([], cids[:1], cids)  # in order
    while d.held:  # a withdrawn side wager's returned stake, its records
        d.complete(min(d.held))
    replies = [d.replies[c] for c in cids]
    assert d.answered[-2:] == cids
    if refused:
        assert [r.refusal.code for r in replies if r.refusal] == [
            "limit_reached",
            "main_wager_required",
        ]
        assert d.ledger.balance("player:ann") == 100_000
        accepted = [e for e in d.emits[emitted:] if e.name == "bet_accepted"]
        assert accepted == []  # nothing of either was shown
        kinds = [r.kind for r in d.journal.records(round_id)]
        assert kinds.count("bet_refused") == 2
    else:
        assert [r.refusal for r in replies] == [None, None]
        assert d.ledger.balance("player:ann") == 100_000 - 1_500
    assert d.ledger.balance(OPEN_WAGERS) == (0 if refused else 1_500)
    _finish_round(d, round_id)
    d.close()
    ledger.close()
    d.journal.close()


@pytest.mark.parametrize("order", list(itertools.permutations(range(3))), ids=str)
@pytest.mark.parametrize("third", ["refused", "taken"])
@pytest.mark.parametrize("first", ["refused", "taken"])
def test_a_main_wager_sent_after_a_side_wager_is_written_beside_it(
    first: str, third: str, order: tuple[int, ...]
) -> None:
    """Banker, a side wager, Banker again: all three are written at once, and each is
    answered as if the bets were taken in turn, whichever write comes back first (funds
    permitting: the next test). The side
    wager stands on the wagers sent before it only: the first Banker refused withdraws it
    (``main_wager_required``, its stake returned) even when the second, written beside it,
    is taken. The replies keep the order sent; the table goes on."""
    ledger = _RefusingLedger(":memory:")
    ledger.refuse = tuple(b for b, fate in ((":b1", first), (":b3", third)) if fate == "refused")
    d = Driver(TABLES["baccarat"], seed=5, ledger=ledger, journal=SqliteJournal(":memory:"))
    d.fund("ann", 100_000)
    d.seat("ann")
    side = next(s for s in d.game.sample_spots() if d.game.depends_on(s))
    round_id = d.core.round_id or ""
    cids = _bets_held(d, "ann", [("b1", "banker", 1_000), ("b2", side, 500), ("b3", "banker", 700)])
    assert len(d.held) == 3  # written side by side
    held = sorted(d.held)
    for n in order:
        d.complete(held[n])
    _answer_all(d)  # a withdrawn side wager's returned stake, the refusals' records
    codes = [d.replies[c].refusal.code if d.replies[c].refusal else None for c in cids]
    assert codes == [
        "limit_reached" if first == "refused" else None,
        "main_wager_required" if first == "refused" else None,
        "limit_reached" if third == "refused" else None,
    ]
    assert d.answered[-3:] == cids
    assert d.core.available  # nothing closed the table
    stakes = (1_500 if first == "taken" else 0) + (700 if third == "taken" else 0)
    assert d.ledger.balance("player:ann") == 100_000 - stakes
    assert d.ledger.balance(OPEN_WAGERS) == stakes
    kinds = [r.kind for r in d.journal.records(round_id)]
    assert kinds.count("bet_refused") == (2 if first == "refused" else 0) + (
        1 if third == "refused" else 0
    )
    _finish_round(d, round_id)
    d.close()
    ledger.close()
    d.journal.close()


def test_a_main_wager_beside_a_withdrawn_side_wager_may_find_its_stake_still_held() -> None:
    """The one answer that differs from the bets taken in turn, pinned: Banker for more
    than the balance, a side wager, Banker again for what is left. Taken in turn the
    second Banker stands; written beside the side wager, whose stake is debited until the
    first Banker's refusal withdraws it, the second finds the balance short and is refused
    ``insufficient_funds``. Nothing is lost: the balance is whole and the same bet sent
    again under a new id is taken (docs/architecture.md, "Bets in flight")."""
    d = Driver(TABLES["baccarat"], seed=5)
    d.fund("ann", 1_000)
    d.seat("ann")
    side = next(s for s in d.game.sample_spots() if d.game.depends_on(s))
    round_id = d.core.round_id or ""
    cids = _bets_held(d, "ann", [("b1", "banker", 1_500), ("b2", side, 500), ("b3", "banker", 700)])
    assert len(d.held) == 3
    _answer_all(d)
    codes = [d.replies[c].refusal.code if d.replies[c].refusal else None for c in cids]
    assert codes == ["insufficient_funds", "main_wager_required", "insufficient_funds"]
    assert d.ledger.balance("player:ann") == 1_000
    (again,) = _bets_held(d, "ann", [("b4", "banker", 700)])
    _answer_all(d)
    assert d.replies[again].refusal is None
    assert d.ledger.balance("player:ann") == 300
    _finish_round(d, round_id)
    d.close()


def test_a_side_wager_is_not_accepted_on_a_main_wager_the_table_closed_over() -> None:
    """The main wager debited but its record not written: the table closes. The side wager
    written beside it is answered ``table_unavailable`` with the rest, never accepted."""
    d = Driver(TABLES["baccarat"], seed=5)
    d.fund("ann", 100_000)
    d.seat("ann")
    side = next(s for s in d.game.sample_spots() if d.game.depends_on(s))
    emitted = len(d.emits)
    d.faults.arm("record")  # the first bet's record fails
    cids = _bets_held(d, "ann", [("b1", "banker", 1_000), ("b2", side, 500)])
    assert len(d.held) == 2
    first, second = sorted(d.held)
    d.complete(second)
    d.complete(first)
    codes = [d.replies[c].refusal.code for c in cids if d.replies[c].refusal]
    assert codes == ["storage_failed", "table_unavailable"]
    assert not [e for e in d.emits[emitted:] if e.name == "bet_accepted"]
    assert d.core.finished and not d.core.available
    d.close()


@pytest.mark.parametrize("table_id", sorted(TABLES))
def test_a_game_names_every_wager_that_needs_another(table_id: str) -> None:
    """The table writes a player's bets side by side only where none needs another
    (``TableGame.depends_on``): every spot the engine refuses alone for want of a main
    wager is named there, and every spot named there is refused alone."""
    d = Driver(TABLES[table_id], seed=5)
    spots = d.game.sample_spots()
    needs = set()
    for n, spot in enumerate(spots):
        player = f"p{n}"
        d.fund(player, 10_000_000)
        if d.seat(player) is not None:  # every seat taken: a new table for the rest
            d.close()
            d = Driver(TABLES[table_id], seed=5)
            d.fund(player, 10_000_000)
            assert d.seat(player) is None
        seat = d.core.seats.seat_of[player]
        for amount in (d.settings.minimum, 500, 1_000, 5_000, 25_000):  # a spot's own minimum
            reply = d.play(
                cmd.Place,
                player,
                round_id=d.core.round_id or "",
                bet_id=f"alone-{amount}",
                spot=spot.format(seat=seat),
                amount=amount,
            )
            assert reply is not None
            code = reply.refusal.code if reply.refusal else None
            if code != "below_minimum":
                break
        if code == MAIN_WAGER_REQUIRED:
            needs.add(spot)
        assert bool(d.game.depends_on(spot.format(seat=seat))) == (code == MAIN_WAGER_REQUIRED), (
            spot,
            reply,
        )
    d.close()
    if table_id in ("baccarat", "casino-war", "down-under", "21-baccarat"):
        assert needs, "the demo table offers a side wager: the check must have met one"
