"""The Big Six Wheel (58 Pa. Code Chapter 619a): section table, payouts, round and par sheet.

The wheel has exactly the 54 sections of 619a.1(a) in the clockwise order of 619a.1(b)
(docs/interpretations.md, 14; ``rng.wheel_layouts.BIG_SIX_ORDER``). A player wagers on one
symbol of the layout (619a.1(g)(2)); the wager wins when the clapper stops on a section with
that symbol and is paid at the odds of 619a.3, otherwise it loses (619a.2(c)).

Spots (the ``spot`` of a ``Wager``, also the par-sheet wager ids): ``one``, ``two``, ``five``,
``ten``, ``twenty`` ($1, $2, $5, $10, $20 symbols), ``joker`` and ``flag`` (the flag, name or
logo of the certificate holder).

The wheel result is the answer to a ``SpinRequest("big_six")``: the section's clockwise index
from the joker, 0–53 (as ``rng.wheels.BigSixSpin.section`` or a clapper sensor reports it). A
clapper at rest between two sections is "no spin" (619a.2(d)): ``no_spin(reason)``, the wheel is
re-spun with the same wagers.
"""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Final

from rng.wheel_layouts import BIG_SIX_ORDER, BigSixSymbol
from server.games.betting import Limits, check_limits
from server.games.errors import UNKNOWN_WAGER, IllegalAction, InvariantViolation
from server.games.money import to_odds
from server.games.par_sheet import OutcomeLine, ParSheetRow, house_edge_of
from server.games.wagers import Outcome, Wager
from server.games.wheel_round import WheelRound

__all__ = [
    "BIG_SIX_PAYOUTS",
    "BIG_SIX_SPOTS",
    "BigSixRound",
    "BigSixTable",
    "WheelStopped",
    "big_six_outcome",
    "big_six_par_sheet",
    "parse_big_six_spot",
]

BIG_SIX_SPOTS: Final[dict[str, BigSixSymbol]] = {
    "one": BigSixSymbol.ONE,
    "two": BigSixSymbol.TWO,
    "five": BigSixSymbol.FIVE,
    "ten": BigSixSymbol.TEN,
    "twenty": BigSixSymbol.TWENTY,
    "joker": BigSixSymbol.JOKER,
    "flag": BigSixSymbol.FLAG,
}
"""The layout's wager spots (619a.1(g)(2)) and the symbol each wins on."""

# 619a.3: "X to 1" (net X per unit).
BIG_SIX_PAYOUTS: Final[dict[BigSixSymbol, Fraction]] = {
    BigSixSymbol.ONE: to_odds(1),
    BigSixSymbol.TWO: to_odds(2),
    BigSixSymbol.FIVE: to_odds(5),
    BigSixSymbol.TEN: to_odds(10),
    BigSixSymbol.TWENTY: to_odds(20),
    BigSixSymbol.JOKER: to_odds(45),
    BigSixSymbol.FLAG: to_odds(45),
}


def parse_big_six_spot(spot: str) -> BigSixSymbol:
    """The symbol a Big Six wager is on, or ``IllegalAction(UNKNOWN_WAGER)``."""
    try:
        return BIG_SIX_SPOTS[spot]
    except (KeyError, TypeError):
        raise IllegalAction(
            UNKNOWN_WAGER,
            f"the Big Six Wheel has no wager {spot!r}; the spots are {', '.join(BIG_SIX_SPOTS)}",
            spot,
        ) from None


def big_six_outcome(symbol: BigSixSymbol, section: int) -> Outcome:
    """A wager on ``symbol`` when the clapper stops on ``section`` (619a.2(c), 619a.3)."""
    if BIG_SIX_ORDER[section] is symbol:
        return Outcome.win(BIG_SIX_PAYOUTS[symbol])
    return Outcome.lose()


@dataclass(frozen=True, slots=True)
class BigSixTable:
    """A Big Six Wheel table: the posted wager limits in minor units (optional)."""

    minimum: int | None = None
    maximum: int | None = None


@dataclass(frozen=True, slots=True)
class WheelStopped:
    """Spin number ``spin`` ended with the clapper on ``section`` (clockwise from the joker),
    showing ``symbol``."""

    round_id: str
    spin: int
    section: int
    symbol: BigSixSymbol


class BigSixRound(WheelRound[BigSixSymbol]):
    """A round of the Big Six Wheel; follows ``server.games.round.RoundEngine`` (with
    ``provide_spin``). A clapper between two sections, or fewer than three revolutions, is
    "no spin" (619a.2(b), (d))."""

    WHEEL: Final = "big_six"

    def __init__(self, table: BigSixTable, round_id: str) -> None:
        super().__init__(round_id)
        self.table = table

    @property
    def wheel_name(self) -> str:
        return self.WHEEL

    def verify_place(self, wager: Wager) -> BigSixSymbol:
        self._book.check_new(wager)
        symbol = parse_big_six_spot(wager.spot)
        check_limits(wager.amount, Limits(self.table.minimum, self.table.maximum))
        return symbol

    def provide_spin(self, section: int) -> Sequence[object]:
        """The clapper stopped on ``section`` (0–53 clockwise from the joker); every wager is
        settled (619a.2(c), (e)). Anything else is a device fault (``InvariantViolation``)."""
        self._book.require("settle")
        if (
            isinstance(section, bool)
            or not isinstance(section, int)
            or not 0 <= section < len(BIG_SIX_ORDER)
        ):
            raise InvariantViolation(f"{section!r} is not a section of the Big Six Wheel")
        symbol = BIG_SIX_ORDER[section]
        stopped = WheelStopped(self.round_id, self.spins, section, symbol)
        decided = [(wager, big_six_outcome(bet, section)) for wager, bet in self.wagers]
        return (stopped, *self._settle_spin(decided, symbol.value))


def big_six_par_sheet() -> list[ParSheetRow]:
    """The exact house edge of every Big Six wager: each of the 54 sections of 619a.1(a), (b)
    has probability 1/54; each wager is settled by ``big_six_outcome`` on every section."""
    counts = Counter(BIG_SIX_ORDER)
    rows = []
    for spot, symbol in BIG_SIX_SPOTS.items():
        by_outcome: Counter[Outcome] = Counter(
            big_six_outcome(symbol, section) for section in range(len(BIG_SIX_ORDER))
        )
        lines = tuple(
            OutcomeLine(o.result.value, Fraction(n, len(BIG_SIX_ORDER)), o.net)
            for o, n in sorted(by_outcome.items(), key=lambda item: -item[0].net)
        )
        rows.append(
            ParSheetRow(
                variant="big_six",
                wager=spot,
                paytable=None,
                house_edge_exact=house_edge_of(lines),
                method=(
                    f"exact enumeration: 54 sections each 1/54 (619a.1(b)); {counts[symbol]} "
                    f"{symbol.value} section{'s pay' if counts[symbol] > 1 else ' pays'} "
                    f"{BIG_SIX_PAYOUTS[symbol]} to 1 (619a.3)"
                ),
                outcomes=lines,
            )
        )
    return rows


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``croupier par-sheet big_six`` has no options: the wheel is fixed by 619a.1."""


def compute(args: argparse.Namespace) -> list[ParSheetRow]:
    return big_six_par_sheet()
