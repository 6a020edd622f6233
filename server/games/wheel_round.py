"""The betting phase and the wagers of one round of a wheel game (Roulette, Big Six Wheel).

Both wheel games run the same round: bets are placed and withdrawn until "no more bets"
(617a.5(b), 619a.2(a)); then the engine asks for a wheel result (a ``SpinRequest``) until a
valid one arrives — a void spin ("no spin": 00 on a double zero wheel used as single zero,
617a.4(c)(2); an irregular spin, 617a.6; the clapper between two sections, 619a.2(d)) keeps
every wager on the layout and asks again; the valid result settles every wager (617a.5(e),
619a.2(e)). ``WheelRound`` holds that shared part on the ``betting.Book`` every game keeps its
phase, transitions (as data) and wagers in; each game parses spots and settles.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final, Generic, TypeVar

from rng.cards import Card
from server.games.betting import CHANCE_TRANSITIONS, Book, BookRound, Transitions
from server.games.chance import SpinRequest
from server.games.errors import InvariantViolation
from server.games.round import Phase, Request
from server.games.wagers import Outcome, Wager

__all__ = ["SpinVoided", "WheelRound"]

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


# A game of chance's transitions, and "spin": a void spin, which leaves the round dealing. A
# wheel deals no cards, but "deal" is never asked for, so the shared table serves.
_TRANSITIONS: Final[Transitions] = {
    **CHANCE_TRANSITIONS,
    ("spin", Phase.DEALING): Phase.DEALING,
}


class WheelRound(BookRound, Generic[P]):
    """What every wheel game's round does the same way (``RoundEngine`` with
    ``provide_spin``): phase and wagers in a ``Book``, betting until "no more bets"
    (617a.5(b), 619a.2(a)), a ``SpinRequest`` until a valid result, "no spin" (617a.6,
    619a.2(b), (d)) and voiding. Each accepted wager keeps its game's placement ``P``. A game
    supplies ``verify_place`` (the placement), ``provide_spin`` and ``wheel_name``; it may
    override ``place`` (roulette canonicalises the spot)."""

    def __init__(self, round_id: str) -> None:
        self.round_id = round_id
        self._book = Book(round_id, _TRANSITIONS)
        self._placements: dict[tuple[str, str], P] = {}
        self.spins = 0  # spins reported so far, void ones included

    @property
    def wheel_name(self) -> str:  # pragma: no cover - every game names its wheel
        raise NotImplementedError

    # A wheel game settles on placements, so its wagers come with them (not the Book's shape).
    @property
    def wagers(self) -> tuple[tuple[Wager, P], ...]:  # type: ignore[override]
        """The accepted wagers with their placements, in the order placed."""
        return tuple((w, self._placements[(w.player_id, w.bet_id)]) for w in self._book.wagers)

    def verify_place(self, wager: Wager) -> P:  # pragma: no cover - every game checks its own
        raise NotImplementedError

    def place(self, wager: Wager) -> Sequence[object]:
        return self._accept(wager, self.verify_place(wager))

    def _accept(self, wager: Wager, placement: P) -> tuple[object, ...]:
        events = self._book.place(wager)
        self._placements[(wager.player_id, wager.bet_id)] = placement
        return events

    def cancel(self, player_id: str, bet_id: str) -> Sequence[object]:
        events = self._book.cancel(player_id, bet_id)
        del self._placements[(player_id, bet_id)]
        return events

    def pending(self) -> Request | None:
        if self._book.phase is Phase.DEALING:
            return SpinRequest(self.wheel_name)
        return None

    def no_spin(self, reason: str) -> Sequence[object]:
        """The dealer or an automated wheel declared "no spin": the wheel is re-spun with the
        same wagers."""
        return self._void_spin(None, reason)

    def _void_spin(self, result: str | None, reason: str) -> tuple[object, ...]:
        """A spin declared "no spin": count it, keep every wager, ask again."""
        self._book.advance("spin")
        event = SpinVoided(self.round_id, self.spins, result, reason)
        self.spins += 1
        return (event,)

    def _settle_spin(
        self, decided: Iterable[tuple[Wager, Outcome]], result: str
    ) -> tuple[object, ...]:
        """A valid result: every wager settled, the losing ones first and then the others,
        as the dealer collects and then pays (617a.5(e), 619a.2(e))."""
        pairs = list(decided)
        self._book.require("settle")
        if len(pairs) != len(self._book.wagers):  # checked before anything changes
            raise InvariantViolation("every wager must be settled exactly once")
        events = (*self._book.settle(pairs), *self._book.finish(result))
        self.spins += 1
        return events

    def provide_card(self, card: Card) -> Sequence[object]:
        """A wheel game never asks for a card (the runtime's bug if called)."""
        raise InvariantViolation(f"{self.wheel_name} deals no cards")
