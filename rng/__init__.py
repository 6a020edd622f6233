"""Croupier's certified randomness component.

Sources (OS CSPRNG and SP 800-90A HMAC_DRBG), unbiased scaling, cards, the lazily dealt
virtual shoe and the regulated wheels. This package never imports ``server``: it can be
submitted to a test lab on its own. See docs/rng.md.

The names below are loaded on first use: importing ``rng.cards`` (the types the
games use) loads no randomness source.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
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

_HOMES = {
    "ALL_CARDS": "rng.cards",
    "Card": "rng.cards",
    "Colour": "rng.cards",
    "Rank": "rng.cards",
    "Suit": "rng.cards",
    "deck": "rng.cards",
    "parse_cards": "rng.cards",
    "HealthTestFailure": "rng.errors",
    "ProductionModeError": "rng.errors",
    "ReseedRequired": "rng.errors",
    "RngError": "rng.errors",
    "ShoeExhausted": "rng.errors",
    "is_production": "rng.mode",
    "set_production_mode": "rng.mode",
    "BACCARAT": "rng.shoe",
    "CASINO_WAR": "rng.shoe",
    "DOWN_UNDER_BLACKJACK": "rng.shoe",
    "TWENTY_ONE_BACCARAT": "rng.shoe",
    "Burn": "rng.shoe",
    "BurnRule": "rng.shoe",
    "Draw": "rng.shoe",
    "ShoeRules": "rng.shoe",
    "VirtualShoe": "rng.shoe",
    "HmacDrbgSource": "rng.sources",
    "OsSource": "rng.sources",
    "RandomSource": "rng.sources",
    "ReseedPolicy": "rng.sources",
    "default_source": "rng.sources",
    "seeded_source": "rng.sources",
    "BIG_SIX_WHEEL": "rng.wheels",
    "BigSixSpin": "rng.wheels",
    "BigSixSymbol": "rng.wheels",
    "BigSixWheel": "rng.wheels",
    "Pocket": "rng.wheels",
    "PocketColour": "rng.wheels",
    "RouletteWheel": "rng.wheels",
    "Spin": "rng.wheels",
    "WheelType": "rng.wheels",
}


def __getattr__(name: str) -> object:
    # PEP 562, as server/exports.py does for the server's packages (rng imports no server).
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(home), name)
    globals()[name] = value
    return value
