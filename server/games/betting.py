"""The book of a round: phases, commands allowed in each (as data) and the wagers, for every game.

Every game's round has the same betting phase: betting opens, wagers are placed and withdrawn
until "no more bets" (631a.9, 651a.7(d), 681a.6(b), 685a.6(c)), and from then on no wager is
placed, altered or withdrawn except those a chapter places during the round (a War Wager,
651a.9(c)(2); Insurance, a double down or a split, 685a.8-685a.10). Every wager is settled
exactly once: at its decision, or returned in full when the round is voided.

``Book`` holds that shared part: the phase, the transition table (``command, phase -> phase``,
a per-game ``Transitions`` mapping, h11-style), and the wagers accepted and not yet settled.
Each game keeps its own cards and rules, asks the book ``require(command)`` before acting and
lets it emit the betting events (``BetAccepted``, ``BetCancelled``, ``BettingClosed``,
``WagerSettled``, ``RoundSettled``, ``RoundVoided``).

Two tables are provided: ``CHANCE_TRANSITIONS`` (bet, then answer chance requests: the wheel
games, Baccarat, 21 Baccarat) and ``DECISION_TRANSITIONS``, which adds the DEALING ⇄ DECIDING
loop of games with player decisions (Casino War, Down Under Blackjack).
Commands of the tables: ``open``, ``place``, ``cancel``, ``close_betting``, ``deal`` (a chance
request answered), ``ask`` (a decision is now awaited), ``decide`` (a decision taken),
``resume`` (decisions done, dealing again), ``add`` (a wager placed during the round),
``settle`` (some wagers settled), ``finish`` (the round is settled) and ``void``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

from rng.cards import Card
from server.games.errors import (
    ABOVE_MAXIMUM,
    BELOW_MINIMUM,
    BETTING_CLOSED,
    DUPLICATE_BET_ID,
    MAIN_WAGER_REQUIRED,
    NO_DECISION_PENDING,
    NOT_IN_PHASE,
    UNKNOWN_BET,
    UNKNOWN_WAGER,
    IllegalAction,
    InvariantViolation,
    allowed,
)
from server.games.events import (
    BetAccepted,
    BetCancelled,
    BettingClosed,
    BettingOpened,
    RoundSettled,
    RoundVoided,
    WagerSettled,
)
from server.games.money import check_amount
from server.games.round import DecisionRequest, Phase
from server.games.wagers import Outcome, Result, Settlement, Wager, settle

__all__ = [
    "BAD_BET_ID",
    "BAD_DECISION",
    "BOX_TAKEN",
    "CHANCE_TRANSITIONS",
    "DECISION_TRANSITIONS",
    "MAIN_WAGER_IN_USE",
    "NOT_AN_OPTION",
    "SPOT_TAKEN",
    "Book",
    "BookRound",
    "BoxedBetting",
    "DecisionMade",
    "DecisionRequested",
    "DecisionTimedOut",
    "Decisions",
    "Limits",
    "Transitions",
    "check_box",
    "check_limits",
    "parse_box_spot",
]

# Games with betting boxes (Casino War, Down Under Blackjack): a box holds one player's wagers,
# and each of its spots one wager.
BOX_TAKEN: Final = "box_taken"
SPOT_TAKEN: Final = "spot_taken"
# Bet ids containing "~" are reserved for the wagers the rules place during a round.
BAD_BET_ID: Final = "bad_bet_id"

# A decision whose amount or form is wrong (e.g. "war+tie:" without an amount).
BAD_DECISION: Final = "bad_decision"
# A decision that is not one of the options offered.
NOT_AN_OPTION: Final = "not_an_option"

# Cancelling a wager that another wager of the player depends on (e.g. the Initial Wager under
# a Tie Wager, 651a.7(c)); cancel the dependent wager first. Same code as Baccarat's.
MAIN_WAGER_IN_USE: Final = "main_wager_in_use"

Transitions = Mapping[tuple[str, Phase], Phase]
"""(command, phase it is allowed in) -> phase after it."""

_BETTING: Final[dict[tuple[str, Phase], Phase]] = {
    ("open", Phase.BETTING): Phase.BETTING,
    ("place", Phase.BETTING): Phase.BETTING,
    ("cancel", Phase.BETTING): Phase.BETTING,
    ("close_betting", Phase.BETTING): Phase.DEALING,
    ("void", Phase.BETTING): Phase.VOIDED,
}

CHANCE_TRANSITIONS: Final[Transitions] = MappingProxyType(
    {
        **_BETTING,
        ("deal", Phase.DEALING): Phase.DEALING,
        ("settle", Phase.DEALING): Phase.DEALING,
        ("finish", Phase.DEALING): Phase.SETTLED,
        ("void", Phase.DEALING): Phase.VOIDED,
    }
)

DECISION_TRANSITIONS: Final[Transitions] = MappingProxyType(
    {
        **_BETTING,
        ("deal", Phase.DEALING): Phase.DEALING,
        ("ask", Phase.DEALING): Phase.DECIDING,
        ("decide", Phase.DECIDING): Phase.DECIDING,
        ("add", Phase.DECIDING): Phase.DECIDING,
        ("resume", Phase.DECIDING): Phase.DEALING,
        ("settle", Phase.DEALING): Phase.DEALING,
        ("settle", Phase.DECIDING): Phase.DECIDING,
        ("finish", Phase.DEALING): Phase.SETTLED,
        ("finish", Phase.DECIDING): Phase.SETTLED,
        ("void", Phase.DEALING): Phase.VOIDED,
        ("void", Phase.DECIDING): Phase.VOIDED,
    }
)


@dataclass(frozen=True, slots=True)
class Limits:
    """A table's posted minimum and maximum for one wager, in minor units (None: no limit)."""

    minimum: int | None = None
    maximum: int | None = None


