"""Exact par sheets for Baccarat: every wager of every variant and paytable (631a, 631b).

Exact means rational: every probability is a ``Fraction`` computed by enumerating the deal
with card removal — never a simulation. Every enumerated class of deals is priced by calling
**the same** ``side_wagers.judge`` that settles real rounds, on a representative ``Coup``
of real cards, weighted by the exact number of card sequences in the class (integers until
the final division).

Three enumerations, each cached per shoe composition (a count for each of the 52 cards):

* **The deal tree by point value** (all wagers judged on completed hands). The shoe is ten
  piles of point values (0 has the tens and pictures); the tree deals P, B, P, B and the third
  cards by 631a.11 — about 10^4 initial deals, up to 100 draws each. A leaf's count is the
  product of the remaining counts. Only on a *tie* do card identities beyond value matter
  (Harmony's six of a kind, four 8s, colours; Heavenly 9's suit and colour). There the leaf is
  split into classes (all one rank or not) × (one suit / one colour / mixed), counted exactly
  with falling factorials of the per-rank/suit/colour counts, so removal is exact for any
  shoe. Leaves with the same point counts, card counts and (on ties) class are merged.
* **Two cards of one hand by card** (Perfect Pairs, Majestic Match, Player/Banker Pair):
  52 × 52 ordered pairs. Any two positions of a shuffled shoe have the distribution of the
  first two.
* **The four initial cards by nine-and-suit** (Lucky Nines): the four nines and "not a nine",
  5^4 sequences.

``tests/games/baccarat/test_par_sheet.py`` checks all three against a brute-force deal of
every ordering of small shoes, card by card through ``hands.play_out``, with no merging.
For progressive wagers the jackpot award is valued at 0 (the wager is lost) and its
probability is listed as its own outcome line.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from fractions import Fraction
from functools import lru_cache
from typing import TYPE_CHECKING

from rng.cards import ALL_CARDS, Card, Colour, Rank, Suit
from server.games.baccarat.config import FAMILIES_BY_VARIANT, Variant
from server.games.baccarat.hands import (
    BANKER_DRAWS_AFTER_PLAYER_DRAW,
    BANKER_DRAWS_WHEN_PLAYER_STANDS,
    PLAYER_DRAWS,
    POINT_VALUE,
    Coup,
)
from server.games.baccarat.paytables import BASE, PAYTABLES, Paytable
from server.games.baccarat.side_wagers import SPOTS, Spot, Timing, judge
from server.games.par_sheet import OutcomeLine, ParSheetRow, house_edge_of

if TYPE_CHECKING:
    import argparse

__all__ = [
    "ROWS_BY_VARIANT",
    "Shoe",
    "add_arguments",
    "compute",
    "outcome_lines",
    "par_sheet",
    "shoe_from_cards",
    "shoe_of",
]

Shoe = tuple[int, ...]  # count of each card, by Card.index (52 entries)
Weighted = tuple[tuple[Coup, int], ...]  # representative coups and their exact counts

# The wager ids of the issue, per variant, in order.
_RP = (
    "player", "banker", "tie", "sun_7", "moon_8", "nine_over_seven",
    "two_card_8_over_two_card_1", "player_wins_three_card_6", "banker_wins_1_or_2",
    "both_8_or_9", "one_over_zero", "three_card_6_over_three_card_3",
    "three_card_8_over_three_card_0", "banker_wins_over_two_card_7",
    "three_card_9_over_three_card_6", "three_card_9_over_three_card_8",
    "player_three_card_8_over_banker_three_card_0", "tie_0", "tie_1_2_3", "tie_4_5_6_7",
    "tie_8_9", "player_pair", "banker_pair",
)  # fmt: skip
ROWS_BY_VARIANT: dict[Variant, tuple[str, ...]] = {
    Variant.STANDARD: (
        "player", "banker", "tie", "perfect_pairs_player", "perfect_pairs_banker",
        "majestic_match_player", "majestic_match_banker", "lucky_nines",
        "heavenly_9_progressive", "fortune_7", "golden_8", "heavenly_9", "blazing_7s",
        "cover_all", "golden_talons_player", "golden_talons_banker", "harmony_progressive",
    ),
    Variant.COMMISSION_FREE: ("player", "banker", "tie", "player_pair", "banker_pair", "lucky_six"),
    Variant.RISING_PHOENIX: _RP,
    Variant.RISING_PHOENIX_COMMISSION_FREE: _RP,
}  # fmt: skip


def shoe_of(decks: int) -> Shoe:
    """A shoe of ``decks`` full decks."""
    return (decks,) * 52


def shoe_from_cards(cards: Iterable[Card]) -> Shoe:
    """A shoe holding exactly ``cards`` (any multiset; for tests with small shoes)."""
    counts = [0] * 52
    for card in cards:
        counts[card.index] += 1
    return tuple(counts)


def _fall(n: int, k: int) -> int:
    """The falling factorial n (n-1) ... (n-k+1): ordered draws of k from n, 0 if k > n."""
    return math.perm(n, k) if 0 <= k <= n else 0


# -- representative cards --------------------------------------------------------------------

_RANK_OF_VALUE = {v: Rank(v) for v in range(1, 10)}
_ZERO_RANKS = (Rank.TEN, Rank.JACK, Rank.QUEEN, Rank.KING)
_SUITS_MIXED = (Suit.SPADES, Suit.HEARTS)  # two colours
_SUITS_COLOUR = (Suit.SPADES, Suit.CLUBS)  # one colour, two suits
_SUITS_SAME = (Suit.SPADES,)
_SUIT_CYCLE = {"suit": _SUITS_SAME, "colour": _SUITS_COLOUR, "mixed": _SUITS_MIXED}


def _cards(values: Sequence[int], same_rank: bool, suit_pattern: str) -> list[Card]:
    """Real cards with these point values, all of one rank (or not), in the suit pattern."""
    suits = _SUIT_CYCLE[suit_pattern]
    out, zeros = [], 0
    for i, v in enumerate(values):
        if v:
            rank = _RANK_OF_VALUE[v]
        elif same_rank:
            rank = Rank.KING
        else:
            rank, zeros = _ZERO_RANKS[zeros % 2], zeros + 1
        out.append(Card.of(rank, suits[i % len(suits)]))
    return out


def _coup(player: Sequence[int], banker: Sequence[int], same_rank: bool, suits: str) -> Coup:
    # Deal order P, B, P, B, P3, B3; the suit pattern runs over the six cards in that order.
    order = list(zip(player[:2], banker[:2], strict=True))
    flat = [v for pair in order for v in pair] + list(player[2:]) + list(banker[2:])
    cards = _cards(flat, same_rank, suits)
    p = [cards[0], cards[2]] + ([cards[4]] if len(player) == 3 else [])
    rest = 4 + len(player) - 2
    b = [cards[1], cards[3]] + ([cards[rest]] if len(banker) == 3 else [])
    return Coup.of(p, b)


# -- the deal tree by point value ------------------------------------------------------------


def _tie_classes(shoe: Shoe, values: Sequence[int]) -> list[tuple[bool, str, int]]:
    """Split the card sequences with these point values into (all one rank?, suit pattern)
    classes with exact counts (falling factorials: removal is exact for any shoe)."""
    n = len(values)
    mult = [0] * 10
    for v in values:
        mult[v] += 1

    def ways(rank: Rank | None = None, suit: Suit | None = None, colour: Colour | None = None) -> int:  # fmt: skip  # noqa: E501
        """Card sequences with these values whose every card has this rank, suit, colour."""
        per_value = [0] * 10
        for card in ALL_CARDS:
            if (
                (rank is None or card.rank is rank)
                and (suit is None or card.suit is suit)
                and (colour is None or card.suit.colour is colour)
            ):
                per_value[POINT_VALUE[card.rank]] += shoe[card.index]
        return math.prod(_fall(per_value[v], mult[v]) for v in range(10) if mult[v])

    total = ways()
    one_suit = sum(ways(suit=s) for s in Suit)
    one_colour = sum(ways(colour=k) for k in Colour)
    rank = rank_suit = rank_colour = 0
    if len(set(values)) == 1:  # all one rank is possible only with all one value
        ranks = [r for r in Rank if POINT_VALUE[r] == values[0]]
        rank = sum(ways(rank=r) for r in ranks)
        rank_suit = sum(ways(rank=r, suit=s) for r in ranks for s in Suit)
        rank_colour = sum(ways(rank=r, colour=k) for r in ranks for k in Colour)
    classes = [
        (True, "suit", rank_suit),
        (True, "colour", rank_colour - rank_suit),
        (True, "mixed", rank - rank_colour),
        (False, "suit", one_suit - rank_suit),
        (False, "colour", one_colour - one_suit - (rank_colour - rank_suit)),
    ]
    rest = total - sum(w for _, _, w in classes)
    classes.append((False, "mixed", rest))
    if n < 2 or any(w < 0 for _, _, w in classes):  # pragma: no cover - arithmetic guard
        raise AssertionError(f"bad class split for {values}")
    return [c for c in classes if c[2]]


@lru_cache(maxsize=8)
def final_classes(shoe: Shoe) -> tuple[Weighted, int]:
    """Every completed deal from ``shoe`` merged into classes on which every final-hand
    wager is decided alike: representative coups with exact counts out of ``total`` (the
    ordered six-card sequences, shorter deals padded by the cards not dealt)."""
    counts = [0] * 10
    for card in ALL_CARDS:
        counts[POINT_VALUE[card.rank]] += shoe[card.index]
    size = sum(counts)
    if size < 6:
        raise ValueError("a shoe needs at least six cards")
    pad4, pad5 = (size - 4) * (size - 5), size - 5
    merged: dict[tuple[object, ...], int] = {}
    reps: dict[tuple[object, ...], tuple[tuple[int, ...], tuple[int, ...], bool, str]] = {}
    ties: dict[tuple[int, ...], list[tuple[bool, str, int]]] = {}

    def leaf(player: tuple[int, ...], banker: tuple[int, ...], weight: int) -> None:
        pt, bt = sum(player) % 10, sum(banker) % 10
        if pt != bt:
            key: tuple[object, ...] = (pt, bt, len(player), len(banker))
            if key not in merged:
                merged[key] = 0
                reps[key] = (player, banker, False, "mixed")
            merged[key] += weight
            return
        values = player + banker
        multiset = tuple(sorted(values))
        split = ties.get(multiset)
        if split is None:
            split = ties[multiset] = _tie_classes(shoe, values)
        whole = sum(w for _, _, w in split)
        per, rest = divmod(weight, whole)  # ``weight`` is ``whole`` times the padding
        if rest:  # pragma: no cover - arithmetic guard
            raise AssertionError(f"tie leaf {values} does not split evenly")
        uniform = multiset[0] if multiset[0] == multiset[-1] else None
        for same_rank, suits, w in split:
            key = (pt, bt, len(player), len(banker), uniform, same_rank, suits)
            if key not in merged:
                merged[key] = 0
                reps[key] = (player, banker, same_rank, suits)
            merged[key] += per * w

    c = counts
    for p1 in range(10):
        w1 = c[p1]
        if not w1:
            continue
        c[p1] -= 1
        for b1 in range(10):
            w2 = w1 * c[b1]
            if not w2:
                continue
            c[b1] -= 1
            for p2 in range(10):
                w3 = w2 * c[p2]
                if not w3:
                    continue
                c[p2] -= 1
                for b2 in range(10):
                    w4 = w3 * c[b2]
                    if not w4:
                        continue
                    c[b2] -= 1
                    pc, bc = (p1 + p2) % 10, (b1 + b2) % 10
                    if pc >= 8 or bc >= 8:
                        leaf((p1, p2), (b1, b2), w4 * pad4)
                    elif PLAYER_DRAWS[pc]:
                        row = BANKER_DRAWS_AFTER_PLAYER_DRAW[bc]
                        for p3 in range(10):
                            w5 = w4 * c[p3]
                            if not w5:
                                continue
                            c[p3] -= 1
                            if row[p3]:
                                for b3 in range(10):
                                    w6 = w5 * c[b3]
                                    if w6:
                                        leaf((p1, p2, p3), (b1, b2, b3), w6)
                            else:
                                leaf((p1, p2, p3), (b1, b2), w5 * pad5)
                            c[p3] += 1
                    elif BANKER_DRAWS_WHEN_PLAYER_STANDS[bc]:
                        for b3 in range(10):
                            w5 = w4 * c[b3]
                            if w5:
                                leaf((p1, p2), (b1, b2, b3), w5 * pad5)
                    else:
                        leaf((p1, p2), (b1, b2), w4 * pad4)
                    c[b2] += 1
                c[p2] += 1
            c[b1] += 1
        c[p1] += 1
    weighted = tuple((_coup(*reps[key]), w) for key, w in merged.items())
    return weighted, _fall(size, 6)


@lru_cache(maxsize=8)
def two_card_classes(shoe: Shoe) -> tuple[Weighted, int]:
    """The initial two cards of one hand, by card: 52 × 52 ordered pairs with exact counts.
    Both hands of each representative hold the same two cards, so one list serves the
    Player and the Banker spots."""
    out = []
    for a in ALL_CARDS:
        for b in ALL_CARDS:
            w = shoe[a.index] * (shoe[b.index] - (a is b))
            if w > 0:
                out.append((Coup.of((a, b), (a, b)), w))
    size = sum(shoe)
    return tuple(out), size * (size - 1)


_NOT_NINE = Card.of(Rank.TWO, Suit.SPADES)


@lru_cache(maxsize=8)
def four_card_nine_classes(shoe: Shoe) -> tuple[Weighted, int]:
    """The four initial cards, each a nine of one suit or "not a nine": 5^4 sequences."""
    nines = [Card.of(Rank.NINE, s) for s in Suit]
    classes = [(card, shoe[card.index]) for card in nines]
    classes.append((_NOT_NINE, sum(shoe) - sum(n for _, n in classes)))
    out = []

    def deal(prefix: list[Card], weight: int, used: dict[Card, int]) -> None:
        if len(prefix) == 4:
            p1, b1, p2, b2 = prefix
            out.append((Coup.of((p1, p2), (b1, b2)), weight))
            return
        for card, n in classes:
            left = n - used.get(card, 0)
            if left > 0:
                used[card] = used.get(card, 0) + 1
                deal([*prefix, card], weight * left, used)
                used[card] -= 1

    deal([], 1, {})
    size = sum(shoe)
    return tuple(out), _fall(size, 4)


def _classes_for(spot: Spot, shoe: Shoe) -> tuple[Weighted, int]:
    if spot.timing is Timing.FINAL:
        return final_classes(shoe)
    if spot.id == "lucky_nines":
        return four_card_nine_classes(shoe)
    return two_card_classes(shoe)


def outcome_lines(spot: Spot, paytable: Paytable, shoe: Shoe) -> tuple[OutcomeLine, ...]:
    """The exact distribution of ``spot``'s decision under ``paytable`` from ``shoe``."""
    weighted, total = _classes_for(spot, shoe)
    by_line: dict[str, tuple[int, Fraction]] = {}
    for coup, w in weighted:
        decision = judge(spot, coup, paytable)
        old = by_line.get(decision.line)
        by_line[decision.line] = ((old[0] if old else 0) + w, decision.outcome.net)
    order = {line: i for i, line in enumerate(paytable.lines())}
    return tuple(
        OutcomeLine(line, Fraction(w, total), net)
        for line, (w, net) in sorted(by_line.items(), key=lambda kv: order.get(kv[0], 99))
    )


