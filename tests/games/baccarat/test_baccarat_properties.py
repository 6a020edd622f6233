"""Property tests (hypothesis): for random legal and illegal command sequences money is
conserved (balances + house result + open wagers is constant, docs/architecture.md,
"Money"), a rejected command changes nothing (principle 5), and settlement is a pure
function of the cards (631a.12: every round reconstructable card by card)."""

from __future__ import annotations

from random import Random

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from rng.cards import ALL_CARDS, Card
from server.games.baccarat.config import TableConfig, Variant
from server.games.baccarat.engine import BaccaratRound, Meters
from server.games.baccarat.events import ProgressiveAwarded
from server.games.baccarat.hands import play_out
from server.games.baccarat.side_wagers import SPOTS, judge
from server.games.errors import IllegalAction
from server.games.events import BetAccepted, BetCancelled, WagerSettled
from server.games.progressives import MYSTERY_BONUS_CONFIGS
from server.games.round import Phase
from server.games.wagers import Wager, settle

PLAYERS = ("p1", "p2", "p3")
START = 10_000_000


class Wallet:
    """The simplest ledger: debit on acceptance, credit on settlement and awards."""

    def __init__(self) -> None:
        self.balances = dict.fromkeys(PLAYERS, START)
        self.house = 0
        self.open = 0

    def total(self) -> int:
        return sum(self.balances.values()) + self.house + self.open

    def apply(self, events: object) -> None:
        for e in events:  # type: ignore[attr-defined]
            if isinstance(e, BetAccepted):
                self.balances[e.wager.player_id] -= e.wager.amount
                self.open += e.wager.amount
            elif isinstance(e, BetCancelled):
                self.balances[e.wager.player_id] += e.wager.amount
                self.open -= e.wager.amount
            elif isinstance(e, WagerSettled):
                s = e.settlement
                self.open -= s.wager.amount
                self.balances[s.wager.player_id] += s.returned
                self.house += s.wager.amount - s.returned
            elif isinstance(e, ProgressiveAwarded):
                self.balances[e.player_id] += e.amount
                self.house -= e.amount


def _config(variant: Variant) -> TableConfig:
    return TableConfig.everything(variant, mystery_bonus=None)


SPOT_NAMES = [*sorted(SPOTS), "dragon_7"]
amounts = st.one_of(
    st.sampled_from([100, 500, 1000, 5000, 1_000_000]),
    st.sampled_from([100, 500, 1000, 5000, 1_000_000]),
    st.sampled_from([100, 500, 1000, 5000, 1_000_000]),
    st.sampled_from([2_000_000, 0, -5, 99, 2.5, True, "100"]),  # illegal amounts
)
spots = st.one_of(st.sampled_from(["player", "banker"]), st.sampled_from(SPOT_NAMES))
place = st.tuples(st.just("place"), st.sampled_from(PLAYERS), spots, amounts, st.integers(0, 12))
cancel = st.tuples(st.just("cancel"), st.sampled_from(PLAYERS), st.integers(0, 12))
commands = st.one_of(
    place,
    place,
    place,
    cancel,
    st.tuples(st.just("card"), st.sampled_from(ALL_CARDS)),
    # rarely: "no more bets" early, a void; "open" again is always illegal
    st.integers(0, 20).map(lambda n: ("void",) if n == 0 else ("close",) if n == 1 else ("open",)),
)


