"""Server configuration: one TOML file an operator edits (docs/operations.md).

    [server]
    starting_balance = 100000     # play money for each demo player, in minor units
    currency = "PLAY"

    [auth]
    mode = "demo"                 # or "jwt": players present a token from the platform
    jwt_secret = "..."            # HS256, or jwt_public_key_file for RS256/ES256
    jwt_audience = "croupier"

    [[tables]]
    id = "baccarat-1"
    name = "Baccarat"
    game = "baccarat"             # baccarat, roulette, big_six, ...
    betting_seconds = 15
    minimum = 100                 # table limits, minor units
    maximum = 500000
    [tables.options]              # the game's own options (variant, decks, paytables ...)
    variant = "standard"

Every error names the file, the table and the setting.
"""

from __future__ import annotations

import re
import ssl
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from server.devices.adapters import ADAPTERS, FRAMED, adapter_role
from server.devices.roles import ROLES, device_role
from server.devices.serial_port import check_port_name
from server.devices.tls import server_context
from server.games.registry import GAMES
from server.games.table import ConfigError, TableSettings

__all__ = [
    "AuthSettings",
    "ClusterSettings",
    "ConfigError",
    "DeviceLinkSettings",
    "DeviceSettings",
    "ServerSettings",
    "StationRules",
    "TableSettings",
    "demo_config_text",
    "load_config",
]

_TABLE_KEYS = {
    "id",
    "name",
    "game",
    "betting_seconds",
    "pause_seconds",
    "decision_seconds",
    "seats",
    "minimum",
    "maximum",
    "options",
    "devices",
}
_DEVICE_KEYS = {"id", "role", "key", "key_file", "serial", "baudrate", "protocol", "tables", "seat"}
_STATION_KEYS = {"handpay_limit", "ticket_limit", "ticket_expiry_days", "bills"}
_CLUSTER_KEYS = {"database_url", "redis_url", "node_id", "lease_seconds"}
_TLS_KEYS = ("tls_cert", "tls_key", "tls_client_ca")
_LINK_KEYS = {"host", "port", "answer_seconds", "hold_seconds", "max_restarts", *_TLS_KEYS}
_DEVICE_ID = re.compile(r"^[A-Za-z0-9_.:\-]{1,64}$")


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
class ServerSettings:
    tables: tuple[TableSettings, ...]
    auth: AuthSettings = field(default_factory=AuthSettings)
    devices: tuple[DeviceSettings, ...] = ()
    device_link: DeviceLinkSettings = field(default_factory=DeviceLinkSettings)
    stations: StationRules = field(default_factory=StationRules)
    cluster: ClusterSettings = field(default_factory=ClusterSettings)
    starting_balance: int = 100_000
    currency: str = "PLAY"
    source: str = "<built-in demo>"


def demo_config_text() -> str:
    """The demo lobby shipped with the package."""
    return resources.files("server").joinpath("demo_tables.toml").read_text()


def _number(where: str, name: str, value: Any, *, minimum: float, integer: bool) -> Any:
    kinds = (int,) if integer else (int, float)
    if isinstance(value, bool) or not isinstance(value, kinds) or value < minimum:
        kind = "a whole number" if integer else "a number"
        raise ConfigError(f"{where}: {name} must be {kind} >= {minimum}, not {value!r}")
    return value


def _seats(where: str, game: str, value: Any) -> int:
    """``seats``, within what the game's chapter allows (its registry entry's ``seats``)."""
    if game not in GAMES:
        raise ConfigError(f"{where}: unknown game {game!r} (one of {', '.join(GAMES)})")
    limit = GAMES[game].seats
    if value is None:
        return limit.default
    seats: int = _number(where, "seats", value, minimum=1, integer=True)
    if seats > limit.most:
        raise ConfigError(
            f"{where}: seats = {seats}, but a {game} table has at most {limit.most} "
            f"({limit.reason})"
        )
    return seats


