"""High Card's round engine (``RoundEngine``), its settlement and its par sheet."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from fractions import Fraction

from rng.cards import Card, Rank
from server.games.betting import CHANCE_TRANSITIONS, Book, Limits
from server.games.chance import CardRequest
from server.games.errors import UNKNOWN_WAGER, IllegalAction
from server.games.events import CardDealt
from server.games.par_sheet import OutcomeLine, ParSheetRow, house_edge_of
from server.games.round import Phase, Request
from server.games.wagers import Outcome, Wager

SPOTS = ("player", "dealer")
HANDS = ("player", "dealer")
EVEN_MONEY = Fraction(1)


def _high(card: Card) -> int:
    return 14 if card.rank is Rank.ACE else int(card.rank)


def outcome(spot: str, cards: dict[str, Card]) -> Outcome:
    """A wager on ``spot`` once both hands are dealt."""
    mine = _high(cards[spot])
    other = _high(cards["dealer" if spot == "player" else "player"])
    if mine == other:
        return Outcome.push()
    return Outcome.win(EVEN_MONEY) if mine > other else Outcome.lose()


class HighCardRound:
    def __init__(self, round_id: str, limits: Limits) -> None:
        self.round_id = round_id
        self.limits = limits
        self._book = Book(round_id, CHANCE_TRANSITIONS)
        self._cards: dict[str, Card] = {}

    @property
    def phase(self) -> Phase:
        return self._book.phase

    def open(self) -> Sequence[object]:
        return self._book.open()

    def place(self, wager: Wager) -> Sequence[object]:
        if wager.spot not in SPOTS:
            raise IllegalAction(UNKNOWN_WAGER, f"no wager {wager.spot!r}", wager.spot)
        return self._book.place(wager, self.limits)

    def cancel(self, player_id: str, bet_id: str) -> Sequence[object]:
        return self._book.cancel(player_id, bet_id)

    def close_betting(self) -> Sequence[object]:
        return self._book.close_betting()

    def pending(self) -> Request | None:
        if self._book.phase is not Phase.DEALING:
            return None
        return CardRequest(HANDS[len(self._cards)])

    def provide_card(self, card: Card) -> Sequence[object]:
        self._book.advance("deal")
        target = HANDS[len(self._cards)]
        self._cards[target] = card
        events: list[object] = [CardDealt(self.round_id, target, card, len(self._cards))]
        if len(self._cards) == len(HANDS):
            player, dealer = self._cards["player"], self._cards["dealer"]
            decided = [(w, outcome(w.spot, self._cards)) for w in self._book.wagers]
            events += self._book.settle(decided)
            events += self._book.finish(f"{player.code} against {dealer.code}")
        return events

    def void(self, reason: str) -> Sequence[object]:
        return self._book.void(reason)


# --- croupier par-sheet high_card --------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """No options: one deck, dealt without replacement."""


def compute(args: argparse.Namespace) -> list[ParSheetRow]:
    """Exact, over every ordered pair of distinct cards of one deck."""
    same = Fraction(3, 51)  # the second card matches the first's rank
    win = (1 - same) / 2  # the rest splits evenly between the hands
    lines = (
        OutcomeLine("win", win, EVEN_MONEY),
        OutcomeLine("push", same, Fraction(0)),
        OutcomeLine("lose", win, Fraction(-1)),
    )
    edge = house_edge_of(lines)
    return [ParSheetRow("one_deck", spot, None, edge, "exact", lines) for spot in SPOTS]
