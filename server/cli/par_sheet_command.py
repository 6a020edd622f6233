"""``croupier par-sheet GAME``: print the exact house edge of every wager of a game.

Each game contributes a ``ParSheetProvider`` (its options and a function computing rows);
adding a game adds one entry to ``PROVIDERS`` and nothing else here.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from server.games.par_sheet import ParSheetRow, row_to_json


@dataclass(frozen=True)
class ParSheetProvider:
    game: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    compute: Callable[[argparse.Namespace], list[ParSheetRow]]


PROVIDERS: list[ParSheetProvider] = []


def register(commands: Any) -> None:
    parser = commands.add_parser("par-sheet", help="exact house edge of every wager of a game")
    games = parser.add_subparsers(dest="game", metavar="GAME", required=True)
    for provider in PROVIDERS:
        sub = games.add_parser(provider.game, help=provider.help)
        provider.add_arguments(sub)
        sub.add_argument("--json", action="store_true", help="a JSON list of rows")
        sub.set_defaults(handler=_run, provider=provider)


def _run(args: argparse.Namespace) -> int:
    rows = args.provider.compute(args)
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


# --- Roulette (617a) and Big Six Wheel (619a) ----------------------------------------------
def _roulette_arguments(parser: argparse.ArgumentParser) -> None:
    from rng.wheel_layouts import WheelType

    parser.add_argument(
        "--wheel",
        choices=[wheel.value for wheel in WheelType],
        help="one wheel type (default: all three)",
    )


def _roulette_rows(args: argparse.Namespace) -> list[ParSheetRow]:
    from rng.wheel_layouts import WheelType
    from server.games.roulette.par_sheet import roulette_par_sheet

    wheels = (WheelType(args.wheel),) if args.wheel else tuple(WheelType)
    return roulette_par_sheet(wheels)


def _big_six_rows(args: argparse.Namespace) -> list[ParSheetRow]:
    from server.games.big_six_wheel import big_six_par_sheet

    return big_six_par_sheet()


PROVIDERS.append(
    ParSheetProvider(
        "roulette", "Roulette, every wager of 617a.3 (exact)", _roulette_arguments, _roulette_rows
    )
)
PROVIDERS.append(
    ParSheetProvider(
        "big_six", "Big Six Wheel, every wager of 619a.3 (exact)", lambda _: None, _big_six_rows
    )
)
