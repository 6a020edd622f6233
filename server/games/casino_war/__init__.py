"""Casino War (58 Pa. Code Chapter 651a): the round engine and its exact par sheet."""

from server.games.casino_war.round import (
    BURNED_BEFORE_WAR,
    PAYOUT_ODDS,
    CasinoWarRound,
    CasinoWarTable,
    HandCompared,
    Surrendered,
    WarDeclared,
    card_rank,
    compare,
    initial_outcome,
    tie_outcome,
    war_outcome,
)

__all__ = [
    "BURNED_BEFORE_WAR",
    "PAYOUT_ODDS",
    "CasinoWarRound",
    "CasinoWarTable",
    "HandCompared",
    "Surrendered",
    "WarDeclared",
    "card_rank",
    "compare",
    "initial_outcome",
    "tie_outcome",
    "war_outcome",
]
