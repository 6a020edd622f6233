"""One round of Casino War (651a) as a sans-I/O state machine: commands in, events out.

    round = CasinoWarRound(CasinoWarTable(decks=6), "r-1")
    round.open()
    round.place(Wager("b1", "alice", "initial:1", 1000))   # 651a.7(b)
    round.place(Wager("b2", "alice", "tie:1", 100))        # 651a.7(c)
    round.close_betting()                                  # "no more bets", 651a.8(c)
    round.pending()          # CardRequest("box:1"), then CardRequest("dealer"), 651a.8(c)
    round.provide_card(card) # HandCompared, WagerSettled... (651a.9(a), (b))
    # a tie hand: DecisionRequest(alice, "initial:1", ("war", "war+tie", "surrender"), "surrender")
    round.decide("alice", "initial:1", "war")            # or "war+tie:100", "surrender"
    round.time_out("alice")                              # the default: surrender, 651a.9(c)(1)
    # War: three burns (CardRequest("burn", face_up=False)), a War card to each box at War,
    # then the dealer's; War and Tie Wagers settled (651a.9(f)-(h)).

Spots are ``kind:box`` with box 1 the box farthest to the dealer's left (dealt first) and
kinds ``initial`` and ``tie``; the rules place ``war`` and ``war_tie`` during the round.
Going to War forfeits the Initial Wager and places an equal War Wager paying 2 to 1, or 3 to
1 if the War deal ties (651a.9(c)(2), 651a.10(3); docs/interpretations.md, 12). Every player with a
tie hand decides at once, each with a deadline the caller keeps; a player who does not
decide in time surrenders (the option that places no further money).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Final

from rng.cards import Card, Rank
from server.games.betting import (
    BAD_DECISION,
    DECISION_TRANSITIONS,
    Book,
    BoxedBetting,
    Decisions,
    Limits,
    check_limits,
)
from server.games.chance import CardRequest
from server.games.errors import IllegalAction, allowed
from server.games.events import CardBurned, CardDealt
from server.games.money import to_odds
from server.games.round import DecisionRequest, Phase, Request
from server.games.wagers import Outcome, Result, Wager

__all__ = [
    "BOXES",
    "BURNED_BEFORE_WAR",
    "PAYOUT_ODDS",
    "CasinoWarRound",
    "CasinoWarTable",
    "HandCompared",
    "Surrendered",
    "WarDeclared",
    "card_rank",
    "compare",
    "initial_outcome",
    "tie_outcome",
    "war_outcome",
]

BOXES: Final = 7  # 651a.2(a): betting positions for no more than seven players
BURNED_BEFORE_WAR: Final = 3  # 651a.9(f)
PAYOUT_ODDS: Final[dict[str, Fraction]] = {
    "initial": to_odds(1),  # 651a.10(1)
    "tie": to_odds(10),  # 651a.10(2)
    "war": to_odds(2),  # 651a.10(3)
    "war_on_tie": to_odds(3),  # 651a.10(3)
}
SURRENDER: Final = Outcome(Result.SURRENDER, Fraction(-1, 2))  # 651a.9(c)(1)
_OPTIONS: Final = ("war", "war+tie", "surrender")


@dataclass(frozen=True, slots=True)
class CasinoWarTable:
    """``decks``: six or eight (651a.3(a)). ``limits``: the posted limits per wager kind
    (``initial``, ``tie``; a War Wager equals its Initial Wager)."""

    decks: int = 6
    limits: dict[str, Limits] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.decks not in (6, 8):
            raise ValueError("651a.3(a): Casino War is played with six or eight decks")


# -- the rules, as functions of the cards (shared with the par sheet) --------------------------


def card_rank(card: Card) -> int:
    """651a.6: ace high, then king ... 2; suits do not count."""
    return 14 if card.rank is Rank.ACE else int(card.rank)


def compare(player: Card, dealer: Card) -> int:
    """1 if the player's card ranks higher, -1 if lower, 0 for a tie hand."""
    p, d = card_rank(player), card_rank(dealer)
    return (p > d) - (p < d)


