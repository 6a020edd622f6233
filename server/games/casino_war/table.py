"""Casino War (651a) at a table: deck count, box limits, the rules players read and the
registry entry. Each seat is a betting box (651a.2(a))."""

from __future__ import annotations

from typing import Any

from rng.shoe_rules import CASINO_WAR
from server.games.betting import Limits
from server.games.casino_war.round import (
    BOXES,
    PAYOUT_ODDS,
    CasinoWarRound,
    CasinoWarTable,
    depends_on,
)
from server.games.chance import CardRequest
from server.games.round import RoundEngine
from server.games.table import (
    Capabilities,
    ConfigError,
    GameEntry,
    ParSheetProvider,
    Randbelow,
    SeatLimit,
    ShoeSpec,
    TableGame,
    TableSettings,
    option,
    pays,
)

__all__ = ["GAME", "CasinoWarGame"]


class CasinoWarGame(TableGame):
    """Casino War (651a). Options: ``decks`` (6 or 8), ``cards_behind_cover``. Each seat is a
    betting box."""

    game = "casino_war"
    boxed = True

    def __init__(self, settings: TableSettings, randbelow: Randbelow | None = None) -> None:
        decks = option(settings, "decks", 6, int)
        limits = {kind: Limits(settings.minimum, settings.maximum) for kind in ("initial", "tie")}
        try:
            self.table = CasinoWarTable(decks=decks, limits=limits)
        except ValueError as exc:
            raise ConfigError(f"table {settings.id}: {exc}") from None
        self.chance = ShoeSpec(CASINO_WAR, decks, settings.options.get("cards_behind_cover"))
        self.variant = f"{decks}_decks"

    def new_round(self, round_id: str, *, replay: bool = False) -> RoundEngine:
        return CasinoWarRound(self.table, round_id)

    def sample_spots(self) -> list[str]:
        return ["initial:{seat}", "tie:{seat}"]

    def depends_on(self, spot: str) -> tuple[str, ...]:
        return depends_on(spot)

    def rules(self) -> dict[str, Any]:
        return {
            "main_spots": ["initial:{seat}"],
            "summary": (
                "Casino War (58 Pa. Code 651a): your card against the dealer's, ace high. On a "
                "tie, surrender half your wager, or go to War: the Initial Wager is forfeited "
                "and an equal War Wager placed, which pays 2 to 1, or 3 to 1 if the War deal "
                "ties too."
            ),
            "paytables": {
                "initial": pays("651a.10(1)", {"win": PAYOUT_ODDS["initial"]}),
                "tie": pays("651a.10(2)", {"tie_hand": PAYOUT_ODDS["tie"]}),
                "war": pays(
                    "651a.10(3)",
                    {"war_won": PAYOUT_ODDS["war"], "war_tie": PAYOUT_ODDS["war_on_tie"]},
                ),
            },
        }


GAME = GameEntry(
    name="casino_war",
    build=CasinoWarGame,
    # A seat is a betting box, so the chapter's box count is also the engine's.
    seats=SeatLimit(BOXES, "651a.2(a)"),
    par_sheet=ParSheetProvider(
        "Casino War, every wager of 651a (exact)", "server.games.casino_war.par_sheet"
    ),
    capabilities=Capabilities(chance=(CardRequest,), decisions=True),
)
