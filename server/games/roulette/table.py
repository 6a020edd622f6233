"""Roulette (617a) at a table: the wheel type and options an operator chooses, the rules
players read, and the registry entry."""

from __future__ import annotations

from typing import Any

from rng.wheel_layouts import WheelType
from server.games.chance import SpinRequest
from server.games.roulette.layout import PAYOUT_ODDS, WagerKind, placements
from server.games.roulette.round import RouletteRound, RouletteTable
from server.games.round import RoundEngine
from server.games.table import (
    NO_NUMBER,
    UNREGULATED_SEAT_LIMIT,
    Capabilities,
    ConfigError,
    GameEntry,
    ParSheetProvider,
    Randbelow,
    RouletteWheelSpec,
    SeatLimit,
    TableGame,
    TableSettings,
    option,
    pays,
)

__all__ = ["GAME", "RouletteGame"]


class RouletteGame(TableGame):
    """Roulette (617a) on one of the three wheel types. Options: ``wheel``
    (single_zero, double_zero, triple_zero), ``five_adjacent`` (offered or not)."""

    game = "roulette"

    def __init__(self, settings: TableSettings, randbelow: Randbelow | None = None) -> None:
        wheel = option(settings, "wheel", "single_zero", str)
        try:
            self.wheel_type = WheelType(wheel)
        except ValueError:
            choices = ", ".join(w.value for w in WheelType)
            raise ConfigError(f"table {settings.id}: wheel must be one of {choices}") from None
        self.variant = self.wheel_type.value
        self.chance = RouletteWheelSpec(self.wheel_type)
        self.table = RouletteTable(
            self.wheel_type,
            five_adjacent_offered=option(settings, "five_adjacent", True, bool),
            minimum=settings.minimum,
            maximum=settings.maximum,
        )

    def new_round(self, round_id: str, *, replay: bool = False) -> RoundEngine:
        return RouletteRound(self.table, round_id)

    def _paytables(self) -> dict[str, Any]:
        """617a.4(a), for the wagers this wheel offers (First Five Numbers needs 00). A Five
        Adjacent Numbers wager is five Straight Wagers (617a.3(e)(1)(iii)): its odds are shown on
        the whole wager, as the engine settles it."""
        offered = [k for k in PAYOUT_ODDS if next(placements(k, self.wheel_type), None)]
        tables = {"roulette": pays("617a.4(a)", {k.value: PAYOUT_ODDS[k] for k in offered})}
        if self.table.five_adjacent_offered:
            five = next(placements(WagerKind.FIVE_ADJACENT, self.wheel_type))
            tables["five_adjacent"] = pays(
                "617a.3(e)(1)(i)-(iii)", {"whole_wager": five.net_if_won}
            )
        return tables

    def sample_spots(self) -> list[str]:
        kinds = [
            WagerKind.STRAIGHT,
            WagerKind.SPLIT,
            WagerKind.RED,
            WagerKind.BLACK,
            WagerKind.DOZEN,
            WagerKind.COLUMN,
            WagerKind.ODD,
            WagerKind.EVEN,
        ]
        return [p.spot for kind in kinds for p in placements(kind, self.wheel_type)]

    def rules(self) -> dict[str, Any]:
        return {
            "summary": (
                "Roulette (58 Pa. Code 617a) on a "
                + self.wheel_type.value.replace("_", " ")
                + " wheel. Bet on where the ball comes to rest; payouts per 617a.4."
            ),
            "paytables": self._paytables(),
            "five_adjacent": self.table.five_adjacent_offered,
        }


GAME = GameEntry(
    name="roulette",
    build=RouletteGame,
    seats=SeatLimit(UNREGULATED_SEAT_LIMIT, NO_NUMBER),
    par_sheet=ParSheetProvider(
        "Roulette, every wager of 617a.3 (exact)", "server.games.roulette.par_sheet"
    ),
    capabilities=Capabilities(chance=(SpinRequest,)),
)
