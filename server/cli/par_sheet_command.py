"""``croupier par-sheet GAME``: print the exact house edge of every wager of a game.

Each game's registry entry (``server/games/registry.py``) names its par-sheet module, which
offers ``add_arguments(parser)`` and ``compute(args) -> rows``; a game registered there is
listed here with nothing else to change.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from typing import Any

from server.games.par_sheet import ParSheetRow, row_to_json
from server.games.registry import GAMES


def register(commands: Any) -> None:
    parser = commands.add_parser("par-sheet", help="exact house edge of every wager of a game")
    games = parser.add_subparsers(dest="game", metavar="GAME", required=True)
    for entry in GAMES.values():
        provider = entry.par_sheet
        if provider is None:
            continue
        module = importlib.import_module(provider.module)
        sub = games.add_parser(entry.name, help=provider.help)
        module.add_arguments(sub)
        sub.add_argument("--json", action="store_true", help="a JSON list of rows")
        sub.set_defaults(handler=_run, compute=module.compute)


def _run(args: argparse.Namespace) -> int:
    rows: list[ParSheetRow] = args.compute(args)
    if args.json:
        json.dump([row_to_json(row) for row in rows], sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    header = f"{'variant':<32} {'wager':<44} {'paytable':<8} {'house edge':>11}  method"
    print(header)
    print("-" * len(header))
    for row in rows:
        print(
            f"{row.variant:<32} {row.wager:<44} {row.paytable or '-':<8} "
            f"{row.house_edge * 100:>10.4f}%  {row.method}"
        )
    return 0
