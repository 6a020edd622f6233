"""Production mode: where test-only facilities are refused.

Production mode is on when the environment variable ``CROUPIER_ENV`` is ``production`` or
when ``set_production_mode(True)`` was called (the server does so from its configuration).
In production mode a seeded, reproducible source cannot be created: outcomes must come from
a source seeded by the operating system's entropy (58 Pa. Code 810a.5(a); NJAC 13:69E-1.28G(b)5).
"""

from __future__ import annotations

import os

__all__ = ["is_production", "set_production_mode"]

_forced: bool | None = None


def set_production_mode(enabled: bool | None) -> None:
    """Force production mode on or off; ``None`` goes back to reading ``CROUPIER_ENV``."""
    global _forced
    _forced = enabled


def is_production() -> bool:
    if _forced is not None:
        return _forced
    return os.environ.get("CROUPIER_ENV", "").strip().lower() == "production"
