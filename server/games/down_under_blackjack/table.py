"""Down Under Blackjack (685a) at a table: deck count, Match-the-Dealer, the virtual Masque
Card Reader, the rules players read and the registry entry. Each seat is a betting box
(685a.2(a))."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rng.cards import Card
from rng.shoe_rules import DOWN_UNDER_BLACKJACK
from server.games.betting import Limits
from server.games.chance import CardRequest, HoleRangeRequest
from server.games.down_under_blackjack.round import (
    BOXES,
    DownUnderRound,
    DownUnderTable,
    depends_on,
)
from server.games.down_under_blackjack.rules import (
    BLACKJACK_ODDS,
    INSURANCE_ODDS,
    MATCH_PAYTABLES,
    WIN_ODDS,
    HoleRange,
)
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

__all__ = ["GAME", "DownUnderBlackjackGame"]


class DownUnderBlackjackGame(TableGame):
    """Down Under Blackjack (685a). Options: ``decks`` (4, 5, 6, 8), ``match_the_dealer``
    (six or eight decks only), ``cards_behind_cover``. Each seat is a betting box; the
    hole-card reader is virtual."""

    game = "down_under_blackjack"
    boxed = True

    def __init__(self, settings: TableSettings, randbelow: Randbelow | None = None) -> None:
        decks = option(settings, "decks", 6, int)
        kinds = ("bet", "match_the_dealer")
        try:
            self.table = DownUnderTable(
                decks=decks,
                match_the_dealer=option(settings, "match_the_dealer", decks in (6, 8), bool),
                limits={kind: Limits(settings.minimum, settings.maximum) for kind in kinds},
            )
        except ValueError as exc:
            raise ConfigError(f"table {settings.id}: {exc}") from None
        self.chance = ShoeSpec(
            DOWN_UNDER_BLACKJACK, decks, settings.options.get("cards_behind_cover")
        )
        self.variant = f"{decks}_decks"

    def new_round(self, round_id: str, *, replay: bool = False) -> RoundEngine:
        return DownUnderRound(self.table, round_id)

    def read_hole(self, card: Card) -> tuple[Any, dict[str, Any]]:
        """The virtual Masque Card Reader: the range of the face-down card (685a.7(h))."""
        reading = HoleRange.of(card)
        return reading, {"range": reading.value}

    def hole_card_lamps(self) -> Mapping[str, str]:
        """The Masque Card Reader's lamps: colour -> the range it shows (685a.1)."""
        return {colour: hole_range.value for hole_range, colour in self.table.lights.items()}

    def answer_from_record(self, kind: str, payload: Mapping[str, Any]) -> Any:
        if kind == "hole_range":
            return HoleRange(payload["range"])
        return super().answer_from_record(kind, payload)

    def depends_on(self, spot: str) -> tuple[str, ...]:
        return depends_on(spot)

    def sample_spots(self) -> list[str]:
        spots = ["bet:{seat}"]
        if self.table.match_the_dealer:
            spots.append("match_the_dealer:{seat}")
        return spots

    def rules(self) -> dict[str, Any]:
        return {
            "main_spots": ["bet:{seat}"],
            "summary": (
                f"Down Under Blackjack (58 Pa. Code 685a), {self.table.decks} decks. The reader "
                "shows the range of the dealer's hole card; the dealer stands on 17 to 22; a "
                "dealer 22 pushes most hands."
            ),
            "paytables": {
                "bet": pays("685a.11(a)", {"win": WIN_ODDS, "blackjack": BLACKJACK_ODDS}),
                "insurance": pays("685a.11(b)", {"win": INSURANCE_ODDS}),
                # Not a payout: the colour the reader lights for each hole-card range.
                "lights": {r.value: c for r, c in self.table.lights.items()},
                **self._match_pays(),
            },
        }

    def _match_pays(self) -> dict[str, Any]:
        """685a.11: Match-the-Dealer pays each matching card (six or eight decks only)."""
        if not self.table.match_the_dealer:
            return {}
        suited, unsuited = MATCH_PAYTABLES[self.table.decks]
        odds = {"suited_match_each_card": suited, "unsuited_match_each_card": unsuited}
        return {"match_the_dealer": pays("685a.11(c)", odds)}


GAME = GameEntry(
    name="down_under_blackjack",
    build=DownUnderBlackjackGame,
    # A seat is a betting box, so the chapter's box count is also the engine's.
    seats=SeatLimit(BOXES, "685a.2(a)"),
    par_sheet=ParSheetProvider(
        "Down Under Blackjack: bet (stated strategy; approximation), insurance and "
        "match_the_dealer (exact), 685a",
        "server.games.down_under_blackjack.par_sheet",
    ),
    capabilities=Capabilities(chance=(CardRequest, HoleRangeRequest), decisions=True),
)
