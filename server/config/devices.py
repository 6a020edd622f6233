"""``[[devices]]``, ``[device_link]`` and ``[stations]``: the electronic tables' devices
and player stations (docs/devices.md, docs/electronic-tables.md). Device roles come from the
registry (``server/devices/roles/``): a new role needs no change here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from server.config.settings import DeviceLinkSettings, DeviceSettings, StationRules
from server.config.values import IDENTIFIER, number, path_of
from server.devices.adapters import ADAPTERS, FRAMED, adapter_role
from server.devices.roles import ROLES, device_role, registered
from server.devices.serial_port import check_port_name
from server.games.chance import BUILT_IN_KINDS, ChanceRequest
from server.games.registry import GAMES
from server.games.table import ConfigError, TableSettings

__all__ = ["check_devices", "device", "device_link", "station_rules"]

_DEVICE_KEYS = {"id", "role", "key", "key_file", "serial", "baudrate", "protocol", "tables", "seat"}
_STATION_KEYS = {"handpay_limit", "ticket_limit", "ticket_expiry_days", "bills"}
_TLS_KEYS = ("tls_cert", "tls_key", "tls_client_ca")
_LINK_KEYS = {"host", "port", "answer_seconds", "hold_seconds", "max_restarts", *_TLS_KEYS}


def device(where: str, raw: Any, base: Path | None) -> DeviceSettings:
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: each [[devices]] entry must be a table")
    unknown = set(raw) - _DEVICE_KEYS
    if unknown:
        raise ConfigError(f"{where}: unknown setting(s) {', '.join(sorted(unknown))}")
    device_id = raw.get("id")
    if not isinstance(device_id, str) or not IDENTIFIER.match(device_id):
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
    seat = number(where, "seat", raw.get("seat"), minimum=1, integer=True)
    return tuple(tables), seat


def station_rules(where: str, raw: Any) -> StationRules:
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
        handpay_limit=number(
            where,
            "handpay_limit",
            raw.get("handpay_limit", default.handpay_limit),
            minimum=1,
            integer=True,
        ),
        ticket_limit=number(
            where,
            "ticket_limit",
            raw.get("ticket_limit", default.ticket_limit),
            minimum=1,
            integer=True,
        ),
        ticket_expiry_days=number(
            where,
            "ticket_expiry_days",
            raw.get("ticket_expiry_days", default.ticket_expiry_days),
            minimum=0.00001,  # a second or so: a test's tickets expire quickly
            integer=False,
        ),
        bills=tuple(sorted({number(where, "bills", b, minimum=1, integer=True) for b in bills})),
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
    baudrate = number(where, "baudrate", raw.get("baudrate", 9600), minimum=50, integer=True)
    if baudrate > 4_000_000:
        raise ConfigError(f"{where}: baudrate must be at most 4000000, not {baudrate}")
    return serial, baudrate


def _device_key(where: str, raw: dict[str, Any], base: Path | None) -> bytes:
    if ("key" in raw) == ("key_file" in raw):
        raise ConfigError(f"{where}: give the device's key as key (hex) or key_file, one of them")
    text = raw.get("key")
    if "key_file" in raw:
        path = path_of(raw["key_file"], base)
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


def device_link(where: str, raw: Any, base: Path | None) -> DeviceLinkSettings:
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: [device_link] must be a table")
    unknown = set(raw) - _LINK_KEYS
    if unknown:
        raise ConfigError(f"{where}: [device_link]: unknown setting(s) {', '.join(sorted(unknown))}")  # fmt: skip  # noqa: E501
    where = f"{where}: [device_link]"
    host = raw.get("host", "127.0.0.1")
    if not isinstance(host, str) or not host:
        raise ConfigError(f"{where}: host must be text")
    port = number(where, "port", raw.get("port", 8100), minimum=0, integer=True)
    if port > 65535:
        raise ConfigError(f"{where}: port must be at most 65535, not {port}")
    tls = _tls_files(where, raw, base)
    settings = DeviceLinkSettings(
        host=host,
        port=port,
        answer_seconds=number(
            where, "answer_seconds", raw.get("answer_seconds", 10), minimum=0.1, integer=False
        ),
        hold_seconds=number(
            where, "hold_seconds", raw.get("hold_seconds", 300), minimum=1, integer=False
        ),
        max_restarts=number(
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
        path = path_of(raw[name], base)
        try:
            with path.open("rb"):
                pass
        except OSError as exc:
            raise ConfigError(f"{where}: cannot read {name} {path}: {exc.strerror}") from None
        files[name] = path
    return files


def check_devices(source: str, tables: tuple[TableSettings, ...], devices: tuple[DeviceSettings, ...]) -> None:  # fmt: skip  # noqa: E501
    """Every device a table names exists in that role, and serves one table only; every
    kind of chance a table's game asks can be answered there."""
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
    for table in tables:
        _check_answered(f"{source} (table {table.id})", table)
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


def _check_answered(where: str, table: TableSettings) -> None:
    """A kind of chance the game declares with no virtual answer (``ChanceRequest.outcomes``
    not overridden: only a device can answer it) needs a device of a role that answers it:
    refused here, when the file is read, rather than by the table closing in its first
    round."""
    entry = GAMES.get(table.game)
    if entry is None:
        return
    for kind in entry.capabilities.chance:
        if kind in BUILT_IN_KINDS or kind.outcomes is not ChanceRequest.outcomes:
            continue
        if any(kind in device_role(role).answers for role in table.devices):
            continue
        able = [r.name for r in registered() if kind in r.answers]
        raise ConfigError(
            f"{where}: a {table.game} round asks for {kind.kind!r}, which only a device "
            f"answers: name one in [tables.devices] (roles that answer it: "
            f"{', '.join(able) or 'none registered'})"
        )