NO_LIMITS: Final = Limits()


def check_limits(amount: int, limits: Limits, what: str = "the wager") -> None:
    """The posted minimum and maximum wager (e.g. 617a.1(f)(3))."""
    if limits.minimum is not None and amount < limits.minimum:
        raise IllegalAction(
            BELOW_MINIMUM, f"{what} is below the table minimum {limits.minimum}", amount
        )
    if limits.maximum is not None and amount > limits.maximum:
        raise IllegalAction(
            ABOVE_MAXIMUM, f"{what} is above the table maximum {limits.maximum}", amount
        )


def parse_box_spot(spot: str, kinds: Collection[str], boxes: int) -> tuple[str, int]:
    """``"kind:N"`` -> ``(kind, N)`` for a wager ``kind`` on betting box ``N`` (1 = the box
    farthest to the dealer's left, dealt first); ``IllegalAction(UNKNOWN_WAGER)`` otherwise."""
    kind, _, number = spot.partition(":") if isinstance(spot, str) else ("", "", "")
    if kind not in kinds or not number.isdigit() or not 1 <= int(number) <= boxes:
        raise IllegalAction(
            UNKNOWN_WAGER, f"a wager is kind:box, kind in {sorted(kinds)}, box 1-{boxes}", spot
        )
    return kind, int(number)


def check_box(book: Book, wager: Wager, box: int) -> None:
    """A box belongs to the player who wagered on it first, and holds one wager per spot;
    reserved bet ids are refused."""
    if not isinstance(wager.bet_id, str) or "~" in wager.bet_id or not wager.bet_id:
        raise IllegalAction(BAD_BET_ID, "a bet id is a non-empty string without '~'", wager.bet_id)
    suffix = f":{box}"
    for other in book.wagers:
        if other.spot.endswith(suffix):
            if other.player_id != wager.player_id:
                raise IllegalAction(BOX_TAKEN, f"box {box} is another player's", box)
            if other.spot == wager.spot:
                raise IllegalAction(SPOT_TAKEN, f"{wager.spot} already holds a wager", wager.spot)


