"""``croupier par-sheet GAME``: print the exact house edge of every wager of a game.

Each game's par-sheet module offers ``add_arguments(parser)`` and ``compute(args) -> rows``;
adding a game adds one line to ``PROVIDERS`` and nothing else here.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from typing import Any, NamedTuple

from server.games.par_sheet import ParSheetRow, row_to_json


class Provider(NamedTuple):
    game: str
    help: str
    module: str  # exposes add_arguments(parser) and compute(args)


PROVIDERS: tuple[Provider, ...] = (
    Provider(
        "baccarat",
        "Baccarat, every 631a/631b wager, variant and paytable (exact)",
        "server.games.baccarat.par_sheet",
    ),
    Provider(
        "roulette", "Roulette, every wager of 617a.3 (exact)", "server.games.roulette.par_sheet"
    ),
    Provider(
        "big_six", "Big Six Wheel, every wager of 619a.3 (exact)", "server.games.big_six_wheel"
    ),
    Provider(
        "twenty_one_baccarat",
        "21 Baccarat, every wager and Bonus paytable of 681a (exact)",
        "server.games.twenty_one_baccarat.par_sheet",
    ),
    Provider(
        "casino_war",
        "Casino War, every wager of 651a (exact)",
        "server.games.casino_war.par_sheet",
    ),
    Provider(
        "down_under_blackjack",
        "Down Under Blackjack: bet (stated strategy; approximation), insurance and "
        "match_the_dealer (exact), 685a",
        "server.games.down_under_blackjack.par_sheet",
    ),
)


def register(commands: Any) -> None:
    parser = commands.add_parser("par-sheet", help="exact house edge of every wager of a game")
    games = parser.add_subparsers(dest="game", metavar="GAME", required=True)
    for provider in PROVIDERS:
        module = importlib.import_module(provider.module)
        sub = games.add_parser(provider.game, help=provider.help)
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
