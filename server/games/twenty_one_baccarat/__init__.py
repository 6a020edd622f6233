"""21 Baccarat (58 Pa. Code Chapter 681a): the rules, the round engine and the exact par sheet."""

from server.games.twenty_one_baccarat.hands import (
    BONUS_PAYTABLES,
    Coup,
    Winner,
    bonus_hand,
    hand_total,
    is_natural,
    outcome,
    winner,
)
from server.games.twenty_one_baccarat.round import (
    AdditionalCardDecided,
    HandsCompared,
    TwentyOneBaccaratRound,
    TwentyOneBaccaratTable,
)

__all__ = [
    "BONUS_PAYTABLES",
    "AdditionalCardDecided",
    "Coup",
    "HandsCompared",
    "TwentyOneBaccaratRound",
    "TwentyOneBaccaratTable",
    "Winner",
    "bonus_hand",
    "hand_total",
    "is_natural",
    "outcome",
    "winner",
]
