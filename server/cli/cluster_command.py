"""``croupier cluster status``: who owns what in a cluster (docs/operations.md, "Running a
cluster").

    croupier cluster status --redis redis://cache:6379 [--database postgresql://…] [--json]

Lists the live nodes (their address, since when, how many tables) and every table: the node
holding its lease and the lease's fencing token — with ``--database``, also the fence
PostgreSQL holds, which a healthy table's token equals. A table no node holds is shown as
free. Exit status 0; 1 when Redis (or the database) cannot be read; 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from typing import Any

__all__ = ["register"]


def register(commands: Any) -> None:
    parser = commands.add_parser("cluster", help="the nodes of a cluster and their tables")
    sub = parser.add_subparsers(dest="cluster_command", metavar="CLUSTER_COMMAND", required=True)
    p = sub.add_parser("status", help="the live nodes and which node runs each table")
    p.add_argument("--redis", default=None, help="redis://HOST[:PORT] (or CROUPIER_REDIS_URL)")
    p.add_argument(
        "--database",
        default=None,
        help="also show each table's fence in this database (or CROUPIER_DATABASE_URL)",
    )
    p.add_argument("--json", action="store_true", help="one JSON object: nodes, tables")
    p.set_defaults(handler=run)


async def _read(url: str) -> tuple[dict[str, Any], dict[str, Any]]:
    from redis.asyncio import Redis

    from server.cluster.leases import LeaseStore

    redis = Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5)
    try:
        store = LeaseStore(redis, lease_ms=0)
        return await store.nodes(), await store.owners()
    finally:
        await redis.aclose()


def _fences(url: str) -> dict[str, tuple[int, str]]:
    from server.pg_storage import connect

    with connect(url) as conn:
        rows = conn.execute("SELECT table_id, token, node_id FROM table_fences").fetchall()
    return {r[0]: (int(r[1]), str(r[2])) for r in rows}


def run(args: argparse.Namespace) -> int:
    from redis.exceptions import RedisError

    from server.config import database_url_problem, redis_url_problem
    from server.stores import StorageError

    redis_url = args.redis or os.environ.get("CROUPIER_REDIS_URL")
    database = args.database or os.environ.get("CROUPIER_DATABASE_URL")
    if not redis_url:
        print("croupier cluster status: give --redis URL (or CROUPIER_REDIS_URL)", file=sys.stderr)
        return 2
    for value, name, problem in (
        (redis_url, "--redis", redis_url_problem),
        (database, "--database", database_url_problem),
    ):
        if value and problem(value) is not None:
            print(f"croupier cluster status: {name}: {problem(value)}", file=sys.stderr)
            return 2
    try:
        nodes, owners = asyncio.run(_read(redis_url))
    except (RedisError, OSError) as exc:
        print(f"croupier cluster status: --redis: cannot reach Redis: {exc}", file=sys.stderr)
        return 1
    fences: dict[str, tuple[int, str]] = {}
    if database:
        try:
            fences = _fences(database)
        except StorageError as exc:
            print(f"croupier cluster status: --database: {exc}", file=sys.stderr)
            return 1
    tables = []
    for table_id in sorted(set(owners) | set(fences)):
        owner = owners.get(table_id)
        entry: dict[str, Any] = {
            "table": table_id,
            "node": owner.node_id if owner else None,
            "token": owner.token if owner else None,
        }
        if database:
            fence = fences.get(table_id)
            entry["fence"] = fence[0] if fence else None
        tables.append(entry)
    report = {
        "nodes": [
            {"node": n, **info, "owns": sum(t["node"] == n for t in tables)}
            for n, info in sorted(nodes.items())
        ],
        "tables": tables,
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    _print(report, now=time.time())
    return 0


def _print(report: dict[str, Any], *, now: float) -> None:
    nodes, tables = report["nodes"], report["tables"]
    print(f"{len(nodes)} node(s)")
    for n in nodes:
        up = int(now - float(n.get("started", now)))
        print(f"  {n['node']:<24} {n.get('address', ''):<22} up {up:>6} s  {n['owns']} table(s)")
    free = sum(t["node"] is None for t in tables)
    print(f"{len(tables)} table(s), {free} free")
    width = max((len(t["table"]) for t in tables), default=0)  # the columns line up
    for t in tables:
        holder = f"{t['node']} (token {t['token']})" if t["node"] else "free: no node holds it"
        fence = f"  fence {t['fence']}" if "fence" in t and t["fence"] is not None else ""
        print(f"  {t['table']:<{width}}  {holder}{fence}")
