"""Croupier's certified randomness component.

Sources (OS CSPRNG and SP 800-90A HMAC_DRBG), unbiased scaling, cards, the lazily dealt
virtual shoe and the regulated wheels. This package never imports ``server``: it can be
submitted to a test lab on its own. See docs/rng.md.
"""

from rng.cards import ALL_CARDS, Card, Colour, Rank, Suit, deck, parse_cards
from rng.errors import (
    HealthTestFailure,
    ProductionModeError,
    ReseedRequired,
    RngError,
    ShoeExhausted,
)
from rng.mode import is_production, set_production_mode
from rng.shoe import (
    BACCARAT,
    CASINO_WAR,
    DOWN_UNDER_BLACKJACK,
    TWENTY_ONE_BACCARAT,
    Burn,
    BurnRule,
    Draw,
    ShoeRules,
    VirtualShoe,
)
from rng.sources import (
    HmacDrbgSource,
    OsSource,
    RandomSource,
    ReseedPolicy,
    default_source,
    seeded_source,
)
from rng.wheels import (
    BIG_SIX_WHEEL,
    BigSixSpin,
    BigSixSymbol,
    BigSixWheel,
    Pocket,
    PocketColour,
    RouletteWheel,
    Spin,
    WheelType,
)

__all__ = [
    "ALL_CARDS",
    "BACCARAT",
    "BIG_SIX_WHEEL",
    "CASINO_WAR",
    "DOWN_UNDER_BLACKJACK",
    "TWENTY_ONE_BACCARAT",
    "BigSixSpin",
    "BigSixSymbol",
    "BigSixWheel",
    "Burn",
    "BurnRule",
    "Card",
    "Colour",
    "Draw",
    "HealthTestFailure",
    "HmacDrbgSource",
    "OsSource",
    "Pocket",
    "PocketColour",
    "ProductionModeError",
    "RandomSource",
    "Rank",
    "ReseedPolicy",
    "ReseedRequired",
    "RngError",
    "RouletteWheel",
    "ShoeExhausted",
    "ShoeRules",
    "Spin",
    "Suit",
    "VirtualShoe",
    "WheelType",
    "deck",
    "default_source",
    "is_production",
    "parse_cards",
    "seeded_source",
    "set_production_mode",
]
