"""Property tests: random rounds of Casino War with random legal and illegal commands, random
decisions and time-outs conserve money (balances + house + open wagers), settle every wager
exactly once, and leave nothing changed when a command is refused."""

from __future__ import annotations

import contextlib

from hypothesis import given, settings
from hypothesis import strategies as st

from rng.cards import ALL_CARDS
from server.games.casino_war import CasinoWarRound, CasinoWarTable
from server.games.chance import CardRequest
from server.games.errors import IllegalAction
from server.games.events import BetAccepted, BetCancelled, WagerSettled
from server.games.round import DecisionRequest, Phase
from server.games.wagers import Wager

PLAYERS = ("al", "bo", "cy")


class Wallet:
    """A small in-test ledger: each accepted wager is debited, each settlement credited."""

    def __init__(self) -> None:
        self.balances = dict.fromkeys(PLAYERS, 1_000_000)
        self.house = 0
        self.open: dict[tuple[str, str], int] = {}
        self.settled: set[tuple[str, str]] = set()

    def apply(self, events: object) -> None:
        for e in events:  # type: ignore[attr-defined]
            if isinstance(e, BetAccepted):
                self.balances[e.wager.player_id] -= e.wager.amount
                self.open[(e.wager.player_id, e.wager.bet_id)] = e.wager.amount
            elif isinstance(e, BetCancelled):
                self.balances[e.wager.player_id] += self.open.pop(
                    (e.wager.player_id, e.wager.bet_id)
                )
            elif isinstance(e, WagerSettled):
                w = e.settlement.wager
                key = (w.player_id, w.bet_id)
                assert key not in self.settled, "settled twice"
                self.settled.add(key)
                stake = self.open.pop(key)
                self.balances[w.player_id] += e.settlement.returned
                self.house += stake - e.settlement.returned

    def total(self) -> int:
        return sum(self.balances.values()) + self.house + sum(self.open.values())


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_random_rounds_conserve_money(data: st.DataObject) -> None:
    r = CasinoWarRound(CasinoWarTable(decks=data.draw(st.sampled_from([6, 8]))), "r")
    wallet = Wallet()
    start = wallet.total()
    wallet.apply(r.open())
    for i in range(data.draw(st.integers(0, 12))):
        spot = (
            data.draw(st.sampled_from(["initial", "tie", "war", "initial"]))
            + ":"
            + str(data.draw(st.integers(1, 4)))
        )
        wager = Wager(
            data.draw(st.sampled_from([f"b{i}", "b0"])),
            data.draw(st.sampled_from(PLAYERS)),
            spot,
            data.draw(st.sampled_from([0, 1, 99, 1000, 2501])),
        )
        with contextlib.suppress(IllegalAction):
            wallet.apply(r.place(wager))
        if data.draw(st.booleans()) and r.wagers:
            victim = data.draw(st.sampled_from(r.wagers))
            with contextlib.suppress(IllegalAction):
                wallet.apply(r.cancel(victim.player_id, victim.bet_id))
    wallet.apply(r.close_betting())
    # Mostly ties, to reach the decisions often.
    ranks = data.draw(st.sampled_from([ALL_CARDS[:13], ALL_CARDS[:2], ALL_CARDS[:1]]))
    steps = 0
    while (request := r.pending()) is not None:
        steps += 1
        assert steps < 100
        if isinstance(request, CardRequest):
            wallet.apply(r.provide_card(data.draw(st.sampled_from(ranks))))
        else:
            assert isinstance(request, DecisionRequest)
            waiting = data.draw(st.sampled_from(r.decisions_awaited))
            choice = data.draw(
                st.sampled_from(["war", "surrender", "war+tie:100", "timeout", "hit", "war+tie:x"])
            )
            before = (r.phase, r.wagers)
            try:
                if choice == "timeout":
                    wallet.apply(r.time_out(waiting.player_id))
                else:
                    wallet.apply(r.decide(waiting.player_id, waiting.spot, choice))
            except IllegalAction:
                assert (r.phase, r.wagers) == before
        assert wallet.total() == start
        if r.phase not in (Phase.SETTLED, Phase.VOIDED) and data.draw(st.integers(0, 30)) == 0:
            wallet.apply(r.void("fault"))
    assert r.phase in (Phase.SETTLED, Phase.VOIDED)
    assert not wallet.open and not r.wagers
    assert wallet.total() == start