def initial_outcome(comparison: int) -> Outcome | None:
    """651a.9(a)(1), (2): the Initial Wager on the original deal; None on a tie hand (the
    player chooses, 651a.9(c))."""
    if comparison == 0:
        return None
    return Outcome.win(PAYOUT_ODDS["initial"]) if comparison > 0 else Outcome.lose()


def tie_outcome(comparison: int) -> Outcome:
    """651a.9(a), 651a.9(g): a Tie Wager wins 10 to 1 on a tie hand, loses otherwise."""
    return Outcome.win(PAYOUT_ODDS["tie"]) if comparison == 0 else Outcome.lose()


def war_outcome(comparison: int) -> Outcome:
    """651a.9(g), 651a.10(3): the War Wager loses if the player's War card is lower, wins 2 to 1
    if higher and 3 to 1 on a War tie."""
    if comparison < 0:
        return Outcome.lose()
    return Outcome.win(PAYOUT_ODDS["war" if comparison > 0 else "war_on_tie"])


# -- events ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HandCompared:
    """Box ``box``'s card against the dealer's on the ``deal`` ("original" or "war"):
    "higher", "lower" or "tie" (651a.9(a), (g))."""

    round_id: str
    box: int
    deal: str
    player_card: Card
    dealer_card: Card
    result: str


@dataclass(frozen=True, slots=True)
class Surrendered:
    """651a.9(c)(1): half the Initial Wager collected, half returned; the box is done."""

    round_id: str
    player_id: str
    box: int


@dataclass(frozen=True, slots=True)
class WarDeclared:
    """651a.9(c)(2), (e): the Initial Wager is forfeited and a War Wager of the same amount
    placed, with an optional Tie Wager on the War deal (``tie_amount``, 0 if none)."""

    round_id: str
    player_id: str
    box: int
    war_amount: int
    tie_amount: int


_RESULT_WORD = {1: "higher", -1: "lower", 0: "tie"}


