"""The table core under random command sequences, at every table of the demo lobby, with no
event loop of its own (issues #15, #28): bets, retried bets, repeated bets (and a repeat that
fails half way), cancels, decisions, drops and returns, the dealer console's "no more bets"
and void, the server stopping, time passing — on shoes and wheels of several seeds — and
store writes or random draws that fail. A failure that closes the table is followed by what
the server's next start does: recovery of the open round, then a new table core on the same
stores. On in-memory SQLite at every table; on PostgreSQL at a few.

After every step: money is conserved (what the ledger holds in open wagers is exactly the
stakes players were told were accepted and not yet settled or cancelled), no bet is settled
twice, every bet of a finished round was settled once — in the events and in the ledger,
whose batches for each debited wager end it exactly once with what the events said it
returned — sequence numbers only grow, and no card, wheel result or reader light was sent
before the record that journals it (checked as each event goes out)."""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from server.config import load_config
from server.core import commands as cmd
from server.core import effects as fx
from server.journal import records as rec
from server.journal.journal import RoundStatus
from server.journal.pg_journal import PgJournal
from server.wallet import HOUSE, OPEN_WAGERS, PLAY_MONEY_ISSUER, Transfer
from server.wallet.ledger import player_account
from server.wallet.pg_ledger import PgLedger
from tests.postgres import empty
from tests.tables.core_driver import FAULT_KINDS, Driver

TABLES = {t.id: t for t in load_config(None).tables}
PLAYERS = ("ann", "bob", "cy")
FUNDS = 50_000
# The PostgreSQL run (fewer examples, to fit the suite's time): a progressive-meter baccarat
# table (saved meters, awards), a game of decisions (War Wagers added by a decision), and one
# with a hole-card reader, doubles and splits.
PG_TABLES = ("lucky-nines", "casino-war", "down-under")


@dataclass(frozen=True)
class Bet:
    round_id: str
    player: str
    bet_id: str
    asked: str  # the spot as the player sent it
    spot: str  # as the table accepted it (canonical)
    amount: int


def _accepted(emits: list[fx.Emit]) -> list[tuple[str, str, str, int]]:
    """(round, player, bet id, amount) of each bet_accepted among ``emits``."""
    return [
        (e.round_id, w["player_id"], w["bet_id"], w["amount"])
        for e in emits
        if e.name == "bet_accepted"
        for w in [e.data["wager"]]
    ]


def _wager_key(e: fx.Emit) -> tuple[str, str]:
    w = e.data["settlement"]["wager"]
    return (w["player_id"], w["bet_id"])


def _void_settlement(e: fx.Emit) -> bool:
    return e.name == "wager_settled" and e.data["settlement"]["outcome"]["result"] == "void"


