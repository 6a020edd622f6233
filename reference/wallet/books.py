"""The reference operator's books: its players' balances and every call it answered, in one
SQLite file that a restart of the service keeps.

Each call of the contract (docs/wallet.md) is checked and applied in one transaction, under
one lock, so calls from many connections are applied one after another. A call whose
``transaction_id`` was seen before is answered with its first answer and applied no second
time — whatever came between (a retry after a timeout, a replay). Its state:

- a debit is ``open`` until a credit lists it (``settled``) or a rollback names it
  (``rolled_back``); a refused debit stays ``refused``;
- a rollback of a debit never seen leaves a ``rolled_back`` mark under the debit's id, so
  that the debit, should it arrive later, is refused and never applied.

What a correct caller never does — a credit listing a debit that is not open, a rollback of
a settled debit, an amount that differs from the debit's — is applied as the contract says
where it can be and recorded in ``anomalies``, which the tests and load tests read: they
must stay empty.

The commit mode is WAL with ``synchronous=OFF``: what was answered survives the
service's process being killed (the tests' restarts; SQLite has handed it to the operating
system), not a power cut, which a test service need not survive. No commit and no
checkpoint waits for the disk: the service answers every connection from one thread, and a
flush there would hold every call in flight.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["REFUSAL_CODES", "BadCall", "OperatorBooks"]

REFUSAL_CODES = ("insufficient_funds", "player_blocked", "limit_reached", "session_expired")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS players (
    player_id TEXT PRIMARY KEY,
    currency TEXT NOT NULL,
    balance INTEGER NOT NULL,
    blocked INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS calls (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    transaction_id TEXT UNIQUE,
    operation TEXT NOT NULL,
    player_id TEXT NOT NULL,
    amount INTEGER,
    round_id TEXT,
    body TEXT NOT NULL,
    answer TEXT NOT NULL,
    at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS debits (
    transaction_id TEXT PRIMARY KEY,
    player_id TEXT NOT NULL,
    amount INTEGER NOT NULL,
    state TEXT NOT NULL,
    closed_by TEXT
);
CREATE TABLE IF NOT EXISTS anomalies (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    at REAL NOT NULL,
    transaction_id TEXT,
    text TEXT NOT NULL
);
"""

OPERATIONS = ("balance", "debit", "credit", "rollback")

# The fields each operation's body must carry, with their JSON types (docs/wallet.md).
_FIELDS: dict[str, dict[str, type]] = {
    "balance": {"player_id": str, "currency": str},
    "debit": {
        "transaction_id": str,
        "player_id": str,
        "currency": str,
        "amount": int,
        "round_id": str,
        "table": str,
        "bet_id": str,
    },
    "credit": {
        "transaction_id": str,
        "player_id": str,
        "currency": str,
        "amount": int,
        "round_id": str,
        "table": str,
        "debits": list,
    },
    "rollback": {
        "transaction_id": str,
        "rollback_of": str,
        "player_id": str,
        "currency": str,
        "amount": int,
        "round_id": str,
        "table": str,
    },
}


class BadCall(Exception):
    """A call the operator cannot answer: a missing or mistyped field, an unknown player or
    currency, a reused transaction id. The service answers it with HTTP ``status`` and no
    ``"status": "ok"`` — to Croupier an answer of unknown outcome."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def check_body(operation: str, body: Any) -> dict[str, Any]:
    """``body`` as the contract says ``operation``'s must be, or ``BadCall`` (400)."""
    if operation not in _FIELDS:
        raise BadCall(404, "unknown_operation", f"no operation {operation!r}")
    if not isinstance(body, dict):
        raise BadCall(400, "bad_body", "the body must be a JSON object")
    for name, kind in _FIELDS[operation].items():
        value = body.get(name)
        # JSON's true and false are ints to Python: never an amount.
        if value is None or not isinstance(value, kind) or isinstance(value, bool):
            raise BadCall(400, "bad_field", f"{operation}: {name!r} must be {kind.__name__}")
    if operation in ("debit", "rollback") and body["amount"] <= 0:
        raise BadCall(400, "bad_field", f"{operation}: amount must be > 0")
    if operation == "credit":
        if body["amount"] < 0:
            raise BadCall(400, "bad_field", "credit: amount must be >= 0")
        if not all(isinstance(d, str) for d in body["debits"]):
            raise BadCall(400, "bad_field", "credit: debits must be transaction ids")
    return body


