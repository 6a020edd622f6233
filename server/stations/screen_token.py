"""The token a station's touchscreen logs in with (docs/electronic-tables.md, "What a station
is").

The server gives it to the agent after its hello (``screen``); it names the station and the
agent's session, so a station that starts a new session gets a new token and the old one
stops working. Its audience keeps it apart from a player's token signed with the same key.
"""

from __future__ import annotations

from typing import Any, Final

import jwt

__all__ = ["STATION_AUDIENCE", "claims", "mint"]

STATION_AUDIENCE: Final = "croupier-station"


def mint(key: bytes, station_id: str, session: int | None) -> str:
    return jwt.encode({"sub": station_id, "aud": STATION_AUDIENCE, "session": session}, key, "HS256")  # fmt: skip  # noqa: E501


def claims(key: bytes, token: str) -> dict[str, Any] | None:
    """The token's claims if it is a station token signed with ``key``; None if it is not
    one (another audience — a player's token — or no token of ours)."""
    try:
        found: dict[str, Any] = jwt.decode(token, key, algorithms=["HS256"], audience=STATION_AUDIENCE)  # fmt: skip  # noqa: E501
    except jwt.InvalidTokenError:
        return None
    return found
