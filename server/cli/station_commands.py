"""``croupier tickets`` and ``croupier meters``: the cashier's and the slot floor's view of
the player stations (docs/electronic-tables.md).

Both read the data directory of a server, running or not (SQLite lets them beside it):

    croupier tickets list [--status issued|held|redeemed|voided|expired] [--json]
    croupier tickets redeem VALIDATION [--by CASHIER]    # pay a ticket out at the cashier
    croupier tickets void VALIDATION --reason TEXT [--by CASHIER]
    croupier meters STATION [STATION ...] | --table TABLE | --all  [--json]

``meters`` first counts into the meters whatever the ledger holds that they do not yet (a
round that ended, a bill), then checks them against the ledger: the exit status is 1 when
a station's meters fail their critical-memory check or do not reconcile.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any

from server.cli.serve_command import default_data_dir

__all__ = ["register"]


def register(commands: Any) -> None:
    parser = commands.add_parser("tickets", help="cash-out tickets (TITO): list, redeem, void")
    sub = parser.add_subparsers(dest="tickets_command", metavar="TICKETS_COMMAND", required=True)
    p = sub.add_parser("list", help="every ticket, newest last")
    p.add_argument("--status", choices=("issued", "held", "redeemed", "voided", "expired"))
    p.add_argument("--json", action="store_true")
    p.add_argument("--data-dir", type=Path, default=None)
    p.set_defaults(handler=run_tickets)
    p = sub.add_parser("redeem", help="pay a ticket out at the cashier (once)")
    p.add_argument("validation", help="the 18 digits printed under the barcode (dashes allowed)")
    p.add_argument("--by", default="cashier", help="who pays it (logged)")
    p.add_argument("--data-dir", type=Path, default=None)
    p.set_defaults(handler=run_tickets)
    p = sub.add_parser("void", help="void a ticket: it can never be redeemed")
    p.add_argument("validation")
    p.add_argument("--reason", required=True, help="why (logged)")
    p.add_argument("--by", default="cashier", help="who voids it (logged)")
    p.add_argument("--data-dir", type=Path, default=None)
    p.set_defaults(handler=run_tickets)

    p = commands.add_parser("meters", help="a player station's meters, checked against the ledger")
    p.add_argument("stations", nargs="*", metavar="STATION")
    p.add_argument("--table", help="the sum of the stations that play this table")
    p.add_argument("--all", action="store_true", help="every station")
    p.add_argument("--json", action="store_true")
    p.add_argument("--data-dir", type=Path, default=None)
    p.set_defaults(handler=run_meters)


def _when(moment: float | None) -> str:
    return "" if moment is None else time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(moment))


def _open(data_dir: Path) -> Any:
    """The stations' store and ticket key of ``data_dir``; None (said why) if it has none."""
    from server.stations.store import MissingKey, open_station_store

    if not (data_dir / "ledger.sqlite").exists():
        print(f"no ledger in {data_dir} (--data-dir?)", file=sys.stderr)
        return None
    try:
        return open_station_store(data_dir, create=False)
    except MissingKey as exc:
        print(f"croupier: {exc}", file=sys.stderr)
        return None


def run_tickets(args: argparse.Namespace) -> int:
    from server.stations import cashier
    from server.wallet.sqlite_ledger import SqliteLedger

    data_dir = args.data_dir or default_data_dir()
    opened = _open(data_dir)
    if opened is None:
        return 2
    store, key = opened
    ledger = SqliteLedger(data_dir / "ledger.sqlite")
    try:
        cashier.open_accounts(ledger)
        if args.tickets_command == "list":
            now = time.time()
            found = store.tickets(args.status, now)
            if args.json:
                rows = [
                    {
                        "validation": t.validation,
                        "amount": t.amount,
                        "station": t.station,
                        "status": t.shown_status(now),
                        "issued_at": t.issued_at,
                        "expires_at": t.expires_at,
                        "printed": t.printed,
                        "closed_at": t.closed_at,
                        "closed_by": t.closed_by,
                        "detail": t.detail,
                    }
                    for t in found
                ]
                print(json.dumps(rows, indent=2))
            for t in [] if args.json else found:
                print(
                    f"{t.validation}  {t.amount:>10}  {t.shown_status(now):<8}  {t.station:<16}  "
                    f"issued {_when(t.issued_at)}  expires {_when(t.expires_at)}"
                    + (f"  {t.closed_by} {_when(t.closed_at)}" if t.closed_at else "")
                )
            return 0
        validation = args.validation.replace("-", "").replace(" ", "")
        if args.tickets_command == "redeem":
            result = cashier.redeem(
                store, ledger, key, validation, destination=cashier.CASHIER, by=args.by
            )
        else:
            result = cashier.void(store, ledger, validation, by=args.by, reason=args.reason)
        if isinstance(result, cashier.Refusal):
            print(f"refused ({result.code}): {result.message}", file=sys.stderr)
            return 1
        done = "paid" if args.tickets_command == "redeem" else "voided"
        print(f"{validation}: {done} {result.amount} (issued by {result.station})")
        return 0
    finally:
        ledger.close()
        store.close()


