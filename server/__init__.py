"""Croupier, the table-game server. See README.md and docs/."""

__version__ = "0.1.0"
__all__ = ["__version__"]
