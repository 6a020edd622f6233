"""``croupier wallet``: an operator's view of player balances, and funds in and out.

In operator (JWT) mode this server keeps each player's balance in its ledger; the platform
moves money in with ``credit`` and out with ``debit``, each with a reference that makes the
operation idempotent (repeating it changes nothing), and reads it with ``balance``;
``reconcile`` checks the whole ledger (every cached balance against its transfers, and the
balances' sum, zero). With the operator's wallet (docs/wallet.md), ``pending`` lists the
credits and rollbacks it has not yet answered ok. Each works on the embedded ledger of
``--data-dir`` or on a cluster's shared one, ``--database URL`` (or
``CROUPIER_DATABASE_URL``).
"""

from __future__ import annotations

import argparse
import os
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
        _store_options(p)
    p = sub.add_parser("balance", help="a player's balance, and the ledger's reconciliation")
    p.add_argument("player_id")
    _store_options(p)
    p = sub.add_parser(
        "reconcile", help="check the whole ledger: every balance against its transfers, sum zero"
    )
    p.add_argument(
        "--operator-statement",
        type=Path,
        default=None,
        metavar="FILE",
        help="also compare the operator's statement (JSON lines) with the record of the calls "
        "to its wallet (docs/wallet.md)",
    )
    _store_options(p)
    p = sub.add_parser(
        "pending",
        help="the operator wallet's credits and rollbacks not yet answered ok (docs/wallet.md)",
    )
    _store_options(p)


def _store_options(p: argparse.ArgumentParser) -> None:
    """Which ledger: the embedded one in a data directory, or a cluster's shared one."""
    where = p.add_mutually_exclusive_group()
    where.add_argument("--data-dir", type=Path, default=None)
    where.add_argument(
        "--database", default=None, help="a cluster's PostgreSQL (or CROUPIER_DATABASE_URL)"
    )
    p.set_defaults(handler=run)


def _open_ledger(args: argparse.Namespace) -> Any:
    """The ledger ``--database`` (or ``CROUPIER_DATABASE_URL``) or ``--data-dir`` names."""
    url = args.database or (None if args.data_dir else os.environ.get("CROUPIER_DATABASE_URL"))
    if url:
        from server.wallet.pg_ledger import PgLedger

        return PgLedger(url)
    from server.wallet.sqlite_ledger import SqliteLedger

    data_dir = args.data_dir or default_data_dir()
    data_dir.mkdir(parents=True, exist_ok=True)
    return SqliteLedger(data_dir / "ledger.sqlite")


def _pending(ledger: Any) -> int:
    """Print each call of the operator wallet's outbox not yet answered ok, oldest first:
    what it is, for whom, how long it has waited, how often it was sent, and why it is not
    done. The outbox is in the ledger's database (docs/wallet.md)."""
    import time

    from server.wallet.operator.outbox import pending_calls
    from server.wallet.operator.seamless import wallet_tables

    ph = wallet_tables(ledger)
    if ph is None:
        print("nothing pending (this ledger has never played with an operator's wallet)")
        return 0
    calls = pending_calls(ledger._rows, ph)
    now = time.time()
    for call in calls:
        waited = now - call.queued_at
        print(
            f"{call.transaction_id} {call.operation} {call.amount} to {call.player_id} "
            f"(round {call.round_id}, table {call.table_id}): waiting {waited:.0f} s, "
            f"sent {call.attempts} times, last: {call.last_error or 'not sent yet'}"
        )
    print(f"{len(calls)} pending" if calls else "nothing pending")
    return 0


def _plays_with_an_operator(ledger: Any) -> bool:
    """Whether the ledger has ever debited a stake at an operator's wallet."""
    from server.wallet.operator.seamless import wallet_tables

    if wallet_tables(ledger) is None:
        return False
    return bool(ledger._rows("SELECT 1 FROM wallet_debits LIMIT 1", ()))


def _against_statement(ledger: Any, path: Path) -> int:
    """Print each difference between the record of the calls to the operator's wallet and
    the operator's statement in ``path``; 1 if there is any, 2 for a statement that cannot
    be read."""
    from server.wallet.operator.reconcile import differences, read_record, read_statement

    try:
        statement = read_statement(path.read_text().splitlines())
    except (OSError, ValueError) as exc:
        print(f"croupier wallet reconcile: {path}: {exc}", file=sys.stderr)
        return 2
    from server.wallet.operator.seamless import wallet_tables

    if wallet_tables(ledger) is None:
        print("croupier wallet reconcile: this ledger never played with an operator's wallet")
        return 2
    found = differences(read_record(ledger._rows), statement)
    for line in found:
        print(f"DIFFERENCE {line}")
    if found:
        print(f"{len(found)} differences with the operator's statement")
        return 1
    print(f"the operator's statement agrees ({len(statement)} transactions)")
    return 0


def run(args: argparse.Namespace) -> int:
    from server.stores import StorageError
    from server.wallet.ledger import (
        OPERATOR_ISSUER,
        InsufficientFunds,
        LedgerError,
        Transfer,
        player_account,
    )

    try:
        ledger = _open_ledger(args)
    except StorageError as exc:
        print(f"croupier wallet: --database: {exc}", file=sys.stderr)
        return 2
    try:
        if args.wallet_command == "pending":
            return _pending(ledger)
        if args.wallet_command == "reconcile":
            mismatches = ledger.reconcile()
            total = ledger.total()
            for name, (cached, derived) in sorted(mismatches.items()):
                print(f"MISMATCH {name}: balance {cached}, its transfers say {derived}")
            if total != 0:
                print(f"MISMATCH: the balances sum to {total}, not 0")
            if mismatches or total != 0:
                return 1
            print("ledger reconciles")
            if args.operator_statement is not None:
                return _against_statement(ledger, args.operator_statement)
            return 0
        account = player_account(args.player_id)
        if _plays_with_an_operator(ledger):
            # A player's account here is a transit account (docs/wallet.md): the money is
            # the operator's, moved at its wallet, never with these commands.
            print(
                "croupier wallet: this ledger plays with the operator's wallet: players' "
                "balances and funds are the operator's (docs/wallet.md)",
                file=sys.stderr,
            )
            return 2
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