def _table(where: str, raw: Any) -> TableSettings:
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: each [[tables]] entry must be a table")
    unknown = set(raw) - _TABLE_KEYS
    if unknown:
        raise ConfigError(f"{where}: unknown setting(s) {', '.join(sorted(unknown))}")
    for key in ("id", "name", "game"):
        if not isinstance(raw.get(key), str) or not raw[key]:
            raise ConfigError(f"{where}: '{key}' is required and must be text")
    table_id = raw["id"]
    if not all(c.isalnum() or c in "-_" for c in table_id) or len(table_id) > 40:
        raise ConfigError(f"{where}: id {table_id!r} may use letters, digits, '-' and '_' only")
    where = f"{where} (table {table_id})"
    options = raw.get("options", {})
    if not isinstance(options, dict):
        raise ConfigError(f"{where}: options must be a table")
    minimum = _number(where, "minimum", raw.get("minimum", 100), minimum=1, integer=True)
    maximum = _number(where, "maximum", raw.get("maximum", 500_000), minimum=1, integer=True)
    if maximum < minimum:
        raise ConfigError(f"{where}: maximum {maximum} is below minimum {minimum}")
    seats = _seats(where, raw["game"], raw.get("seats"))
    devices = raw.get("devices", {})
    if not isinstance(devices, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in devices.items()
    ):
        raise ConfigError(f'{where}: devices must be a table of role = "device id"')
    unknown_roles = set(devices) - set(ROLES)
    if unknown_roles:
        raise ConfigError(
            f"{where}: devices: unknown role(s) {', '.join(sorted(unknown_roles))} "
            f"(one of {', '.join(ROLES)})"
        )
    return TableSettings(
        id=table_id,
        name=raw["name"],
        game=raw["game"],
        betting_seconds=_number(
            where, "betting_seconds", raw.get("betting_seconds", 15), minimum=0.1, integer=False
        ),
        pause_seconds=_number(
            where, "pause_seconds", raw.get("pause_seconds", 4), minimum=0, integer=False
        ),
        decision_seconds=_number(
            where, "decision_seconds", raw.get("decision_seconds", 12), minimum=0.1, integer=False
        ),
        seats=seats,
        minimum=minimum,
        maximum=maximum,
        options=options,
        devices=devices,
    )


def _device(where: str, raw: Any, base: Path | None) -> DeviceSettings:
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: each [[devices]] entry must be a table")
    unknown = set(raw) - _DEVICE_KEYS
    if unknown:
        raise ConfigError(f"{where}: unknown setting(s) {', '.join(sorted(unknown))}")
    device_id = raw.get("id")
    if not isinstance(device_id, str) or not _DEVICE_ID.match(device_id):
        raise ConfigError(f"{where}: id must be 1-64 letters, digits or '_.:-', not {device_id!r}")
    where = f"{where} (device {device_id})"
    role = raw.get("role")
    if not isinstance(role, str) or role not in ROLES:
        raise ConfigError(f"{where}: role must be one of {', '.join(ROLES)}, not {role!r}")
    serial, baudrate = _serial_line(where, raw)
    tables, seat = _station_seat(where, role, raw)
    protocol = raw.get("protocol", FRAMED)
    protocols = (FRAMED, *ADAPTERS)
    if protocol not in protocols:
        raise ConfigError(f"{where}: protocol must be one of {', '.join(protocols)}, not {protocol!r}")  # fmt: skip  # noqa: E501
    if protocol != FRAMED:
        # A vendor's line carries no key: the adapter speaks the vendor's protocol as it is.
        if serial is None:
            raise ConfigError(f"{where}: protocol {protocol!r} runs over a serial line: give serial")  # fmt: skip  # noqa: E501
        if role != adapter_role(protocol):
            raise ConfigError(f"{where}: protocol {protocol!r} serves a {adapter_role(protocol)}, not a {role}")  # fmt: skip  # noqa: E501
        if "key" in raw or "key_file" in raw:
            raise ConfigError(
                f"{where}: protocol {protocol!r} has no key (its line must be physically "
                "secured, docs/devices.md): remove key/key_file"
            )
        return DeviceSettings(device_id, role, b"", serial, baudrate, protocol)
    key = _device_key(where, raw, base)
    return DeviceSettings(device_id, role, key, serial, baudrate, protocol, tables, seat)


def _station_seat(where: str, role: str, raw: dict[str, Any]) -> tuple[tuple[str, ...], int]:
    """A station's ``tables`` (one or more table ids) and ``seat`` (1 or more); no other
    role has them."""
    if role != "station":
        extra = sorted({"tables", "seat"} & set(raw))
        if extra:
            raise ConfigError(f"{where}: {', '.join(extra)} are a station's settings, not a {role}'s")  # fmt: skip  # noqa: E501
        return (), 0
    tables = raw.get("tables")
    if (
        not isinstance(tables, list)
        or not tables
        or not all(isinstance(t, str) and t for t in tables)
        or len(set(tables)) != len(tables)
    ):
        raise ConfigError(f"{where}: tables must list the table ids the station plays, each once")
    seat = _number(where, "seat", raw.get("seat"), minimum=1, integer=True)
    return tuple(tables), seat


