"""A table remembers each spot's decision by what the spot reads of the coup (engine._settle).

That is only sound if every spot's qualifier really reads no more than its ``Spot.reads``
declares: two coups with the same ``memo_keys`` entry must get the same decision. These tests
prove it for every spot and every paytable on many coups, and that a round settled through
the memo pays exactly what judging each wager afresh pays (631a.12, 631b).
"""

from __future__ import annotations

import itertools
import random
from collections import defaultdict

import pytest

from rng.cards import ALL_CARDS, Card
from server.games.baccarat.config import TableConfig, Variant
from server.games.baccarat.hands import Coup, play_out
from server.games.baccarat.paytables import Paytable
from server.games.baccarat.side_wagers import (
    CARDS,
    COUNTS,
    SPOTS,
    Decision,
    Spot,
    Timing,
    judge,
    memo_keys,
)
from server.games.wagers import settle
from tests.games.baccarat.baccarat_script import play

LETTERS = "ABCDEFGHI"


def _coups(n: int, seed: int) -> list[Coup]:
    rnd = random.Random(seed)  # test input only
    shoe = [card for card in ALL_CARDS for _ in range(8)]
    return [play_out(rnd.sample(shoe, 6)) for _ in range(n)]


def _initial(coup: Coup) -> Coup:
    return Coup.of(coup.player[:2], coup.banker[:2])


COUPS = _coups(20_000, seed=8)


def _reachable_count_keys() -> set[int]:
    """Every COUNTS key a completed coup can have: all deals by card value (631a.6: ace to
    nine, and ten for the zero-value cards), played out by the third-card rule (631a.11)."""
    by_value = [
        Card.parse(code) for code in ("10S", "AS", "2S", "3S", "4S", "5S", "6S", "7S", "8S", "9S")
    ]
    keys = set()
    for initial in itertools.product(by_value, repeat=4):
        player_draws = len(play_out([*initial, *by_value[:2]]).player) == 3
        # the fifth card goes to whichever hand draws first; the sixth only to the Banker
        for fifth in by_value:
            for sixth in by_value if player_draws else by_value[:1]:
                keys.add(memo_keys(play_out([*initial, fifth, sixth]))[COUNTS])
    return keys


def test_the_sample_reaches_every_count_key() -> None:
    """So the memo checks below see each key that exists, most of them many times."""
    reachable = _reachable_count_keys()
    assert {memo_keys(c)[COUNTS] for c in COUPS} == reachable


def _memoised_spots() -> dict[tuple[str, int], tuple[Spot, Paytable]]:
    """Every (spot, paytable) a table can offer whose decisions a table memoises."""
    found = {}
    for variant in Variant:
        for letter in LETTERS:
            config = TableConfig.everything(variant, letter=letter)
            for spot_id in config.spots:
                spot, paytable = SPOTS[spot_id], config.paytable(spot_id)
                if spot.reads != CARDS:
                    found[(spot_id, id(paytable))] = (spot, paytable)
    return found


@pytest.mark.parametrize(
    ("spot", "paytable"),
    list(_memoised_spots().values()),
    ids=lambda x: getattr(x, "id", None) or getattr(x, "letter", None) or "-",
)
def test_spots_read_no_more_than_they_declare(spot: Spot, paytable: Paytable) -> None:
    seen: dict[int, tuple[Decision, Coup]] = {}
    for full in COUPS:
        coup = _initial(full) if spot.timing is Timing.INITIAL else full
        key = memo_keys(coup)[spot.reads]
        decision = judge(spot, coup, paytable)
        first = seen.setdefault(key, (decision, coup))
        assert first[0] == decision, (spot.id, first[1], coup)


def test_memo_holds_every_kind_of_reading() -> None:
    """Sanity: the declarations are not all CARDS (which would make the test above vacuous)."""
    kinds = defaultdict(list)
    for spot in SPOTS.values():
        kinds[spot.reads].append(spot.id)
    assert set(kinds) == {0, 1, 2, 3}
    assert "perfect_pairs_player" in kinds[1] and "majestic_match_banker" in kinds[2]
    assert {"lucky_nines", "harmony_progressive", "heavenly_9_progressive"} == set(kinds[CARDS])


@pytest.mark.parametrize("variant", list(Variant), ids=lambda v: v.value)
def test_rounds_settled_through_the_memo_pay_what_judging_afresh_pays(variant: Variant) -> None:
    config = TableConfig.everything(variant, letter="B")
    spots = ["banker", *config.spots]
    deals = random.Random(631)  # test input only
    shoe = [card for card in ALL_CARDS for _ in range(8)]
    stakes = [(spot, 500 + 100 * i) for i, spot in enumerate(spots)]
    for _ in range(3000):
        cards = deals.sample(shoe, 6)
        full = play_out(cards)
        played = play(config, stakes, cards[: len(full.player) + len(full.banker)])
        got = {s.wager.bet_id: s for s in played.round.settlements}
        assert len(got) == len(stakes)
        expected = {}
        for settled in got.values():
            wager, spot = settled.wager, SPOTS[settled.wager.spot]
            coup = _initial(full) if spot.timing is Timing.INITIAL else full
            expected[wager.bet_id] = settle(
                wager, judge(spot, coup, config.paytable(wager.spot)).outcome
            )
        assert got == expected
