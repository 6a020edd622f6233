"""``[cluster]``: the shared PostgreSQL database and, with Redis, a cluster's nodes
(docs/operations.md, "Running a cluster"). The URL checks also serve ``croupier cluster``."""

from __future__ import annotations

from typing import Any

from server.config.settings import ClusterSettings
from server.config.values import IDENTIFIER, number
from server.games.table import ConfigError

__all__ = ["cluster_settings", "database_url_problem", "node_id_problem", "redis_url_problem"]

_CLUSTER_KEYS = {"database_url", "redis_url", "node_id", "lease_seconds"}


def redis_url_problem(url: str) -> str | None:
    """What is wrong with a Redis URL's form (None: nothing)."""
    if not url.startswith(("redis://", "rediss://", "unix://")):
        return f"{url!r} is not a redis://[:PASSWORD@]HOST[:PORT][/DB] URL"
    return None


def node_id_problem(node_id: str) -> str | None:
    if not IDENTIFIER.match(node_id):
        return f"{node_id!r} is not 1-64 letters, digits or '_.:-'"
    return None


def database_url_problem(url: str) -> str | None:
    """What is wrong with a PostgreSQL URL's form (None: nothing; reaching it is another
    matter, checked at start)."""
    if not url.startswith(("postgresql://", "postgres://")):
        return f"{url!r} is not a postgresql://USER@HOST[:PORT]/DBNAME URL"
    return None


def cluster_settings(where: str, raw: Any) -> ClusterSettings:
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
    lease = number(
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
    if node_id is not None and (not isinstance(node_id, str) or not IDENTIFIER.match(node_id)):
        raise ConfigError(f"{where}: [cluster] node_id must be 1-64 letters, digits or '_.:-'")
    return ClusterSettings(
        database_url=url, node_id=node_id, redis_url=redis_url, lease_seconds=float(lease)
    )
