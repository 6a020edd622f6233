"""Exact par sheet of Casino War (651a), priced by the settlement code of the round engine.

The shoe is ``decks`` × 52 cards; only ranks matter (651a.6). The original deal is one card
to the player and one to the dealer; the War deal (after a tie hand) burns three cards and
deals one War card to each. Burned cards and the cards of other players are unseen, so by
exchangeability the two War cards are distributed as two cards drawn from the shoe without
the two tied cards: the enumeration below is exact with card removal, whatever the number of
players. Every class of deals (the ranks of the two cards) is weighted by its exact number
of ordered card pairs and judged by ``initial_outcome`` / ``war_outcome`` / ``tie_outcome``.

Rows (per unit of the wager named):

* ``initial_go_to_war`` — the Initial Wager of a player who always goes to War on a tie: the
  Initial Wager is forfeited and an equal War Wager placed (docs/interpretations.md, 12), so the
  outcomes are net +1 (win), -1 (lose), and on a tie -2 / +1 / +2 (War lost / won / tied).
  The edge is per unit of the Initial Wager.
* ``initial_surrender`` — the same player always surrendering on a tie: net -1/2.
* ``tie`` — the Tie Wager on the original deal (10 to 1).
* ``war_tie`` — the Tie Wager placed on the War deal (10 to 1), given a War takes place.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from fractions import Fraction
from typing import TYPE_CHECKING

from rng.cards import Card, Rank, Suit
from server.games.casino_war.round import (
    SURRENDER,
    compare,
    initial_outcome,
    tie_outcome,
    war_outcome,
)
from server.games.par_sheet import OutcomeLine, ParSheetRow, house_edge_of

if TYPE_CHECKING:
    import argparse

__all__ = ["ROWS", "add_arguments", "casino_war_par_sheet", "compute"]

ROWS = ("initial_go_to_war", "initial_surrender", "tie", "war_tie")
METHOD = "exact: enumeration of card ranks with card removal"
_REPRESENTATIVE = {rank: Card.of(rank, Suit.SPADES) for rank in Rank}


def _pairs(counts: dict[Rank, int]) -> Iterator[tuple[int, Rank, Rank]]:
    """Ordered (player, dealer) rank pairs drawn without replacement, with their counts."""
    for p, np_ in counts.items():
        for d, nd in counts.items():
            weight = np_ * (nd - (p == d))
            if weight:
                yield weight, p, d


def _lines(weights: dict[tuple[str, Fraction], int]) -> tuple[OutcomeLine, ...]:
    total = sum(weights.values())
    return tuple(
        OutcomeLine(name, Fraction(w, total), net)
        for (name, net), w in sorted(weights.items(), key=lambda item: item[0][1])
    )


def outcome_lines(decks: int) -> dict[str, tuple[OutcomeLine, ...]]:
    """The exact outcome lines of every row for a shoe of ``decks`` decks."""
    shoe = {rank: 4 * decks for rank in Rank}
    war: dict[tuple[str, Fraction], int] = defaultdict(int)
    surrender: dict[tuple[str, Fraction], int] = defaultdict(int)
    tie: dict[tuple[str, Fraction], int] = defaultdict(int)
    war_tie: dict[tuple[str, Fraction], int] = defaultdict(int)
    for weight, p, d in _pairs(shoe):
        comparison = compare(_REPRESENTATIVE[p], _REPRESENTATIVE[d])
        t = tie_outcome(comparison)
        tie[(t.result.value, t.net)] += weight
        initial = initial_outcome(comparison)
        if initial is not None:
            # The War branch below has a common factor (N-2)(N-3): scale the rest alike.
            scale = (4 * decks * 13 - 2) * (4 * decks * 13 - 3)
            war[(initial.result.value, initial.net)] += weight * scale
            surrender[(initial.result.value, initial.net)] += weight
            continue
        surrender[("tie, surrender", SURRENDER.net)] += weight
        rest = dict(shoe)
        rest[p] -= 1
        rest[d] -= 1
        for w2, p2, d2 in _pairs(rest):
            c2 = compare(_REPRESENTATIVE[p2], _REPRESENTATIVE[d2])
            outcome = war_outcome(c2)
            # Per unit of the Initial Wager: the Initial Wager forfeited (-1) plus the War.
            name = {1: "tie, War won", -1: "tie, War lost", 0: "tie, War tied"}[c2]
            war[(name, -1 + outcome.net)] += weight * w2
            wt = tie_outcome(c2)
            war_tie[(wt.result.value, wt.net)] += w2 * weight
    return {
        "initial_go_to_war": _lines(war),
        "initial_surrender": _lines(surrender),
        "tie": _lines(tie),
        "war_tie": _lines(war_tie),
    }


def casino_war_par_sheet(decks_list: tuple[int, ...] = (6, 8)) -> list[ParSheetRow]:
    rows = []
    for decks in decks_list:
        lines = outcome_lines(decks)
        variant = f"casino_war_{decks}_decks"
        for wager in ROWS:
            edge = house_edge_of(lines[wager])
            rows.append(ParSheetRow(variant, wager, None, edge, METHOD, lines[wager]))
    return rows


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--decks", type=int, choices=(6, 8), help="six or eight decks (default: both)"
    )


def compute(args: argparse.Namespace) -> list[ParSheetRow]:
    return casino_war_par_sheet((args.decks,) if args.decks else (6, 8))
