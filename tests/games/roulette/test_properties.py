"""Property tests: for random sets of roulette wagers, settlement conserves money and the
settlement of the set equals the sum of the individual wagers' settlements (617a.3(d): each
wager is settled by its own position on the layout)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from rng.wheel_layouts import WheelType, wheel_order
from server.games.events import WagerSettled
from server.games.roulette import (
    PAYOUT_ODDS,
    Placement,
    RouletteRound,
    RouletteTable,
    WagerKind,
    placements,
)
from server.games.wagers import Wager

ALL_PLACEMENTS = {
    wheel: [p for kind in WagerKind for p in placements(kind, wheel)] for wheel in WheelType
}


@st.composite
def rounds(draw: st.DrawFn) -> tuple[WheelType, list[Wager], list[str]]:
    wheel = draw(st.sampled_from(list(WheelType)))
    chosen = draw(st.lists(st.sampled_from(ALL_PLACEMENTS[wheel]), max_size=30))
    wagers = []
    for i, placement in enumerate(chosen):
        unit = 5 if placement.kind is WagerKind.FIVE_ADJACENT else 1
        amount = unit * draw(st.integers(min_value=1, max_value=100_000))
        player = draw(st.sampled_from(["alice", "bob", "carol"]))
        wagers.append(Wager(f"b{i}", player, placement.spot, amount))
    # The spins: possibly some void 00s first on the double-zero-as-single wheel.
    labels = list(wheel_order(wheel))
    valid = [x for x in labels if not (wheel is WheelType.DOUBLE_ZERO_AS_SINGLE and x == "00")]
    voids = draw(st.integers(0, 3)) if wheel is WheelType.DOUBLE_ZERO_AS_SINGLE else 0
    spins = ["00"] * voids + [draw(st.sampled_from(valid))]
    return wheel, wagers, spins


def _play(wheel: WheelType, wagers: list[Wager], spins: list[str]) -> dict[str, int]:
    engine = RouletteRound(RouletteTable(wheel, five_adjacent_offered=True), "r")
    engine.open()
    for wager in wagers:
        engine.place(wager)
    engine.close_betting()
    events: list[object] = []
    for label in spins:
        events.extend(engine.provide_spin(label))
    return {
        e.settlement.wager.bet_id: e.settlement.returned
        for e in events
        if isinstance(e, WagerSettled)
    }


def _expected_returned(placement: Placement, amount: int, label: str) -> int:
    """Independent of the settlement code: count chips, pay the 617a.4(a) odds."""
    if placement.kind is WagerKind.FIVE_ADJACENT:
        fifth = amount // 5
        return fifth * 36 if label in placement.numbers else 0
    if label not in placement.numbers:
        return 0
    return amount * (1 + int(PAYOUT_ODDS[placement.kind]))


@settings(max_examples=300, deadline=None)
@given(rounds())
def test_settlement_conserves_money_and_is_additive(
    case: tuple[WheelType, list[Wager], list[str]],
) -> None:
    wheel, wagers, spins = case
    together = _play(wheel, wagers, spins)
    assert set(together) == {w.bet_id for w in wagers}  # every wager settled exactly once
    alone: dict[str, int] = {}
    for wager in wagers:
        alone.update(_play(wheel, [wager], spins))
    assert together == alone
    # Money: every wager gets exactly its own chips' worth (computed independently), so the
    # players' net results and the house's (from the independent values) sum to zero.
    by_spot = {p.spot: p for p in ALL_PLACEMENTS[wheel]}
    expected = {w.bet_id: _expected_returned(by_spot[w.spot], w.amount, spins[-1]) for w in wagers}
    assert together == expected
    players_net: dict[str, int] = {}
    for wager in wagers:
        net = together[wager.bet_id] - wager.amount
        players_net[wager.player_id] = players_net.get(wager.player_id, 0) + net
    house_net = sum(w.amount for w in wagers) - sum(expected.values())
    assert sum(players_net.values()) + house_net == 0
    assert all(value >= 0 for value in together.values())