def run_meters(args: argparse.Namespace) -> int:
    from server.journal.journal import RoundStatus
    from server.journal.sqlite_journal import SqliteJournal
    from server.stations.meters import (
        COUNTERS,
        add_meters,
        empty_meters,
        expected_balance,
        station_account,
    )
    from server.stations.store import CriticalMemoryError
    from server.wallet.sqlite_ledger import SqliteLedger

    data_dir = args.data_dir or default_data_dir()
    opened = _open(data_dir)
    if opened is None:
        return 2
    store, _ = opened
    ledger = SqliteLedger(data_dir / "ledger.sqlite")
    journal = SqliteJournal(data_dir / "journal.sqlite")
    try:
        known = store.stations()
        wanted = list(args.stations)
        if args.all:
            wanted = known
        if args.table:
            wanted += [s for s in known if args.table in store.load_unchecked(s).get("tables", [])]
        if not wanted:
            print("name a STATION, --table TABLE or --all", file=sys.stderr)
            return 2

        def ended(round_id: str) -> bool:
            status = journal.status(round_id)
            return status is not None and status is not RoundStatus.OPEN

        report: dict[str, Any] = {}
        failed = False
        total = empty_meters()
        for station in wanted:
            if station not in known:
                print(f"{station}: no such station in {data_dir}", file=sys.stderr)
                failed = True
                continue
            account = station_account(station)
            try:
                read = partial(ledger.history_after, account)
                synced = store.write(store.sync(station, read, ended))
            except CriticalMemoryError as exc:
                report[station] = {"critical_memory": "failed", "detail": str(exc)}
                failed = True
                continue
            # The meters, what is in play and the balance, from one reading of the ledger:
            # they agree to the cent, whatever the server does meanwhile.
            row, in_play, balance = synced.row, synced.in_play, synced.balance
            expected = expected_balance(row.meters, in_play)
            reconciles = expected == balance
            failed = failed or not reconciles
            add_meters(total, row.meters)
            report[station] = {
                "meters": row.meters,
                "credits": balance,
                "in_play": in_play,
                "reconciles": reconciles,
                "locks": [lock["cause"] for lock in row.state.get("locks", [])],
            }
        if args.table:
            report[f"table:{args.table}"] = {"meters": total}
        if args.json:
            print(json.dumps(report, indent=2))
            return 1 if failed else 0
        for name, item in report.items():
            print(name)
            if "critical_memory" in item:
                print(f"  CRITICAL MEMORY FAILED: {item['detail']}")
                continue
            meters = item["meters"]
            for counter in COUNTERS:
                print(f"  {counter:<26}{meters[counter]:>14}")
            for denomination, count in sorted(meters["bills_in"].items(), key=lambda x: int(x[0])):
                print(f"  bills_in {denomination:<17}{count:>14}")
            if "credits" in item:
                verdict = (
                    "reconciles with the ledger" if item["reconciles"] else "DOES NOT RECONCILE"
                )
                print(
                    f"  credits {item['credits']} (in play {item['in_play']}): {verdict}"
                    + (f"; locked: {', '.join(item['locks'])}" if item["locks"] else "")
                )
        return 1 if failed else 0
    finally:
        journal.close()
        ledger.close()
        store.close()
