"""One round of Down Under Blackjack (685a) as a sans-I/O state machine: commands in, events out.

    round = DownUnderRound(DownUnderTable(decks=6, match_the_dealer=True), "r-1")
    round.open()
    round.place(Wager("b1", "alice", "bet:1", 1000))               # 685a.6(d)
    round.place(Wager("b2", "alice", "match_the_dealer:1", 100))   # 685a.6(e)
    round.close_betting()
    # 685a.7(e): CardRequest("bet:1"), CardRequest("dealer"), CardRequest("bet:1"),
    #            CardRequest("dealer", face_up=False) - the hole card, dealt face down
    # 685a.7(f): Match-the-Dealer settled; 685a.7(g): Insurance asked if the up card is an ace
    # 685a.7(h): HoleRangeRequest() - answered by provide_hole_range(HoleRange.MEDIUM)
    # 685a.7(i)-(k): DecisionRequest(alice, "bet:1", ("hit", "stand", "double", ...), "stand")
    # 685a.7(l)-(r): HoleCardRevealed, the dealer's cards, every Bet settled.

Spots are ``kind:box`` (box 1 is dealt first, the farthest to the dealer's left). Players
place ``bet`` and ``match_the_dealer``; the rules place ``insurance``, ``split`` (the second
hand's wager), ``double`` and ``double_split`` (a Double Down on the first or second hand).
Decisions name the hand by its wager's spot: ``bet:N`` or ``split:N``; Insurance by
``insurance:N``. Decisions: ``hit``, ``stand``, ``double`` (or ``double:AMOUNT``, at most the
initial Bet, 685a.9(a)), ``split`` (685a.10); ``insurance`` (or ``insurance:AMOUNT``, at most
half the Bet rounded up to a minor unit, 685a.8(b)), ``no_insurance``, ``even_money`` (a
player with Blackjack takes 1 to 1 at once, 685a.7(g)). A time-out stands, or declines
Insurance: the options that place no further money.

The hole card (a ``CardDealt`` with ``face_up=False``, for the journal only) is revealed to
players by ``HoleCardRevealed``: at once if the up card and the hole card are both Large
(685a.7(h)), otherwise at the dealer's turn (685a.7(l)). Before that, players learn only its
range (``HoleCardRangeRead``, with the reader's light). The reader is a chance request like a
card: the runtime answers it from the virtual reader (the range of the hole card it dealt) or
from the Masque Card Reader device. A reading that contradicts the hole card is a device fault
(``InvariantViolation``, nothing changed): the round must be voided (685a.12(h), (i)).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from rng.cards import Card, Rank
from server.games.betting import (
    BAD_DECISION,
    DECISION_TRANSITIONS,
    Book,
    BoxedBetting,
    Decisions,
    Limits,
)
from server.games.chance import CardRequest, HoleRangeRequest
from server.games.down_under_blackjack.rules import (
    DEFAULT_LIGHTS,
    MATCH_PAYTABLES,
    HoleRange,
    PlayedHand,
    bet_outcome,
    dealer_draws,
    dealer_total,
    insurance_outcome,
    is_blackjack,
    is_large,
    match_the_dealer_outcome,
    player_total,
    point_value,
)
from server.games.errors import WAGER_NOT_OFFERED, IllegalAction, InvariantViolation, allowed
from server.games.events import CardDealt
from server.games.money import EVEN
from server.games.round import DecisionRequest, Phase, Request
from server.games.wagers import Outcome, Wager

__all__ = [
    "BOXES",
    "DealerStood",
    "DownUnderRound",
    "DownUnderTable",
    "HoleCardRangeRead",
    "HoleCardRevealed",
]

BOXES: Final = 6  # 685a.2(a): betting positions for no more than six players
_PLAYER_KINDS: Final = ("bet", "match_the_dealer")


@dataclass(frozen=True, slots=True)
class DownUnderTable:
    """``decks``: four, five, six or eight (685a.3(a)). ``match_the_dealer``: offered only with
    six or eight decks (685a.6(e)). ``lights``: the reader's light for each range (685a.1).
    ``limits``: posted limits per wager kind (``bet``, ``match_the_dealer``)."""

    decks: int = 6
    match_the_dealer: bool = False
    lights: Mapping[HoleRange, str] = field(default_factory=lambda: dict(DEFAULT_LIGHTS))
    limits: Mapping[str, Limits] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.decks not in (4, 5, 6, 8):
            raise ValueError("685a.3(a): four, five, six or eight decks")
        if self.match_the_dealer and self.decks not in MATCH_PAYTABLES:
            raise ValueError("685a.6(e): Match-the-Dealer only with six or eight decks")
        if set(self.lights) != set(HoleRange):
            raise ValueError("a light for every hole-card range")


@dataclass(frozen=True, slots=True)
class HoleCardRangeRead:
    """685a.7(h): the reader reported the hole card's range; ``light`` is its colour."""

    round_id: str
    range: HoleRange
    light: str