class TableMachine(RuleBasedStateMachine):
    table_id = ""
    # Fresh stores for one example, and how to close them; None: the driver's own (SQLite).
    stores: Callable[[], tuple[Any, Any] | None] = staticmethod(lambda: None)  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.d: Driver | None = None
        self.given: tuple[Any, Any] | None = None

    @initialize(seed=st.integers(0, 2**32 - 1))
    def open_table(self, seed: int) -> None:
        given = type(self).stores()
        ledger, journal = given if given is not None else (None, None)
        self.given = given
        self.d = Driver(TABLES[self.table_id], seed=seed, ledger=ledger, journal=journal)
        for player in PLAYERS:
            self.d.fund(player, FUNDS)
            assert self.d.seat(player) is None
        self.spots = self.d.game.sample_spots()
        self.ids = itertools.count(1)
        self.bets: list[Bet] = []  # every bet acknowledged, for retries and cancels
        self.cancelled: set[tuple[str, str, str]] = set()
        # This table's rounds' bets placed (by place or repeat) and standing, per player, in
        # the order accepted; and what "repeat" places again: the last round settled live.
        self.standing: dict[str, dict[str, list[Bet]]] = defaultdict(lambda: defaultdict(list))
        self.previous: dict[str, list[Bet]] = {}
        self.prefixes: dict[tuple[str, str], str] = {}  # (round, player) -> last repeat prefix
        # What the invariants have taken in: events (all; and since the last start, whose
        # stakes are what the ledger holds in open wagers), rounds finished, recoveries.
        self.seen = 0
        self.stakes = 0
        self.settled: Counter[tuple[str, str, str]] = Counter()
        self.last_seq = -1
        self.finished_seen = 0
        self.recovered_seen = 0

    def teardown(self) -> None:
        if self.d is not None:
            self.d.close()
        for store in self.given or ():
            store.close()

    @property
    def driver(self) -> Driver:
        assert self.d is not None
        return self.d

    # --- commands ----------------------------------------------------------------------------

    @rule(
        player=st.sampled_from(PLAYERS),
        spot=st.one_of(st.just(0), st.integers(0, 50)),  # often the main wager
        amount=st.sampled_from([100, 500, 2_500, 10_000, 60_000]),
        stale=st.sampled_from([False, False, False, True]),
    )
    def place(self, player: str, spot: int, amount: int, stale: bool) -> None:
        d = self.driver
        seat = d.core.seats.seat_of.get(player)
        asked = self.spots[spot % len(self.spots)].format(seat=seat)
        round_id = d.core.round_id or "none"
        if stale and d.core.round_number > 1:
            round_id = f"{d.core.id}.{d.core.round_number - 1}"
        bet_id = f"b{next(self.ids)}"
        before, emitted, faults = self._marks()
        reply = d.play(
            cmd.Place, player, round_id=round_id, bet_id=bet_id, spot=asked, amount=amount
        )
        assert reply is not None, "the core answers every command at once"
        new = _accepted(d.emits[emitted:])
        faulted = d.faults.raised[faults:]
        if faulted:  # the bet's record or debit (or the refusal's record) was not written
            assert reply.refusal is not None, reply
        if reply.refusal is None:
            assert reply.data is not None and reply.data["retried"] is False
            assert (reply.data["bet_id"], reply.data["amount"]) == (bet_id, amount)
            assert new == [(round_id, player, bet_id, amount)]
            assert d.ledger.balance(OPEN_WAGERS) == before + amount
            bet = Bet(round_id, player, bet_id, asked, reply.data["spot"], amount)
            self.bets.append(bet)
            self.standing[round_id][player].append(bet)
        else:
            assert new == [], "a refused bet was announced"
            if stale and round_id != d.core.round_id:
                assert reply.refusal.code == "round_not_open", reply
            if reply.refusal.code == "storage_failed":
                assert faulted, reply
                if d.core.available:  # the debit failed: nothing was charged
                    assert "nothing was charged" in reply.refusal.message
            if d.core.available:
                assert d.ledger.balance(OPEN_WAGERS) == before
        self._after()

    @rule(
        sent=st.lists(
            st.tuples(
                st.sampled_from(PLAYERS),
                st.one_of(st.just(0), st.integers(0, 50)),
                st.sampled_from([100, 500, 2_500, 10_000, 60_000, -1]),  # -1: a cancel
            ),
            min_size=2,
            max_size=8,
        ),
        order=st.randoms(use_true_random=False),
        meanwhile=st.sampled_from([None, None, "time", "no_more_bets", "stop"]),
    )
    def bets_in_flight(
        self, sent: list[tuple[str, int, int]], order: Any, meanwhile: str | None
    ) -> None:
        """Many bets (and cancels of bets placed before) at once: each is written as the
        table takes it, and the table takes the next before the earlier ones' writes are
        answered; the answers come back in any order (``order``), perhaps after the window
        closed, the dealer said no more bets or the server began to stop (``meanwhile``).
        The round goes on only once every bet in flight is answered, and those answered
        after the window closed stand; each player's replies come in the order sent; money
        is conserved while they are in flight."""
        d = self.driver
        round_id = d.core.round_id or "none"
        _, emitted, faults = self._marks()
        answered = len(d.answered)
        d.holding = True
        asked: list[tuple[int, str, Bet, bool]] = []  # (cid, player, bet, a cancel of it)
        for player, spot, amount in sent:
            if amount < 0:
                mine = [
                    b
                    for b in self.bets
                    if b.round_id == round_id
                    and b.player == player
                    and (b.round_id, b.player, b.bet_id) not in self.cancelled
                    and not any(c and b == other for _, _, other, c in asked)
                ]
                if mine:
                    bet = mine[spot % len(mine)]
                    cid = d.submit(cmd.Cancel, player, round_id=round_id, bet_id=bet.bet_id)
                    asked.append((cid, player, bet, True))
                continue
            seat = d.core.seats.seat_of.get(player)
            spot_asked = self.spots[spot % len(self.spots)].format(seat=seat)
            bet_id = f"b{next(self.ids)}"
            cid = d.submit(
                cmd.Place, player, round_id=round_id, bet_id=bet_id, spot=spot_asked, amount=amount
            )
            bet = Bet(round_id, player, bet_id, spot_asked, "", amount)
            asked.append((cid, player, bet, False))
        in_flight, phase = bool(d.held), d.core.phase
        if meanwhile == "time":
            d.now += d.settings.betting_seconds
            d.send(cmd.Tick())
        elif meanwhile == "stop":
            d.send(cmd.Stop())
        elif meanwhile == "no_more_bets":
            d.send(cmd.Console(rec.StaffDecision(action=meanwhile, dealer="dee", supervisor="")))
        if in_flight:  # the round waits for them, whatever happened meanwhile
            assert (d.core.round_id, d.core.phase) == (round_id, phase)
            assert not d.core.finished
            self._take_in()
            assert d.ledger.balance(OPEN_WAGERS) == self.stakes + d.held_stakes()
        while d.held:
            d.complete(order.choice(sorted(d.held)))
        d.holding = False
        replies = {cid: d.replies.pop(cid) for cid, *_ in asked}
        replied = [cid for cid in d.answered[answered:] if cid in replies]
        for player in PLAYERS:
            mine = [cid for cid, p, *_ in asked if p == player]
            assert [cid for cid in replied if cid in mine] == mine, "a player's replies reordered"
        events = d.emits[emitted:]
        for cid, player, bet, cancel in asked:
            reply = replies[cid]
            named = (round_id, player, bet.bet_id)
            if cancel:
                cancelled = [
                    e
                    for e in events
                    if e.name == "bet_cancelled"
                    and (e.round_id, e.data["wager"]["player_id"], e.data["wager"]["bet_id"])
                    == named
                ]
                assert len(cancelled) == (reply.refusal is None), (reply, cancelled)
                if reply.refusal is None:
                    self.cancelled.add(named)
                    self.standing[round_id][player].remove(bet)
                continue
            accepted = [a for a in _accepted(events) if a[:3] == named]
            if reply.refusal is None:
                assert reply.data is not None and reply.data["retried"] is False
                assert accepted == [(*named, bet.amount)], (reply, accepted)
                stood = replace(bet, spot=reply.data["spot"])
                self.bets.append(stood)
                self.standing[round_id][player].append(stood)
            else:
                assert accepted == [], "a refused bet was announced"
                if reply.refusal.code == "storage_failed":
                    assert d.faults.raised[faults:], reply
        self._after()

    @precondition(lambda self: bool(self.d and self.bets))
    @rule(which=st.integers(0, 1000), current=st.booleans())
    def retry(self, which: int, current: bool) -> None:
        """The same bet again (a lost reply): acknowledged again as it was, never charged
        twice — or refused when its round is over or it was cancelled."""
        d = self.driver
        now = [b for b in self.bets if b.round_id == d.core.round_id]
        among = now if current and now else self.bets
        bet = among[which % len(among)]
        before, emitted, faults = self._marks()
        reply = d.play(
            cmd.Place,
            bet.player,
            round_id=bet.round_id,
            bet_id=bet.bet_id,
            spot=bet.asked,
            amount=bet.amount,
        )
        assert reply is not None
        assert d.faults.raised[faults:] == [] and d.emits[emitted:] == []
        assert d.ledger.balance(OPEN_WAGERS) == before
        if bet.round_id != d.core.round_id:
            assert reply.refusal is not None and reply.refusal.code == "round_not_open", reply
        elif (bet.round_id, bet.player, bet.bet_id) in self.cancelled:
            assert reply.refusal is not None and reply.refusal.code == "duplicate_bet_id", reply
        else:
            assert reply.refusal is None, reply
            assert reply.data == {
                "bet_id": bet.bet_id,
                "spot": bet.spot,
                "amount": bet.amount,
                "retried": True,
            }
        self._after()

    @precondition(lambda self: bool(self.d and self.bets))
    @rule(which=st.integers(0, 1000))
    def cancel(self, which: int) -> None:
        d = self.driver
        bet = self.bets[which % len(self.bets)]
        before, emitted, faults = self._marks()
        reply = d.play(cmd.Cancel, bet.player, round_id=bet.round_id, bet_id=bet.bet_id)
        assert reply is not None
        key = (bet.round_id, bet.player, bet.bet_id)
        cancelled = [e for e in d.emits[emitted:] if e.name == "bet_cancelled"]
        if reply.refusal is None:
            assert key not in self.cancelled and bet.round_id == d.core.round_id
            assert [(e.round_id, e.data["wager"]["bet_id"]) for e in cancelled] == [
                (bet.round_id, bet.bet_id)
            ]
            assert d.ledger.balance(OPEN_WAGERS) == before - bet.amount
            self.cancelled.add(key)
            self.standing[bet.round_id][bet.player].remove(bet)
        else:
            assert cancelled == []
            if bet.round_id != d.core.round_id:
                assert reply.refusal.code == "round_not_open", reply
            if d.faults.raised[faults:]:
                assert reply.refusal.code == "storage_failed", reply
            else:
                assert d.ledger.balance(OPEN_WAGERS) == before
        self._after()

    @precondition(lambda self: bool(self.d and self.previous))  # after a round with bets
    @rule(
        which=st.integers(0, len(PLAYERS) - 1),
        again=st.booleans(),
        broken=st.sampled_from([None, None, 0, 1, 2]),
    )
    def repeat(self, which: int, again: bool, broken: int | None) -> None:
        """Place again the player's bets of the last round settled (``Repeat``): all of them,
        as they were; or, when one is refused, those before it stand and the reply says so.
        (Mostly a player who has bets to repeat; ``broken``: the debit after that many more
        fails, if no other trouble is coming.)"""
        d = self.driver
        armed = broken is not None and d.faults.left == 0
        if armed:
            d.faults.arm("post", broken, 1)
        players = sorted(self.previous) if self.previous and which else PLAYERS
        player = players[which % len(players)]
        round_id = d.core.round_id or "none"
        prefix = self.prefixes.get((round_id, player)) if again else None
        if prefix is None:
            prefix = f"r{next(self.ids)}"
        self.prefixes[(round_id, player)] = prefix
        before, emitted, faults = self._marks()
        reply = d.play(cmd.Repeat, player, round_id=round_id, prefix=prefix)
        assert reply is not None
        if armed:
            d.faults.clear()
        new = _accepted(d.emits[emitted:])
        previous = self.previous.get(player, [])
        ids = [f"{prefix}-{n}" for n in range(1, len(previous) + 1)]
        mine = {b.bet_id: b for b in self.standing[round_id][player]}
        if round_id != d.core.round_id:
            assert reply.refusal is not None and reply.refusal.code == "round_not_open", reply
            return self._after()
        if not previous:
            assert reply.refusal is not None and reply.refusal.code == "nothing_to_repeat", reply
            assert new == []
            return self._after()
        if reply.refusal is None:
            assert reply.data is not None
            assert [(b["bet_id"], b["spot"], b["amount"]) for b in reply.data["bets"]] == [
                (bet_id, p.spot, p.amount) for bet_id, p in zip(ids, previous, strict=True)
            ]
            assert [b["retried"] for b in reply.data["bets"]] == [i in mine for i in ids]
            placed = len(ids)
        else:
            code, message = reply.refusal.code, reply.refusal.message
            assert code != "nothing_to_repeat", (reply, previous)
            if code == "storage_failed":
                assert d.faults.raised[faults:], reply
            if d.core.available:  # the reply names the bets placed before the refused one
                stand = message.partition("; placed and standing: ")[2]
                placed = len(stand.split(", ")) if stand else 0
                assert stand == ", ".join(ids[:placed]), reply
            else:  # a write failed after the table changed: it closed, recovery voids the round
                assert code == "storage_failed", reply
                placed = ids.index(new[-1][2]) + 1 if new else 0
            assert placed < len(ids), reply
        fresh = [
            Bet(round_id, player, bet_id, p.spot, p.spot, p.amount)
            for bet_id, p in zip(ids[:placed], previous, strict=False)
            if bet_id not in mine
        ]
        assert new == [(round_id, player, b.bet_id, b.amount) for b in fresh]
        if d.core.available:
            assert d.ledger.balance(OPEN_WAGERS) == before + sum(b.amount for b in fresh)
        for bet in fresh:
            self.bets.append(bet)
            self.standing[round_id][player].append(bet)
        self._after()

    @precondition(lambda self: bool(self.d and self.d.core.decisions))
    @rule(which=st.integers(0, 1000), option=st.integers(0, 10))
    def decide(self, which: int, option: int) -> None:
        d = self.driver
        pending = sorted(d.core.decisions.items())
        (player, spot), (request, _) = pending[which % len(pending)]
        decision = request.options[option % len(request.options)]
        faults = len(d.faults.raised)
        reply = d.play(
            cmd.Decide, player, round_id=d.core.round_id or "", spot=spot, decision=decision
        )
        assert reply is not None
        if reply.refusal is None:
            assert reply.data == {"decision": decision}
        elif reply.refusal.code == "storage_failed":
            assert d.faults.raised[faults:]
        self._after()

    @rule(
        bets=st.lists(
            st.tuples(
                st.sampled_from(PLAYERS),
                st.sampled_from([0, 0, 1]),  # the main wager, or the next spot
                st.sampled_from([100, 500, 2_500, 20_000]),
            ),
            min_size=1,
            max_size=6,
        ),
        options=st.lists(st.integers(0, 10), max_size=6),
        staff=st.one_of(
            st.none(),
            st.tuples(st.integers(0, 4), st.sampled_from(["no_more_bets", "void", "stop"])),
        ),
    )
    def a_round_plays(
        self,
        bets: list[tuple[str, int, int]],
        options: list[int],
        staff: tuple[int, str] | None,
    ) -> None:
        """The players bet (if betting is open), and the round plays on to its end and the
        next round opens: each decision it asks for taken (options in turn, then the first),
        each deadline reached — unless a failure closes the table first, or ``staff`` (the
        console, the operator) acts at that step of the round."""
        d = self.driver
        round_id = d.core.round_id
        for player, spot, amount in bets:
            if d.core.phase == "betting" and d.core.round_id == round_id:
                self.place(player, spot, amount, False)
        chosen = iter(options)
        for step in range(30):
            if d.core.round_id != round_id or d.core.phase not in ("betting", "deciding"):
                break
            if staff is not None and staff[0] == step:
                self.staff(staff[1])
                continue
            pending = dict(d.core.decisions)
            if pending:
                self.decide(0, next(chosen, 0))
            if not pending or d.core.decisions == pending:  # none, or refused: time runs out
                self.time_passes(0.0)
        else:
            raise AssertionError(f"round {round_id} never ended")
        if d.core.round_id == round_id:  # the pause between rounds
            self.time_passes(0.0)

    @rule(player=st.sampled_from(PLAYERS))
    def drop_and_return(self, player: str) -> None:
        d = self.driver
        seat = d.core.seats.seat_of.get(player)
        d.core.handle(cmd.Drop(player, "player"), d.now)
        assert d.seat(player) is None
        assert d.core.seats.seat_of.get(player) == seat  # the seat was held
        self._after()

    @rule(seconds=st.sampled_from([0.0, 0.5, 5.0, 16.0, 30.0]))
    def time_passes(self, seconds: float) -> None:
        """A while, or (0) until the table's next deadline: betting closes, a decision times
        out, the pause between rounds ends."""
        d = self.driver
        d.run_until(d.now + seconds if seconds or d.deadline is None else d.deadline)
        self._after()

    @rule(action=st.sampled_from(["no_more_bets", "no_more_bets", "void", "stop"]))
    def staff(self, action: str) -> None:
        """The dealer console's actions, or the operator stopping the server."""
        if action == "stop":
            self._stop()
        else:
            self._console(action)

    def _console(self, action: str) -> None:
        """The dealer console: "no more bets" closes betting now, "void" (dealer and
        supervisor) voids the round in play, every wager returned; both journaled, with who.
        Between rounds, or "no more bets" after betting closed, nothing happens."""
        d = self.driver
        round_id, phase = d.core.round_id, d.core.phase
        staff = rec.StaffDecision(
            action=action, dealer="dee", supervisor="sue" if action == "void" else ""
        )
        _, emitted, faults = self._marks()
        writes = len(d.writes)
        d.send(cmd.Console(staff))
        if d.faults.raised[faults:]:
            assert d.core.finished  # a write of the table's own life failed: it closed
            return self._after()
        applies = phase in ("betting", "deciding") if action == "void" else phase == "betting"
        if not applies:
            assert d.emits[emitted:] == [] and len(d.writes) == writes
            return self._after()
        assert round_id is not None
        kinds = [(r.kind, r.payload.get("action")) for r in d.journal.records(round_id)]
        assert ("staff", action) in kinds
        after = kinds[kinds.index(("staff", action)) + 1]
        if action == "void":
            assert after == ("voided", None) and d.journal.status(round_id) is RoundStatus.VOIDED
            settled = [e for e in d.emits[emitted:] if e.name == "wager_settled"]
            for e in settled:
                assert e.data["settlement"]["returned"] == e.data["settlement"]["wager"]["amount"]
        else:
            assert after == ("closed", None)
            assert d.core.round_id != round_id or d.core.phase != "betting"
        self._after()

    def _stop(self) -> None:
        """The server shuts down: the round in play is voided, every wager returned; at the
        next start there is nothing to recover."""
        d = self.driver
        round_id = d.core.round_id
        faults = len(d.faults.raised)
        d.send(cmd.Stop())
        assert d.core.finished and d.deadline is None
        if not d.faults.raised[faults:]:
            assert d.journal.open_rounds() == []
            assert d.ledger.balance(OPEN_WAGERS) == 0
            if round_id is not None:
                assert d.journal.status(round_id) in (RoundStatus.SETTLED, RoundStatus.VOIDED)
        self._after()

    @precondition(lambda self: bool(self.d and self.d.faults.left == 0))
    @rule(
        kind=st.sampled_from(FAULT_KINDS),
        skip=st.integers(0, 12),
        count=st.sampled_from([1, 1, 2, 50]),
    )
    def trouble_ahead(self, kind: str, skip: int, count: int) -> None:
        """Of the coming store writes (or draws) of ``kind``, the ``count`` after ``skip``
        more fail (50: the disk stays broken until the table closes and is repaired)."""
        self.driver.faults.arm(kind, skip, count)

    # --- a table that closed: the server's next start ---------------------------------------

    def _marks(self) -> tuple[int, int, int]:
        d = self.driver
        return d.ledger.balance(OPEN_WAGERS), len(d.emits), len(d.faults.raised)

    def _after(self) -> None:
        """After each step: a table whose life ended refuses commands; then it starts again
        as the server's next start would start it, recovering its round."""
        d = self.driver
        if not d.core.finished:
            return
        round_id = d.core.round_id or ""
        reply = d.play(cmd.Place, "ann", round_id=round_id, bet_id="x", spot="x", amount=100)
        assert reply is not None and reply.refusal is not None
        assert reply.refusal.code == "table_unavailable", reply
        self._take_in()  # the events up to the close: stakes told accepted, settled
        self._check_rounds()  # and the rounds it finished before it closed
        open_before = [round_id for _, round_id in d.journal.open_rounds()]
        done = d.restart()
        assert [r.round_id for r in done] == open_before
        for round_id in open_before:
            assert d.journal.status(round_id) in (RoundStatus.SETTLED, RoundStatus.VOIDED)
        assert d.journal.open_rounds() == [(d.core.id, d.core.round_id)]  # the new run's first
        assert d.ledger.balance(OPEN_WAGERS) == 0, "recovery left a stake open"
        self.stakes = 0  # the next run's events
        self.previous = {}  # a new table core: nothing of the last run to repeat
        for player in PLAYERS:
            assert d.seat(player) is None  # the players come back
        self._check_rounds()  # the rounds recovery finished

    # --- invariants --------------------------------------------------------------------------

    def _take_in(self) -> None:
        """The events since last time: stakes told accepted, cancelled and settled; every
        settlement counted (never twice); sequence numbers only grow."""
        d = self.driver
        for e in d.emits[self.seen :]:
            assert e.seq > self.last_seq, (e.name, e.seq, self.last_seq)
            self.last_seq = e.seq
            if e.name == "bet_accepted":
                self.stakes += e.data["wager"]["amount"]
            elif e.name == "bet_cancelled":
                self.stakes -= e.data["wager"]["amount"]
            elif e.name == "wager_settled":
                wager = e.data["settlement"]["wager"]
                self.stakes -= wager["amount"]
                key = (e.round_id, wager["player_id"], wager["bet_id"])
                self.settled[key] += 1
                assert self.settled[key] == 1, f"{key} settled twice"
        self.seen = len(d.emits)

    @invariant()
    def money_is_conserved(self) -> None:
        if self.d is None:
            return
        self._take_in()
        ledger = self.d.ledger
        assert ledger.reconcile() == {} and ledger.total() == 0
        assert ledger.balance(OPEN_WAGERS) == self.stakes
        for player in PLAYERS:
            assert ledger.balance(player_account(player)) >= 0

    @invariant()
    def every_finished_round_settled_each_bet_once(self) -> None:
        if self.d is None:
            return
        self._take_in()
        self._check_rounds()

    def _check_rounds(self) -> None:
        """Each round finished since last time — by the table (settled or voided), or by
        recovery after the table closed — ended every bet once, in the events (the table's)
        and in the ledger (both)."""
        d = self.driver
        for finished in d.finished[self.finished_seen :]:
            round_id = finished.round_id
            status = RoundStatus.SETTLED if finished.status == "settled" else RoundStatus.VOIDED
            assert d.journal.status(round_id) is status
            self._check_events(round_id, voided=status is RoundStatus.VOIDED)
            self._check_ledger(round_id)
            if status is RoundStatus.SETTLED:  # what "repeat" places again
                self.previous = {p: list(b) for p, b in self.standing[round_id].items() if b}
        self.finished_seen = len(d.finished)
        for item in d.recovered[self.recovered_seen :]:
            assert d.journal.status(item.round_id) in (RoundStatus.SETTLED, RoundStatus.VOIDED)
            self._check_ledger(item.round_id)
        self.recovered_seen = len(d.recovered)

    def _check_events(self, round_id: str, *, voided: bool) -> None:
        """Every bet of the round that stood was settled once; a void returned in full every
        wager still open (those settled before it stand)."""
        d = self.driver
        events = [e for e in d.emits if e.round_id == round_id]
        standing: Counter[tuple[str, str]] = Counter()
        settled: set[tuple[str, str]] = set()
        for e in events:
            if e.name in ("bet_accepted", "bet_cancelled"):
                w = e.data["wager"]
                standing[(w["player_id"], w["bet_id"])] += 1 if e.name == "bet_accepted" else -1
            elif e.name == "wager_settled":
                w = e.data["settlement"]["wager"]
                settled.add((w["player_id"], w["bet_id"]))
        assert {k for k, n in standing.items() if n > 0} == settled, round_id
        assert all(n in (0, 1) for n in standing.values())
        names = [e.name for e in events]
        assert ("round_voided" in names) == voided, round_id
        if voided:  # the void's settlements: the "void" ones just before it
            at = names.index("round_voided")
            start = at
            while start > 0 and _void_settlement(events[start - 1]):
                start -= 1
            returned = {_wager_key(e): e.data["settlement"] for e in events[start:at]}
            still_open = {k for k, n in standing.items() if n > 0} - {
                _wager_key(e) for e in events[:start] if e.name == "wager_settled"
            }
            assert set(returned) == still_open, (round_id, returned, still_open)
            for s in returned.values():
                assert s["returned"] == s["wager"]["amount"], (round_id, s)

    def _check_ledger(self, round_id: str) -> None:
        """The round's batches: each wager debited (``bet:``) is ended by exactly one batch
        (``settle:``, ``cancel:`` or recovery's ``void:``) that takes its whole stake out of
        open wagers, and a settlement the table announced paid the player what it said."""
        d = self.driver
        batches: dict[str, list[Any]] = defaultdict(list)
        for key, transfer in d.ledger.round_transfers(round_id):
            batches[key].append(transfer)
        debited: dict[str, int] = {}
        ended: dict[str, list[tuple[str, int, int]]] = defaultdict(list)
        for key, transfers in batches.items():
            kind, rid, wager = key.split(":", 2)
            assert rid == round_id, key
            into = sum(t.amount for t in transfers if t.destination == OPEN_WAGERS)
            out = sum(t.amount for t in transfers if t.source == OPEN_WAGERS)
            if kind == "bet":
                assert out == 0
                debited[wager] = into
            elif kind in ("settle", "cancel", "void"):
                player = player_account(wager.split(":", 1)[0])
                paid = sum(t.amount for t in transfers if t.destination == player)
                assert into == 0
                ended[wager].append((kind, out, paid))
            else:
                assert kind == "award", key  # a progressive award: the house pays it
                assert into == out == 0
        assert set(ended) == set(debited), (round_id, debited, ended)
        for wager, endings in ended.items():
            assert len(endings) == 1, (round_id, wager, endings)
            assert endings[0][1] == debited[wager], (round_id, wager, endings)
        for e in d.emits:
            if e.round_id == round_id and e.name == "wager_settled":
                s = e.data["settlement"]
                wager = f"{s['wager']['player_id']}:{s['wager']['bet_id']}"
                assert ended[wager][0][0] == "settle" and ended[wager][0][2] == s["returned"]


