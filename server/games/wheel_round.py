"""The betting phase and the wagers of one round of a wheel game (Roulette, Big Six Wheel).

Both wheel games run the same round: bets are placed and withdrawn until "no more bets"
(617a.5(b), 619a.2(a)); then the engine asks for a wheel result (a ``SpinRequest``) until a
valid one arrives — a void spin ("no spin": 00 on a double zero wheel used as single zero,
617a.4(c)(2); an irregular spin, 617a.6; the clapper between two sections, 619a.2(d)) keeps
every wager on the layout and asks again; the valid result settles every wager (617a.5(e),
619a.2(e)). ``WheelBook`` holds that shared part: the phase, the transitions (as data) and
the book of accepted wagers. Each game parses spots and settles.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final, Generic, TypeVar

from rng.cards import Card
from server.games.chance import SpinRequest
from server.games.errors import (
    DUPLICATE_BET_ID,
    NOT_IN_PHASE,
    UNKNOWN_BET,
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
from server.games.round import Phase, Request
from server.games.wagers import Outcome, Result, Settlement, Wager, settle

__all__ = ["SpinVoided", "WheelBook", "WheelRound"]

P = TypeVar("P")


@dataclass(frozen=True, slots=True)
class SpinVoided:
    """Spin number ``spin`` (counted from 0 in the round) was declared "no spin": the wheel is
    re-spun and every wager stays as it is. ``result`` is where the ball or clapper stopped, if
    anywhere (e.g. "00", 617a.4(c)(2)); ``reason`` says why."""

    round_id: str
    spin: int
    result: str | None
    reason: str


# The transitions, as data: (command, phase it is allowed in) -> phase after it. "spin" is a
# void spin (phase unchanged); "settle" is a valid result.
_TRANSITIONS: Final[dict[tuple[str, Phase], Phase]] = {
    ("open", Phase.BETTING): Phase.BETTING,
    ("place", Phase.BETTING): Phase.BETTING,
    ("cancel", Phase.BETTING): Phase.BETTING,
    ("close_betting", Phase.BETTING): Phase.DEALING,
    ("spin", Phase.DEALING): Phase.DEALING,
    ("settle", Phase.DEALING): Phase.SETTLED,
    ("void", Phase.BETTING): Phase.VOIDED,
    ("void", Phase.DEALING): Phase.VOIDED,
}


class WheelBook(Generic[P]):
    """Phase, transitions and the accepted wagers (each with its game's placement ``P``)."""

    def __init__(self, round_id: str) -> None:
        self.round_id = round_id
        self.phase = Phase.BETTING
        self.opened = False
        self.spins = 0  # spins reported so far, void ones included
        self._wagers: dict[tuple[str, str], tuple[Wager, P]] = {}

    @property
    def wagers(self) -> tuple[tuple[Wager, P], ...]:
        """The accepted wagers in the order they were placed."""
        return tuple(self._wagers.values())

    def require(self, command: str) -> None:
        """Raise ``IllegalAction(NOT_IN_PHASE)`` unless ``command`` is allowed now."""
        if (command, self.phase) not in _TRANSITIONS or (
            command in ("place", "cancel") and not self.opened
        ):
            state = self.phase.value if self.opened or command == "open" else "not yet open"
            raise IllegalAction(NOT_IN_PHASE, f"cannot {command}: the round is {state}", command)

    def _advance(self, command: str) -> None:
        self.phase = _TRANSITIONS[(command, self.phase)]

    def open(self) -> tuple[object, ...]:
        self.require("open")
        if self.opened:
            raise IllegalAction(NOT_IN_PHASE, "betting is already open", "open")
        self.opened = True
        return (BettingOpened(self.round_id),)

    def check_new(self, wager: Wager) -> None:
        """Check a new wager's phase, amount and bet id (not its spot)."""
        self.require("place")
        check_amount(wager.amount)
        if (wager.player_id, wager.bet_id) in self._wagers:
            raise IllegalAction(
                DUPLICATE_BET_ID, f"bet {wager.bet_id!r} was already placed", wager.bet_id
            )

    def place(self, wager: Wager, placement: P) -> tuple[object, ...]:
        self.check_new(wager)
        self._wagers[(wager.player_id, wager.bet_id)] = (wager, placement)
        return (BetAccepted(self.round_id, wager),)

    def cancel(self, player_id: str, bet_id: str) -> tuple[object, ...]:
        self.require("cancel")
        entry = self._wagers.pop((player_id, bet_id), None)
        if entry is None:
            raise IllegalAction(UNKNOWN_BET, f"no bet {bet_id!r} of {player_id!r}", bet_id)
        return (BetCancelled(self.round_id, entry[0]),)

    def close_betting(self) -> tuple[object, ...]:
        """ "No more bets" (617a.5(b), 619a.2(a))."""
        self.require("close_betting")
        self._advance("close_betting")
        return (BettingClosed(self.round_id),)

    def void_spin(self, result: str | None, reason: str) -> tuple[object, ...]:
        """A spin declared "no spin": count it, keep every wager, ask again."""
        self.require("spin")
        event = SpinVoided(self.round_id, self.spins, result, reason)
        self.spins += 1
        self._advance("spin")
        return (event,)

    def settle(self, settlements: Iterable[Settlement], result: str) -> tuple[object, ...]:
        """A valid result: every wager settled, the losing ones first and then the winning
        ones, as the dealer collects and then pays (617a.5(e), 619a.2(e))."""
        self.require("settle")
        settled = sorted(settlements, key=lambda s: s.outcome.result is Result.WIN)
        if sorted((s.wager.player_id, s.wager.bet_id) for s in settled) != sorted(self._wagers):
            raise InvariantViolation("every wager must be settled exactly once")
        self.spins += 1
        self._advance("settle")
        return (
            *(WagerSettled(self.round_id, s) for s in settled),
            RoundSettled(self.round_id, result),
        )

    def void(self, reason: str) -> tuple[object, ...]:
        """The round is voided before settlement: every wager returned in full."""
        self.require("void")
        self._advance("void")
        return (
            *(
                WagerSettled(self.round_id, settle(wager, Outcome.void()))
                for wager, _ in self._wagers.values()
            ),
            RoundVoided(self.round_id, reason),
        )


class WheelRound(Generic[P]):
    """What every wheel game's round does the same way (``RoundEngine`` with
    ``provide_spin``): phase and wagers from its ``WheelBook``, betting until "no more bets"
    (617a.5(b), 619a.2(a)), a ``SpinRequest`` until a valid result, "no spin" (617a.6,
    619a.2(b), (d)) and voiding. A game supplies ``verify_place`` (its placement ``P``),
    ``provide_spin`` and ``wheel_name``; it may override ``place`` (roulette canonicalises
    the spot)."""

    round_id: str
    _book: WheelBook[P]

    def __init__(self, round_id: str) -> None:
        self.round_id = round_id
        self._book = WheelBook(round_id)

    @property
    def wheel_name(self) -> str:  # pragma: no cover - every game names its wheel
        raise NotImplementedError

    @property
    def phase(self) -> Phase:
        return self._book.phase

    @property
    def wagers(self) -> tuple[tuple[Wager, P], ...]:
        """The accepted wagers with their placements, in the order placed."""
        return self._book.wagers

    def open(self) -> Sequence[object]:
        return self._book.open()

    def verify_place(self, wager: Wager) -> P:  # pragma: no cover - every game checks its own
        raise NotImplementedError

    def can_place(self, wager: Wager) -> bool:
        return allowed(self.verify_place, wager)

    def place(self, wager: Wager) -> Sequence[object]:
        return self._book.place(wager, self.verify_place(wager))

    def cancel(self, player_id: str, bet_id: str) -> Sequence[object]:
        return self._book.cancel(player_id, bet_id)

    def close_betting(self) -> Sequence[object]:
        return self._book.close_betting()

    def pending(self) -> Request | None:
        if self._book.phase is Phase.DEALING:
            return SpinRequest(self.wheel_name)
        return None

    def no_spin(self, reason: str) -> Sequence[object]:
        """The dealer or an automated wheel declared "no spin": the wheel is re-spun with the
        same wagers."""
        return self._book.void_spin(None, reason)

    def provide_card(self, card: Card) -> Sequence[object]:
        """A wheel game never asks for a card (the runtime's bug if called)."""
        raise InvariantViolation(f"{self.wheel_name} deals no cards")

    def void(self, reason: str) -> Sequence[object]:
        return self._book.void(reason)
