"""``croupier serve``: run the table server.

The WebSocket server lands with the table-server issue; until then the command reports the
version and what the installation can already do, so the README's run command is real.
"""

from __future__ import annotations

import argparse
from typing import Any

from server import __version__


def register(commands: Any) -> None:
    parser = commands.add_parser("serve", help="run the table server on its embedded default")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from server.cli.main import build_parser, subcommand_names

    print(f"croupier {__version__}")
    print("The table server (WebSocket on /ws) is not part of this release yet.")
    print("Available subcommands: " + ", ".join(subcommand_names(build_parser())))
    print("Try: croupier rng certify --quick --out certify-report")
    return 0
