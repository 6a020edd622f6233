"""Entry point of the ``croupier`` command.

Subcommands register themselves from small modules (``server/cli/rng_commands.py`` …) so
this file only wires them together.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from server import __version__
from server.cli import (
    bot_command,
    cluster_command,
    db_command,
    device_commands,
    par_sheet_command,
    replay_command,
    rng_commands,
    serve_command,
    station_commands,
    wallet_command,
)

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="croupier",
        description="Croupier: a multiplayer table-game server for regulated casinos.",
    )
    parser.add_argument("--version", action="version", version=f"croupier {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    serve_command.register(commands)
    rng_commands.register(commands)
    par_sheet_command.register(commands)
    bot_command.register(commands)
    replay_command.register(commands)
    wallet_command.register(commands)
    device_commands.register(commands)
    station_commands.register(commands)
    db_command.register(commands)
    cluster_command.register(commands)
    return parser


def subcommand_names(parser: argparse.ArgumentParser) -> list[str]:
    for action in parser._subparsers._group_actions if parser._subparsers else []:
        if isinstance(action, argparse._SubParsersAction):
            return sorted(action.choices)
    return []


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    try:
        result: int = args.handler(args)
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader has seen enough (`croupier rng sample … | head -c 100`): not an error.
        # Point stdout at devnull so the interpreter's final flush does not fail again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    return result


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
