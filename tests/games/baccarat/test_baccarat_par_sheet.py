"""The par sheet is exact: it agrees with an independent brute-force deal of small shoes,
with the published base-game edges, and it drives the same judging code as the engine
(631a, 631b; docs/architecture.md, principle 9)."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from itertools import permutations

import pytest

from rng.cards import Card, parse_cards
from server.games.baccarat.config import Variant
from server.games.baccarat.hands import Coup, play_out
from server.games.baccarat.par_sheet import (
    ROWS_BY_VARIANT,
    par_sheet,
    shoe_from_cards,
    shoe_of,
)
from server.games.baccarat.paytables import BASE, PAYTABLES, Paytable
from server.games.baccarat.side_wagers import SPOTS, judge
from server.games.par_sheet import row_to_json


def _brute_force(cards: list[Card]) -> dict[tuple[str, str, str | None], Fraction]:
    """Every ordering of six physical cards of a small shoe, dealt through ``play_out``,
    every wager judged on the real coup: the expected net per unit, exactly."""
    coups: Counter[Coup] = Counter()
    sequences = 0
    for order in permutations(range(len(cards)), 6):
        coups[play_out(cards[i] for i in order)] += 1
        sequences += 1
    edges: dict[tuple[str, str, str | None], Fraction] = {}
    for variant, spot_ids in ROWS_BY_VARIANT.items():
        for spot_id in spot_ids:
            spot = SPOTS[spot_id]
            tables: dict[str | None, Paytable]
            if spot.family in ("player", "banker", "tie"):
                tables = {None: BASE[variant.value][spot.family]}
            else:
                tables = dict(PAYTABLES[spot.family])
            for letter, table in tables.items():
                total = sum(n * judge(spot, coup, table).outcome.net for coup, n in coups.items())
                edges[(variant.value, spot_id, letter)] = -Fraction(total, sequences)
    return edges


SMALL_SHOES = {
    # six kings of one suit: six of a kind, six 0-value cards, same-suit and colour ties
    "kings": "KS KS KS KS KS KS JS 9D 9S",
    # nines of several suits (Lucky Nines), a royal match, four 8s
    "nines": "9S 9S 9H 9D KS QS 8H 8H 8D 8C",
    # three-card nines on both hands (Heavenly 9), pairs, mixed colours
    "three_card_nines": "KS KH QS 10C 9S 9S 9H AD 3C",
    # three-card nines tied in one suit and in one colour (the Heavenly 9 jackpot lines);
    # three nines of one suit (Lucky Nines)
    "suited_nines": "KS KS KS KS 9S 9S 9C 9S 2H",
    "mixed": "AS 2H 3D 4C 5S 6H 7D 8C",
}


def test_small_shoes_reach_every_outcome_line() -> None:
    # Together the small shoes give every line of every paytable a positive probability,
    # so the brute-force comparison checks every line, not just the common ones.
    everything = {
        (r.wager, r.paytable, line.name) for r in par_sheet(shoe_of(8)) for line in r.outcomes
    }
    reached = {
        (r.wager, r.paytable, line.name)
        for text in SMALL_SHOES.values()
        for r in par_sheet(shoe_from_cards(parse_cards(text)))
        for line in r.outcomes
        if line.probability
    }
    assert everything - reached == set()


@pytest.mark.parametrize("name", sorted(SMALL_SHOES))
def test_fast_enumeration_equals_brute_force_on_small_shoes(name: str) -> None:
    # 631a.11 deal, every 631b wager: the merged classes and the combinatorial suit/rank
    # splits give exactly the brute-force expectation, row by row.
    cards = parse_cards(SMALL_SHOES[name])
    expected = _brute_force(cards)
    rows = par_sheet(shoe_from_cards(cards))
    assert len(rows) == len(expected)
    for row in rows:
        assert row.house_edge_exact == expected[(row.variant, row.wager, row.paytable)], row


# Published exact values (Wizard of Odds, "Baccarat"; also Griffin, The Theory of Blackjack):
# house edge in percent to four places.
PUBLISHED = {
    8: {"banker": "1.0579", "player": "1.2351", "tie": "14.3596"},
    6: {"banker": "1.0558", "player": "1.2374", "tie": "14.4382"},
}


@pytest.mark.parametrize("decks", [6, 8])
def test_base_game_matches_published_edges(decks: int) -> None:
    # 631a.13: Player 1 to 1, Banker 19 to 20, Tie 8 to 1.
    rows = {r.wager: r for r in par_sheet(shoe_of(decks), [Variant.STANDARD]) if r.paytable is None}
    for wager, text in PUBLISHED[decks].items():
        assert f"{rows[wager].house_edge * 100:.4f}" == text


def test_every_row_of_the_issue_is_present_once() -> None:
    rows = par_sheet(shoe_of(8))
    keys = [(r.variant, r.wager, r.paytable) for r in rows]
    assert len(keys) == len(set(keys))
    for variant, wagers in ROWS_BY_VARIANT.items():
        present = {w for v, w, _ in keys if v == variant.value}
        assert present == set(wagers)
    letters = {w: sorted(str(p) for v, ww, p in keys if ww == w and v == "standard") for w in ("lucky_nines", "golden_talons_banker", "harmony_progressive", "perfect_pairs_player", "cover_all")}  # fmt: skip  # noqa: E501
    assert letters == {
        "lucky_nines": list("ABCD"),
        "golden_talons_banker": list("ABCDE"),
        "harmony_progressive": list("ABCDEFGHI"),
        "perfect_pairs_player": list("ABC"),
        "cover_all": list("AB"),
    }


def test_json_rows_have_the_documented_shape() -> None:
    row = par_sheet(shoe_of(8), [Variant.STANDARD])[1]
    data = row_to_json(row)
    assert set(data) == {
        "variant",
        "wager",
        "paytable",
        "house_edge",
        "house_edge_exact",
        "method",
        "outcomes",
    }
    p, q = map(int, str(data["house_edge_exact"]).split("/"))
    assert Fraction(p, q) == row.house_edge_exact


def test_progressive_jackpots_are_valued_at_zero_and_listed() -> None:
    # 631b.2(i), 631b.10(i): "100% of progressive" lines appear with their probability and
    # net -1 (the award, which includes the wager, valued at 0).
    rows = par_sheet(shoe_of(8), [Variant.STANDARD])
    h9 = next(r for r in rows if r.wager == "heavenly_9_progressive")
    jackpot = next(line for line in h9.outcomes if line.name == "three_card_9_tie_same_suit")
    assert jackpot.net == -1 and 0 < jackpot.probability < Fraction(1, 10**5)
    harmony = next(r for r in rows if r.wager == "harmony_progressive" and r.paytable == "A")
    six = next(line for line in harmony.outcomes if line.name == "six_of_a_kind")
    assert six.net == -1 and six.probability > 0


# Published exact combination counts (8 decks), Wizard of Odds: ordered six-card sequences
# (416·415·…·411) for the deal-tree wagers, unordered hands for the initial-card wagers.
#   Dragon Bonus = Golden Talons paytable A: wizardofodds.com/games/baccarat/side-bets/
#   Lucky 6 "Macau" table (12 / 20 to 1) = Lucky Six 631b.5(k): .../side-bets/lucky-6/
#   EZ Baccarat Banker = Rising Phoenix commission-free Banker, Dragon 7 = Fortune 7,
#   Panda 8 = Golden 8: .../games/ez-baccarat/ and .../side-bets/5-treasures/
#   Lucky Nines "Red Rock" table (1000/500/35/16/5/2/1) = paytable C: .../side-bets/lucky-nines/
#   Majestic Match: .../side-bets/majestic-match/
PUBLISHED_COUNTS = [
    (("standard", "golden_talons_player", "A"), 6, {
        "win_by_9": 18_409_431_764_992, "win_by_8": 34_097_645_543_424,
        "win_by_7": 89_590_261_473_280, "win_by_6": 141_238_897_317_888,
        "win_by_5": 166_169_165_987_840, "win_by_4": 186_780_352_174_080,
        "natural_win": 812_685_054_124_032, "natural_tie": 89_325_908_267_520}),
    (("standard", "golden_talons_banker", "A"), 6, {
        "win_by_9": 15_390_342_909_952, "win_by_8": 28_305_092_784_128,
        "win_by_7": 79_517_099_278_336, "win_by_6": 119_200_072_366_080,
        "win_by_5": 157_275_882_332_160, "win_by_4": 201_147_167_287_296,
        "natural_win": 812_685_054_124_032, "natural_tie": 89_325_908_267_520}),
    (("commission_free", "lucky_six", None), 6, {
        "banker_wins_with_two_card_6": 186_173_936_904_192,
        "banker_wins_with_three_card_6": 83_058_367_551_488}),
    (("rising_phoenix_commission_free", "banker", None), 6, {
        "banker_wins": 2_179_619_555_108_864, "banker_wins_with_three_card_7": 112_633_011_329_024,
        "tie": 475_627_426_473_216}),
    (("standard", "fortune_7", "A"), 6, {"fortune_7": 112_633_011_329_024}),
    (("standard", "golden_8", "A"), 6, {"golden_8": 172_660_763_262_976}),
    (("standard", "lucky_nines", "C"), 4, {
        "four_nines": 35_960, "three_nines_same_suit": 86_016, "three_nines": 1_818_624,
        "two_nines_same_suit": 8_236_032, "two_nines": 28_237_824,
        "one_nine_diamonds": 74_908_672, "one_nine": 224_726_016}),
    (("standard", "majestic_match_player", None), 2, {"royal_match": 256, "suited_match": 21_168}),
]  # fmt: skip


@pytest.mark.parametrize(("key", "cards", "counts"), PUBLISHED_COUNTS, ids=lambda x: str(x))
def test_line_counts_match_published_combinatorial_analyses(
    key: tuple[str, str, str | None], cards: int, counts: dict[str, int]
) -> None:
    from math import comb, perm

    total = perm(416, 6) if cards == 6 else comb(416, cards)
    (row,) = [r for r in par_sheet(shoe_of(8)) if (r.variant, r.wager, r.paytable) == key]
    got = {line.name: line.probability * total for line in row.outcomes}
    for name, count in counts.items():
        assert got[name] == count, name
