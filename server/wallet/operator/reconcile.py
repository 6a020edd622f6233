"""Croupier's record of its calls to the operator's wallet against the operator's own
statement (docs/wallet.md, "Reconciling with the operator"): every difference, in words.

The statement is what the operator exports: JSON lines, one per transaction it answered,
each with ``transaction_id``, ``operation``, ``player_id``, ``amount`` and ``status`` (``ok``
or ``refused``); other fields are ignored. Croupier's record is in its ledger's database:
each debit's outcome (``wallet_debits``) and each credit's and rollback's (``wallet_outbox``).

The two agree when:
- every call Croupier recorded as answered ok is in the statement, ok, with the same
  operation, player and amount, and no other ok transaction of Croupier's is;
- a debit Croupier recorded as refused is not ok in the statement;
- a debit whose answer Croupier never had (unknown) is either absent from the statement or
  rolled back there;
- nothing is still waiting in Croupier's outbox.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from server.wallet.operator.contract import rollback_id

__all__ = ["Call", "differences", "read_record", "read_statement"]

_APPLIED = ("ok", "settled", "rolled_back")  # a debit's states after an ok answer


@dataclass(frozen=True, slots=True)
class Call:
    """One transaction as either side has it."""

    transaction_id: str
    operation: str
    player_id: str
    amount: int


@dataclass
class Record:
    """Croupier's side: the calls answered ok, the debits refused, the debits whose
    answer never came, and the calls still waiting in the outbox."""

    applied: dict[str, Call]
    refused: set[str]
    unknown: dict[str, Call]
    pending: dict[str, Call]


def read_record(read: Callable[[str, tuple[Any, ...]], list[Any]]) -> Record:
    """Croupier's record, read from its ledger's database (``read(sql, params)``)."""
    record = Record({}, set(), {}, {})
    for txid, player, amount, state in read(
        "SELECT transaction_id, player_id, amount, state FROM wallet_debits", ()
    ):
        call = Call(str(txid), "debit", str(player), int(amount))
        if state in _APPLIED:
            record.applied[call.transaction_id] = call
        elif state == "refused":
            record.refused.add(call.transaction_id)
        else:  # sending, unknown: rolled back (or about to be) whatever the operator did
            record.unknown[call.transaction_id] = call
    for txid, operation, player, body, answered in read(
        "SELECT transaction_id, operation, player_id, body, answered_at FROM wallet_outbox", ()
    ):
        call = Call(str(txid), str(operation), str(player), int(json.loads(body)["amount"]))
        (record.pending if answered is None else record.applied)[call.transaction_id] = call
    return record


def read_statement(lines: Iterable[str]) -> list[tuple[Call, str]]:
    """The operator's statement: each line's call and status. ``ValueError`` naming the
    line for one that is not a transaction."""
    calls = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            call = Call(
                str(row["transaction_id"]),
                str(row["operation"]),
                str(row["player_id"]),
                int(row["amount"]),
            )
            status = str(row["status"])
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"line {n}: not a transaction of the statement ({exc})") from None
        calls.append((call, status))
    return calls


def differences(record: Record, statement: list[tuple[Call, str]]) -> list[str]:
    """Every difference between Croupier's record and the operator's statement (none: they
    agree), each as a sentence."""
    found: list[str] = []
    applied_there = {c.transaction_id: c for c, status in statement if status == "ok"}
    for txid, theirs in applied_there.items():
        ours = record.applied.get(txid)
        if ours is not None:
            if ours != theirs:
                found.append(f"{txid}: Croupier has {_say(ours)}, the operator {_say(theirs)}")
        elif txid in record.refused:
            found.append(
                f"{txid}: Croupier was told the debit was refused, the operator applied it"
            )
        elif txid in record.unknown:
            if rollback_id(txid) not in applied_there and rollback_id(txid) not in record.pending:
                found.append(f"{txid}: the operator applied {_say(theirs)} and never its rollback")
        elif txid not in record.pending:
            found.append(f"{txid}: the operator applied {_say(theirs)}, unknown to Croupier")
    for txid, ours in record.applied.items():
        if txid not in applied_there:
            found.append(f"{txid}: Croupier has {_say(ours)} answered ok, the statement lacks it")
    for txid, ours in record.pending.items():
        found.append(f"{txid}: {_say(ours)} is still waiting in Croupier's outbox")
    return found


def _say(call: Call) -> str:
    return f"{call.operation} of {call.amount} for {call.player_id}"
