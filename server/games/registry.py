"""Every game the server offers: one ``GameEntry`` per game package, in lobby order.

The table runtime builds tables from here (``server.tables.games.build_game``), the
configuration checks each table's game and seats against it (``server.config``),
``croupier par-sheet`` lists its providers, and the devices read what chance each game asks
(``capabilities``: a card-reading shoe only where cards are dealt, …). Adding a game is one
package and one line in ``_BUILT_IN`` (docs/architecture.md, "Adding a game").
"""

from __future__ import annotations

from server.games.baccarat.table import GAME as BACCARAT
from server.games.big_six_table import GAME as BIG_SIX
from server.games.casino_war.table import GAME as CASINO_WAR
from server.games.down_under_blackjack.table import GAME as DOWN_UNDER_BLACKJACK
from server.games.roulette.table import GAME as ROULETTE
from server.games.table import Capabilities, ConfigError, GameEntry
from server.games.twenty_one_baccarat.table import GAME as TWENTY_ONE_BACCARAT

__all__ = ["GAMES", "capabilities", "register", "unregister"]

_BUILT_IN = (BACCARAT, TWENTY_ONE_BACCARAT, CASINO_WAR, DOWN_UNDER_BLACKJACK, ROULETTE, BIG_SIX)

GAMES: dict[str, GameEntry] = {entry.name: entry for entry in _BUILT_IN}
"""Game name (``[[tables]] game``, the wire's ``game``) → its entry."""


def register(entry: GameEntry) -> None:
    """Offer one more game (a test's, or a plug-in's) from now on."""
    if entry.name in GAMES:
        raise ValueError(f"a game named {entry.name!r} is registered already")
    GAMES[entry.name] = entry


def unregister(name: str) -> None:
    """Withdraw a game ``register`` added; the built-in games stay."""
    if any(entry.name == name for entry in _BUILT_IN):
        raise ValueError(f"{name!r} is a built-in game")
    del GAMES[name]


def capabilities(game: str) -> Capabilities:
    """What the rounds of ``game`` ask of their table (``GameEntry.capabilities``);
    ``ConfigError`` for a game nobody registered."""
    entry = GAMES.get(game)
    if entry is None:
        raise ConfigError(f"unknown game {game!r} (one of {', '.join(GAMES)})")
    return entry.capabilities