def _no_dependency(spot: str) -> tuple[str, ...]:
    return ()


class Book:
    """The phase, the transitions and the wagers of one round.

    ``transitions``: the game's table (``CHANCE_TRANSITIONS``, ``DECISION_TRANSITIONS`` or its own).
    ``depends_on(spot)``: the spots one of which the same player must hold a wager on before
    a wager on ``spot`` is accepted (e.g. ``"tie"`` -> ``("player", "banker")``, 681a.6(d));
    such a main wager cannot be cancelled while a dependent wager stands.
    """

    __slots__ = (
        "_depends_on",
        "_open",
        "_transitions",
        "opened",
        "phase",
        "round_id",
        "settlements",
    )

    def __init__(
        self,
        round_id: str,
        transitions: Transitions = DECISION_TRANSITIONS,
        depends_on: Callable[[str], tuple[str, ...]] = _no_dependency,
    ) -> None:
        self.round_id = round_id
        self.phase = Phase.BETTING
        self.opened = False
        self._transitions = transitions
        self._depends_on = depends_on
        self._open: dict[tuple[str, str], Wager] = {}
        self.settlements: list[Settlement] = []

    # -- state ---------------------------------------------------------------------------

    @property
    def wagers(self) -> tuple[Wager, ...]:
        """Wagers accepted and not yet settled, in the order they were placed."""
        return tuple(self._open.values())

    def wager_on(self, player_id: str, spot: str) -> Wager | None:
        """The first open wager of ``player_id`` on ``spot``, if any."""
        for wager in self._open.values():
            if wager.player_id == player_id and wager.spot == spot:
                return wager
        return None

    def on_spot(self, spot: str) -> tuple[Wager, ...]:
        """Every open wager on ``spot``."""
        return tuple(w for w in self._open.values() if w.spot == spot)

    def on_spots(self, kind: str) -> tuple[Wager, ...]:
        """Every open wager on a ``kind:box`` spot of ``kind``, in the order placed."""
        prefix = f"{kind}:"
        return tuple(w for w in self._open.values() if w.spot.startswith(prefix))

    def total_on(self, player_id: str, spot: str) -> int:
        return sum(
            w.amount for w in self._open.values() if w.player_id == player_id and w.spot == spot
        )

    def allows(self, command: str) -> bool:
        if (command, self.phase) not in self._transitions:
            return False
        return self.opened or command in ("open", "void")

    def require(self, command: str) -> None:
        """Raise ``IllegalAction`` unless ``command`` is allowed now: ``BETTING_CLOSED`` for a
        wager after "no more bets", ``NOT_IN_PHASE`` otherwise."""
        if self.allows(command):
            return
        if command in ("place", "cancel") and self.phase in (Phase.DEALING, Phase.DECIDING):
            raise IllegalAction(BETTING_CLOSED, "no more bets", self.phase.value)
        state = self.phase.value if self.opened else "not yet open"
        raise IllegalAction(NOT_IN_PHASE, f"cannot {command}: the round is {state}", command)

    def advance(self, command: str) -> None:
        """Take the transition of ``command`` (checked)."""
        after = self._transitions.get((command, self.phase))  # one lookup on the hot path
        if after is None or not (self.opened or command in ("open", "void")):
            self.require(command)  # not allowed: raises the error that says why
            raise InvariantViolation(f"{command} allowed without its transition")
        self.phase = after

    # -- betting -------------------------------------------------------------------------

    def open(self) -> tuple[object, ...]:
        if self.opened or ("open", self.phase) not in self._transitions:  # once per round
            self.require("open")  # raises unless the phase allows it
            raise IllegalAction(NOT_IN_PHASE, "betting is already open", "open")
        self.opened = True
        return (BettingOpened(self.round_id),)

    def check_new(self, wager: Wager, limits: Limits = NO_LIMITS) -> None:
        """Check a new wager's phase, amount, bet id, limits (on the player's total on the
        spot) and main wager; the game checks the spot itself first."""
        self.require("place")
        amount = check_amount(wager.amount)
        if (wager.player_id, wager.bet_id) in self._open:
            raise IllegalAction(
                DUPLICATE_BET_ID, f"bet {wager.bet_id!r} was already placed", wager.bet_id
            )
        check_limits(amount, Limits(limits.minimum, None))
        if limits.maximum is not None:  # the total reads every open wager: only when needed
            total = amount + self.total_on(wager.player_id, wager.spot)
            check_limits(total, Limits(None, limits.maximum), "the total on the spot")
        needed = self._depends_on(wager.spot)
        if needed and not any(self.wager_on(wager.player_id, spot) for spot in needed):
            raise IllegalAction(
                MAIN_WAGER_REQUIRED, f"place a wager on {' or '.join(needed)} first", wager.spot
            )

    def place(self, wager: Wager, limits: Limits = NO_LIMITS) -> tuple[object, ...]:
        self.check_new(wager, limits)
        self._open[(wager.player_id, wager.bet_id)] = wager
        return (BetAccepted(self.round_id, wager),)

    def add(self, wager: Wager) -> tuple[object, ...]:
        """A wager the rules place during the round (War, Insurance, double, split): accepted
        in the DECIDING phase; its bet id must be new."""
        self.require("add")
        check_amount(wager.amount)
        if (wager.player_id, wager.bet_id) in self._open or any(
            (s.wager.player_id, s.wager.bet_id) == (wager.player_id, wager.bet_id)
            for s in self.settlements
        ):
            raise InvariantViolation(f"bet id {wager.bet_id!r} reused during the round")
        self._open[(wager.player_id, wager.bet_id)] = wager
        return (BetAccepted(self.round_id, wager),)

    def cancel(self, player_id: str, bet_id: str) -> tuple[object, ...]:
        self.require("cancel")
        wager = self._open.get((player_id, bet_id))
        if wager is None:
            raise IllegalAction(UNKNOWN_BET, f"no bet {bet_id!r} of {player_id!r}", bet_id)
        rest = [w for w in self._open.values() if w is not wager and w.player_id == player_id]
        for other in rest:
            needed = self._depends_on(other.spot)
            if wager.spot in needed and not any(w.spot in needed for w in rest):
                raise IllegalAction(
                    MAIN_WAGER_IN_USE, f"the wager on {other.spot} depends on this one", bet_id
                )
        del self._open[(player_id, bet_id)]
        return (BetCancelled(self.round_id, wager),)

    def close_betting(self) -> tuple[object, ...]:
        """ "No more bets"."""
        self.advance("close_betting")
        return (BettingClosed(self.round_id),)

    # -- settlement ----------------------------------------------------------------------

    def settle(self, decided: Iterable[tuple[Wager, Outcome]]) -> tuple[object, ...]:
        """Settle some open wagers: losing ones collected first, then the others paid or
        returned, as the dealer collects and then pays (e.g. 651a.9(h), 685a.7(r))."""
        pairs = list(decided)
        if not pairs:
            return ()
        self.require("settle")
        keys = {(w.player_id, w.bet_id) for w, _ in pairs}
        if len(keys) != len(pairs) or any(
            self._open.get((w.player_id, w.bet_id)) is not w for w, _ in pairs
        ):
            raise InvariantViolation("settling a wager that is not open, or twice")
        pairs.sort(key=lambda pair: pair[1].result is not Result.LOSE)
        events: list[object] = []
        for wager, outcome in pairs:
            del self._open[(wager.player_id, wager.bet_id)]
            settlement = settle(wager, outcome)
            self.settlements.append(settlement)
            events.append(WagerSettled(self.round_id, settlement))
        return tuple(events)

    def finish(self, result: str) -> tuple[object, ...]:
        """Every wager is settled: the round is."""
        if self._open:
            raise InvariantViolation(f"{len(self._open)} wagers left unsettled")
        self.advance("finish")
        return (RoundSettled(self.round_id, result),)

    def void(self, reason: str) -> tuple[object, ...]:
        """The round is voided: every wager not yet settled is returned in full; wagers
        already settled stand."""
        self.require("void")
        events = [
            WagerSettled(self.round_id, settlement)
            for settlement in (settle(w, Outcome.void()) for w in self._open.values())
        ]
        self.settlements.extend(e.settlement for e in events)
        self._open.clear()
        self.phase = self._transitions[("void", self.phase)]
        return (*events, RoundVoided(self.round_id, reason))


