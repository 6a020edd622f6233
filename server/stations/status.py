"""What a station shows, and when (docs/electronic-tables.md).

Two displays follow a station's state: its touchscreens (``StationStatus``: credits, locks,
the handpay waiting, the meters while the attendant key is turned) and the agent's cabinet
(``StationState``: enabled or not, and why). Both are told after every change, so neither
has to ask.
"""

from __future__ import annotations

from collections.abc import Callable

from server.devices.hub import DeviceHub
from server.devices.messages import StationState
from server.protocol.messages import ServerMessage, StationLock, StationStatus
from server.stations.meters import station_account
from server.stations.station import Station
from server.wallet.ledger import Ledger

__all__ = ["StatusBoard"]


class StatusBoard:
    """Each station's status, sent to its touchscreens and its agent when it changes."""

    def __init__(self, ledger: Ledger, hub: DeviceHub) -> None:
        self.ledger, self.hub = ledger, hub

    def credits(self, station_id: str) -> int:
        return self.ledger.balance(station_account(station_id))

    def status(self, s: Station, ref: int | None = None) -> StationStatus:
        credits = self.credits(s.id)
        meters = None
        if s.attendant is not None:
            meters = dict(s.row.meters)
            meters["credits"] = credits
        return StationStatus(
            station=s.id,
            seat=s.settings.seat,
            tables=list(s.settings.tables),
            credits=credits,
            enabled=s.why_not() is None,
            locks=[StationLock(**lock) for lock in s.locks],
            handpay=({k: s.handpay[k] for k in ("amount", "kind", "round")} if s.handpay else None),
            attendant=s.attendant,
            meters=meters,
            called=s.called,
            player_card=s.player_card,
            last_ticket=s.last_ticket,
            ref=ref,
        )

    def watch(self, s: Station, send: Callable[[ServerMessage], None]) -> Callable[[], None]:
        """Send ``send`` the station's status now and whenever it changes; returns the way to
        stop."""
        s.screens.append(send)
        send(self.status(s))

        def stop() -> None:
            if send in s.screens:
                s.screens.remove(send)

        return stop

    def changed(self, s: Station) -> None:
        status = self.status(s)
        for send in list(s.screens):
            send(status)
        if not s.up:  # the state is sent when it is back (a queue would only grow)
            return
        self.hub.send(
            s.id,
            StationState(
                enabled=status.enabled,
                credits=status.credits,
                locks=tuple(lock["cause"] for lock in s.locks),
                handpay=int(s.handpay["amount"]) if s.handpay else 0,
                called=s.called,
            ),
        )
