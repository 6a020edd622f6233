"""One round of Roulette (617a) as a sans-I/O state machine: commands in, events out.

    round = RouletteRound(RouletteTable(WheelType.DOUBLE_ZERO), "r-1")
    round.open()                                   # BettingOpened
    round.place(Wager("b1", "alice", "split:17-20", 500))   # BetAccepted
    round.close_betting()                          # BettingClosed: "no more bets", 617a.5(b)
    round.pending()                                # SpinRequest("double_zero")
    round.provide_spin("20")                       # BallLanded, WagerSettled…, RoundSettled

The wheel result is the answer to a ``SpinRequest``: a compartment's printed label ("0", "00",
"1"…"36"), produced by the virtual wheel (``rng.wheels``) or, later, by an automated wheel's
winning-number report. On a double zero wheel used as single zero, "00" is "no spin"
(617a.4(c)(2)): ``SpinVoided`` and the same request again, every wager untouched. A device that
detects an irregular spin (617a.6) reports ``no_spin(reason)`` instead of a label.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from msgspec.structs import replace

from rng.wheel_layouts import RED_NUMBERS, WheelType, wheel_order
from server.games.betting import Limits, check_limits
from server.games.errors import WAGER_NOT_OFFERED, IllegalAction, InvariantViolation
from server.games.roulette.layout import (
    FIVE_ADJACENT_AMOUNT,
    Placement,
    WagerKind,
    parse_spot,
)
from server.games.roulette.settlement import is_void_spin, settle_all
from server.games.wagers import Wager
from server.games.wheel_round import WheelRound

__all__ = ["BallLanded", "RouletteRound", "RouletteTable"]


@dataclass(frozen=True, slots=True)
class RouletteTable:
    """A roulette table's configuration.

    ``five_adjacent_offered``: the Five Adjacent Numbers wager is offered only if the
    certificate holder's Rules Submission says so (617a.3(e)(1)(i)); off by default.
    ``minimum`` / ``maximum``: the posted wager limits (617a.1(f)(3)), in minor units, applied
    to each wager — to each of the five Straight Wagers of a Five Adjacent Numbers wager, which
    the player "shall be deemed to have made" (617a.3(e)(1)(iii)).
    """

    wheel: WheelType
    five_adjacent_offered: bool = False
    minimum: int | None = None
    maximum: int | None = None


@dataclass(frozen=True, slots=True)
class BallLanded:
    """Spin number ``spin`` of the round ended with the ball in compartment ``label``
    (617a.5(c)). A void spin is followed by ``SpinVoided``."""

    round_id: str
    spin: int
    label: str


class RouletteRound(WheelRound[Placement]):
    """A round of Roulette; follows ``server.games.round.RoundEngine`` (with ``provide_spin``).
    "No spin" (617a.6) re-spins the wheel with the same wagers."""

    def __init__(self, table: RouletteTable, round_id: str) -> None:
        super().__init__(round_id)
        self.table = table

    @property
    def wheel_name(self) -> str:
        return self.table.wheel.value

    # --- check, ask, act (docs/architecture.md, principle 5) --------------------------------

    def verify_place(self, wager: Wager) -> Placement:
        """The placement ``wager`` would make, or ``IllegalAction`` saying why not."""
        self._book.check_new(wager)
        placement = parse_spot(wager.spot, self.table.wheel)
        parts = 1
        if placement.kind is WagerKind.FIVE_ADJACENT:
            if not self.table.five_adjacent_offered:
                raise IllegalAction(
                    WAGER_NOT_OFFERED,
                    "this table does not offer the Five Adjacent Numbers wager (617a.3(e)(1)(i))",
                    wager.spot,
                )
            if wager.amount % 5:
                raise IllegalAction(
                    FIVE_ADJACENT_AMOUNT,
                    "a Five Adjacent Numbers wager is five Straight Wagers of equal value "
                    "(617a.3(e)(1)(iii)): its amount must be a multiple of 5 minor units",
                    wager.amount,
                )
            parts = 5
        check_limits(
            wager.amount // parts,
            Limits(self.table.minimum, self.table.maximum),
            "each of the five Straight Wagers" if parts == 5 else "the wager",
        )
        return placement

    def place(self, wager: Wager) -> Sequence[object]:
        """Accept ``wager``; ``BetAccepted`` carries it with its canonical spot."""
        placement = self.verify_place(wager)
        return self._accept(replace(wager, spot=placement.spot), placement)

    def provide_spin(self, label: str) -> Sequence[object]:
        """The ball came to rest in compartment ``label`` (617a.3(d), 617a.5(c)).

        A label that is not a compartment of this wheel is a device fault
        (``InvariantViolation``; nothing changes)."""
        self._book.require("spin")
        wheel = self.table.wheel
        if not isinstance(label, str) or label not in wheel_order(wheel):
            raise InvariantViolation(f"{label!r} is not a compartment of a {wheel.value} wheel")
        landed = BallLanded(self.round_id, self.spins, label)
        if is_void_spin(label, wheel):
            return (
                landed,
                *self._void_spin(
                    label, "no spin: 00 on a double zero wheel used as single zero, 617a.4(c)(2)"
                ),
            )
        settled = settle_all(self.wagers, label, wheel)
        decided = [(s.wager, s.outcome) for s in settled]
        return (landed, *self._settle_spin(decided, _describe(label)))


def _describe(label: str) -> str:
    if label in ("0", "00"):
        return f"{label} green"
    return f"{label} {'red' if int(label) in RED_NUMBERS else 'black'}"