def _execute(rnd: BaccaratRound, command: tuple[object, ...], card: Card | None) -> list[object]:
    """Run one scripted command; IllegalAction propagates."""
    kind = command[0]
    if kind == "place":
        _, player, spot, amount, n = command
        wager = Wager(f"b{n}", str(player), str(spot), amount)  # type: ignore[arg-type]
        # place() tests the rules at once and asks verify_place() only to name the one broken:
        # the two must agree on every wager, legal or not, in every phase.
        try:
            rnd.verify_place(wager)
            expected = None
        except IllegalAction as refusal:
            expected = refusal.code
        try:
            events = list(rnd.place(wager))
        except IllegalAction as refusal:
            assert refusal.code == expected, (wager, refusal, expected)
            raise
        assert expected is None, (wager, expected)
        return events
    if kind == "cancel":
        _, player, n = command
        return list(rnd.cancel(str(player), f"b{n}"))
    if kind == "close":
        return list(rnd.close_betting())
    if kind == "card":
        assert card is not None
        return list(rnd.provide_card(card))
    if kind == "void":
        return list(rnd.void("fault"))
    return list(rnd.open())


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    variant=st.sampled_from(list(Variant)),
    script=st.lists(commands, min_size=5, max_size=80),
    deal=st.lists(st.sampled_from(ALL_CARDS), min_size=6, max_size=6),
)
def test_money_is_conserved_and_rejections_change_nothing(
    variant: Variant, script: list[tuple[object, ...]], deal: list[Card]
) -> None:
    config = TableConfig.everything(variant, mystery_bonus=MYSTERY_BONUS_CONFIGS["A-$1"])
    draws = iter(range(10**6))
    meters = Meters.for_table(config, lambda n: next(draws) % n)
    rnd = BaccaratRound(config, "r", meters)
    wallet = Wallet()
    total = wallet.total()
    wallet.apply(rnd.open())
    settled_wagers = 0
    cards = iter(deal)
    # the random script, then whatever it takes to finish the round
    tail: list[tuple[object, ...]] = [("close",)] + [("card", None)] * 6
    for command in [*script, *tail]:
        card = None
        if command[0] == "card":
            card = command[1] if command[1] is not None else next(cards, None)  # type: ignore[assignment]
            if card is None:
                continue
        before = (rnd.phase, rnd.wagers, len(rnd.settlements), rnd.pending())
        try:
            events = _execute(rnd, command, card)
        except IllegalAction:
            assert (rnd.phase, rnd.wagers, len(rnd.settlements), rnd.pending()) == before
            continue
        wallet.apply(events)
        settled_wagers += sum(isinstance(e, WagerSettled) for e in events)
        assert wallet.total() == total
        assert wallet.open == sum(w.amount for w in rnd.wagers)
    assert rnd.phase in (Phase.SETTLED, Phase.VOIDED)
    assert wallet.open == 0 and rnd.wagers == ()
    event(f"{rnd.phase.value}, {min(settled_wagers, 5)}+ wagers settled")


@settings(max_examples=300, deadline=None)
@given(
    variant=st.sampled_from(list(Variant)),
    script=st.lists(st.one_of(place, place, place, cancel), min_size=1, max_size=40),
)
def test_place_refuses_exactly_what_check_place_refuses(
    variant: Variant, script: list[tuple[object, ...]]
) -> None:
    """``place`` tests the placement rules (631a.8(a), the table limits, the phase) in one
    condition and asks ``verify_place`` only to name the rule broken: ``_execute`` asserts the
    two agree on every wager, while betting is open and after it closes."""
    rnd = BaccaratRound(_config(variant), "r")
    rnd.open()
    accepted = refused = 0
    for phase in ("open", "closed"):
        for command in script:
            try:
                _execute(rnd, command, None)
                accepted += command[0] == "place"
            except IllegalAction:
                refused += command[0] == "place"
        if phase == "open":
            rnd.close_betting()
    event(f"{min(accepted, 5)}+ accepted")
    event(f"{min(refused, 10)}+ refused")


@settings(max_examples=200, deadline=None)
@given(
    variant=st.sampled_from(list(Variant)),
    deal=st.lists(st.sampled_from(ALL_CARDS), min_size=6, max_size=6),
    order=st.randoms(use_true_random=False),
)
def test_settlement_is_a_pure_function_of_the_cards(
    variant: Variant, deal: list[Card], order: Random
) -> None:
    config = _config(variant)
    wagers = [
        Wager(f"w{i}", "p1", spot, 500 if spot == "heavenly_9_progressive" else 105)
        for i, spot in enumerate(["banker", *config.spots])
    ]
    shuffled = list(wagers)
    order.shuffle(shuffled)
    # the main wagers first (631a.8(a)), the rest in random order
    shuffled.sort(key=lambda w: w.spot not in ("player", "banker"))
    results = []
    for placement in (wagers, shuffled):
        rnd = BaccaratRound(config, "r")
        rnd.open()
        for wager in placement:
            rnd.place(wager)
        rnd.close_betting()
        it = iter(deal)
        while rnd.pending() is not None:
            rnd.provide_card(next(it))
        results.append({s.wager.bet_id: s for s in rnd.settlements})
        coup = rnd.coup
        assert coup is not None and coup == play_out(deal)
        # the engine's settlement is judge() on the completed coup, wager by wager
        for s in rnd.settlements:
            spot = SPOTS[s.wager.spot]
            assert s == settle(s.wager, judge(spot, coup, config.paytable(spot.id)).outcome)
    assert results[0] == results[1]
