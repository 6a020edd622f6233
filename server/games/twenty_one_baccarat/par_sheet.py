"""Exact par sheet of 21 Baccarat (681a), priced by ``hands.outcome`` (the engine's settlement).

Exact means rational, by enumeration with card removal:

* **Player, Banker, Tie**: the deal P, B, P, B and then one card to each hand below 17
  (681a.7(g); none after a natural, 681a.7(f): the Bonus-only card never changes these
  wagers). Cards are enumerated by rank (13 piles), each leaf weighted by the exact number of
  card sequences (a product of the remaining counts); leaves are priced on representative
  cards through ``outcome``.
* **Bonus Wagers**: a hand's first two cards and, below 17, its one additional card (which it
  receives whether or not a natural was dealt when a Bonus Wager is on the table, 681a.7(f)(2),
  (g)). Any positions of a shuffled shoe have the distribution of the first ones, so the hand
  is three cards from a full shoe; Player and Banker Bonus are the same. Every rank sequence
  is priced through ``outcome`` under each paytable.

``shoe`` is a count per rank (ace..king); the tests check both enumerations against a
brute-force deal of every ordering of small shoes with an independent evaluator.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from fractions import Fraction
from functools import lru_cache
from typing import TYPE_CHECKING

from rng.cards import Card, Rank, Suit
from server.games.par_sheet import OutcomeLine, ParSheetRow, house_edge_of
from server.games.twenty_one_baccarat.hands import (
    PAYTABLES_FOR_DECKS,
    Coup,
    draws,
    is_natural,
    outcome,
)

if TYPE_CHECKING:
    import argparse

__all__ = ["ROWS", "add_arguments", "bonus_lines", "compute", "main_lines", "par_sheet"]

ROWS = ("player", "banker", "tie", "bonus_player", "bonus_banker")
METHOD = "exact: enumeration of card ranks with card removal"
Shoe = tuple[int, ...]  # count per rank, ace first
_RANKS = tuple(Rank)
_CARD = {rank: Card.of(rank, Suit.SPADES) for rank in Rank}


def shoe_of(decks: int) -> Shoe:
    return (4 * decks,) * 13


def _lines(weights: dict[tuple[str, Fraction], int]) -> tuple[OutcomeLine, ...]:
    total = sum(weights.values())
    return tuple(
        OutcomeLine(name, Fraction(w, total), net)
        for (name, net), w in sorted(weights.items(), key=lambda kv: (kv[0][1], kv[0][0]))
    )


@lru_cache(maxsize=8)
def main_lines(shoe: Shoe) -> dict[str, tuple[OutcomeLine, ...]]:
    """Outcome lines of the Player, Banker and Tie Wagers.

    These wagers depend only on point values (681a.3(d)), so the piles are the ten values
    (ace, 2-9, and the 10-value cards together); each distinct pair of hands (as multisets)
    is priced once through ``outcome`` on representative cards."""
    counts = [*shoe[:9], sum(shoe[9:])]  # ace..9, then 10/J/Q/K
    hands: dict[tuple[tuple[Rank, ...], tuple[Rank, ...]], int] = defaultdict(int)
    values = range(10)
    for p1 in values:
        w1 = counts[p1]
        if not w1:
            continue
        counts[p1] -= 1
        for b1 in values:
            w2 = w1 * counts[b1]
            if not w2:
                continue
            counts[b1] -= 1
            for p2 in values:
                w3 = w2 * counts[p2]
                if not w3:
                    continue
                counts[p2] -= 1
                for b2 in values:
                    w4 = w3 * counts[b2]
                    if not w4:
                        continue
                    counts[b2] -= 1
                    _deal_on((_RANKS[p1], _RANKS[p2]), (_RANKS[b1], _RANKS[b2]), counts, w4, hands)
                    counts[b2] += 1
                counts[p2] += 1
            counts[b1] += 1
        counts[p1] += 1
    results: dict[str, dict[tuple[str, Fraction], int]] = {
        spot: defaultdict(int) for spot in ("player", "banker", "tie")
    }
    for (player, banker), weight in hands.items():
        coup = Coup(tuple(_CARD[r] for r in player), tuple(_CARD[r] for r in banker))
        for spot, table in results.items():
            o = outcome(spot, coup)
            table[(o.result.value, o.net)] += weight
    return {spot: _lines(table) for spot, table in results.items()}


def _deal_on(
    player: tuple[Rank, ...],
    banker: tuple[Rank, ...],
    counts: list[int],
    weight: int,
    hands: dict[tuple[tuple[Rank, ...], tuple[Rank, ...]], int],
) -> None:
    """Add the leaves below four initial cards: no card after a natural (681a.7(f)(1); the
    Bonus-only card never counts here), else one card to each hand below 17 (681a.7(g)).
    Every leaf is weighted as a sequence of six cards (later cards free), so all leaves share
    one denominator. Hands are kept as sorted tuples: order never changes a total."""
    n = sum(counts)
    natural = is_natural(player) or is_natural(banker)
    p_draws = not natural and draws(player)
    b_draws = not natural and draws(banker)
    ps, bs = tuple(sorted(player)), tuple(sorted(banker))
    if not p_draws and not b_draws:
        hands[(ps, bs)] += weight * n * (n - 1)
        return
    if not b_draws:
        for i, c in enumerate(counts):
            if c:
                hands[(tuple(sorted((*ps, _RANKS[i]))), bs)] += weight * c * (n - 1)
        return
    if not p_draws:
        for i, c in enumerate(counts):
            if c:
                hands[(ps, tuple(sorted((*bs, _RANKS[i]))))] += weight * c * (n - 1)
        return
    for i, c in enumerate(counts):
        if not c:
            continue
        counts[i] -= 1
        pt = tuple(sorted((*ps, _RANKS[i])))
        for j, d in enumerate(counts):
            if d:
                hands[(pt, tuple(sorted((*bs, _RANKS[j]))))] += weight * c * d
        counts[i] += 1


@lru_cache(maxsize=8)
def bonus_lines(shoe: Shoe, paytable: str) -> tuple[OutcomeLine, ...]:
    """Outcome lines of a Bonus Wager (either hand) under ``paytable``."""
    counts = list(shoe)
    n = sum(counts)
    table: dict[tuple[str, Fraction], int] = defaultdict(int)
    for i in range(13):
        w1 = counts[i]
        if not w1:
            continue
        counts[i] -= 1
        for j in range(13):
            w2 = w1 * counts[j]
            if not w2:
                continue
            counts[j] -= 1
            two = (_RANKS[i], _RANKS[j])
            if draws(two):
                for k in range(13):
                    if counts[k]:
                        _price_bonus(table, (*two, _RANKS[k]), w2 * counts[k], paytable)
            else:
                _price_bonus(table, two, w2 * (n - 2), paytable)
            counts[j] += 1
        counts[i] += 1
    return _lines(table)


def _price_bonus(
    table: dict[tuple[str, Fraction], int], ranks: tuple[Rank, ...], weight: int, paytable: str
) -> None:
    coup = Coup(tuple(_CARD[r] for r in ranks), ())
    o = outcome("bonus_player", coup, paytable)
    table[(o.result.value, o.net)] += weight


def par_sheet(decks_list: Sequence[int] = (4, 8)) -> list[ParSheetRow]:
    rows = []
    for decks in decks_list:
        shoe = shoe_of(decks)
        variant = f"21_baccarat_{decks}_decks"
        for spot, lines in main_lines(shoe).items():
            rows.append(ParSheetRow(variant, spot, None, house_edge_of(lines), METHOD, lines))
        for spot in ("bonus_player", "bonus_banker"):
            for letter in PAYTABLES_FOR_DECKS[decks]:
                lines = bonus_lines(shoe, letter)
                rows.append(ParSheetRow(variant, spot, letter, house_edge_of(lines), METHOD, lines))
    return rows


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--decks", type=int, choices=(4, 8), help="four or eight decks (default: both)"
    )


def compute(args: argparse.Namespace) -> list[ParSheetRow]:
    return par_sheet((args.decks,) if args.decks else (4, 8))
