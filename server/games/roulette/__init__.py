"""Roulette (58 Pa. Code Chapter 617a) on a single zero, double zero, or double zero wheel used
as a single zero wheel.

- ``layout``: the wagers of 617a.3(e) as data — kind + covered numbers, validated against the
  layout geometry — and the payout odds of 617a.4(a).
- ``settlement``: the pure settlement function (compartment → ``Outcome``), 617a.3(d), 617a.4.
- ``round``: ``RouletteRound``, the sans-I/O round engine; the wheel result is a chance answer.
- ``par_sheet``: exact house edge of every wager on each wheel type.
- ``wheel_round``: the betting phase shared with the Big Six Wheel.
"""

from server.games.roulette.layout import (
    FIVE_ADJACENT_AMOUNT,
    ILLEGAL_PLACEMENT,
    MALFORMED_SPOT,
    NUMBER_NOT_ON_LAYOUT,
    PAYOUT_ODDS,
    Placement,
    WagerKind,
    parse_spot,
    placements,
)
from server.games.roulette.par_sheet import roulette_par_sheet, roulette_row
from server.games.roulette.round import BallLanded, RouletteRound, RouletteTable
from server.games.roulette.settlement import is_void_spin, outcome, settle_all
from server.games.wheel_round import SpinVoided

__all__ = [
    "FIVE_ADJACENT_AMOUNT",
    "ILLEGAL_PLACEMENT",
    "MALFORMED_SPOT",
    "NUMBER_NOT_ON_LAYOUT",
    "PAYOUT_ODDS",
    "BallLanded",
    "Placement",
    "RouletteRound",
    "RouletteTable",
    "SpinVoided",
    "WagerKind",
    "is_void_spin",
    "outcome",
    "parse_spot",
    "placements",
    "roulette_par_sheet",
    "roulette_row",
    "settle_all",
]
