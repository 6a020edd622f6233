"""High Card at a table, and its registry entry: all a new game adds on the server."""

from __future__ import annotations

from typing import Any

from rng.shoe_rules import BurnRule, ShoeRules
from server.games.betting import Limits
from server.games.round import RoundEngine
from server.games.table import (
    GameEntry,
    ParSheetProvider,
    Randbelow,
    SeatLimit,
    ShoeSpec,
    TableGame,
    TableSettings,
    pays,
)
from tests.high_card.round import EVEN_MONEY, SPOTS, HighCardRound

# One deck, nothing burned, reshuffled once ten cards or fewer are left.
ONE_DECK = ShoeRules(
    chapter="high card", decks_allowed=(1,), burn=BurnRule.NONE, default_cover_cards=10
)


class HighCardGame(TableGame):
    game = "high_card"
    variant = "one_deck"

    def __init__(self, settings: TableSettings, randbelow: Randbelow | None = None) -> None:
        self.limits = Limits(settings.minimum, settings.maximum)
        self.chance = ShoeSpec(ONE_DECK, 1)

    def new_round(self, round_id: str, *, replay: bool = False) -> RoundEngine:
        return HighCardRound(round_id, self.limits)

    def sample_spots(self) -> list[str]:
        return list(SPOTS)

    def rules(self) -> dict[str, Any]:
        return {
            "summary": "High Card: the higher card wins even money; equal ranks push.",
            "paytables": {spot: pays("none", {"win": EVEN_MONEY}) for spot in SPOTS},
        }


GAME = GameEntry(
    name="high_card",
    build=HighCardGame,
    seats=SeatLimit(4, "the test game's own bound"),
    par_sheet=ParSheetProvider("High Card (a test game)", "tests.high_card.round"),
)
