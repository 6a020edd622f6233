"""Baccarat (Punto Banco, 58 Pa. Code 631a) with every 631b side wager and variation.

One module per concept: ``hands`` (point count, third-card rule as tables), ``paytables``
(every regulation table as data), ``side_wagers`` (pure judging of every wager), ``config``
(the Rules Submission), ``events`` (what happened), ``engine`` (the round state machine) and
``par_sheet`` (exact house edges, driving the same judging code).
"""

from server.games.baccarat.config import ConfigError, Limits, TableConfig, Variant
from server.games.baccarat.engine import BaccaratRound, Meters
from server.games.baccarat.hands import Coup, Winner, play_out

__all__ = [
    "BaccaratRound",
    "ConfigError",
    "Coup",
    "Limits",
    "Meters",
    "TableConfig",
    "Variant",
    "Winner",
    "play_out",
]