class OperatorBooks:
    """The books in ``path`` (``":memory:"`` for a throwaway). ``auto_create``: a player not
    yet known is opened with this balance at first sight (in the body's currency), as an
    operator's platform knows every player who can reach a table; None refuses unknown
    players (HTTP 404). ``refuse``: per player, the refusal code every debit of theirs gets."""

    def __init__(self, path: str | Path, *, auto_create: int | None = None) -> None:
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=OFF")
        self._db.executescript(_SCHEMA)
        self._lock = threading.Lock()
        self.auto_create = auto_create
        self.refuse: dict[str, str] = {}

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # --- the contract's operations ------------------------------------------------------------

    def call(self, operation: str, body: Any) -> dict[str, Any]:
        """Apply one call of the contract and return its answer (``BadCall`` for a call it
        cannot answer). A transaction id seen before gets its first answer again."""
        body = check_body(operation, body)
        apply: Callable[[dict[str, Any]], dict[str, Any]] = getattr(self, f"_{operation}")
        with self._lock, self._transaction():
            txid = body.get("transaction_id")
            if txid is not None:
                row = self._db.execute(
                    "SELECT operation, answer FROM calls WHERE transaction_id = ?", (txid,)
                ).fetchone()
                if row is not None:
                    if row[0] != operation:
                        raise BadCall(
                            409, "reused_id", f"{txid!r} is a {row[0]}, not a {operation}"
                        )
                    answer: dict[str, Any] = json.loads(row[1])
                    return answer
            answer = apply(body)
            if txid is not None:
                self._db.execute(
                    "INSERT INTO calls(transaction_id, operation, player_id, amount, round_id,"
                    " body, answer, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        txid,
                        operation,
                        body["player_id"],
                        body["amount"],
                        body["round_id"],
                        json.dumps(body, sort_keys=True),
                        json.dumps(answer, sort_keys=True),
                        time.time(),
                    ),
                )
            return answer

    def _balance(self, body: dict[str, Any]) -> dict[str, Any]:
        return {"status": "ok", "balance": self._player(body)[0]}

    def _debit(self, body: dict[str, Any]) -> dict[str, Any]:
        balance, blocked = self._player(body)
        txid, player, amount = body["transaction_id"], body["player_id"], body["amount"]
        mark = self._debit_state(txid)
        if mark is not None:  # rolled back before it arrived: never applied
            return _refused("session_expired", "this debit was rolled back before it arrived")
        if blocked:
            return self._refuse(txid, player, amount, "player_blocked", "the player is blocked")
        code = self.refuse.get(player)
        if code is not None:
            return self._refuse(txid, player, amount, code, f"refused by the operator ({code})")
        if balance < amount:
            message = f"the balance {balance} does not cover {amount}"
            return self._refuse(txid, player, amount, "insufficient_funds", message)
        self._move(player, -amount)
        self._db.execute(
            "INSERT INTO debits(transaction_id, player_id, amount, state) VALUES (?, ?, ?, 'open')",
            (txid, player, amount),
        )
        return {"status": "ok", "balance": balance - amount}

    def _credit(self, body: dict[str, Any]) -> dict[str, Any]:
        balance, _ = self._player(body)
        txid, player = body["transaction_id"], body["player_id"]
        for debit in body["debits"]:
            row = self._db.execute(
                "SELECT player_id, state FROM debits WHERE transaction_id = ?", (debit,)
            ).fetchone()
            if row is None or row[1] != "open" or row[0] != player:
                found = "unknown" if row is None else f"{row[1]}, of {row[0]}"
                self._anomaly(txid, f"credit {txid} settles debit {debit}: {found}")
                continue
            self._db.execute(
                "UPDATE debits SET state = 'settled', closed_by = ? WHERE transaction_id = ?",
                (txid, debit),
            )
        self._move(player, body["amount"])
        return {"status": "ok", "balance": balance + body["amount"]}

    def _rollback(self, body: dict[str, Any]) -> dict[str, Any]:
        balance, _ = self._player(body)
        txid, player, of = body["transaction_id"], body["player_id"], body["rollback_of"]
        row = self._db.execute(
            "SELECT player_id, amount, state FROM debits WHERE transaction_id = ?", (of,)
        ).fetchone()
        if row is None:  # never seen: the debit, should it come, is refused
            self._db.execute(
                "INSERT INTO debits(transaction_id, player_id, amount, state, closed_by)"
                " VALUES (?, ?, ?, 'rolled_back', ?)",
                (of, player, body["amount"], txid),
            )
            return {"status": "ok", "balance": balance}
        owner, amount, state = row
        if owner != player:
            self._anomaly(txid, f"rollback {txid} of {of}: the debit is {owner}'s")
            return {"status": "ok", "balance": balance}
        if state in ("refused", "rolled_back"):  # nothing was taken, or it was returned
            return {"status": "ok", "balance": balance}
        if state == "settled":
            self._anomaly(txid, f"rollback {txid} of {of}: the debit was settled")
            return {"status": "ok", "balance": balance}
        if amount != body["amount"]:
            self._anomaly(txid, f"rollback {txid} of {of}: {body['amount']}, debited {amount}")
        self._move(player, amount)
        self._db.execute(
            "UPDATE debits SET state = 'rolled_back', closed_by = ? WHERE transaction_id = ?",
            (txid, of),
        )
        return {"status": "ok", "balance": balance + amount}

    # --- the operator's own side --------------------------------------------------------------

    def open_player(
        self, player_id: str, currency: str, balance: int, *, blocked: bool = False
    ) -> None:
        """Open ``player_id``, or set its currency, balance and block."""
        with self._lock, self._transaction():
            self._db.execute(
                "INSERT INTO players(player_id, currency, balance, blocked) VALUES (?, ?, ?, ?)"
                " ON CONFLICT(player_id) DO UPDATE SET currency = excluded.currency,"
                " balance = excluded.balance, blocked = excluded.blocked",
                (player_id, currency, balance, int(blocked)),
            )

    def state(self) -> dict[str, Any]:
        """Balances, open debits, counts of calls and debits by state, and the anomalies."""
        with self._lock:
            db = self._db
            return {
                "players": {
                    p: {"currency": c, "balance": b, "blocked": bool(k)}
                    for p, c, b, k in db.execute(
                        "SELECT player_id, currency, balance, blocked FROM players"
                    )
                },
                "calls": dict(db.execute("SELECT operation, count(*) FROM calls GROUP BY 1")),
                "debits": dict(db.execute("SELECT state, count(*) FROM debits GROUP BY 1")),
                "open_debits": [
                    {"transaction_id": t, "player_id": p, "amount": a}
                    for t, p, a in db.execute(
                        "SELECT transaction_id, player_id, amount FROM debits"
                        " WHERE state = 'open' ORDER BY transaction_id"
                    )
                ],
                "anomalies": [
                    text for (text,) in db.execute("SELECT text FROM anomalies ORDER BY seq")
                ],
            }

    def statement(self) -> list[dict[str, Any]]:
        """Every call with a transaction id, in the order applied: the operator's export."""
        with self._lock:
            rows = self._db.execute(
                "SELECT transaction_id, operation, player_id, amount, round_id, answer, at"
                " FROM calls ORDER BY seq"
            ).fetchall()
        lines = []
        for txid, operation, player, amount, round_id, answer, at in rows:
            answered = json.loads(answer)
            lines.append(
                {
                    "transaction_id": txid,
                    "operation": operation,
                    "player_id": player,
                    "amount": amount,
                    "round_id": round_id,
                    "status": answered["status"],
                    "answer": answered,
                    "at": at,
                }
            )
        return lines

    # --- helpers ------------------------------------------------------------------------------

    def _transaction(self) -> _Transaction:
        return _Transaction(self._db)

    def _player(self, body: dict[str, Any]) -> tuple[int, bool]:
        """The player's balance and block (opened now under ``auto_create``); ``BadCall``
        for an unknown player or another currency than the player's."""
        player, currency = body["player_id"], body["currency"]
        row = self._db.execute(
            "SELECT balance, blocked, currency FROM players WHERE player_id = ?", (player,)
        ).fetchone()
        if row is None:
            if self.auto_create is None:
                raise BadCall(404, "unknown_player", f"no player {player!r}")
            self._db.execute(
                "INSERT INTO players(player_id, currency, balance) VALUES (?, ?, ?)",
                (player, currency, self.auto_create),
            )
            return self.auto_create, False
        if row[2] != currency:
            raise BadCall(400, "bad_currency", f"{player!r} plays in {row[2]}, not {currency}")
        return int(row[0]), bool(row[1])

    def _move(self, player: str, change: int) -> None:
        self._db.execute(
            "UPDATE players SET balance = balance + ? WHERE player_id = ?", (change, player)
        )

    def _debit_state(self, txid: str) -> str | None:
        row = self._db.execute("SELECT state FROM debits WHERE transaction_id = ?", (txid,))
        found = row.fetchone()
        return None if found is None else str(found[0])

    def _refuse(
        self, txid: str, player: str, amount: int, code: str, message: str
    ) -> dict[str, Any]:
        self._db.execute(
            "INSERT INTO debits(transaction_id, player_id, amount, state)"
            " VALUES (?, ?, ?, 'refused')",
            (txid, player, amount),
        )
        return _refused(code, message)

    def _anomaly(self, txid: str, text: str) -> None:
        self._db.execute(
            "INSERT INTO anomalies(at, transaction_id, text) VALUES (?, ?, ?)",
            (time.time(), txid, text),
        )


def _refused(code: str, message: str) -> dict[str, Any]:
    return {"status": "refused", "code": code, "message": message}


class _Transaction:
    """BEGIN IMMEDIATE … COMMIT, or ROLLBACK when the block raised (a ``BadCall`` included:
    nothing of a call that is not answered ok or refused is kept)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def __enter__(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind: object, exc: object, tb: object) -> None:
        self._db.execute("COMMIT" if kind is None else "ROLLBACK")