def _method(spot: Spot) -> str:
    if spot.timing is Timing.FINAL:
        text = "exact enumeration: point-value deal tree with card removal"
        if spot.family in ("harmony_progressive", "heavenly_9_progressive"):
            text += "; ties split by rank/suit/colour; jackpot valued at 0"
        return text
    if spot.id == "lucky_nines":
        return "exact enumeration: four initial cards by nine and suit, card removal"
    return "exact enumeration: a hand's two initial cards by card, card removal"


def par_sheet(shoe: Shoe, variants: Iterable[Variant] = tuple(Variant)) -> list[ParSheetRow]:
    """Every wager of every variant and paytable, exact, for ``shoe``."""
    rows = []
    for variant in variants:
        for spot_id in ROWS_BY_VARIANT[variant]:
            spot = SPOTS[spot_id]
            if spot.family in ("player", "banker", "tie"):
                tables: dict[str | None, Paytable] = {None: BASE[variant.value][spot.family]}
            else:
                if spot.family not in FAMILIES_BY_VARIANT[variant]:  # pragma: no cover
                    raise AssertionError(f"{spot_id} not offered in {variant}")
                tables = dict(PAYTABLES[spot.family])
            for letter, table in tables.items():
                lines = outcome_lines(spot, table, shoe)
                rows.append(
                    ParSheetRow(
                        variant.value,
                        spot_id,
                        letter,
                        house_edge_of(lines),
                        _method(spot),
                        lines,
                    )
                )
    return rows


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``croupier par-sheet baccarat`` (631a.3: six or eight decks)."""
    parser.add_argument("--decks", type=int, choices=(6, 8), default=8, help="decks in the shoe")


def compute(args: argparse.Namespace) -> list[ParSheetRow]:
    return par_sheet(shoe_of(int(args.decks)))