def redis_url_problem(url: str) -> str | None:
    """What is wrong with a Redis URL's form (None: nothing)."""
    if not url.startswith(("redis://", "rediss://", "unix://")):
        return f"{url!r} is not a redis://[:PASSWORD@]HOST[:PORT][/DB] URL"
    return None


def node_id_problem(node_id: str) -> str | None:
    if not _DEVICE_ID.match(node_id):
        return f"{node_id!r} is not 1-64 letters, digits or '_.:-'"
    return None


def database_url_problem(url: str) -> str | None:
    """What is wrong with a PostgreSQL URL's form (None: nothing; reaching it is another
    matter, checked at start)."""
    if not url.startswith(("postgresql://", "postgres://")):
        return f"{url!r} is not a postgresql://USER@HOST[:PORT]/DBNAME URL"
    return None


def _cluster(where: str, raw: Any) -> ClusterSettings:
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: [cluster] must be a table")
    unknown = set(raw) - _CLUSTER_KEYS
    if unknown:
        raise ConfigError(f"{where}: [cluster]: unknown setting(s) {', '.join(sorted(unknown))}")  # fmt: skip  # noqa: E501
    redis_url = raw.get("redis_url")
    if redis_url is not None:
        if not isinstance(redis_url, str):
            raise ConfigError(f"{where}: [cluster] redis_url must be text")
        problem = redis_url_problem(redis_url)
        if problem is not None:
            raise ConfigError(f"{where}: [cluster] redis_url: {problem}")
    lease = _number(
        f"{where}: [cluster]",
        "lease_seconds",
        raw.get("lease_seconds", 3.0),
        minimum=1,
        integer=False,
    )
    if lease > 60:
        raise ConfigError(f"{where}: [cluster] lease_seconds must be at most 60, not {lease}")
    url = raw.get("database_url")
    if url is not None:
        if not isinstance(url, str):
            raise ConfigError(f"{where}: [cluster] database_url must be text")
        problem = database_url_problem(url)
        if problem is not None:
            raise ConfigError(f"{where}: [cluster] database_url: {problem}")
    node_id = raw.get("node_id")
    if node_id is not None and (not isinstance(node_id, str) or not _DEVICE_ID.match(node_id)):
        raise ConfigError(f"{where}: [cluster] node_id must be 1-64 letters, digits or '_.:-'")
    return ClusterSettings(
        database_url=url, node_id=node_id, redis_url=redis_url, lease_seconds=float(lease)
    )


def _station_rules(where: str, raw: Any) -> StationRules:
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: [stations] must be a table")
    unknown = set(raw) - _STATION_KEYS
    if unknown:
        raise ConfigError(f"{where}: [stations]: unknown setting(s) {', '.join(sorted(unknown))}")  # fmt: skip  # noqa: E501
    where = f"{where}: [stations]"
    default = StationRules()
    bills = raw.get("bills", list(default.bills))
    if not isinstance(bills, list) or not bills:
        raise ConfigError(f"{where}: bills must list the denominations accepted, in minor units")
    return StationRules(
        handpay_limit=_number(
            where,
            "handpay_limit",
            raw.get("handpay_limit", default.handpay_limit),
            minimum=1,
            integer=True,
        ),
        ticket_limit=_number(
            where,
            "ticket_limit",
            raw.get("ticket_limit", default.ticket_limit),
            minimum=1,
            integer=True,
        ),
        ticket_expiry_days=_number(
            where,
            "ticket_expiry_days",
            raw.get("ticket_expiry_days", default.ticket_expiry_days),
            minimum=0.00001,  # a second or so: a test's tickets expire quickly
            integer=False,
        ),
        bills=tuple(sorted({_number(where, "bills", b, minimum=1, integer=True) for b in bills})),
    )


