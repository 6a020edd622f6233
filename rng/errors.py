"""Errors raised by the randomness component.

Every one of them is *our* failure, never a player's: a table that sees one stops drawing
(58 Pa. Code 810a.5; AGCO 21.1.9 "RNG failure disables play").
"""

from __future__ import annotations

__all__ = [
    "HealthTestFailure",
    "ProductionModeError",
    "ReseedRequired",
    "RngError",
    "ShoeExhausted",
]


class RngError(Exception):
    """Base class of every error of the ``rng`` package."""


class HealthTestFailure(RngError):
    """A continuous or start-up health test failed; the source refuses to produce output."""


class ReseedRequired(RngError):
    """The DRBG reached its reseed interval (SP 800-90A 9.3.1, step 6)."""


class ProductionModeError(RngError):
    """A test-only facility (a seeded, reproducible source) was requested in production mode."""


class ShoeExhausted(RngError):
    """A card was requested from a shoe that has none left."""
