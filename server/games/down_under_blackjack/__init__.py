"""Down Under Blackjack (58 Pa. Code Chapter 685a): the rules, the round engine with player
decisions and the hole-card reader, and the par sheet."""

from server.games.down_under_blackjack.round import (
    DealerStood,
    DownUnderRound,
    DownUnderTable,
    HoleCardRangeRead,
    HoleCardRevealed,
)
from server.games.down_under_blackjack.rules import (
    DEFAULT_LIGHTS,
    HoleRange,
    PlayedHand,
    bet_outcome,
    dealer_total,
    insurance_outcome,
    match_the_dealer_outcome,
    player_total,
)

__all__ = [
    "DEFAULT_LIGHTS",
    "DealerStood",
    "DownUnderRound",
    "DownUnderTable",
    "HoleCardRangeRead",
    "HoleCardRevealed",
    "HoleRange",
    "PlayedHand",
    "bet_outcome",
    "dealer_total",
    "insurance_outcome",
    "match_the_dealer_outcome",
    "player_total",
]