# -- decisions ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DecisionRequested:
    """``player_id`` must now choose among ``options`` for ``spot``; ``default`` is what a
    time-out chooses (the option that places no further money). The deadline is the caller's."""

    round_id: str
    player_id: str
    spot: str
    options: tuple[str, ...]
    default: str


@dataclass(frozen=True, slots=True)
class DecisionMade:
    round_id: str
    player_id: str
    spot: str
    decision: str


@dataclass(frozen=True, slots=True)
class DecisionTimedOut:
    """The player did not decide in time: ``default`` was taken for them (it places no
    further money: stand in Down Under Blackjack, surrender in Casino War)."""

    round_id: str
    player_id: str
    spot: str
    default: str


class Decisions:
    """The decisions a round awaits, in the order asked; several players may decide at once
    (Casino War ties, 651a.9(c); Insurance, 685a.8), each with their own deadline kept by
    the caller."""

    def __init__(self, round_id: str) -> None:
        self.round_id = round_id
        self._awaited: dict[tuple[str, str], DecisionRequest] = {}

    def __bool__(self) -> bool:
        return bool(self._awaited)

    def ask(self, request: DecisionRequest) -> DecisionRequested:
        key = (request.player_id, request.spot)
        if key in self._awaited:
            raise InvariantViolation(f"decision for {key} asked twice")
        self._awaited[key] = request
        return DecisionRequested(
            self.round_id, request.player_id, request.spot, request.options, request.default
        )

    def first(self) -> DecisionRequest | None:
        return next(iter(self._awaited.values()), None)

    @property
    def awaited(self) -> tuple[DecisionRequest, ...]:
        return tuple(self._awaited.values())

    def lookup(self, player_id: str, spot: str) -> DecisionRequest:
        """The awaited request, or ``IllegalAction(NO_DECISION_PENDING)``."""
        request = self._awaited.get((player_id, spot))
        if request is None:
            raise IllegalAction(
                NO_DECISION_PENDING, f"no decision awaited from {player_id!r} on {spot}", spot
            )
        return request

    def check(self, player_id: str, spot: str, decision: str) -> DecisionRequest:
        """The request ``decision`` answers; its head (before any ``:``) must be an option."""
        request = self.lookup(player_id, spot)
        if not isinstance(decision, str) or decision.split(":", 1)[0] not in request.options:
            raise IllegalAction(
                NOT_AN_OPTION, f"choose one of {', '.join(request.options)}", decision
            )
        return request

    def take(self, player_id: str, spot: str, decision: str) -> DecisionMade:
        self.check(player_id, spot, decision)
        del self._awaited[(player_id, spot)]
        return DecisionMade(self.round_id, player_id, spot, decision)

    def time_out(self, player_id: str) -> list[DecisionTimedOut]:
        """Every decision awaited from ``player_id`` takes its default."""
        timed = [r for r in self._awaited.values() if r.player_id == player_id]
        if not timed:
            raise IllegalAction(
                NO_DECISION_PENDING, f"no decision awaited from {player_id!r}", player_id
            )
        for request in timed:
            del self._awaited[(request.player_id, request.spot)]
        return [DecisionTimedOut(self.round_id, r.player_id, r.spot, r.default) for r in timed]

    def clear(self) -> None:
        self._awaited.clear()


