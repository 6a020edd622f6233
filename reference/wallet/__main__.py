"""Run the reference operator wallet.

    python -m reference.wallet --db wallet.sqlite --secret-file secret [--port 0]
        [--host 127.0.0.1] [--auto-create 100000] [--latency-ms 20] [--seed 1]
        [--platform-secret-file JWT_SECRET [--platform-players a,b] [--game-url URL]]

Prints one JSON line when it answers — ``{"port": P, "url": "http://HOST:P"}`` — and runs
until SIGTERM or SIGINT. The books stay in ``--db``: started again on the same file, it
answers every transaction id it answered before with the same answer.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
from pathlib import Path
from typing import Any

from reference.wallet.books import OperatorBooks
from reference.wallet.platform import Platform
from reference.wallet.service import Knobs, WalletServer


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m reference.wallet", description=__doc__)
    parser.add_argument("--db", required=True, help="the books' SQLite file")
    parser.add_argument("--secret-file", required=True, help="the shared HMAC secret")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0: any free port")
    parser.add_argument(
        "--auto-create",
        type=int,
        default=None,
        metavar="BALANCE",
        help="open an unknown player with this balance at first sight (default: refuse)",
    )
    parser.add_argument("--latency-ms", type=float, default=0.0, help="the latency knob")
    parser.add_argument("--seed", type=int, default=None, help="for the random faults")
    parser.add_argument(
        "--platform-secret-file",
        default=None,
        help="also play the operator's platform (the demo): GET / lists the players of "
        "--platform-players, each launched into the game with a JWT signed with this secret",
    )
    parser.add_argument(
        "--platform-players",
        default="alice,bob,carol,dave",
        help="the demo players the platform lists, comma-separated",
    )
    parser.add_argument(
        "--game-url", default=None, help="where the game is served (or POST /_reference/platform)"
    )
    args = parser.parse_args(argv)
    secret = Path(args.secret_file).read_bytes().strip()
    if not secret:
        parser.error(f"{args.secret_file} is empty: the shared secret is required")
    books = OperatorBooks(args.db, auto_create=args.auto_create)
    knobs = Knobs(args.seed)
    knobs.latency_ms = args.latency_ms
    platform = None
    if args.platform_secret_file is not None:
        jwt_secret = Path(args.platform_secret_file).read_bytes().strip()
        if not jwt_secret:
            parser.error(f"{args.platform_secret_file} is empty: the JWT secret is required")
        players = tuple(p for p in args.platform_players.split(",") if p)
        platform = Platform(jwt_secret, players, args.game_url)
        known = books.state()["players"]
        for player in players:  # opened once, with the --auto-create balance (or $1,000)
            if player not in known:
                books.open_player(player, platform.currency, args.auto_create or 100_000)
    server = WalletServer(books, secret, knobs, platform)
    try:
        asyncio.run(_serve(server, args.host, args.port))
    finally:
        books.close()
    return 0


async def _serve(server: WalletServer, host: str, port: int) -> None:
    """Answer until SIGTERM or SIGINT."""
    port = await server.start(host, port)
    ready: dict[str, Any] = {"port": port, "url": f"http://{host}:{port}"}
    print(json.dumps(ready), flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    try:
        await stop.wait()
    finally:
        await server.close()


if __name__ == "__main__":
    sys.exit(main())
