"""A table's game, built: the registry's adapter for the table's settings with the shoe or
wheel it declares bound to it.

The games themselves live in their packages (``server/games/<game>/table.py``, registered in
``server/games/registry.py``); the interface a table runs a game through is their base,
``server.games.table.TableGame``. Each declares the shoe or wheel it needs, and
``build_game`` builds that device from ``rng`` with the table's source (``chance.py``) and
binds it. Adding a game changes nothing here (docs/architecture.md, "Adding a game").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from rng.sources import HmacDrbgSource, RandomSource
from server.games.registry import GAMES
from server.games.table import ConfigError, TableGame, TableSettings
from server.journal.journal import Journal
from server.tables.chance import build_device

__all__ = ["build_game", "build_games", "table_game"]


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


def table_game(settings: TableSettings, journal: Journal) -> TableGame:
    """The table's game on its certified source, its meters as the journal's store keeps
    them: the jackpots carry on across restarts and from node to node."""
    game = build_game(settings, HmacDrbgSource(f"table:{settings.id}"))
    _load_meters(journal, settings.id, game)
    return game


def build_games(tables: Iterable[TableSettings], journal: Journal) -> dict[str, TableGame]:
    """Every table's game (``table_game``), the tables of each progressive link checked to
    share the same meters."""
    games = {t.id: table_game(t, journal) for t in tables}
    _check_links(games)
    return games


def _load_meters(journal: Journal, table_id: str, game: TableGame) -> None:
    """The table's own meters as it saved them, and its link's as the store holds them now
    (players see the shared amounts from the first snapshot on)."""
    saved = journal.load_state(table_id, "meters")
    if saved is not None:
        game.restore_meters(saved)
    if game.linked:
        states = journal.linked_meters(list(game.linked.values()))
        game.restore_linked({name: states.get(key) for name, key in game.linked.items()})


def _check_links(games: Mapping[str, TableGame]) -> None:
    """Every table of one progressive link shares its meters, so they must offer the same
    ones, alike (a Harmony paytable, a Mystery Bonus configuration)."""
    first: dict[str, tuple[str, tuple[object, ...]]] = {}
    for table_id, game in games.items():
        if not game.linked:
            continue
        link = next(iter(game.linked.values())).rpartition("/")[0]
        seen = first.setdefault(link, (table_id, game.link_signature()))
        if seen[1] != game.link_signature():
            raise ConfigError(
                f"table {table_id}: progressive_link {link!r} is shared with table {seen[0]}, "
                "which offers other progressive meters; the tables of one link must offer "
                "the same ones (the same Harmony paytable and Mystery Bonus configuration)"
            )
