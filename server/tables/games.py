"""Each game, bound to the runtime: the interface a table runs a game through, and how a
table's settings become one.

The games themselves live in their packages (``server/games/<game>/table.py``, registered in
``server/games/registry.py``); each declares the shoe or wheel it needs, and ``build_game``
builds that device from ``rng`` with the table's source (``chance.py``) and binds it.
Adding a game changes nothing here (docs/architecture.md, "Adding a game").
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Protocol

from rng.shoe import Draw
from rng.sources import RandomSource
from server.games.baccarat.table import BaccaratGame
from server.games.big_six_table import BigSixGame
from server.games.casino_war.table import CasinoWarGame
from server.games.down_under_blackjack.table import DownUnderBlackjackGame
from server.games.registry import GAMES
from server.games.roulette.table import RouletteGame
from server.games.round import RoundEngine
from server.games.table import UNREGULATED_SEAT_LIMIT, ConfigError, SeatLimit, TableSettings
from server.games.twenty_one_baccarat.table import TwentyOneBaccaratGame
from server.tables.chance import build_device

__all__ = [
    "GAMES",
    "SEAT_LIMITS",
    "UNREGULATED_SEAT_LIMIT",
    "BaccaratGame",
    "BigSixGame",
    "CasinoWarGame",
    "ConfigError",
    "DownUnderBlackjackGame",
    "GameTable",
    "RouletteGame",
    "SeatLimit",
    "TableSettings",
    "TwentyOneBaccaratGame",
    "build_game",
]


class GameTable(Protocol):
    game: str
    variant: str
    automated: bool
    boxed: bool  # a seat is a betting box: a player bets in their own box only

    def new_round(self, round_id: str, *, replay: bool = False) -> RoundEngine:
        """A new round's engine. ``replay`` rebuilds a journaled round: no live state such as
        a progressive meter may change."""

    def deal_card(self) -> Draw:
        """The next card from this table's shoe (reshuffled by ``start_round`` as needed)."""

    def spin(self) -> tuple[Any, dict[str, Any]]:
        """A wheel result for ``provide_spin`` and its journal record."""

    def start_round(self) -> dict[str, Any] | None:
        """Called before each round: reshuffle when the cover card was reached. Returns the
        new shoe's burn record (journaled; the exposed card is public) or None."""

    def answer_from_record(self, kind: str, payload: Mapping[str, Any]) -> Any:
        """Rebuild a chance answer from its journal record (replay and recovery)."""

    def sample_spots(self) -> list[str]:
        """Spots a demo bot may bet on."""

    def rules(self) -> dict[str, Any]:
        """The rules and paytables players can read at the table (58 Pa. Code 810a.3)."""

    def meter_state(self) -> dict[str, Any] | None:
        """Progressive meters to persist after each round (None: the game has none)."""

    def restore_meters(self, state: dict[str, Any]) -> None: ...

    def meter_amounts(self) -> dict[str, int]:
        """The meters as players see them, whole minor units."""

    # Linked progressives: meters a link of tables shares, kept in the journal's store
    # (``Journal.settle_meters``); empty ``linked`` for a game with none.
    linked: dict[str, str]  # meter name -> its key in the store

    def link_signature(self) -> tuple[object, ...]:
        """What every table of one link must agree on."""

    def linked_ops(
        self, events: Iterable[object], wagers: Mapping[tuple[str, str], int]
    ) -> list[dict[str, Any]]:
        """What a round step's events do to the linked meters (``wagers``: amounts by
        (player, bet id))."""

    def hit_values_for(self, ops: Iterable[Mapping[str, Any]]) -> list[int]:
        """Fresh Must-Hit-By hit values from the certified RNG that ``ops`` may need."""

    def settle_linked(
        self,
        ops: list[dict[str, Any]],
        hit_values: list[int],
        states: Mapping[str, dict[str, int] | None],
    ) -> tuple[dict[str, dict[str, int]], dict[str, Any]]:
        """The shared meters after ``ops`` and the round's result (runs in the store's
        transaction)."""

    def relinked(self, events: Iterable[object], result: Mapping[str, Any]) -> list[object]:
        """``events`` with the awards the shared meters paid."""

    def restore_linked(self, states: Mapping[str, dict[str, int] | None]) -> None:
        """Show the shared meters as the store holds them."""


class _SeatLimits(Mapping[str, SeatLimit]):
    """The most seats a table of each game may have (``[[tables]] seats``), from the
    registry, so a game registered later is included. In Casino War and Down Under
    Blackjack a seat is a betting box, so the limit is also the engine's box count."""

    def __getitem__(self, game: str) -> SeatLimit:
        return GAMES[game].seats

    def __iter__(self) -> Iterator[str]:
        return iter(GAMES)

    def __len__(self) -> int:
        return len(GAMES)


SEAT_LIMITS: Mapping[str, SeatLimit] = _SeatLimits()


def build_game(settings: TableSettings, source: RandomSource) -> GameTable:
    entry = GAMES.get(settings.game)
    if entry is None:
        raise ConfigError(
            f"table {settings.id}: unknown game {settings.game!r} (one of {', '.join(GAMES)})"
        )
    limit = entry.seats
    if not 1 <= settings.seats <= limit.most:
        # load_config already refuses this; settings made in code must not get past it either,
        # or the runtime could seat a player in a box the engine does not have.
        raise ConfigError(
            f"table {settings.id}: seats = {settings.seats}, but a {settings.game} table has "
            f"at most {limit.most} ({limit.reason})"
        )
    game = entry.build(settings, source.randbelow)
    game.bind_chance(build_device(game.chance, settings, source))
    return game
