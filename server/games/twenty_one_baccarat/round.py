"""One round of 21 Baccarat (681a) as a sans-I/O state machine: commands in, events out.

    round = TwentyOneBaccaratRound(TwentyOneBaccaratTable(decks=8, bonus_paytable="D"), "r-1")
    round.open()
    round.place(Wager("b1", "alice", "banker", 1000))       # 681a.6(c)
    round.place(Wager("b2", "alice", "bonus_banker", 100))  # 681a.6(d)(3)
    round.close_betting()                                   # no more bets, 681a.6(b)
    round.pending()        # CardRequest("player"), ("banker"), ("player"), ("banker"), 681a.7(e)
    round.provide_card(card)
    # then one additional card to each hand below 17 (681a.7(f), (g)), then settlement.

No decision is asked: every card follows from the rules. Wagers: ``player``, ``banker``,
``tie`` and ``bonus_player`` / ``bonus_banker``; the optional ones need a Player or Banker
wager of the same player (681a.6(c), (d)).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from rng.cards import Card
from server.games.betting import CHANCE_TRANSITIONS, Book, BookRound, Limits
from server.games.chance import CardRequest
from server.games.errors import (
    UNKNOWN_WAGER,
    WAGER_NOT_OFFERED,
    IllegalAction,
)
from server.games.events import CardDealt
from server.games.round import Phase, Request
from server.games.twenty_one_baccarat.hands import (
    MAIN_SPOTS,
    PAYTABLES_FOR_DECKS,
    SPOTS,
    Coup,
    draws,
    hand_total,
    is_natural,
    outcome,
    winner,
)
from server.games.wagers import Outcome, Wager

__all__ = [
    "BETTING_POSITIONS",
    "AdditionalCardDecided",
    "HandsCompared",
    "TwentyOneBaccaratRound",
    "TwentyOneBaccaratTable",
]

BETTING_POSITIONS: Final = 8  # 681a.2(a): betting positions for no more than eight players
_INITIAL_TARGETS: Final = ("player", "banker", "player", "banker")  # 681a.7(e)


@dataclass(frozen=True, slots=True)
class TwentyOneBaccaratTable:
    """``decks``: four or eight (681a.3(a)). ``bonus_paytable``: A-C with four decks, D-F with
    eight (681a.8(c)); None if Bonus Wagers are not offered. ``tie_offered``: 681a.6(d)(1).
    ``limits``: posted limits per spot."""

    decks: int = 8
    bonus_paytable: str | None = "D"
    tie_offered: bool = True
    limits: dict[str, Limits] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.decks not in PAYTABLES_FOR_DECKS:
            raise ValueError("681a.3(a): 21 Baccarat is played with four or eight decks")
        allowed = PAYTABLES_FOR_DECKS[self.decks]
        if self.bonus_paytable is not None and self.bonus_paytable not in allowed:
            raise ValueError(f"681a.8(c): with {self.decks} decks the paytable is one of {allowed}")

    @property
    def spots(self) -> tuple[str, ...]:
        offered = {"player", "banker"}
        if self.tie_offered:
            offered.add("tie")
        if self.bonus_paytable is not None:
            offered |= {"bonus_player", "bonus_banker"}
        return tuple(s for s in SPOTS if s in offered)


@dataclass(frozen=True, slots=True)
class AdditionalCardDecided:
    """Whether ``hand`` (``total`` on two cards) takes its one additional card, and if it
    counts only for the Bonus Wagers (681a.7(f), (g)); ``rule`` cites the section."""

    round_id: str
    hand: str
    total: int
    draws: bool
    bonus_only: bool
    rule: str


@dataclass(frozen=True, slots=True)
class HandsCompared:
    """681a.7(h): the totals that count for the Player and Banker Wagers, and the result."""

    round_id: str
    player: tuple[Card, ...]
    banker: tuple[Card, ...]
    player_total: int
    banker_total: int
    winner: str


def depends_on(spot: str) -> tuple[str, ...]:
    return MAIN_SPOTS if spot not in MAIN_SPOTS else ()


class TwentyOneBaccaratRound(BookRound):
    """A round of 21 Baccarat; follows ``server.games.round.RoundEngine``."""

    def __init__(self, table: TwentyOneBaccaratTable, round_id: str) -> None:
        self.table = table
        self.round_id = round_id
        self._book = Book(round_id, CHANCE_TRANSITIONS, depends_on)
        self._cards: dict[str, list[Card]] = {"player": [], "banker": []}
        self._queue: list[str] = []
        self._seq = 0
        self._bonus_only = False
        self.coup: Coup | None = None

    def verify_place(self, wager: Wager) -> None:
        self._book.require("place")
        if wager.spot not in SPOTS:
            raise IllegalAction(UNKNOWN_WAGER, "no such 21 Baccarat wager", wager.spot)
        if wager.spot not in self.table.spots:
            raise IllegalAction(WAGER_NOT_OFFERED, "this table does not offer it", wager.spot)
        self._book.check_new(wager, self._limits_for(wager))

    def _limits_for(self, wager: Wager) -> Limits:
        return self.table.limits.get(wager.spot, Limits())

    def close_betting(self) -> Sequence[object]:
        events = list(self._book.close_betting())
        if self._book.wagers:
            self._queue = list(_INITIAL_TARGETS)
        else:
            events.extend(self._book.finish("no wagers"))
        return tuple(events)

    def pending(self) -> Request | None:
        if self.phase is Phase.DEALING and self._queue:
            return CardRequest(self._queue[0])
        return None

    def provide_card(self, card: Card) -> Sequence[object]:
        target = self._deal_to(card, self._queue)
        self._cards[target].append(card)
        events: list[object] = [CardDealt(self.round_id, target, card, self._seq)]
        self._seq += 1
        if self._seq == 4:
            self._decide_additional(events)
        if not self._queue:
            self._finish(events)
        return tuple(events)

    def _decide_additional(self, events: list[object]) -> None:
        """681a.7(f), (g): one additional card to each hand below 17."""
        ranks = {hand: [c.rank for c in cards] for hand, cards in self._cards.items()}
        natural = any(is_natural(r) for r in ranks.values())
        bonus_on_table = any(w.spot.startswith("bonus_") for w in self._book.wagers)
        self._bonus_only = natural
        for hand in ("player", "banker"):
            total = hand_total(ranks[hand])
            if natural and not bonus_on_table:
                takes, rule = False, "681a.7(f)(1): a natural and no Bonus Wager: no more cards"
            elif natural:
                takes = draws(ranks[hand])
                rule = "681a.7(f)(2): a natural; a card below 17 counts for Bonus Wagers only"
            else:
                takes = draws(ranks[hand])
                rule = "681a.7(g): one additional card below 17"
            events.append(
                AdditionalCardDecided(self.round_id, hand, total, takes, natural and takes, rule)
            )
            if takes:
                self._queue.append(hand)

    def _finish(self, events: list[object]) -> None:
        coup = Coup(tuple(self._cards["player"]), tuple(self._cards["banker"]), self._bonus_only)
        self.coup = coup
        won, _ = winner(coup.counted("player"), coup.counted("banker"))
        pt, bt = hand_total(coup.counted("player")), hand_total(coup.counted("banker"))
        events.append(
            HandsCompared(
                self.round_id,
                coup.player[:2] if coup.bonus_only else coup.player,
                coup.banker[:2] if coup.bonus_only else coup.banker,
                pt,
                bt,
                won.value,
            )
        )
        decided: list[tuple[Wager, Outcome]] = [
            (w, outcome(w.spot, coup, self.table.bonus_paytable)) for w in self._book.wagers
        ]
        events.extend(self._book.settle(decided))
        events.extend(self._book.finish(f"{won.value} {pt}-{bt}"))

    def void(self, reason: str) -> Sequence[object]:
        events = super().void(reason)
        self._queue = []
        return events
