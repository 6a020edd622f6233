"""``croupier wallet``: an operator's view of player balances, and funds in and out.

In operator (JWT) mode this server keeps each player's balance in its ledger; the platform
moves money in with ``credit`` and out with ``debit``, each with a reference that makes the
operation idempotent (repeating it changes nothing), and reads it with ``balance``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from server.cli.serve_command import default_data_dir


def register(commands: Any) -> None:
    parser = commands.add_parser("wallet", help="player balances; credit and debit (operator)")
    sub = parser.add_subparsers(dest="wallet_command", metavar="WALLET_COMMAND", required=True)
    for name, text in (("credit", "move funds to a player"), ("debit", "move funds out")):
        p = sub.add_parser(name, help=text)
        p.add_argument("player_id")
        p.add_argument("amount", type=int, help="minor units (cents), positive")
        p.add_argument(
            "--reference",
            required=True,
            help="the platform's id for this transfer: repeating it changes nothing",
        )
        p.add_argument("--data-dir", type=Path, default=None)
        p.set_defaults(handler=run)
    p = sub.add_parser("balance", help="a player's balance, and the ledger's reconciliation")
    p.add_argument("player_id")
    p.add_argument("--data-dir", type=Path, default=None)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from server.wallet.ledger import (
        OPERATOR_ISSUER,
        InsufficientFunds,
        LedgerError,
        Transfer,
        player_account,
    )
    from server.wallet.sqlite_ledger import SqliteLedger

    data_dir = args.data_dir or default_data_dir()
    data_dir.mkdir(parents=True, exist_ok=True)
    ledger = SqliteLedger(data_dir / "ledger.sqlite")
    account = player_account(args.player_id)
    try:
        if args.wallet_command == "balance":
            print(f"{args.player_id}: {ledger.balance(account)}")
            mismatches = ledger.reconcile()
            print("ledger reconciles" if not mismatches else f"MISMATCH: {mismatches}")
            return 0 if not mismatches else 1
        if args.amount <= 0:
            print(
                "croupier wallet: the amount must be a positive number of minor units",
                file=sys.stderr,
            )
            return 2
        ledger.open_account(OPERATOR_ISSUER, may_go_negative=True)
        ledger.open_account(account)
        source, destination = (
            (OPERATOR_ISSUER, account) if args.wallet_command == "credit" else
            (account, OPERATOR_ISSUER)
        )  # fmt: skip
        result = ledger.post(
            f"{args.wallet_command}:{args.reference}",
            [Transfer(source, destination, args.amount, args.wallet_command)],
        )
        note = "" if result.applied else " (already done: nothing changed)"
        print(f"{args.player_id}: {ledger.balance(account)}{note}")
        return 0
    except InsufficientFunds as exc:
        print(f"croupier wallet: {exc}", file=sys.stderr)
        return 1
    except LedgerError as exc:
        print(f"croupier wallet: {exc}", file=sys.stderr)
        return 2
    finally:
        ledger.close()
