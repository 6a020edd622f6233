"""The parts of one ``croupier serve`` built from its configuration: the device hub and each
table's devices (docs/devices.md), and the player stations of the electronic tables
(docs/electronic-tables.md)."""

from __future__ import annotations

from server.config import ServerSettings
from server.devices.dealing import DealerSettings
from server.devices.handshake import KnownDevice
from server.devices.hub import DeviceHub, SerialLine
from server.devices.table_devices import TableDevices, table_dealer
from server.games.table import TableGame
from server.journal.journal import Journal
from server.stations.service import Stations
from server.stations.store import StationStore
from server.tables.clock import Clock
from server.wallet.ledger import Ledger

__all__ = ["build_devices", "build_stations"]


def build_devices(
    settings: ServerSettings, journal: Journal, clock: Clock, games: dict[str, TableGame]
) -> tuple[DeviceHub, dict[str, TableDevices]]:
    """One hub for the whole server, and each table with devices answering its chance
    requests from them."""
    link = settings.device_link
    hub = DeviceHub(
        [KnownDevice(d.id, d.role, d.key) for d in settings.devices],
        journal,
        host=link.host,
        port=link.port,
        # docs/devices.md, "Transports": the serial lines it opens, TLS on its listener
        lines=[
            SerialLine(d.id, d.serial, d.baudrate, d.protocol)
            for d in settings.devices
            if d.serial is not None
        ],
        tls=link.tls_context(),
    )
    dealer = DealerSettings(link.answer_seconds, link.hold_seconds, link.max_restarts)
    tables = {
        t.id: TableDevices(table_dealer(t, games[t.id], dealer), hub, clock)
        for t in settings.tables
        if t.devices
    }
    return hub, tables


def build_stations(
    settings: ServerSettings,
    ledger: Ledger,
    journal: Journal,
    store: StationStore,
    hub: DeviceHub,
    *,
    token_key: bytes,
    ticket_key: bytes,
) -> Stations | None:
    """The player stations, if any is configured: each of their tables refuses other
    players' bets and tells its stations when a round ends (the casino wires that)."""
    if not any(d.role == "station" for d in settings.devices):
        return None
    return Stations(
        settings, ledger, journal, store, hub, token_key=token_key, ticket_key=ticket_key
    )