def _run(machine: type[TableMachine], examples: int, steps: int) -> None:
    run_state_machine_as_test(
        machine,
        settings=settings(
            max_examples=examples,
            stateful_step_count=steps,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow],
        ),
    )


@pytest.mark.parametrize("table_id", sorted(TABLES))
def test_random_commands_keep_every_table_whole(table_id: str) -> None:
    _run(type(f"Machine_{table_id}", (TableMachine,), {"table_id": table_id}), 20, 40)


@pytest.mark.slow
@pytest.mark.parametrize("table_id", PG_TABLES)
def test_random_commands_keep_tables_whole_on_postgresql(table_id: str, postgres_url: str) -> None:
    """The same machine on the shared stores (a cluster's), each example on an emptied
    database."""

    def stores() -> tuple[Any, Any]:
        empty(postgres_url)
        return PgLedger(postgres_url), PgJournal(postgres_url)

    machine = type(
        f"PgMachine_{table_id}",
        (TableMachine,),
        {"table_id": table_id, "stores": staticmethod(stores)},
    )
    _run(machine, 6, 30)


@pytest.mark.parametrize("cause", ["a debit that cannot be written", "the balance"])
def test_a_repeat_refused_half_way_keeps_the_bets_before_it_and_names_them(cause: str) -> None:
    """The random runs reach a repeat refused after some of its bets rarely; here it is on
    purpose. The bets placed before the refused one stand, the reply names them, nothing more
    was charged, the table plays on — and the same repeat again places the rest."""
    d = Driver(TABLES["roulette-double"], seed=5)
    d.fund("ann", 10_000)
    assert d.seat("ann") is None
    first = d.core.round_id or ""
    for bet_id, spot, amount in (("b1", "red", 1_000), ("b2", "black", 2_000), ("b3", "odd", 500)):
        reply = d.play(cmd.Place, "ann", round_id=first, bet_id=bet_id, spot=spot, amount=amount)
        assert reply is not None and reply.refusal is None, reply
    d.run_until(d.now + 30)  # the round settles; the next one takes bets
    second = d.core.round_id or ""
    assert second != first and d.core.phase == "betting"
    assert d.journal.status(first) is RoundStatus.SETTLED
    ann = player_account("ann")
    if cause == "the balance":  # ann spent all but 1,500 elsewhere
        spent = d.ledger.balance(ann) - 1_500
        d.ledger.post("elsewhere", [Transfer(ann, HOUSE, spent, "spent elsewhere")])
    else:
        d.faults.arm("post", skip=1)  # the second bet's debit fails
    balance, emitted = d.ledger.balance(ann), len(d.emits)
    reply = d.play(cmd.Repeat, "ann", round_id=second, prefix="again")
    assert reply is not None and reply.refusal is not None, reply
    code, message = reply.refusal.code, reply.refusal.message
    if cause == "the balance":
        assert code == "insufficient_funds" and "the balance 500 does not cover 2000" in message
    else:
        assert code == "storage_failed" and "nothing was charged" in message
    assert message.endswith("; placed and standing: again-1"), message
    accepted = [(e.data["wager"]["bet_id"], e.data["wager"]["spot"]) for e in d.emits[emitted:]]
    assert accepted == [("again-1", "red")]
    assert d.ledger.balance(OPEN_WAGERS) == 1_000 and d.ledger.balance(ann) == balance - 1_000
    assert d.core.available and d.core.phase == "betting"
    if cause == "the balance":  # and is paid back
        d.ledger.post("topup", [Transfer(PLAY_MONEY_ISSUER, ann, 5_000, "grant")])
    again = d.play(cmd.Repeat, "ann", round_id=second, prefix="again")
    assert again is not None and again.refusal is None, again
    assert again.data is not None
    assert [(b["bet_id"], b["amount"], b["retried"]) for b in again.data["bets"]] == [
        ("again-1", 1_000, True),
        ("again-2", 2_000, False),
        ("again-3", 500, False),
    ]
    assert d.ledger.balance(OPEN_WAGERS) == 3_500
    d.run_until(d.now + 30)
    assert d.journal.status(second) is RoundStatus.SETTLED
    assert d.ledger.balance(OPEN_WAGERS) == 0
    assert d.ledger.reconcile() == {} and d.ledger.total() == 0
    d.close()
