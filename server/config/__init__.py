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

import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

from server.config.cluster import (
    cluster_settings,
    database_url_problem,
    node_id_problem,
    redis_url_problem,
)
from server.config.devices import check_devices, device, device_link, station_rules
from server.config.settings import (
    AuthSettings,
    ClusterSettings,
    DeviceLinkSettings,
    DeviceSettings,
    ServerSettings,
    StationRules,
)
from server.config.values import number
from server.config.wallet import operator_api_token, wallet_settings
from server.devices.roles import ROLES
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
    "database_url_problem",
    "demo_config_text",
    "load_config",
    "node_id_problem",
    "parse_config",
    "redis_url_problem",
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


def demo_config_text() -> str:
    """The demo lobby shipped with the package."""
    return resources.files("server").joinpath("demo_tables.toml").read_text()


def _seats(where: str, game: str, value: Any) -> int:
    """``seats``, within what the game's chapter allows (its registry entry's ``seats``)."""
    if game not in GAMES:
        raise ConfigError(f"{where}: unknown game {game!r} (one of {', '.join(GAMES)})")
    limit = GAMES[game].seats
    if value is None:
        return limit.default
    seats: int = number(where, "seats", value, minimum=1, integer=True)
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
    minimum = number(where, "minimum", raw.get("minimum", 100), minimum=1, integer=True)
    maximum = number(where, "maximum", raw.get("maximum", 500_000), minimum=1, integer=True)
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
        betting_seconds=number(
            where, "betting_seconds", raw.get("betting_seconds", 15), minimum=0.1, integer=False
        ),
        pause_seconds=number(
            where, "pause_seconds", raw.get("pause_seconds", 4), minimum=0, integer=False
        ),
        decision_seconds=number(
            where, "decision_seconds", raw.get("decision_seconds", 12), minimum=0.1, integer=False
        ),
        seats=seats,
        minimum=minimum,
        maximum=maximum,
        options=options,
        devices=devices,
    )


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
    devices = tuple(device(f"{source}, devices[{i}]", d, base) for i, d in enumerate(raw_devices))
    check_devices(source, tables, devices)
    return ServerSettings(
        tables=tables,
        auth=auth,
        devices=devices,
        device_link=device_link(source, data.get("device_link", {}), base),
        stations=station_rules(source, data.get("stations", {})),
        cluster=cluster_settings(source, data.get("cluster", {})),
        wallet=wallet_settings(source, data.get("wallet", {}), base, auth, devices),
        operator_api_token=operator_api_token(source, data.get("operator_api", {}), base),
        starting_balance=number(
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
