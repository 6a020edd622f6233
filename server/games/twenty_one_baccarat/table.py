"""21 Baccarat (681a) at a table: deck count, Bonus paytable, Tie, the rules players read
and the registry entry."""

from __future__ import annotations

from typing import Any

from rng.shoe_rules import TWENTY_ONE_BACCARAT
from server.games.betting import Limits
from server.games.chance import CardRequest
from server.games.money import PUSH
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
from server.games.twenty_one_baccarat.hands import (
    BONUS_HANDS,
    BONUS_PAYTABLES,
    MAIN_SPOTS,
    SPOTS,
    TIE_ODDS,
    WIN_ODDS,
    WIN_WITH_17_ODDS,
)
from server.games.twenty_one_baccarat.round import (
    BETTING_POSITIONS,
    TwentyOneBaccaratRound,
    TwentyOneBaccaratTable,
    depends_on,
)

__all__ = ["GAME", "TwentyOneBaccaratGame"]


class TwentyOneBaccaratGame(TableGame):
    """21 Baccarat (681a). Options: ``decks`` (4 or 8), ``bonus_paytable`` (A-C with four
    decks, D-F with eight, "" for no Bonus Wagers), ``tie`` (offered or not),
    ``cards_behind_cover``."""

    game = "twenty_one_baccarat"

    def __init__(self, settings: TableSettings, randbelow: Randbelow | None = None) -> None:
        decks = option(settings, "decks", 8, int)
        bonus = option(settings, "bonus_paytable", "D" if decks == 8 else "A", str)
        try:
            self.table = TwentyOneBaccaratTable(
                decks=decks,
                bonus_paytable=bonus or None,
                tie_offered=option(settings, "tie", True, bool),
                limits={kind: Limits(settings.minimum, settings.maximum) for kind in SPOTS},
            )
        except ValueError as exc:
            raise ConfigError(f"table {settings.id}: {exc}") from None
        self.chance = ShoeSpec(
            TWENTY_ONE_BACCARAT, decks, settings.options.get("cards_behind_cover")
        )
        self.variant = f"{decks}_decks" + (f"_bonus_{bonus}" if bonus else "")

    def new_round(self, round_id: str, *, replay: bool = False) -> RoundEngine:
        return TwentyOneBaccaratRound(self.table, round_id)

    def sample_spots(self) -> list[str]:
        return list(self.table.spots)

    def depends_on(self, spot: str) -> tuple[str, ...]:
        return depends_on(spot)

    def rules(self) -> dict[str, Any]:
        paytables: dict[str, Any] = {
            hand: pays(
                "681a.8(a)",
                {f"{hand}_wins": WIN_ODDS, f"{hand}_wins_with_17": WIN_WITH_17_ODDS, "tie": PUSH},
            )
            for hand in ("player", "banker")
        }
        if self.table.tie_offered:
            paytables["tie"] = pays("681a.8(b)", {"tie": TIE_ODDS})
        letter = self.table.bonus_paytable
        if letter:
            bonus = {h: BONUS_PAYTABLES[letter][h] for h in BONUS_HANDS}
            paytables["bonus"] = pays("681a.8(c)", bonus, letter)
        return {
            "main_spots": list(MAIN_SPOTS),
            "summary": (
                f"21 Baccarat (58 Pa. Code 681a), {self.table.decks} decks: the hand closer to 21 "
                "wins; a hand under 17 takes one more card; naturals win first."
            ),
            "paytables": paytables,
        }


GAME = GameEntry(
    name="twenty_one_baccarat",
    build=TwentyOneBaccaratGame,
    seats=SeatLimit(BETTING_POSITIONS, "681a.2(a)"),
    par_sheet=ParSheetProvider(
        "21 Baccarat, every wager and Bonus paytable of 681a (exact)",
        "server.games.twenty_one_baccarat.par_sheet",
    ),
    capabilities=Capabilities(chance=(CardRequest,)),
)
