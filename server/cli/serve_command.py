"""``croupier serve``: run the table server on its embedded default, or on a configuration."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path
from typing import Any

from server.config import ConfigError, database_url_problem, load_config
from server.stores import StorageError


def default_data_dir() -> Path:
    """A per-user folder: ``$XDG_DATA_HOME/croupier`` or ``~/.local/share/croupier``."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "croupier"


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "serve",
        help="run the table server (embedded default: no Redis, SQLite under --data-dir)",
        description="Run the table server. WebSocket on /ws; /healthz, /readyz and /metrics "
        "on the same port. Without --config, a demo lobby with a table of every game.",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
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
        "--log-level", default="info", choices=["debug", "info", "warning", "error"]
    )
    parser.add_argument(
        "--demo-devices",
        action="store_true",
        help="the demo lobby plus tables dealt by simulated devices: a card-reading shoe "
        "(baccarat-shoe), a Masque reader (down-under-reader), an automated wheel "
        "(roulette-wheel); play money only",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from server.datadir import DataDirInUse
    from server.net.app import Service, configure_logging

    configure_logging(args.log_level)
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
        from server.devices.demo import DemoDevices

        demo = DemoDevices()
    try:
        settings = demo.settings() if demo is not None else load_config(args.config)
    except ConfigError as exc:
        print(f"croupier serve: {exc}", file=sys.stderr)
        return 2
    data_dir = args.data_dir or default_data_dir()
    database = args.database
    setting = "--database"
    if database is None and settings.cluster.database_url is None:
        database = os.environ.get("CROUPIER_DATABASE_URL") or None
        setting = "CROUPIER_DATABASE_URL"
    elif database is None:
        setting = f"{settings.source}: [cluster] database_url"
    if database is not None and database_url_problem(database) is not None:
        print(f"croupier serve: {setting}: {database_url_problem(database)}", file=sys.stderr)
        return 2
    try:
        service = Service(settings, data_dir, host=args.host, port=args.port, database_url=database)
    except ConfigError as exc:  # a game's own options, checked when its table is built
        print(f"croupier serve: {settings.source}: {exc}", file=sys.stderr)
        return 2
    except DataDirInUse as exc:
        print(f"croupier serve: {exc}", file=sys.stderr)
        return 1
    except StorageError as exc:  # the database: unreachable, in use, a newer schema
        print(f"croupier serve: {setting}: {exc}", file=sys.stderr)
        return 2

    async def connect_demo_devices(service: Any) -> None:
        assert demo is not None
        web = f"http://{args.host}:{service.port}"
        demo.start(service.casino.devices.port, web=web, out=lambda line: print(line, flush=True))

    try:
        asyncio.run(service.run_forever(connect_demo_devices if demo is not None else None))
    except OSError as exc:
        print(
            f"croupier serve: cannot listen on {args.host}:{args.port}: {exc.strerror}",
            file=sys.stderr,
        )
        return 1
    return 0
