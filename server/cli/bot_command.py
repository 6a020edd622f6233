"""``croupier bot``: smoke-test a running server with a demo player.

It reaches the server the way ``croupier serve`` was told to listen: ``--host`` and
``--port`` (the same defaults), or a whole ``--url``. One line per round goes to standard
output as each round finishes; with ``--json`` standard output is the JSON summary alone and
the round lines go to standard error.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "bot", help="join a table as a demo player and bet randomly for N rounds"
    )
    parser.add_argument(
        "--host", default="127.0.0.1", help="the server's address, as given to serve --host"
    )
    parser.add_argument(
        "--port", type=int, default=8000, help="the server's port, as given to serve --port"
    )
    parser.add_argument(
        "--url",
        default=None,
        help="the server's WebSocket URL, instead of --host and --port "
        "(default ws://HOST:PORT/ws; e.g. wss://tables.example/ws behind a proxy)",
    )
    parser.add_argument("--table", required=True, help="table id (see the lobby)")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--seed", type=int, default=None, help="repeat the same bets")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds before giving up")
    parser.add_argument(
        "--json",
        action="store_true",
        help="print the summary as JSON on standard output (the round lines go to standard error)",
    )
    parser.set_defaults(handler=run)


def _url(args: argparse.Namespace) -> str:
    if args.url:
        return str(args.url)
    host = f"[{args.host}]" if ":" in args.host else args.host  # an IPv6 address
    return f"ws://{host}:{args.port}/ws"


def run(args: argparse.Namespace) -> int:
    from server.net.bot import BotRound, run_bot

    if args.rounds < 1:
        print("croupier bot: --rounds must be at least 1", file=sys.stderr)
        return 2
    url = _url(args)
    lines = sys.stderr if args.json else sys.stdout

    def say(played: BotRound) -> None:
        print(played.line(), file=lines, flush=True)

    try:
        report = asyncio.run(
            run_bot(
                url, args.table, args.rounds, seed=args.seed, timeout=args.timeout, on_round=say
            )
        )
    except ConnectionRefusedError as exc:
        print(
            f"croupier bot: nothing answers at {url} ({exc.strerror or exc}); is the server "
            "running there? Give its --port and --host as to croupier serve, or its --url",
            file=sys.stderr,
        )
        return 1
    except (OSError, TimeoutError) as exc:
        print(
            f"croupier bot: cannot play at {url}: {exc or type(exc).__name__} "
            "(--port, --host or --url say where the server is)",
            file=sys.stderr,
        )
        return 1
    summary = report.as_dict()
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(f"table {report.table}: {report.rounds} rounds, {report.bets} bets")
        print(
            f"wagered {report.wagered}, returned {report.returned}, "
            f"won {report.returned - report.wagered}"
        )
        print(
            f"balance {report.starting_balance} -> {report.final_balance} "
            f"(arithmetic {'ok' if report.arithmetic_ok else 'MISMATCH'}; "
            f"recall {'matches' if report.recall_matches else 'DOES NOT MATCH'} "
            f"over {report.recall_checked} rounds)"
        )
        for error in report.errors:
            print(f"error: {error}")
        if report.played:
            print(
                f"croupier replay {report.played[-1].round} --data-dir DIR shows any of these "
                "rounds card by card (DIR: the server's --data-dir)"
            )
    ok = report.arithmetic_ok and report.recall_matches and not report.errors
    return 0 if ok else 1
