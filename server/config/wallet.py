"""``[wallet]``: whose money the players bet (docs/wallet.md, "Configuration")."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from server.config.settings import AuthSettings, DeviceSettings, WalletSettings
from server.config.values import IDENTIFIER, number, path_of
from server.games.table import ConfigError
from server.wallet.operator.contract import url_problem

__all__ = ["operator_api_token", "wallet_settings"]

_KEYS = {"mode", "url", "secret_file", "timeout_ms", "connections", "currency", "namespace"}
_CURRENCY = re.compile(r"^[A-Z]{3}$")  # ISO 4217


def wallet_settings(
    where: str,
    raw: Any,
    base: Path | None,
    auth: AuthSettings,
    devices: tuple[DeviceSettings, ...],
) -> WalletSettings:
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: [wallet] must be a table")
    unknown = set(raw) - _KEYS
    if unknown:
        raise ConfigError(f"{where}: [wallet]: unknown setting(s) {', '.join(sorted(unknown))}")
    mode = raw.get("mode", "embedded")
    if mode not in ("embedded", "seamless"):
        raise ConfigError(f"{where}: [wallet] mode must be 'embedded' or 'seamless', not {mode!r}")
    if mode == "embedded":
        others = sorted(set(raw) - {"mode"})
        if others:
            raise ConfigError(f"{where}: [wallet] {', '.join(others)}: only with mode = 'seamless'")
        return WalletSettings()
    section = f"{where}: [wallet]"
    url = raw.get("url")
    if not isinstance(url, str):
        raise ConfigError(f"{section} url must be the operator wallet's http(s):// URL")
    problem = url_problem(url)
    if problem is not None:
        raise ConfigError(f"{section} url: {problem}")
    secret = _secret(section, "secret_file", raw.get("secret_file"), base, "the shared secret")
    currency = raw.get("currency", "USD")
    if not isinstance(currency, str) or not _CURRENCY.match(currency):
        raise ConfigError(f"{section} currency must be an ISO 4217 code (USD), not {currency!r}")
    namespace = raw.get("namespace")
    if namespace is not None and (
        not isinstance(namespace, str) or not IDENTIFIER.match(namespace)
    ):
        raise ConfigError(f"{section} namespace must be 1-64 letters, digits or '_.:-'")
    if auth.mode != "jwt":
        # Demo players are given play money by this server: none of it is the operator's.
        raise ConfigError(f"{section} mode 'seamless' needs [auth] mode 'jwt'")
    if any(d.role == "station" for d in devices):
        # A station's credits come from its own cash-in and tickets, not from an operator.
        raise ConfigError(f"{section} mode 'seamless' and player stations cannot be combined")
    return WalletSettings(
        mode="seamless",
        url=url,
        secret=secret,
        timeout_ms=number(
            section, "timeout_ms", raw.get("timeout_ms", 3000), minimum=100, integer=True
        ),
        connections=number(
            section, "connections", raw.get("connections", 256), minimum=1, integer=True
        ),
        currency=currency,
        namespace=namespace,
    )


def operator_api_token(where: str, raw: Any, base: Path | None) -> bytes | None:
    """``[operator_api] token_file``: the round history API's bearer token (16 bytes or
    more, read from the file); None when the section is absent (the API is off)."""
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: [operator_api] must be a table")
    unknown = set(raw) - {"token_file"}
    if unknown:
        raise ConfigError(
            f"{where}: [operator_api]: unknown setting(s) {', '.join(sorted(unknown))}"
        )
    if not raw:
        return None
    return _secret(
        f"{where}: [operator_api]", "token_file", raw.get("token_file"), base, "the token"
    )


def _secret(section: str, key: str, value: Any, base: Path | None, what: str) -> bytes:
    """The secret kept in the file setting ``key`` names (relative to the configuration's
    folder), surrounding whitespace stripped: 16 bytes or more, else ``ConfigError``."""
    if not isinstance(value, str):
        raise ConfigError(f"{section} {key}: the file holding {what}")
    path = path_of(value, base)
    try:
        secret = path.read_bytes().strip()
    except OSError as exc:
        raise ConfigError(f"{section} {key} {path}: {exc.strerror}") from None
    if len(secret) < 16:
        raise ConfigError(f"{section} {key} {path}: {what} must be 16 bytes or more")
    return secret
