"""The stations' touchscreens (docs/electronic-tables.md, "What a station is"; their
WebSocket messages are in docs/protocol.md, "Player stations").

A touchscreen logs in with the token its agent was given and bets as the player
``station:ID``; besides betting it asks to cash out, calls an attendant, and — while the
attendant key is turned — lets the attendant clear the locks or pay the handpay. A request
the station may not make now is refused with ``StationRefused``.
"""

from __future__ import annotations

import asyncio

from server.protocol.messages import CashedOut
from server.stations import screen_token
from server.stations.credits import Credits
from server.stations.locks import Lockout
from server.stations.memory import CriticalMemory
from server.stations.station import Station, StationRefused
from server.stations.status import StatusBoard

__all__ = ["Touchscreens"]


class Touchscreens:
    """What a station's touchscreen asks of the server, besides its bets."""

    def __init__(
        self,
        stations: dict[str, Station],
        memory: CriticalMemory,
        lockout: Lockout,
        credits: Credits,
        board: StatusBoard,
        *,
        token_key: bytes,
    ) -> None:
        self.stations = stations
        self.memory, self.lockout, self.credits, self.board = memory, lockout, credits, board
        self._token_key = token_key

    def login(self, token: str) -> str | None:
        """The station a touchscreen's token names, if it is a station token (None if it is
        not one); ``StationRefused(bad_token)`` for one that is not valid now."""
        claims = screen_token.claims(self._token_key, token)
        if claims is None:
            return None
        station = self.stations.get(str(claims.get("sub")))
        if station is None:
            raise StationRefused("bad_token", "no such station")
        if claims.get("session") != station.session:
            raise StationRefused("bad_token", "this station's session has ended: use its new token")  # fmt: skip  # noqa: E501
        return station.id

    def name(self, station_id: str) -> str:
        return f"Station {self.stations[station_id].settings.seat}"

    async def cash_out(
        self, station_id: str, ref: int | None, *, wait_steps: int
    ) -> CashedOut | None:
        """Cash out every credit: a ticket (None when the amount is above the ticket limit:
        the station waits for a handpay instead). A round the station bet in may still be
        dealt: the cash-out waits for it ``wait_steps`` tenths of a second at most."""
        s = self.stations[station_id]
        self._refuse_if_locked(s)
        # A round being dealt ends within moments (its winnings may be above the handpay
        # limit: they are checked when it ends); one still taking bets does not.
        for _ in range(wait_steps):
            if not self.memory.in_play(s):
                break
            await asyncio.sleep(0.1)
        else:
            raise StationRefused("round_in_play", "a round you bet in has not ended yet")
        self._refuse_if_locked(s)  # the round that ended may have brought a handpay
        return await self.credits.cash_out(s, ref)

    async def call_attendant(self, station_id: str, on: bool) -> None:
        s = self.stations[station_id]
        s.called = on
        await self.memory.log(s, "attendant_called" if on else "attendant_call_cancelled")
        self.board.changed(s)

    async def attendant_action(self, station_id: str, action: str) -> None:
        """``clear`` the locks, or pay the handpay: with the attendant key turned only."""
        s = self.stations[station_id]
        if s.attendant is None:
            raise StationRefused("attendant_key_required", "turn the attendant key first")
        if action == "clear":
            await self.lockout.clear(s, s.attendant)
        else:
            await self.credits.pay_handpay(s, s.attendant)

    @staticmethod
    def _refuse_if_locked(s: Station) -> None:
        why = s.why_not()
        if why is not None:
            raise StationRefused("station_locked", f"station {s.id}: {why}")
