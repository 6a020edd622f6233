"""``croupier db migrate``: create or upgrade the shared PostgreSQL schema of a cluster
(docs/operations.md, "Running a cluster").

    croupier db migrate --database postgresql://croupier@db/croupier
    CROUPIER_DATABASE_URL=postgresql://… croupier db migrate

Each version is applied once, in one transaction, under a lock that two nodes starting at
once share; a database migrated by a newer server is refused (exit status 2).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

__all__ = ["register"]


def register(commands: Any) -> None:
    parser = commands.add_parser("db", help="the shared PostgreSQL database of a cluster")
    sub = parser.add_subparsers(dest="db_command", metavar="DB_COMMAND", required=True)
    p = sub.add_parser("migrate", help="create or upgrade its schema to this server's")
    p.add_argument(
        "--database",
        default=None,
        help="postgresql://USER[:PASSWORD]@HOST[:PORT]/DBNAME (or CROUPIER_DATABASE_URL)",
    )
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from server.pg_storage import migrate
    from server.stores import StorageError

    url = args.database or os.environ.get("CROUPIER_DATABASE_URL")
    if not url:
        print(
            "croupier db migrate: give --database URL (or CROUPIER_DATABASE_URL)", file=sys.stderr
        )
        return 2
    try:
        before, after = migrate(url)
    except StorageError as exc:
        print(f"croupier db migrate: --database: {exc}", file=sys.stderr)
        return 2
    if before == after:
        print(f"the schema is at version {after}: nothing to do")
    else:
        print(f"the schema migrated from version {before} to {after}")
    return 0
