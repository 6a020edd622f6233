"""A real PostgreSQL for the tests of the shared stores: one database per test run, made
on the server at ``CROUPIER_TEST_POSTGRES`` (default: the machine's own, on its default
loopback port, as ``scripts/test`` leaves it), migrated once, emptied before each test and
dropped at the end. Without a reachable server the tests that need one fail in CI (never
silently skipped there) and are skipped elsewhere, saying how to get one."""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterator

import psycopg
import pytest

from server.pg_storage import migrate

ADMIN_URL = os.environ.get(
    "CROUPIER_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/postgres"
)
TABLES = (
    "transfers",
    "batches",
    "accounts",
    "records",
    "round_players",
    "table_state",
    "linked_meters",
    "meter_settlements",
    "rounds",
    "table_fences",
    "cluster_keys",
    "wallet_outbox",
    "wallet_calls",
    "wallet_debits",
)


def _database_url(name: str) -> str:
    base, _, _ = ADMIN_URL.rpartition("/")
    return f"{base}/{name}"


def run_database() -> Iterator[str]:
    """The session's database: made, migrated, yielded, dropped."""
    try:
        admin = psycopg.connect(ADMIN_URL, autocommit=True, connect_timeout=5)
    except psycopg.Error as exc:
        message = (
            f"no PostgreSQL at {ADMIN_URL} ({exc}); run scripts/test as root to install and "
            "start it, or set CROUPIER_TEST_POSTGRES to a server where this user may create "
            "databases"
        )
        pytest.skip(message)  # a failure under CI (tests/conftest.py)
    name = f"croupier_test_{os.getpid()}_{secrets.token_hex(4)}"
    with admin:
        admin.execute(f'CREATE DATABASE "{name}"')
        try:
            url = _database_url(name)
            migrate(url)
            yield url
        finally:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def empty(url: str) -> str:
    """The database emptied (its schema kept): each test starts from nothing."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"TRUNCATE {', '.join(TABLES)} RESTART IDENTITY CASCADE")
    return url


@contextlib.contextmanager
def fresh_database() -> Iterator[str]:
    """A database of its own, empty (no schema), dropped afterwards."""
    name = f"croupier_fresh_{os.getpid()}_{secrets.token_hex(4)}"
    with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
        try:
            yield _database_url(name)
        finally:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
