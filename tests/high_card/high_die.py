"""High Die: a game defined in the tests alone that asks a kind of chance no game of the
server asks — a die's roll — to prove that a new kind of chance is declared once, with the
game that asks it, and that the table core, the journal, the runtime's virtual answer, replay,
recovery and the device dealer take it without naming it (docs/architecture.md, "Adding a
game" and "Adding a device role").

Not a regulated game: a die is rolled for the player's hand and one for the dealer's; a
wager on the higher roll wins even money and equal rolls push.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from server.games.betting import Limits
from server.games.chance import ChanceRequest
from server.games.errors import InvariantViolation
from server.games.round import Phase, RoundEngine
from server.games.table import Capabilities, GameEntry, Randbelow, SeatLimit, TableSettings
from server.games.wagers import Outcome
from tests.high_card.round import EVEN_MONEY, SPOTS, HighCardRound
from tests.high_card.table import HighCardGame

# --- the new kind of chance, declared with the game that asks it ------------------------------


@dataclass(frozen=True, slots=True)
class DieRoll(ChanceRequest):
    """A die of ``sides`` faces is rolled for ``target``: the answer is the face, 1 to
    ``sides``. Without a device, the table draws it uniformly with its certified RNG."""

    kind: ClassVar[str] = "toy_die"

    target: str
    sides: int = 6

    def outcomes(self) -> int:
        return self.sides

    def outcome(self, value: int) -> int:
        return value + 1

    def read(self, data: Any) -> int:
        if type(data) is not int or not 1 <= data <= self.sides:
            raise ValueError(f"a {self.sides}-sided die shows 1 to {self.sides}, not {data!r}")
        return data


@dataclass(frozen=True, slots=True)
class DieRolled:
    """The game's own event: ``face`` came up for ``target``."""

    round_id: str
    target: str
    face: int


# --- the round ---------------------------------------------------------------------------------


def outcome(spot: str, faces: dict[str, int]) -> Outcome:
    mine, other = faces[spot], faces["dealer" if spot == "player" else "player"]
    if mine == other:
        return Outcome.push()
    return Outcome.win(EVEN_MONEY) if mine > other else Outcome.lose()


class HighDieRound(HighCardRound):
    """A ``ChanceEngine``: it asks ``DieRoll`` and takes the face through ``provide``
    (betting as High Card's round bets)."""

    def __init__(self, round_id: str, limits: Limits) -> None:
        super().__init__(round_id, limits)
        self.faces: dict[str, int] = {}

    def pending(self) -> DieRoll | None:
        if self.phase is not Phase.DEALING:
            return None
        return DieRoll(SPOTS[len(self.faces)])

    def provide_card(self, card: Any) -> Sequence[object]:
        raise InvariantViolation("High Die deals no cards")

    def provide(self, request: ChanceRequest, answer: Any) -> Sequence[object]:
        if request != self.pending() or not isinstance(request, DieRoll):
            raise InvariantViolation(f"{request!r} answered; the round asks {self.pending()!r}")
        self._book.advance("deal")
        self.faces[request.target] = answer
        events: list[object] = [DieRolled(self.round_id, request.target, answer)]
        if len(self.faces) == len(SPOTS):
            decided = [(w, outcome(w.spot, self.faces)) for w in self._book.wagers]
            events += self._book.settle(decided)
            events += self._book.finish(f"{self.faces['player']} against {self.faces['dealer']}")
        return events


# --- at a table, and its registry entry ------------------------------------------------------


class HighDieGame(HighCardGame):
    game = "high_die"
    variant = "one_die"

    def __init__(self, settings: TableSettings, randbelow: Randbelow | None = None) -> None:
        self.limits = Limits(settings.minimum, settings.maximum)
        self.chance = None  # no shoe or wheel: its dice are drawn, or rolled by a device

    def new_round(self, round_id: str, *, replay: bool = False) -> RoundEngine:
        return HighDieRound(round_id, self.limits)

    def rules(self) -> dict[str, Any]:
        return {**super().rules(), "summary": "High Die: the higher roll wins; equal rolls push."}


GAME = GameEntry(
    name="high_die",
    build=HighDieGame,
    seats=SeatLimit(4, "the test game's own bound"),
    capabilities=Capabilities(chance=(DieRoll,)),
)
