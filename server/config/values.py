"""Checks every section of the configuration shares: each error names the file, the table
and the setting."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from server.games.table import ConfigError

__all__ = ["IDENTIFIER", "number", "path_of"]

# A device's or a node's id.
IDENTIFIER = re.compile(r"^[A-Za-z0-9_.:\-]{1,64}$")


def number(where: str, name: str, value: Any, *, minimum: float, integer: bool) -> Any:
    kinds = (int,) if integer else (int, float)
    if isinstance(value, bool) or not isinstance(value, kinds) or value < minimum:
        kind = "a whole number" if integer else "a number"
        raise ConfigError(f"{where}: {name} must be {kind} >= {minimum}, not {value!r}")
    return value


def path_of(value: Any, base: Path | None) -> Path:
    """A path from the file, relative to the file's own directory."""
    path = Path(str(value))
    if base is not None and not path.is_absolute():
        path = base / path
    return path