@dataclass(frozen=True, slots=True)
class HoleCardRevealed:
    """The dealer's hole card turned face up: 685a.7(h) (both dealer cards Large, before any
    action) or 685a.7(l) (the dealer's turn)."""

    round_id: str
    card: Card
    rule: str


@dataclass(frozen=True, slots=True)
class DealerStood:
    """685a.7(m): the dealer's final cards and total (22 is the dealer 22 of 685a.7(n))."""

    round_id: str
    cards: tuple[Card, ...]
    total: int


@dataclass
class _Hand:
    spot: str  # "bet:N" or "split:N": the spot of its wager, and the name of its decisions
    wager: Wager
    cards: list[Card]
    split: bool = False
    double: Wager | None = None
    done: bool = False

    def ranks(self) -> tuple[Rank, ...]:
        return tuple(c.rank for c in self.cards)

    def played(self) -> PlayedHand:
        return PlayedHand(self.ranks(), self.split)


@dataclass
class _Box:
    number: int
    bet: Wager
    hands: list[_Hand]
    insurance: Wager | None = None


class DownUnderRound(BoxedBetting):
    """A round of Down Under Blackjack; follows ``server.games.round.RoundEngine`` with
    ``provide_hole_range``, ``decide`` and ``time_out``."""

    _kinds = _PLAYER_KINDS
    _box_count = BOXES

    def __init__(self, table: DownUnderTable, round_id: str) -> None:
        self.table = table
        self._limits = table.limits
        self.round_id = round_id
        self._book = Book(round_id, DECISION_TRANSITIONS, depends_on)
        self._decisions = Decisions(round_id)
        self._boxes: dict[int, _Box] = {}
        self._dealer: list[Card] = []
        self._queue: list[tuple[str, bool]] = []  # initial deal: (target, face up)
        self._stage = "betting"
        self._seq = 0
        self._hole_shown = False
        self._to_deal: _Hand | None = None  # a hand waiting for a card during play

    # -- state ---------------------------------------------------------------------------

    @property
    def decisions_awaited(self) -> tuple[DecisionRequest, ...]:
        return self._decisions.awaited

    # -- betting -------------------------------------------------------------------------

    def _check_offered(self, kind: str, wager: Wager) -> None:
        if kind == "match_the_dealer" and not self.table.match_the_dealer:
            raise IllegalAction(WAGER_NOT_OFFERED, "685a.6(e): not offered here", wager.spot)

    def close_betting(self) -> Sequence[object]:
        events = list(self._book.close_betting())
        for bet in sorted(self._book.on_spots("bet"), key=_box_of):
            box = _box_of(bet)
            self._boxes[box] = _Box(box, bet, [_Hand(bet.spot, bet, [])])
        if not self._boxes:
            events.extend(self._book.finish("no wagers"))
            return tuple(events)
        spots = [f"bet:{b}" for b in self._boxes]
        # 685a.7(e): a card to each box, one up to the dealer, a second to each box, the hole.
        self._queue = [(s, True) for s in spots] + [("dealer", True)]
        self._queue += [(s, True) for s in spots] + [("dealer", False)]
        self._stage = "initial"
        return tuple(events)

    # -- chance --------------------------------------------------------------------------

    def pending(self) -> Request | None:
        if self.phase is Phase.DECIDING:
            return self._decisions.first()
        if self.phase is not Phase.DEALING:
            return None
        if self._stage == "initial":
            target, face_up = self._queue[0]
            return CardRequest(target, face_up)
        if self._stage == "read":
            return HoleRangeRequest("dealer")
        if self._stage == "play" and self._to_deal is not None:
            return CardRequest(self._to_deal.spot)
        if self._stage == "dealer":
            return CardRequest("dealer")
        return None  # pragma: no cover - every DEALING stage asks for something

    def provide_card(self, card: Card) -> Sequence[object]:
        self._check_card(card)
        request = self.pending()
        if not isinstance(request, CardRequest):
            raise InvariantViolation(f"no card is pending (waiting for {request})")
        events: list[object] = [
            CardDealt(self.round_id, request.target, card, self._seq, request.face_up)
        ]
        self._seq += 1
        if self._stage == "initial":
            self._queue.pop(0)
            if request.target == "dealer":
                self._dealer.append(card)
            else:
                self._boxes[_box_of_spot(request.target)].hands[0].cards.append(card)
            if not self._queue:
                self._after_initial(events)
        elif self._stage == "play":
            hand = self._to_deal
            if hand is None:  # pragma: no cover - pending() asked for this hand's card
                raise InvariantViolation("no hand is waiting for a card")
            hand.cards.append(card)
            self._to_deal = None
            self._continue_play(events)
        else:
            self._dealer.append(card)
            self._dealer_plays(events)
        return tuple(events)

    def provide_hole_range(self, reading: HoleRange) -> Sequence[object]:
        """The reader's answer to ``HoleRangeRequest`` (685a.7(h))."""
        self._book.require("deal")
        if self._stage != "read":
            raise InvariantViolation("no hole-card reading is pending")
        if not isinstance(reading, HoleRange):
            raise InvariantViolation(f"not a hole-card range: {reading!r}")
        hole = self._dealer[1]
        if reading is not HoleRange.of(hole):
            raise InvariantViolation(
                "the reader's range contradicts the hole card: device fault (685a.12(h), (i))"
            )
        events: list[object] = [
            HoleCardRangeRead(self.round_id, reading, self.table.lights[reading])
        ]
        up = self._dealer[0]
        if is_large(up.rank) and reading is HoleRange.LARGE:
            self._hole_shown = True
            events.append(
                HoleCardRevealed(self.round_id, hole, "685a.7(h): both dealer cards are Large")
            )
        dealer_ranks = (up.rank, hole.rank)
        if is_blackjack(dealer_ranks):
            self._settle_dealer_blackjack(events)
            return tuple(events)
        # 685a.8(d): losing Insurance collected; 685a.7(i)(1): player Blackjacks paid.
        decided: list[tuple[Wager, Outcome]] = []
        for box in self._boxes.values():
            if box.insurance is not None:
                decided.append((box.insurance, insurance_outcome(hole)))
            hand = box.hands[0]
            if hand.played().blackjack and self._book.wager_on(hand.wager.player_id, hand.spot):
                decided.append((hand.wager, bet_outcome(hand.played(), dealer_ranks)))
                hand.done = True
        events.extend(self._book.settle(decided))
        self._stage = "play"
        self._continue_play(events)
        return tuple(events)

    # -- the steps of the round ----------------------------------------------------------

    def _after_initial(self, events: list[object]) -> None:
        up = self._dealer[0]
        # 685a.7(f): Match-the-Dealer, before anything else.
        decided = []
        for mtd in self._book.on_spots("match_the_dealer"):
            cards = self._boxes[_box_of(mtd)].hands[0].cards
            decided.append((mtd, match_the_dealer_outcome(cards, up, self.table.decks)))
        events.extend(self._book.settle(decided))
        if up.rank is Rank.ACE:  # 685a.7(g), 685a.8
            self._book.advance("ask")
            self._stage = "insurance"
            for box in self._boxes.values():
                options = ["insurance", "no_insurance"]
                if is_blackjack(box.hands[0].ranks()):
                    options.append("even_money")
                events.append(
                    self._decisions.ask(
                        DecisionRequest(
                            box.bet.player_id,
                            f"insurance:{box.number}",
                            tuple(options),
                            "no_insurance",
                        )
                    )
                )
            return
        self._stage = "read"

    def _settle_dealer_blackjack(self, events: list[object]) -> None:
        """685a.7(h)(1), (2): no more cards; Bets lose except Blackjacks, which push;
        Insurance wins."""
        hole = self._dealer[1]
        dealer_ranks = (self._dealer[0].rank, hole.rank)
        decided: list[tuple[Wager, Outcome]] = []
        for box in self._boxes.values():
            if box.insurance is not None:
                decided.append((box.insurance, insurance_outcome(hole)))
            hand = box.hands[0]
            if self._book.wager_on(hand.wager.player_id, hand.spot) is not None:
                decided.append((hand.wager, bet_outcome(hand.played(), dealer_ranks)))
        events.extend(self._book.settle(decided))
        self._stage = "done"
        events.extend(self._book.finish(f"dealer blackjack {self._dealer[0]} {hole}"))

    def _next_hand(self) -> _Hand | None:
        for box in self._boxes.values():
            for hand in box.hands:
                if not hand.done:
                    return hand
        return None

    def _continue_play(self, events: list[object]) -> None:
        """685a.7(i)-(k), 685a.9, 685a.10: play each hand in turn until a decision or a card
        is needed, then the dealer's turn."""
        while (hand := self._next_hand()) is not None:
            if len(hand.cards) < 2:  # a split hand's second card, 685a.10(b)
                self._to_deal = hand
                if self.phase is Phase.DECIDING:
                    self._book.advance("resume")
                return
            total = player_total(hand.ranks())
            finished = (
                total >= 21
                or hand.double is not None
                or (hand.split and hand.cards[0].rank is Rank.ACE)  # 685a.10(e)
            )
            if finished:
                hand.done = True
                continue
            if self.phase is Phase.DEALING:
                self._book.advance("ask")
            events.append(self._decisions.ask(self._play_request(hand)))
            return
        if self.phase is Phase.DECIDING:
            self._book.advance("resume")
        self._dealer_turn(events)

    def _play_request(self, hand: _Hand) -> DecisionRequest:
        options = ["hit", "stand"]
        if len(hand.cards) == 2:
            options.append("double")  # 685a.9(a), split hands included
            box = self._boxes[_box_of_spot(hand.spot)]
            pair = point_value(hand.cards[0].rank) == point_value(hand.cards[1].rank)
            if pair and len(box.hands) == 1:
                options.append("split")  # 685a.10(a), (c): once
        return DecisionRequest(hand.wager.player_id, hand.spot, tuple(options), "stand")

    def _dealer_turn(self, events: list[object]) -> None:
        self._stage = "dealer"
        if not self._hole_shown:
            self._hole_shown = True
            events.append(
                HoleCardRevealed(self.round_id, self._dealer[1], "685a.7(l): the dealer's turn")
            )
        self._dealer_plays(events)

    def _dealer_plays(self, events: list[object]) -> None:
        ranks = tuple(c.rank for c in self._dealer)
        if dealer_draws(ranks):  # 685a.7(m)
            return
        total = dealer_total(ranks)
        events.append(DealerStood(self.round_id, tuple(self._dealer), total))
        decided: list[tuple[Wager, Outcome]] = []
        for box in self._boxes.values():
            for hand in box.hands:
                if self._book.wager_on(hand.wager.player_id, hand.spot) is not None:
                    decided.append((hand.wager, bet_outcome(hand.played(), ranks)))
                if hand.double is not None:
                    decided.append((hand.double, bet_outcome(hand.played(), ranks, extra=True)))
        events.extend(self._book.settle(decided))  # 685a.7(n)-(r)
        self._stage = "done"
        events.extend(self._book.finish(f"dealer {total}"))

    # -- decisions -----------------------------------------------------------------------

    def verify_decide(self, player_id: str, spot: str, decision: str) -> int:
        """The amount ``decision`` adds to the table (0 if none), or the ``IllegalAction``
        ``decide`` would raise; changes nothing."""
        self._book.require("decide")
        self._decisions.check(player_id, spot, decision)
        head, _, amount_text = decision.partition(":")
        box = self._boxes[_box_of_spot(spot)]
        if head in ("insurance", "double"):
            most = (box.bet.amount + 1) // 2 if head == "insurance" else box.bet.amount
            if not amount_text:
                return most
            if not amount_text.isdigit() or not 1 <= int(amount_text) <= most:
                raise IllegalAction(BAD_DECISION, f"{head}:AMOUNT, 1 to {most}", decision)
            return int(amount_text)
        if amount_text:
            raise IllegalAction(BAD_DECISION, f"{head!r} takes no amount", decision)
        return box.bet.amount if head == "split" else 0

    def stake_of(self, player_id: str, spot: str, decision: str) -> int:
        """The money ``decision`` puts on the table: the Insurance, Double Down or split
        wager (685a.8-685a.10); 0 to hit or stand."""
        return self.verify_decide(player_id, spot, decision)

    def can_decide(self, player_id: str, spot: str, decision: str) -> bool:
        return allowed(self.verify_decide, player_id, spot, decision)

    def wagers_added(self, player_id: str, spot: str, decision: str) -> Sequence[Wager]:
        """The wager ``decision`` would place — the Insurance, Double Down or split wager
        (685a.8-685a.10), none to hit, stand or take even money; changes nothing."""
        amount = self.verify_decide(player_id, spot, decision)
        wager = self._decision_wager(spot, decision.partition(":")[0], amount)
        return () if wager is None else (wager,)

    def _decision_wager(self, spot: str, choice: str, amount: int) -> Wager | None:
        """The wager ``choice`` places from ``spot`` for ``amount``, if it places one."""
        box = self._boxes[_box_of_spot(spot)]
        bet = box.bet
        if spot.startswith("insurance:"):
            if choice != "insurance":
                return None
            return Wager(f"{bet.bet_id}~insurance", bet.player_id, spot, amount)
        if choice == "double":
            kind = "double_split" if spot.startswith("split:") else "double"
            return Wager(f"{bet.bet_id}~{kind}", bet.player_id, f"{kind}:{box.number}", amount)
        if choice == "split":
            return Wager(f"{bet.bet_id}~split", bet.player_id, f"split:{box.number}", amount)
        return None

    def decide(self, player_id: str, spot: str, decision: str) -> Sequence[object]:
        amount = self.verify_decide(player_id, spot, decision)
        self._book.advance("decide")
        events: list[object] = [self._decisions.take(player_id, spot, decision)]
        self._apply(spot, decision.partition(":")[0], amount, events)
        self._after_insurance()
        return tuple(events)

    def time_out(self, player_id: str) -> Sequence[object]:
        """The player did not decide in time: no Insurance, or stand (no further money)."""
        self._book.require("decide")
        events: list[object] = []
        for timed in self._decisions.time_out(player_id):
            events.append(timed)
            self._apply(timed.spot, timed.default, 0, events)
        self._after_insurance()
        return tuple(events)

    def _after_insurance(self) -> None:
        """Every Insurance decision taken: the hole card is read next (685a.7(h))."""
        if self._stage == "insurance" and not self._decisions:
            self._book.advance("resume")
            self._stage = "read"

    def _apply(self, spot: str, choice: str, amount: int, events: list[object]) -> None:
        box = self._boxes[_box_of_spot(spot)]
        if spot.startswith("insurance:"):
            if choice == "insurance":
                box.insurance = self._decision_wager(spot, choice, amount)
                assert box.insurance is not None
                events.extend(self._book.add(box.insurance))
            elif choice == "even_money":  # the Blackjack paid 1 to 1 at once
                events.extend(self._book.settle([(box.bet, Outcome.win(EVEN))]))
                box.hands[0].done = True
            return
        hand = next(h for h in box.hands if h.spot == spot)
        if choice == "stand":
            hand.done = True
        elif choice == "hit":
            self._to_deal = hand
        elif choice == "double":
            hand.double = self._decision_wager(spot, choice, amount)
            assert hand.double is not None
            events.extend(self._book.add(hand.double))
            self._to_deal = hand  # 685a.9(a), (c): one card only
        else:  # split, 685a.10
            second = self._decision_wager(spot, choice, amount)
            assert second is not None
            events.extend(self._book.add(second))
            hand.split = True
            box.hands.append(_Hand(second.spot, second, [hand.cards.pop()], split=True))
            self._to_deal = hand
        if self._to_deal is not None:
            self._book.advance("resume")
            return
        self._continue_play(events)

    # -- irregularities ------------------------------------------------------------------

    def void(self, reason: str) -> Sequence[object]:
        """End the round (a reader fault, 685a.12(i)): every wager not yet settled is
        returned in full; wagers already settled stand."""
        events = super().void(reason)
        self._decisions.clear()
        self._stage = "done"
        self._to_deal = None
        return events


def _box_of_spot(spot: str) -> int:
    return int(spot.rsplit(":", 1)[1])


def _box_of(wager: Wager) -> int:
    return _box_of_spot(wager.spot)


def depends_on(spot: str) -> tuple[str, ...]:
    """685a.6(e): Match-the-Dealer goes with the Bet Wager of its box."""
    kind, _, box = spot.partition(":")
    return (f"bet:{box}",) if kind == "match_the_dealer" else ()
