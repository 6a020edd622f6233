"""``croupier replay ROUND_ID``: reconstruct a round card by card from the journal.

It reads the journal under ``--data-dir`` (or a cluster's shared one, ``--database URL`` or
``CROUPIER_DATABASE_URL``), rebuilds the table's game from ``--config`` (the
same file the server ran with; the demo lobby by default), feeds the round's journaled
inputs to a fresh engine and prints every input and every event — what a regulator asks for
"in the event of a question or dispute" (631a.12) — and, from the ledger beside it, every
transfer of the round's money: each stake and what came back.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from server.cli.serve_command import default_data_dir


def register(commands: Any) -> None:
    parser = commands.add_parser("replay", help="reconstruct a round card by card from the journal")
    parser.add_argument("round_id", metavar="ROUND_ID", help="e.g. baccarat.42")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--data-dir", type=Path, default=None)
    where.add_argument(
        "--database", default=None, help="a cluster's PostgreSQL (or CROUPIER_DATABASE_URL)"
    )
    parser.add_argument("--config", type=Path, default=None, help="the server's table file")
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from server.config import ConfigError, load_config
    from server.core.views import to_wire
    from server.journal.sqlite_journal import SqliteJournal
    from server.stores import StorageError
    from server.tables.history import HistoryError, round_history

    url = args.database or (None if args.data_dir else os.environ.get("CROUPIER_DATABASE_URL"))
    data_dir = args.data_dir or default_data_dir()
    journal: Any
    if url:
        from server.journal.pg_journal import PgJournal

        where = "the database"
        try:
            journal = PgJournal(url)
        except StorageError as exc:
            print(f"croupier replay: --database: {exc}", file=sys.stderr)
            return 2
    else:
        path = data_dir / "journal.sqlite"
        where = str(path)
        if not path.exists():
            print(f"croupier replay: no journal at {path}", file=sys.stderr)
            return 2
        journal = SqliteJournal(path)
    try:
        settings = load_config(args.config)
    except ConfigError as exc:
        journal.close()
        print(f"croupier replay: {exc}", file=sys.stderr)
        return 2
    ledger = _ledger(url or data_dir / "ledger.sqlite")
    try:
        result = round_history(journal, ledger, settings, args.round_id)
        if ledger is not None:
            from server.wallet.operator.seamless import calls_of_round, wallet_tables

            ph = wallet_tables(ledger)
            calls = [] if ph is None else calls_of_round(ledger._rows, ph, args.round_id)
            if calls:  # a round played with the operator's money
                result["wallet"] = calls
    except HistoryError as exc:
        message = str(exc) + (f" in {where}" if str(exc).startswith("no round") else "")
        print(f"croupier replay: {message}", file=sys.stderr)
        return 2
    finally:
        journal.close()
        if ledger is not None:
            ledger.close()
    if args.json:
        print(json.dumps(to_wire(result), indent=2))
        return 0
    print(
        f"round {args.round_id} at table {result['table']} ({result['game']}, "
        f"{result['variant']}): {result['status']}"
    )
    print("journal:")
    for record in result["journal"]:
        fields = ", ".join(f"{k}={v}" for k, v in record.items() if k not in ("seq", "kind"))
        print(f"  #{record['seq']:<6} {record['kind']:<9} {fields}")
    print("events:")
    for event in result["events"]:
        name = event.pop("event")
        print(f"  {name:<24} {json.dumps(event, separators=(',', ':'))}")
    print("money (the ledger's transfers for this round):")
    for t in result["money"]:
        print(
            f"  {t['kind']:<9} bet {t['bet_id'] or '-':<10} {t['amount']:>10}  "
            f"{t['source']} -> {t['destination']}"
        )
    if "wallet" in result:
        print("the operator's wallet (each call and its answer):")
        for c in result["wallet"]:
            print(
                f"  {c['operation']:<8} {c['amount']:>10} {c['player_id']} "
                f"#{c['attempt']} {c['outcome']}: {c['answer']} ({c['transaction_id']})"
            )
    return 0


def _ledger(where: Path | str) -> Any:
    """The ledger beside the journal (a file, or a cluster's database URL); None for a data
    directory without one."""
    from server.wallet.pg_ledger import PgLedger
    from server.wallet.sqlite_ledger import SqliteLedger

    if isinstance(where, str):
        return PgLedger(where)
    if not where.exists():
        return None
    return SqliteLedger(where)
