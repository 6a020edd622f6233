"""``croupier serve``: run the table server on its embedded default, or on a configuration."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path
from typing import Any

from server.config import (
    ConfigError,
    database_url_problem,
    load_config,
    node_id_problem,
    redis_url_problem,
)
from server.stores import RedisUnreachable, StorageError


def default_data_dir() -> Path:
    """A per-user folder: ``$XDG_DATA_HOME/croupier`` or ``~/.local/share/croupier``."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "croupier"


def _setting(
    flag: str | None, flag_name: str, in_file: str | None, settings: Any, key: str
) -> tuple[str | None, str]:
    """A cluster setting and the name to blame it on: the flag, else the configuration
    file's ``[cluster]`` entry, else the environment's ``CROUPIER_<KEY>``."""
    if flag is not None:
        return flag, flag_name
    if in_file is not None:
        return in_file, f"{settings.source}: [cluster] {key}"
    env = "CROUPIER_" + key.upper()
    return os.environ.get(env) or None, env


def write_port_file(path: Path, port: int) -> None:
    """The port in ``path``, whole or not at all: a reader polling for the file never sees
    half a number (written beside it, then renamed over it)."""
    partial = path.with_name(path.name + ".partial")
    partial.write_text(f"{port}\n")
    partial.replace(path)


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "serve",
        help="run the table server (embedded default: no Redis, SQLite under --data-dir)",
        description="Run the table server. WebSocket on /ws; /healthz, /readyz and /metrics "
        "on the same port. Without --config, a demo lobby with a table of every game.",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument(
        "--port", type=int, default=8000, help="0: any free port (say which with --port-file)"
    )
    parser.add_argument(
        "--port-file",
        type=Path,
        default=None,
        help="once listening, write the port bound into this file (with --port 0: which one "
        "the system chose)",
    )
    parser.add_argument("--config", type=Path, help="tables and settings (TOML)")
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help=f"where the ledger and journal live (default {default_data_dir()})",
    )
    parser.add_argument(
        "--database",
        default=None,
        help="keep the ledger and journal in this PostgreSQL database instead of SQLite "
        "(or [cluster] database_url, CROUPIER_DATABASE_URL); its schema is migrated at start",
    )
    parser.add_argument(
        "--redis",
        default=None,
        help="run as one node of a cluster sharing this Redis (table leases, fan-out) and the "
        "--database (or [cluster] redis_url, CROUPIER_REDIS_URL)",
    )
    parser.add_argument(
        "--node-id",
        default=None,
        help="this node's name in the cluster (or [cluster] node_id, CROUPIER_NODE_ID; "
        "default: host name and process id)",
    )
    parser.add_argument(
        "--log-level", default="info", choices=["debug", "info", "warning", "error"]
    )
    parser.add_argument(
        "--demo-devices",
        action="store_true",
        help="the demo lobby plus tables dealt by simulated devices: a card-reading shoe "
        "(baccarat-shoe), a Masque reader (down-under-reader), an automated wheel "
        "(roulette-wheel); play money only",
    )
    parser.add_argument(
        "--wallet-demo",
        action="store_true",
        help="the demo lobby with the players' money at an operator: the reference operator "
        "wallet started beside the server (docs/wallet.md), whose platform page lists demo "
        "players and opens the game as one; data under DATA_DIR/wallet-demo",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from server.app.process import configure_logging

    configure_logging(args.log_level)
    if args.wallet_demo:
        return _with_wallet_demo(args)
    return _serve(args)


def _with_wallet_demo(args: argparse.Namespace) -> int:
    """``--wallet-demo``: the reference wallet started, the server run against it, the
    wallet stopped when the server stops."""
    from server.cli.demo_wallet import DemoWallet, WalletDemoError

    if args.config is not None or args.demo_devices:
        print(
            "croupier serve: --wallet-demo serves the built-in demo lobby on its own (not "
            "with --config or --demo-devices); for an operator's wallet of your own, set "
            "[wallet] in your configuration (docs/wallet.md)",
            file=sys.stderr,
        )
        return 2
    wallet = DemoWallet((args.data_dir or default_data_dir()) / "wallet-demo", args.host)
    try:
        url = wallet.start()
    except WalletDemoError as exc:
        print(f"croupier serve: {exc}", file=sys.stderr)
        return 1
    try:
        return _serve(args, wallet)
    finally:
        wallet.stop()
        print(f"croupier serve: the reference wallet at {url} stopped", file=sys.stderr)


def _serve(args: argparse.Namespace, wallet: Any = None) -> int:
    from server.app.service import Service
    from server.datadir import DataDirInUse

    demo = None
    if args.demo_devices:
        if args.config is not None:
            print(
                "croupier serve: --demo-devices adds simulated devices to the built-in demo "
                "lobby; with --config, name your devices in the file and connect them (or "
                "`croupier device simulate`) yourself (docs/devices.md)",
                file=sys.stderr,
            )
            return 2
        from server.cli.demo_devices import DemoDevices

        demo = DemoDevices()
    try:
        if wallet is not None:
            settings = wallet.settings()
        else:
            settings = demo.settings() if demo is not None else load_config(args.config)
    except ConfigError as exc:
        print(f"croupier serve: {exc}", file=sys.stderr)
        return 2
    data_dir = args.data_dir or default_data_dir()
    if wallet is not None:
        data_dir = wallet.folder
    cluster = settings.cluster
    database, db_setting = _setting(
        args.database, "--database", cluster.database_url, settings, "database_url"
    )
    redis, redis_setting = _setting(args.redis, "--redis", cluster.redis_url, settings, "redis_url")
    node_id, node_setting = _setting(
        args.node_id, "--node-id", cluster.node_id, settings, "node_id"
    )
    for value, name, problem in (
        (database, db_setting, database_url_problem),
        (redis, redis_setting, redis_url_problem),
        (node_id, node_setting, node_id_problem),
    ):
        if value is not None and problem(value) is not None:
            print(f"croupier serve: {name}: {problem(value)}", file=sys.stderr)
            return 2
    if redis is not None and database is None:
        print(
            f"croupier serve: {redis_setting} needs a database too (--database, [cluster] "
            "database_url or CROUPIER_DATABASE_URL): a cluster's ledger and journal are in "
            "PostgreSQL",
            file=sys.stderr,
        )
        return 2
    try:
        service = Service(
            settings,
            data_dir,
            host=args.host,
            port=args.port,
            database_url=database,
            redis_url=redis,
            node_id=node_id,
        )
    except ConfigError as exc:  # a game's own options, checked when its table is built
        print(f"croupier serve: {settings.source}: {exc}", file=sys.stderr)
        return 2
    except DataDirInUse as exc:
        print(f"croupier serve: {exc}", file=sys.stderr)
        return 1
    except RedisUnreachable as exc:
        print(f"croupier serve: {redis_setting}: {exc}", file=sys.stderr)
        return 2
    except StorageError as exc:  # the database: unreachable, in use, a newer schema
        print(f"croupier serve: {db_setting}: {exc}", file=sys.stderr)
        return 2

    async def started(service: Any) -> None:
        if args.port_file is not None:
            write_port_file(args.port_file, service.port)
        web = f"http://{args.host}:{service.port}"
        if demo is not None:
            out = lambda line: print(line, flush=True)  # noqa: E731
            demo.start(service.devices.port, web=web, out=out)
        if wallet is not None:
            await asyncio.to_thread(wallet.announce, web)
            print(f"the operator's platform (choose a player to play): {wallet.url}/", flush=True)

    try:
        asyncio.run(service.run_forever(started))
    except OSError as exc:
        print(
            f"croupier serve: cannot listen on {args.host}:{args.port}: {exc.strerror}",
            file=sys.stderr,
        )
        return 1
    return 0
