"""What the configuration file says, as values (docs/operations.md, "The configuration
file"): one frozen dataclass per section."""

from __future__ import annotations

import ssl
from dataclasses import dataclass, field
from pathlib import Path

from server.devices.adapters import FRAMED
from server.devices.tls import server_context
from server.games.table import TableSettings

__all__ = [
    "AuthSettings",
    "ClusterSettings",
    "DeviceLinkSettings",
    "DeviceSettings",
    "ServerSettings",
    "StationRules",
    "WalletSettings",
]


@dataclass(frozen=True)
class AuthSettings:
    mode: str = "demo"
    jwt_secret: str | None = None
    jwt_public_key: str | None = None
    jwt_algorithms: tuple[str, ...] = ("HS256",)
    jwt_audience: str | None = None
    jwt_issuer: str | None = None


@dataclass(frozen=True)
class DeviceSettings:
    """One electronic-table device (``[[devices]]``): its id, role and key (16 bytes or more),
    which authenticates every frame it sends and receives (docs/devices.md); ``serial``, the
    port of a device on a serial line (it connects over TCP without one), at ``baudrate``;
    ``protocol``, ``croupier`` (the framed link) or a vendor adapter's (``cammegh``: no key —
    such a line must be physically secured)."""

    id: str
    role: str
    key: bytes
    serial: str | None = None
    baudrate: int = 9600
    protocol: str = FRAMED
    # A player station (role "station"): the electronic tables it plays, and its seat at them.
    tables: tuple[str, ...] = ()
    seat: int = 0


@dataclass(frozen=True)
class StationRules:
    """``[stations]``: the money rules of every player station (docs/electronic-tables.md).
    Amounts in minor units."""

    handpay_limit: int = 120_000  # a round paying a station more than this: a handpay
    ticket_limit: int = 1_000_000  # a cash-out above this is paid by hand (cancelled credits)
    ticket_expiry_days: float = 30.0
    bills: tuple[int, ...] = (100, 500, 1_000, 2_000, 5_000, 10_000)


@dataclass(frozen=True)
class DeviceLinkSettings:
    """Where devices connect (``[device_link]``), and the fault timings of docs/devices.md."""

    host: str = "127.0.0.1"
    port: int = 8100
    answer_seconds: float = 10.0
    hold_seconds: float = 300.0
    max_restarts: int = 2
    # TLS with client certificates on the listener: all three, or none.
    tls_cert: Path | None = None
    tls_key: Path | None = None
    tls_client_ca: Path | None = None

    def tls_context(self) -> ssl.SSLContext | None:
        if self.tls_cert is None or self.tls_key is None or self.tls_client_ca is None:
            return None
        return server_context(self.tls_cert, self.tls_key, self.tls_client_ca)


@dataclass(frozen=True)
class ClusterSettings:
    """``[cluster]`` (docs/operations.md, "Running a cluster"): the shared PostgreSQL
    database (``database_url``) that holds the ledger and journal instead of the data
    directory's SQLite files; with ``redis_url`` too, several nodes share the tables out
    (leases of ``lease_seconds``), each known as ``node_id``."""

    database_url: str | None = None
    node_id: str | None = None
    redis_url: str | None = None
    lease_seconds: float = 3.0


@dataclass(frozen=True)
class WalletSettings:
    """``[wallet]`` (docs/wallet.md): whose money the players bet. ``embedded`` (the
    default): Croupier's own ledger, funded by ``croupier wallet credit``. ``seamless``: the
    operator's wallet at ``url``, each call signed with the secret in ``secret_file``,
    answered within ``timeout_ms``, up to ``connections`` calls in flight, in ``currency``;
    ``namespace`` tells this installation's transaction ids from any other's at the same
    operator (default: an id drawn once and kept in the store)."""

    mode: str = "embedded"
    url: str | None = None
    secret: bytes | None = None
    timeout_ms: int = 3000
    connections: int = 256
    currency: str = "USD"
    namespace: str | None = None

    @property
    def seamless(self) -> bool:
        return self.mode == "seamless"


@dataclass(frozen=True)
class ServerSettings:
    tables: tuple[TableSettings, ...]
    auth: AuthSettings = field(default_factory=AuthSettings)
    devices: tuple[DeviceSettings, ...] = ()
    device_link: DeviceLinkSettings = field(default_factory=DeviceLinkSettings)
    stations: StationRules = field(default_factory=StationRules)
    cluster: ClusterSettings = field(default_factory=ClusterSettings)
    wallet: WalletSettings = field(default_factory=WalletSettings)
    # ``[operator_api] token_file``: the bearer token of the operator's round history API
    # (docs/wallet.md, "Round history for disputes"); None: the API is off.
    operator_api_token: bytes | None = None
    starting_balance: int = 100_000
    currency: str = "PLAY"
    source: str = "<built-in demo>"