def _serial_line(where: str, raw: dict[str, Any]) -> tuple[str | None, int]:
    """``serial`` (a device path or socket://HOST:PORT) and ``baudrate`` (only with it)."""
    serial = raw.get("serial")
    if serial is None:
        if "baudrate" in raw:
            raise ConfigError(f"{where}: baudrate is for a device on a serial line: give serial")
        return None, 9600
    if not isinstance(serial, str):
        raise ConfigError(f"{where}: serial must be text (a device path or socket://HOST:PORT)")
    problem = check_port_name(serial)
    if problem is not None:
        raise ConfigError(f"{where}: serial {serial!r}: {problem}")
    baudrate = _number(where, "baudrate", raw.get("baudrate", 9600), minimum=50, integer=True)
    if baudrate > 4_000_000:
        raise ConfigError(f"{where}: baudrate must be at most 4000000, not {baudrate}")
    return serial, baudrate


def _device_key(where: str, raw: dict[str, Any], base: Path | None) -> bytes:
    if ("key" in raw) == ("key_file" in raw):
        raise ConfigError(f"{where}: give the device's key as key (hex) or key_file, one of them")
    text = raw.get("key")
    if "key_file" in raw:
        path = _path(raw["key_file"], base)
        try:
            text = path.read_text().strip()
        except OSError as exc:
            raise ConfigError(f"{where}: cannot read key_file {path}: {exc.strerror}") from None
    try:
        key = bytes.fromhex(str(text))
    except ValueError:
        raise ConfigError(f"{where}: the key must be hexadecimal") from None
    if len(key) < 16:
        raise ConfigError(f"{where}: the key must be at least 16 bytes (32 hex digits)")
    return key


def _path(value: Any, base: Path | None) -> Path:
    """A path from the file, relative to the file's own directory."""
    path = Path(str(value))
    if base is not None and not path.is_absolute():
        path = base / path
    return path


def _device_link(where: str, raw: Any, base: Path | None) -> DeviceLinkSettings:
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: [device_link] must be a table")
    unknown = set(raw) - _LINK_KEYS
    if unknown:
        raise ConfigError(f"{where}: [device_link]: unknown setting(s) {', '.join(sorted(unknown))}")  # fmt: skip  # noqa: E501
    where = f"{where}: [device_link]"
    host = raw.get("host", "127.0.0.1")
    if not isinstance(host, str) or not host:
        raise ConfigError(f"{where}: host must be text")
    port = _number(where, "port", raw.get("port", 8100), minimum=0, integer=True)
    if port > 65535:
        raise ConfigError(f"{where}: port must be at most 65535, not {port}")
    tls = _tls_files(where, raw, base)
    settings = DeviceLinkSettings(
        host=host,
        port=port,
        answer_seconds=_number(
            where, "answer_seconds", raw.get("answer_seconds", 10), minimum=0.1, integer=False
        ),
        hold_seconds=_number(
            where, "hold_seconds", raw.get("hold_seconds", 300), minimum=1, integer=False
        ),
        max_restarts=_number(
            where, "max_restarts", raw.get("max_restarts", 2), minimum=0, integer=True
        ),
        **tls,
    )
    try:
        settings.tls_context()  # a certificate, key or CA that does not load fails now
    except ValueError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    return settings


def _tls_files(where: str, raw: dict[str, Any], base: Path | None) -> dict[str, Path]:
    """``tls_cert``, ``tls_key`` and ``tls_client_ca``: all three or none, each readable."""
    given = [name for name in _TLS_KEYS if name in raw]
    if given and len(given) != len(_TLS_KEYS):
        missing = [name for name in _TLS_KEYS if name not in raw]
        raise ConfigError(
            f"{where}: TLS needs tls_cert, tls_key and tls_client_ca together; "
            f"{', '.join(missing)} missing"
        )
    files = {}
    for name in given:
        if not isinstance(raw[name], str) or not raw[name]:
            raise ConfigError(f"{where}: {name} must be the path of a PEM file")
        path = _path(raw[name], base)
        try:
            with path.open("rb"):
                pass
        except OSError as exc:
            raise ConfigError(f"{where}: cannot read {name} {path}: {exc.strerror}") from None
        files[name] = path
    return files


