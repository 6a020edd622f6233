"""The Big Six Wheel (619a) at a table: the rules players read and the registry entry. The
engine and par sheet are ``big_six_wheel.py``."""

from __future__ import annotations

from typing import Any

from server.games.big_six_wheel import BIG_SIX_PAYOUTS, BIG_SIX_SPOTS, BigSixRound, BigSixTable
from server.games.chance import SpinRequest
from server.games.round import RoundEngine
from server.games.table import (
    NO_NUMBER,
    UNREGULATED_SEAT_LIMIT,
    BigSixWheelSpec,
    Capabilities,
    GameEntry,
    ParSheetProvider,
    Randbelow,
    SeatLimit,
    TableGame,
    TableSettings,
    pays,
)

__all__ = ["GAME", "BigSixGame"]


class BigSixGame(TableGame):
    """Big Six Wheel (619a)."""

    game = "big_six"
    variant = "standard"
    chance = BigSixWheelSpec()

    def __init__(self, settings: TableSettings, randbelow: Randbelow | None = None) -> None:
        self.table = BigSixTable(minimum=settings.minimum, maximum=settings.maximum)

    def new_round(self, round_id: str, *, replay: bool = False) -> RoundEngine:
        return BigSixRound(self.table, round_id)

    def sample_spots(self) -> list[str]:
        return list(BIG_SIX_SPOTS)

    def rules(self) -> dict[str, Any]:
        return {
            "summary": "Big Six Wheel (58 Pa. Code 619a): bet on the symbol the wheel stops on.",
            "paytables": {
                "big_six": pays(
                    "619a.3", {spot: BIG_SIX_PAYOUTS[sym] for spot, sym in BIG_SIX_SPOTS.items()}
                )
            },
        }


GAME = GameEntry(
    name="big_six",
    build=BigSixGame,
    seats=SeatLimit(UNREGULATED_SEAT_LIMIT, NO_NUMBER),
    par_sheet=ParSheetProvider(
        "Big Six Wheel, every wager of 619a.3 (exact)", "server.games.big_six_wheel"
    ),
    capabilities=Capabilities(chance=(SpinRequest,)),
)
