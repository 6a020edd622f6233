"""A table's game, built: the registry's adapter for the table's settings with the shoe or
wheel it declares bound to it.

The games themselves live in their packages (``server/games/<game>/table.py``, registered in
``server/games/registry.py``); the interface a table runs a game through is their base,
``server.games.table.TableGame``. Each declares the shoe or wheel it needs, and
``build_game`` builds that device from ``rng`` with the table's source (``chance.py``) and
binds it. Adding a game changes nothing here (docs/architecture.md, "Adding a game").
"""

from __future__ import annotations

from rng.sources import RandomSource
from server.games.registry import GAMES
from server.games.table import ConfigError, TableGame, TableSettings
from server.tables.chance import build_device

__all__ = ["build_game"]


def build_game(settings: TableSettings, source: RandomSource) -> TableGame:
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