def _check_devices(source: str, tables: tuple[TableSettings, ...], devices: tuple[DeviceSettings, ...]) -> None:  # fmt: skip  # noqa: E501
    """Every device a table names exists in that role, and serves one table only."""
    by_id = {}
    lines: dict[str, str] = {}
    for device in devices:
        if device.id in by_id:
            raise ConfigError(f"{source}: device ids must be unique: {device.id}")
        by_id[device.id] = device
        if device.serial is not None:
            if device.serial in lines:
                raise ConfigError(
                    f"{source} (device {device.id}): serial {device.serial!r} is already the "
                    f"line of device {lines[device.serial]}"
                )
            lines[device.serial] = device.id
    used: dict[str, str] = {}
    for table in tables:
        for role, device_id in table.devices.items():
            where = f"{source} (table {table.id}): devices.{role}"
            named = by_id.get(device_id)
            if named is None:
                raise ConfigError(f"{where}: no [[devices]] entry has id {device_id!r}")
            if named.role != role:
                raise ConfigError(f"{where}: {device_id} is a {named.role}, not a {role}")
            if device_id in used:
                raise ConfigError(f"{where}: {device_id} already serves table {used[device_id]}")
            used[device_id] = table.id
            if not device_role(role).serves_table:
                raise ConfigError(f"{where}: a {role} names its tables itself ([[devices]] tables)")  # fmt: skip  # noqa: E501
    by_table = {t.id: t for t in tables}
    seats: dict[tuple[str, int], str] = {}
    for device in devices:
        for table_id in device.tables:
            where = f"{source} (device {device.id}): tables"
            played = by_table.get(table_id)
            if played is None:
                raise ConfigError(f"{where}: no [[tables]] entry has id {table_id!r}")
            if device.seat > played.seats:
                raise ConfigError(f"{where}: seat {device.seat}, but table {table_id} has {played.seats} seats")  # fmt: skip  # noqa: E501
            taken = seats.get((table_id, device.seat))
            if taken is not None:
                raise ConfigError(f"{where}: seat {device.seat} of table {table_id} is already station {taken}'s")  # fmt: skip  # noqa: E501
            seats[(table_id, device.seat)] = device.id


def parse_config(text: str, source: str) -> ServerSettings:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source}: not valid TOML: {exc}") from None
    raw_tables = data.get("tables")
    if not isinstance(raw_tables, list) or not raw_tables:
        raise ConfigError(f"{source}: at least one [[tables]] entry is needed")
    tables = tuple(_table(f"{source}, tables[{i}]", t) for i, t in enumerate(raw_tables))
    ids = [t.id for t in tables]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ConfigError(f"{source}: table ids must be unique: {', '.join(duplicates)}")
    server = data.get("server", {})
    auth_raw = data.get("auth", {})
    mode = auth_raw.get("mode", "demo")
    if mode not in ("demo", "jwt"):
        raise ConfigError(f"{source}: [auth] mode must be 'demo' or 'jwt', not {mode!r}")
    public_key = None
    if "jwt_public_key_file" in auth_raw:
        public_key = Path(auth_raw["jwt_public_key_file"]).read_text()
    auth = AuthSettings(
        mode=mode,
        jwt_secret=auth_raw.get("jwt_secret"),
        jwt_public_key=public_key,
        jwt_algorithms=tuple(auth_raw.get("jwt_algorithms", ["HS256"])),
        jwt_audience=auth_raw.get("jwt_audience"),
        jwt_issuer=auth_raw.get("jwt_issuer"),
    )
    if mode == "jwt" and not (auth.jwt_secret or auth.jwt_public_key):
        raise ConfigError(f"{source}: [auth] mode 'jwt' needs jwt_secret or jwt_public_key_file")
    raw_devices = data.get("devices", [])
    if not isinstance(raw_devices, list):
        raise ConfigError(f"{source}: devices must be [[devices]] entries")
    base = None if source.startswith("<") else Path(source).parent
    devices = tuple(_device(f"{source}, devices[{i}]", d, base) for i, d in enumerate(raw_devices))
    _check_devices(source, tables, devices)
    return ServerSettings(
        tables=tables,
        auth=auth,
        devices=devices,
        device_link=_device_link(source, data.get("device_link", {}), base),
        stations=_station_rules(source, data.get("stations", {})),
        cluster=_cluster(source, data.get("cluster", {})),
        starting_balance=_number(
            source,
            "starting_balance",
            server.get("starting_balance", 100_000),
            minimum=0,
            integer=True,
        ),
        currency=str(server.get("currency", "PLAY")),
        source=source,
    )


def load_config(path: Path | None) -> ServerSettings:
    """The operator's file, or the built-in demo lobby when ``path`` is None."""
    if path is None:
        return parse_config(demo_config_text(), "<built-in demo>")
    try:
        text = path.read_text()
    except OSError as exc:
        raise ConfigError(f"cannot read the configuration {path}: {exc.strerror}") from None
    return parse_config(text, str(path))
