"""The operator's round history API, for disputes (docs/wallet.md, "Round history for
disputes"), on the server's HTTP port:

- ``GET /operator/rounds/{round_id}``: the round's whole story — its journal, its events
  replayed card by card, its money in the ledger and, with the operator's wallet, each call
  and its answer (``server.tables.history``: what ``croupier replay --json`` prints);
- ``GET /operator/players/{player_id}/rounds?since=ROUND&limit=N``: the rounds a player
  played that are over, oldest first — those after round ``since``, or the last ``limit``
  (100 by default, at most 1,000); the last one is the next page's ``since``.

Each request needs ``Authorization: Bearer <token>``, the token of ``[operator_api]
token_file``; without that section the routes answer 404. The stores are read off the event
loop.
"""

from __future__ import annotations

import asyncio
import hmac
import http
from typing import Any
from urllib.parse import parse_qs, unquote

from server.config import ServerSettings
from server.journal.journal import Journal
from server.tables.history import MAX_ROUNDS, HistoryError, player_rounds, round_history
from server.wallet.ledger import Ledger

__all__ = ["OperatorApi"]


class OperatorApi:
    def __init__(
        self, token: bytes, journal: Journal, ledger: Ledger, settings: ServerSettings
    ) -> None:
        self._expected = b"Bearer " + token
        self.journal, self.ledger, self.settings = journal, ledger, settings

    async def answer(self, target: str, authorization: str | None) -> tuple[int, Any]:
        """The status and JSON body for request target ``target`` (path and query)."""
        if authorization is None or not hmac.compare_digest(authorization.encode(), self._expected):
            return _error(http.HTTPStatus.UNAUTHORIZED, "unauthorized", "a valid bearer token")
        path, _, query = target.partition("?")
        parts = [unquote(p) for p in path.strip("/").split("/")]
        try:
            if len(parts) == 3 and parts[1] == "rounds":
                return 200, await asyncio.to_thread(
                    round_history, self.journal, self.ledger, self.settings, parts[2]
                )
            if len(parts) == 4 and parts[1] == "players" and parts[3] == "rounds":
                args = parse_qs(query)
                since = args.get("since", [None])[0]
                limit = _limit(args.get("limit", ["100"])[0])
                if limit is None:
                    return _error(
                        http.HTTPStatus.BAD_REQUEST, "bad_limit", f"limit is 1 to {MAX_ROUNDS}"
                    )
                rounds = await asyncio.to_thread(
                    player_rounds, self.journal, parts[2], since, limit
                )
                return 200, {"player_id": parts[2], "since": since, "rounds": rounds}
        except HistoryError as exc:
            status = http.HTTPStatus.NOT_FOUND if str(exc).startswith("no round") else (
                http.HTTPStatus.BAD_REQUEST
            )  # fmt: skip
            return _error(status, "not_found" if status == 404 else "bad_request", str(exc))
        return _error(http.HTTPStatus.NOT_FOUND, "not_found", f"no route {path}")


def _limit(text: str) -> int | None:
    try:
        value = int(text)
    except ValueError:
        return None
    return value if 1 <= value <= MAX_ROUNDS else None


def _error(status: http.HTTPStatus, code: str, message: str) -> tuple[int, Any]:
    return status.value, {"error": code, "message": message}
