"""The table core under random command sequences, at every table of the demo lobby, with no
event loop (issue #15): bets, retries, cancels, decisions, drops and returns, time passing.
After every step: money is conserved (what the ledger holds in open wagers is exactly the
stakes players were told were accepted and not yet settled or cancelled), no bet is settled
twice, every bet of a finished round was settled once, and no card, wheel result or reader
light was sent before the record that journals it (checked as each event goes out)."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from server.config import load_config
from server.journal.journal import RoundStatus
from server.tables.core import commands as cmd
from server.wallet import OPEN_WAGERS
from tests.tables.core_driver import Driver

TABLES = {t.id: t for t in load_config(None).tables}
PLAYERS = ("ann", "bob", "cy")


class TableMachine(RuleBasedStateMachine):
    table_id = ""

    def __init__(self) -> None:
        super().__init__()
        self.d = Driver(TABLES[self.table_id], seed=7)
        for player in PLAYERS:
            self.d.fund(player, 50_000)
            assert self.d.seat(player) is None
        self.bets: list[tuple[str, str, str, str, int]] = []  # round, player, id, spot, amount
        self.spots = self.d.game.sample_spots()
        self.next_id = 0

    def teardown(self) -> None:
        self.d.close()

    # --- commands ----------------------------------------------------------------------------

    @rule(
        player=st.sampled_from(PLAYERS),
        spot=st.integers(0, 50),
        amount=st.sampled_from([100, 500, 2_500, 10_000, 60_000]),
        stale=st.booleans(),
    )
    def place(self, player: str, spot: int, amount: int, stale: bool) -> None:
        seat = self.d.core.seats.seat_of.get(player)
        chosen = self.spots[spot % len(self.spots)].format(seat=seat)
        round_id = self.d.core.round_id or "none"
        if stale and self.d.core.round_number > 1:
            round_id = f"{self.d.core.id}.{self.d.core.round_number - 1}"
        self.next_id += 1
        bet_id = f"b{self.next_id}"
        reply = self.d.play(
            cmd.Place, player, round_id=round_id, bet_id=bet_id, spot=chosen, amount=amount
        )
        if reply is not None and reply.error is None:
            assert reply.data is not None
            self.bets.append((round_id, player, bet_id, reply.data["spot"], amount))

    @precondition(lambda self: bool(self.bets))
    @rule(which=st.integers(0, 1000))
    def retry(self, which: int) -> None:
        """The same bet again (a lost reply): acknowledged again, never charged twice."""
        round_id, player, bet_id, spot, amount = self.bets[which % len(self.bets)]
        before = self.d.ledger.balance(OPEN_WAGERS)
        reply = self.d.play(
            cmd.Place, player, round_id=round_id, bet_id=bet_id, spot=spot, amount=amount
        )
        assert self.d.ledger.balance(OPEN_WAGERS) == before or reply is None

    @precondition(lambda self: bool(self.bets))
    @rule(which=st.integers(0, 1000))
    def cancel(self, which: int) -> None:
        round_id, player, bet_id, _, _ = self.bets[which % len(self.bets)]
        self.d.play(cmd.Cancel, player, round_id=round_id, bet_id=bet_id)

    @precondition(lambda self: bool(self.d.core.decisions))
    @rule(which=st.integers(0, 1000), option=st.integers(0, 10))
    def decide(self, which: int, option: int) -> None:
        pending = sorted(self.d.core.decisions.items())
        (player, spot), (request, _) = pending[which % len(pending)]
        decision = request.options[option % len(request.options)]
        self.d.play(
            cmd.Decide, player, round_id=self.d.core.round_id or "", spot=spot, decision=decision
        )

    @rule(player=st.sampled_from(PLAYERS))
    def drop_and_return(self, player: str) -> None:
        self.d.core.handle(cmd.Drop(player, "player"), self.d.now)
        self.d.seat(player)

    @rule(seconds=st.sampled_from([0.5, 2.0, 5.0, 13.0, 20.0]))
    def time_passes(self, seconds: float) -> None:
        self.d.run_until(self.d.now + seconds)

    # --- invariants --------------------------------------------------------------------------

    @invariant()
    def money_is_conserved(self) -> None:
        ledger = self.d.ledger
        assert ledger.reconcile() == {} and ledger.total() == 0
        accepted = cancelled = settled = 0
        for e in self.d.emits:
            if e.name == "bet_accepted":
                accepted += e.data["wager"]["amount"]
            elif e.name == "bet_cancelled":
                cancelled += e.data["wager"]["amount"]
            elif e.name == "wager_settled":
                settled += e.data["settlement"]["wager"]["amount"]
        assert ledger.balance(OPEN_WAGERS) == accepted - cancelled - settled

    @invariant()
    def each_bet_is_settled_once(self) -> None:
        settled = Counter(
            (e.round_id, w["player_id"], w["bet_id"])
            for e in self.d.emits
            if e.name == "wager_settled"
            for w in [e.data["settlement"]["wager"]]
        )
        assert not [k for k, n in settled.items() if n > 1], settled
        standing = Counter(
            (e.round_id, e.data["wager"]["player_id"], e.data["wager"]["bet_id"])
            for e in self.d.emits
            if e.name == "bet_accepted"
        )
        for e in self.d.emits:
            if e.name == "bet_cancelled":
                standing[(e.round_id, e.data["wager"]["player_id"], e.data["wager"]["bet_id"])] -= 1
        for key, n in standing.items():
            status = self.d.journal.status(key[0])
            if n > 0 and status in (RoundStatus.SETTLED, RoundStatus.VOIDED):
                assert settled[key] == 1, (key, status)


@pytest.mark.parametrize("table_id", sorted(TABLES))
def test_random_commands_keep_every_table_whole(table_id: str) -> None:
    machine = type(f"Machine_{table_id}", (TableMachine,), {"table_id": table_id})
    run_state_machine_as_test(
        machine,
        settings=settings(
            max_examples=12,
            stateful_step_count=40,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow],
        ),
    )