class CasinoWarRound(BoxedBetting):
    """A round of Casino War; follows ``server.games.round.RoundEngine`` with ``decide`` and
    ``time_out``. Players place ``initial`` and ``tie`` wagers in their boxes."""

    _kinds = ("initial", "tie")
    _box_count = BOXES

    def __init__(self, table: CasinoWarTable, round_id: str) -> None:
        self.table = table
        self._limits = table.limits
        self.round_id = round_id
        self._book = Book(round_id, DECISION_TRANSITIONS, depends_on)
        self._decisions = Decisions(round_id)
        self._seq = 0
        self._queue: list[str] = []  # card targets still to deal, in order
        self._cards: dict[str, Card] = {}  # target -> card of the current deal
        self._deal = "original"
        self._at_war: dict[int, Wager] = {}  # box -> War Wager
        self._result: list[str] = []

    # -- state ---------------------------------------------------------------------------

    # -- betting -------------------------------------------------------------------------

    def close_betting(self) -> Sequence[object]:
        events = list(self._book.close_betting())
        boxes = sorted(int(w.spot.split(":")[1]) for w in self._book.on_spots("initial"))
        self._queue = [f"box:{b}" for b in boxes] + (["dealer"] if boxes else [])
        if not boxes:
            events.extend(self._book.finish("no wagers"))
        return tuple(events)

    # -- dealing -------------------------------------------------------------------------

    def pending(self) -> Request | None:
        if self.phase is Phase.DEALING and self._queue:
            target = self._queue[0]
            return CardRequest(target, face_up=target != "burn")
        if self.phase is Phase.DECIDING:
            return self._decisions.first()
        return None

    @property
    def decisions_awaited(self) -> tuple[DecisionRequest, ...]:
        """Every decision awaited now (all players with a tie hand decide at once)."""
        return self._decisions.awaited

    def provide_card(self, card: Card) -> Sequence[object]:
        target = self._deal_to(card, self._queue)
        events: list[object] = []
        if target == "burn":
            events.append(CardBurned(self.round_id, card, self._seq))  # 651a.9(f)
        else:
            self._cards[target] = card
            events.append(CardDealt(self.round_id, target, card, self._seq))
        self._seq += 1
        if not self._queue:
            if self._deal == "original":
                self._after_original(events)
            else:
                self._after_war(events)
        return tuple(events)

    def _box_wager(self, kind: str, box: int) -> Wager | None:
        found = self._book.on_spot(f"{kind}:{box}")
        return found[0] if found else None

    def _after_original(self, events: list[object]) -> None:
        dealer = self._cards["dealer"]
        decided: list[tuple[Wager, Outcome]] = []
        for initial in sorted(self._book.on_spots("initial"), key=_box_of):
            box = _box_of(initial)
            card = self._cards[f"box:{box}"]
            comparison = compare(card, dealer)
            events.append(
                HandCompared(self.round_id, box, "original", card, dealer, _RESULT_WORD[comparison])
            )
            self._result.append(f"box {box} {card}-{dealer} {_RESULT_WORD[comparison]}")
            outcome = initial_outcome(comparison)
            if outcome is not None:
                decided.append((initial, outcome))
            tie = self._box_wager("tie", box)
            if tie is not None:
                decided.append((tie, tie_outcome(comparison)))
        events.extend(self._book.settle(decided))  # 651a.9(b)
        ties = self._book.on_spots("initial")
        if not ties:
            events.extend(self._book.finish("; ".join(self._result)))
            return
        self._book.advance("ask")
        for initial in sorted(ties, key=_box_of):
            events.append(
                self._decisions.ask(
                    DecisionRequest(initial.player_id, initial.spot, _OPTIONS, "surrender")
                )
            )

    # -- decisions (651a.9(c)) -----------------------------------------------------------

    def verify_decide(self, player_id: str, spot: str, decision: str) -> int:
        """The War-deal Tie Wager amount ``decision`` places (0 for none), or the
        ``IllegalAction`` that ``decide`` would raise."""
        self._book.require("decide")
        self._decisions.check(player_id, spot, decision)
        head, _, amount = decision.partition(":")
        if head != "war+tie":
            if amount:
                raise IllegalAction(BAD_DECISION, f"{head!r} takes no amount", decision)
            return 0
        if not amount.isdigit() or int(amount) <= 0:
            raise IllegalAction(
                BAD_DECISION, "war+tie:AMOUNT with a positive amount in minor units", decision
            )
        check_limits(int(amount), self.table.limits.get("tie", Limits()), "the Tie Wager")
        return int(amount)

    def stake_of(self, player_id: str, spot: str, decision: str) -> int:
        """The money ``decision`` puts on the table: going to War places a War Wager equal
        to the Initial Wager (651a.9(c)(2)), plus the optional War-deal Tie Wager."""
        tie_amount = self.verify_decide(player_id, spot, decision)
        if decision.partition(":")[0] == "surrender":
            return 0
        return self._book.on_spot(spot)[0].amount + tie_amount

    def can_decide(self, player_id: str, spot: str, decision: str) -> bool:
        return allowed(self.verify_decide, player_id, spot, decision)

    def wagers_added(self, player_id: str, spot: str, decision: str) -> Sequence[Wager]:
        """The wagers ``decision`` would place — the War Wager and the War-deal Tie Wager, or
        none to surrender (651a.9(c)); changes nothing."""
        tie_amount = self.verify_decide(player_id, spot, decision)
        if decision.partition(":")[0] == "surrender":
            return ()
        return self._war_wagers(spot, tie_amount)

    def _war_wagers(self, spot: str, tie_amount: int) -> tuple[Wager, ...]:
        """Going to War from ``spot``: a War Wager equal to the Initial Wager (651a.9(c)(2)),
        and the War-deal Tie Wager of ``tie_amount`` when there is one."""
        initial = self._book.on_spot(spot)[0]
        box = _box_of(initial)
        war = Wager(f"{initial.bet_id}~war", initial.player_id, f"war:{box}", initial.amount)
        if not tie_amount:
            return (war,)
        tie = Wager(f"{initial.bet_id}~war_tie", initial.player_id, f"war_tie:{box}", tie_amount)
        return war, tie

    def decide(self, player_id: str, spot: str, decision: str) -> Sequence[object]:
        tie_amount = self.verify_decide(player_id, spot, decision)
        self._book.advance("decide")
        events: list[object] = [self._decisions.take(player_id, spot, decision)]
        self._apply(spot, decision.partition(":")[0], tie_amount, events)
        self._after_decision(events)
        return tuple(events)

    def time_out(self, player_id: str) -> Sequence[object]:
        """``player_id`` did not decide in time: each of their tie hands surrenders."""
        self._book.require("decide")
        events: list[object] = []
        for timed in self._decisions.time_out(player_id):
            events.append(timed)
            self._apply(timed.spot, timed.default, 0, events)
        self._after_decision(events)
        return tuple(events)

    def _apply(self, spot: str, choice: str, tie_amount: int, events: list[object]) -> None:
        initial = self._book.on_spot(spot)[0]
        box = _box_of(initial)
        if choice == "surrender":
            events.extend(self._book.settle([(initial, SURRENDER)]))
            events.append(Surrendered(self.round_id, initial.player_id, box))
            return
        war, *tie = self._war_wagers(spot, tie_amount)
        events.append(WarDeclared(self.round_id, initial.player_id, box, war.amount, tie_amount))
        events.extend(self._book.settle([(initial, Outcome.lose())]))  # forfeited, 651a.9(e)
        events.extend(self._book.add(war))
        self._at_war[box] = war
        for wager in tie:
            events.extend(self._book.add(wager))

    def _after_decision(self, events: list[object]) -> None:
        if self._decisions:
            return
        if not self._at_war:
            events.extend(self._book.finish("; ".join(self._result)))
            return
        self._book.advance("resume")
        self._deal = "war"
        self._cards = {}
        boxes = sorted(self._at_war)
        self._queue = ["burn"] * BURNED_BEFORE_WAR + [f"box:{b}" for b in boxes] + ["dealer"]

    def _after_war(self, events: list[object]) -> None:
        dealer = self._cards["dealer"]
        decided: list[tuple[Wager, Outcome]] = []
        for box, war in sorted(self._at_war.items()):
            card = self._cards[f"box:{box}"]
            comparison = compare(card, dealer)
            word = _RESULT_WORD[comparison]
            events.append(HandCompared(self.round_id, box, "war", card, dealer, word))
            self._result.append(f"box {box} war {card}-{dealer} {word}")
            decided.append((war, war_outcome(comparison)))
            tie = self._box_wager("war_tie", box)
            if tie is not None:
                decided.append((tie, tie_outcome(comparison)))
        events.extend(self._book.settle(decided))  # 651a.9(h)
        events.extend(self._book.finish("; ".join(self._result)))

    # -- irregularities --------------------------------------------------------------------

    def void(self, reason: str) -> Sequence[object]:
        """End the round now: every wager not yet settled is returned in full (wagers already
        settled stand)."""
        events = super().void(reason)
        self._decisions.clear()
        self._queue = []
        return events


def _box_of(wager: Wager) -> int:
    return int(wager.spot.rsplit(":", 1)[1])


def depends_on(spot: str) -> tuple[str, ...]:
    """651a.7(c): a Tie Wager goes with the Initial Wager of its box."""
    kind, _, box = spot.partition(":")
    return (f"initial:{box}",) if kind == "tie" else ()
