"""Play Down Under Blackjack rounds through the engine with the par sheet's stated strategy
(``par_sheet.best_decision``), dealing from a freshly shuffled shoe each round (full card
removal). Used by a test (a few hundred rounds) and, run as a script, as a Monte Carlo
cross-check of the ``bet`` row:

    .venv/bin/python -m tests.games.down_under_blackjack.strategy_play 6 600000 11
"""

from __future__ import annotations

import math
import random
import sys

from rng.cards import ALL_CARDS, Card, Rank
from server.games.chance import CardRequest, HoleRangeRequest
from server.games.down_under_blackjack import DownUnderRound, DownUnderTable, HoleRange
from server.games.down_under_blackjack.par_sheet import best_decision
from server.games.down_under_blackjack.rules import is_large
from server.games.events import CardDealt, WagerSettled
from server.games.wagers import Wager


def play_round(decks: int, rng: random.Random, stake: int = 1000) -> int:
    """One round for one box; returns the player's net in minor units."""
    r = DownUnderRound(DownUnderTable(decks=decks), "r")
    r.open()
    r.place(Wager("b", "al", "bet:1", stake))
    r.close_betting()
    shoe = [c for c in ALL_CARDS for _ in range(decks)]
    deck = iter(rng.sample(shoe, 24))
    hands: dict[str, list[Rank]] = {"bet:1": [], "split:1": []}
    dealer: list[Card] = []
    original: tuple[Rank, ...] = ()
    net = 0
    while (request := r.pending()) is not None:
        if isinstance(request, CardRequest):
            events = r.provide_card(next(deck))
        elif isinstance(request, HoleRangeRequest):
            events = r.provide_hole_range(HoleRange.of(dealer[1]))  # the virtual reader
        elif request.spot.startswith("insurance"):
            events = r.decide("al", request.spot, "no_insurance")
        else:
            shown = is_large(dealer[0].rank) and is_large(dealer[1].rank)
            hole = dealer[1].rank if shown else HoleRange.of(dealer[1])
            decision = best_decision(
                decks,
                original,
                hands[request.spot],
                dealer[0].rank,
                hole,
                split_hand=bool(hands["split:1"]),
                options=request.options,
            )
            if decision == "split":
                hands["split:1"].append(hands["bet:1"].pop())
            events = r.decide("al", request.spot, decision)
        for e in events:
            if isinstance(e, CardDealt):
                if e.target == "dealer":
                    dealer.append(e.card)
                else:
                    hands[e.target].append(e.card.rank)
            elif isinstance(e, WagerSettled):
                net += e.settlement.net
        if not original and len(hands["bet:1"]) == 2:
            original = tuple(hands["bet:1"])
    return net


def main(argv: list[str]) -> None:
    decks, rounds, seed = (int(x) for x in argv)
    rng = random.Random(seed)
    total = square = 0.0
    for _ in range(rounds):
        x = play_round(decks, rng) / 1000
        total += x
        square += x * x
    mean = total / rounds
    se = math.sqrt((square / rounds - mean * mean) / rounds)
    print(f"{decks} decks, {rounds} rounds: house edge {-mean:.4%} ± {se:.4%} (1 SE)")


if __name__ == "__main__":
    main(sys.argv[1:])
