"""The operator's platform, as far as a demo needs one: a page listing the demo players with
their balances in the wallet's books, each with a link that signs the player's token and
opens the game with it.

The link is the launch every operator's platform makes for a game provider. It points at
``/launch/PLAYER``, which answers ``303 See Other`` to ``GAME/#token=JWT``. The JWT is
HS256 under the secret the game server checks (its ``[auth] jwt_secret``), with ``sub``
(the player), ``name``, ``currency`` and ``exp``. The token travels in the URL's fragment,
which the browser never sends to a server. The game's page reads it from there
(docs/protocol.md, "Players").
"""

from __future__ import annotations

import html
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import jwt

__all__ = ["Platform"]

TOKEN_HOURS = 8.0  # a demo evening


@dataclass
class Platform:
    """``jwt_secret``: the game server's; ``players``: the demo players listed;
    ``game_url``: where the game is served (``http://HOST:PORT``), None until it is known."""

    jwt_secret: bytes
    players: tuple[str, ...]
    game_url: str | None = None
    currency: str = "USD"
    issued: list[str] = field(default_factory=list)  # the players launched, in order

    def token(self, player: str, now: float | None = None) -> str:
        """The player's signed token, good for ``TOKEN_HOURS``."""
        now = time.time() if now is None else now
        claims: dict[str, Any] = {
            "sub": player,
            "name": player.replace("-", " ").title(),
            "currency": self.currency,
            "iat": int(now),
            "exp": int(now + TOKEN_HOURS * 3600),
        }
        return jwt.encode(claims, self.jwt_secret, algorithm="HS256")

    def launch(self, player: str) -> str | None:
        """The game's URL with ``player``'s token, or None while the game's URL is unknown."""
        if self.game_url is None:
            return None
        self.issued.append(player)
        return f"{self.game_url.rstrip('/')}/#token={quote(self.token(player), safe='')}"

    def page(self, players: dict[str, Any]) -> bytes:
        """The platform's lobby: each demo player, their balance in ``players`` (the books'
        state), and a link that opens the game as them."""
        rows = []
        for player in self.players:
            held = players.get(player)
            balance = "—" if held is None else _money(int(held["balance"]), str(held["currency"]))
            rows.append(
                "<tr>"
                f"<td>{html.escape(player)}</td><td class=n>{html.escape(balance)}</td>"
                f'<td><a href="/launch/{quote(player, safe="")}">Play as {html.escape(player)}'
                "</a></td></tr>"
            )
        waiting = (
            ""
            if self.game_url is not None
            else "<p><em>The game server is still starting: reload in a moment.</em></p>"
        )
        text = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Demo casino · operator platform</title>
<style>body{{font:16px system-ui,sans-serif;margin:2rem auto;max-width:40rem}}
td{{padding:.4rem 1rem}}.n{{text-align:right}}</style></head>
<body><h1>Demo casino</h1>
<p>This page plays the operator's platform: the players' money is in its wallet (the
reference operator wallet), and the game server debits and credits it there.</p>
{waiting}<table><tr><th>Player</th><th>Balance at the operator</th><th></th></tr>
{"".join(rows)}</table></body></html>
"""
        return text.encode()


def _money(minor: int, currency: str) -> str:
    sign = "-" if minor < 0 else ""
    units, cents = divmod(abs(minor), 100)
    return f"{sign}{units:,}.{cents:02d} {currency}"
