"""``croupier bot``: smoke-test a running server with a demo player."""

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
    parser.add_argument("--url", default="ws://127.0.0.1:8000/ws")
    parser.add_argument("--table", required=True, help="table id (see the lobby)")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--seed", type=int, default=None, help="repeat the same bets")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds before giving up")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from server.net.bot import run_bot

    if args.rounds < 1:
        print("croupier bot: --rounds must be at least 1", file=sys.stderr)
        return 2
    try:
        report = asyncio.run(
            run_bot(args.url, args.table, args.rounds, seed=args.seed, timeout=args.timeout)
        )
    except (OSError, TimeoutError) as exc:
        print(f"croupier bot: cannot play at {args.url}: {exc}", file=sys.stderr)
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
    ok = report.arithmetic_ok and report.recall_matches and not report.errors
    return 0 if ok else 1