class BookRound:
    """What every round kept on a ``Book`` answers the same way (``RoundEngine``'s betting
    part): the phase and wagers, ``open``, check/ask/act placing (``verify_place``/
    ``can_place``/``place``, each game checking its spots in ``verify_place`` and naming the
    posted limits in ``_limits_for``), ``cancel``, "no more bets" and ``void``; and the checks
    every ``provide_card`` makes first. A game sets ``round_id`` and ``_book``."""

    round_id: str
    _book: Book

    @property
    def phase(self) -> Phase:
        return self._book.phase

    @property
    def wagers(self) -> tuple[Wager, ...]:
        return self._book.wagers

    @property
    def settlements(self) -> tuple[Settlement, ...]:
        """Every wager settled so far, in order."""
        return tuple(self._book.settlements)

    def open(self) -> Sequence[object]:
        return self._book.open()

    def verify_place(self, wager: Wager) -> object:  # pragma: no cover - every game checks
        """Raise the ``IllegalAction`` that ``place(wager)`` would; change nothing."""
        raise NotImplementedError

    def can_place(self, wager: Wager) -> bool:
        return allowed(self.verify_place, wager)

    def _limits_for(self, wager: Wager) -> Limits:
        """The posted limits of ``wager``'s spot (default: none)."""
        return NO_LIMITS

    def place(self, wager: Wager) -> Sequence[object]:
        self.verify_place(wager)
        return self._book.place(wager, self._limits_for(wager))

    def cancel(self, player_id: str, bet_id: str) -> Sequence[object]:
        return self._book.cancel(player_id, bet_id)

    def close_betting(self) -> Sequence[object]:
        """ "No more bets" (e.g. 617a.5(b), 651a.8(c), 681a.6(b))."""
        return self._book.close_betting()

    def void(self, reason: str) -> Sequence[object]:
        return self._book.void(reason)

    def _check_card(self, card: object) -> Card:
        """A card may be dealt now (``deal`` allowed) and ``card`` is one; the caller's bug
        (``InvariantViolation``, nothing changed) otherwise."""
        self._book.require("deal")
        if not isinstance(card, Card):
            raise InvariantViolation(f"not a card: {card!r}")
        return card

    def _deal_to(self, card: object, queue: list[str]) -> str:
        """``_check_card``, then the next target of ``queue`` (taken off it): where the card
        goes. ``InvariantViolation`` if no card is pending."""
        self._check_card(card)
        if not queue:
            raise InvariantViolation("no card is pending")
        return queue.pop(0)


class BoxedBetting(BookRound):
    """The betting surface shared by the games whose players bet in boxes (Casino War, Down
    Under Blackjack): ``verify_place`` on ``kind:box`` spots, each kind with its posted
    limits. A game sets ``_book``, ``_kinds`` (the kinds a player places), ``_box_count``
    (how many boxes the layout has) and ``_limits`` (per kind), and may refuse a kind its
    table does not offer in ``_check_offered``."""

    _kinds: tuple[str, ...]
    _box_count: int
    _limits: Mapping[str, Limits]

    def _check_offered(self, kind: str, wager: Wager) -> None:
        """Refuse a kind of wager this table does not offer (default: all are offered)."""

    def verify_place(self, wager: Wager) -> None:
        """Raise the ``IllegalAction`` that ``place(wager)`` would; change nothing."""
        self._book.require("place")
        kind, box = parse_box_spot(wager.spot, self._kinds, self._box_count)
        self._check_offered(kind, wager)
        check_box(self._book, wager, box)
        self._book.check_new(wager, self._limits.get(kind, NO_LIMITS))

    def _limits_for(self, wager: Wager) -> Limits:
        return self._limits.get(wager.spot.split(":")[0], NO_LIMITS)
