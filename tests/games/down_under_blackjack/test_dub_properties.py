"""Property tests: random Down Under Blackjack rounds with random wagers, random (legal and
illegal) decisions and time-outs conserve money — balances + house + open wagers — settle
every wager exactly once, and a refused command changes nothing."""

from __future__ import annotations

from contextlib import suppress

from hypothesis import given, settings
from hypothesis import strategies as st

from rng.cards import ALL_CARDS, Card
from server.games.chance import CardRequest, HoleRangeRequest
from server.games.down_under_blackjack import DownUnderRound, DownUnderTable, HoleRange
from server.games.errors import IllegalAction
from server.games.events import BetAccepted, BetCancelled, CardDealt, WagerSettled
from server.games.round import DecisionRequest, Phase
from server.games.wagers import Wager

PLAYERS = ("al", "bo")
DECISIONS = (
    "hit", "stand", "double", "double:7", "split", "insurance", "insurance:3",
    "no_insurance", "even_money", "timeout", "surrender", "double:0",
)  # fmt: skip
# Rich in aces, tens and pairs, so that every path is reached.
CARDS = [c for c in ALL_CARDS if c.rank in (1, 2, 5, 6, 8, 10, 11, 13)]


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_random_rounds_conserve_money(data: st.DataObject) -> None:
    r = DownUnderRound(DownUnderTable(decks=8, match_the_dealer=True), "r")
    balances = dict.fromkeys(PLAYERS, 10**6)
    house = 0
    open_: dict[tuple[str, str], int] = {}
    settled: set[tuple[str, str]] = set()

    def apply(events: object) -> None:
        nonlocal house
        for e in events:  # type: ignore[attr-defined]
            if isinstance(e, BetAccepted):
                balances[e.wager.player_id] -= e.wager.amount
                open_[(e.wager.player_id, e.wager.bet_id)] = e.wager.amount
            elif isinstance(e, BetCancelled):
                balances[e.wager.player_id] += open_.pop((e.wager.player_id, e.wager.bet_id))
            elif isinstance(e, WagerSettled):
                w = e.settlement.wager
                key = (w.player_id, w.bet_id)
                assert key not in settled
                settled.add(key)
                balances[w.player_id] += e.settlement.returned
                house += open_.pop(key) - e.settlement.returned

    total = sum(balances.values())
    apply(r.open())
    for i in range(data.draw(st.integers(0, 8))):
        kind = data.draw(st.sampled_from(["bet", "bet", "match_the_dealer", "insurance"]))
        wager = Wager(
            f"b{i}",
            data.draw(st.sampled_from(PLAYERS)),
            f"{kind}:{data.draw(st.integers(1, 3))}",
            data.draw(st.sampled_from([0, 1, 25, 100, 999])),
        )
        with suppress(IllegalAction):
            apply(r.place(wager))
    apply(r.close_betting())
    hole: Card | None = None
    for _ in range(200):
        request = r.pending()
        if request is None:
            break
        if isinstance(request, CardRequest):
            card = data.draw(st.sampled_from(CARDS))
            events = r.provide_card(card)
            if any(isinstance(e, CardDealt) and not e.face_up for e in events):
                hole = card
            apply(events)
        elif isinstance(request, HoleRangeRequest):
            assert hole is not None
            apply(r.provide_hole_range(HoleRange.of(hole)))
        else:
            assert isinstance(request, DecisionRequest)
            who = data.draw(st.sampled_from(r.decisions_awaited))
            choice = data.draw(st.sampled_from(DECISIONS))
            spot = data.draw(st.sampled_from([who.spot, who.spot, "bet:9"]))
            before = (r.phase, r.wagers, r.decisions_awaited)
            try:
                if choice == "timeout":
                    apply(r.time_out(who.player_id))
                else:
                    apply(r.decide(who.player_id, spot, choice))
            except IllegalAction:
                assert (r.phase, r.wagers, r.decisions_awaited) == before
        assert sum(balances.values()) + house + sum(open_.values()) == total
        if r.phase in (Phase.DEALING, Phase.DECIDING) and data.draw(st.integers(0, 60)) == 0:
            apply(r.void("fault"))
    assert r.phase in (Phase.SETTLED, Phase.VOIDED)
    assert not open_ and not r.wagers
    assert sum(balances.values()) + house == total
