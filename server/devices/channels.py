"""What the hub knows of each configured device (docs/devices.md, "Transports"; ``croupier
devices``): its ``Channel`` — the link that outlives its connections, its table, the frames
dropped, its open faults — and how it is reached: a ``SerialLine`` (framed, or a vendor's
protocol through its adapter's ``VendorLine``), else TCP or TLS. The table (or station
service) it serves is its ``Listener``. Data only: the hub (``server.devices.hub``) serves
them on the event loop.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from server.devices.adapters import FRAMED, Adapter
from server.devices.handshake import KnownDevice
from server.devices.link import Link

__all__ = ["Channel", "Listener", "SerialLine", "VendorLine"]


class Listener(Protocol):
    """The table a device serves (``TableDevices``), or a player station's service. One
    that also has ``device_link(up, cause, session)`` is told when the device's link comes
    up (a hello accepted: ``session``) and goes down (``cause``: ``connection`` when the
    connection closed, ``heartbeat`` when the device fell silent)."""

    def device_message(self, role: str, message: Any) -> None: ...


@dataclass(frozen=True)
class SerialLine:
    """A device on a serial line (``[[devices]]`` ``serial``): opened at start, re-opened
    after it fails; ``protocol`` the framed link or a vendor adapter's."""

    device: str
    port: str
    baudrate: int = 9600
    protocol: str = FRAMED


@dataclass
class VendorLine:
    """A device served through its vendor's adapter: the line is up while well-formed lines
    arrive, down after ``silence_limit`` without one."""

    adapter: Adapter
    silence_limit: float
    writer: asyncio.StreamWriter | None = None
    heard_at: float | None = None  # monotonic time of the last well-formed line

    def up(self, now: float) -> bool:
        return (
            self.writer is not None
            and self.heard_at is not None
            and now - self.heard_at < self.silence_limit
        )


@dataclass
class Channel:
    """One configured device: its link (across connections) and what ``croupier devices``
    shows of it."""

    device: KnownDevice
    table: str = ""
    listener: Listener | None = None
    link: Link | None = None
    session: int | None = None
    writer: asyncio.StreamWriter | None = None
    last_heard: float | None = None  # wall-clock time of the last valid frame
    connections: int = 0
    dropped: dict[str, int] = field(default_factory=dict)
    backlog: list[bytes] = field(default_factory=list)  # sent before the device ever connected
    faults: list[str] = field(default_factory=list)
    transport: str = "tcp"  # tcp, tls, or serial:PORT
    vendor: VendorLine | None = None  # a device of a vendor's protocol
    reported_up: bool = False  # what the listener was last told of the link

    @property
    def up(self) -> bool:
        if self.vendor is not None:
            return self.vendor.up(time.monotonic())
        return self.writer is not None and self.link is not None and self.link.up

    def count(self, reason: str) -> None:
        self.dropped[reason] = self.dropped.get(reason, 0) + 1

    def status(self) -> dict[str, Any]:
        return {
            "id": self.device.id,
            "role": self.device.role,
            "table": self.table,
            "transport": self.transport,
            "link": "up" if self.up else "down",
            "session": self.session,
            "last_heard": self.last_heard,
            "connections": self.connections,
            "unacked": self.link.unacked if self.link is not None else len(self.backlog),
            "dropped": dict(self.dropped),
            "faults": list(self.faults),
        }
