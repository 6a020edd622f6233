"""The durable outbox of calls to the operator's wallet that must be answered ok: credits and
rollbacks (docs/wallet.md, "What each answer means").

A credit settles a round and a rollback returns a stake whose debit's outcome was unknown;
neither may be dropped, whatever the operator or Croupier does meanwhile. So each is first
written to the store, in the same transaction as what made it due (the round's settlement,
the refusal of the bet), and only then sent; it is sent again — the same body, the same
``transaction_id`` — after a timeout, an error or a restart, with a growing pause, until
the operator answers ok. The operator applies a transaction id once, so sending it twice
is safe, and losing it is impossible: at start, or when a node takes a table over, every
call of the table not yet answered ok is loaded again (``load``).

Every attempt is recorded (``wallet_calls``: when, how long, and the answer or the reason it
is unknown), for disputes and for ``croupier wallet pending``.

The store's SQL is the same on SQLite and PostgreSQL but for its parameters' mark (``ph``).
``OUTBOX_SCHEMA`` makes the tables in a SQLite file; a shared PostgreSQL database gets the
same tables from its migration 6 (``server.pg_storage``, ``croupier db migrate``).
"""

from __future__ import annotations

import asyncio
import heapq
import json
import logging
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from server.wallet.operator.client import OperatorWalletClient
from server.wallet.operator.contract import Ok, Refused, Unknown

__all__ = [
    "OUTBOX_SCHEMA",
    "Outbox",
    "OutboxCall",
    "Pending",
    "mark_attempt",
    "pending_calls",
    "queue_calls",
]

log = logging.getLogger(__name__)

OUTBOX_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS wallet_outbox (
    transaction_id TEXT PRIMARY KEY,
    operation TEXT NOT NULL,
    table_id TEXT NOT NULL,
    round_id TEXT NOT NULL,
    player_id TEXT NOT NULL,
    body TEXT NOT NULL,
    queued_at DOUBLE PRECISION NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    answered_at DOUBLE PRECISION,
    balance BIGINT
);
CREATE INDEX IF NOT EXISTS wallet_outbox_open ON wallet_outbox(table_id, answered_at);
CREATE TABLE IF NOT EXISTS wallet_calls (
    transaction_id TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    operation TEXT NOT NULL,
    sent_at DOUBLE PRECISION NOT NULL,
    took_ms DOUBLE PRECISION NOT NULL,
    outcome TEXT NOT NULL,
    detail TEXT NOT NULL,
    PRIMARY KEY (transaction_id, attempt)
);
"""

# The pause before sending an unanswered call again: doubled each time from FIRST_PAUSE up
# to LAST_PAUSE seconds, each drawn between half and all of it so that calls that failed
# together (an operator that was down) do not all come back in the same instant.
FIRST_PAUSE: Final = 0.5
LAST_PAUSE: Final = 30.0


@dataclass(frozen=True, slots=True)
class OutboxCall:
    """One call to send until it is answered ok: ``operation`` (``credit`` or ``rollback``)
    and its body as the contract says (``transaction_id``, ``player_id``, ``round_id``,
    ``table`` among its fields)."""

    operation: str
    body: dict[str, Any]

    def __post_init__(self) -> None:
        if self.operation not in ("credit", "rollback"):
            raise ValueError(f"only credits and rollbacks wait in the outbox, not {self.operation}")
        missing = {"transaction_id", "player_id", "round_id", "table"} - set(self.body)
        if missing:
            raise ValueError(f"an outbox call's body lacks {sorted(missing)}")

    @property
    def transaction_id(self) -> str:
        return str(self.body["transaction_id"])


@dataclass(frozen=True, slots=True)
class Pending:
    """A call not yet answered ok, as ``croupier wallet pending`` lists it."""

    transaction_id: str
    operation: str
    table_id: str
    round_id: str
    player_id: str
    amount: int
    queued_at: float
    attempts: int
    last_error: str | None


# --- the writes (each applied in a writer's transaction; ``ph`` the SQL's parameter mark) ------


def queue_calls(conn: Any, ph: str, calls: list[OutboxCall], now: float) -> None:
    """Put ``calls`` in the outbox; one already there (the same transaction id: a
    settlement written again after a crash) stays as it is."""
    conn.cursor().executemany(  # a cursor's: psycopg's connection has no executemany
        "INSERT INTO wallet_outbox(transaction_id, operation, table_id, round_id, player_id, "
        f"body, queued_at) VALUES ({ph}, {ph}, {ph}, {ph}, {ph}, {ph}, {ph}) "
        "ON CONFLICT (transaction_id) DO NOTHING",
        [
            (
                c.transaction_id,
                c.operation,
                c.body["table"],
                c.body["round_id"],
                c.body["player_id"],
                json.dumps(c.body, sort_keys=True),
                now,
            )
            for c in calls
        ],
    )


def mark_attempt(
    conn: Any,
    ph: str,
    txid: str,
    operation: str,
    sent_at: float,
    took: float,
    answer: Ok | Refused | Unknown,
) -> None:
    """Record one attempt of ``txid`` and, for an outbox call, its outcome: answered (ok)
    or still pending with the reason. A debit's attempts are recorded the same way."""
    attempt = conn.execute(
        f"SELECT COUNT(*) FROM wallet_calls WHERE transaction_id = {ph}", (txid,)
    ).fetchone()[0]
    if isinstance(answer, Ok):
        outcome, detail = "ok", f"balance {answer.balance}"
    elif isinstance(answer, Refused):
        outcome, detail = "refused", f"{answer.code}: {answer.message}"
    else:
        outcome, detail = "unknown", answer.reason
    conn.execute(
        "INSERT INTO wallet_calls(transaction_id, attempt, operation, sent_at, took_ms, "
        f"outcome, detail) VALUES ({ph}, {ph}, {ph}, {ph}, {ph}, {ph}, {ph})",
        (txid, int(attempt) + 1, operation, sent_at, took * 1e3, outcome, detail),
    )
    if isinstance(answer, Ok):
        conn.execute(
            f"UPDATE wallet_outbox SET attempts = attempts + 1, answered_at = {ph}, "
            f"balance = {ph}, last_error = NULL WHERE transaction_id = {ph}",
            (sent_at + took, answer.balance, txid),
        )
    else:
        conn.execute(
            f"UPDATE wallet_outbox SET attempts = attempts + 1, last_error = {ph} "
            f"WHERE transaction_id = {ph}",
            (detail, txid),
        )


def pending_calls(
    read: Callable[[str, tuple[Any, ...]], list[Any]], ph: str, table_id: str | None = None
) -> list[Pending]:
    """The calls of a store's outbox (of ``table_id``'s rounds, or all) not yet answered ok,
    oldest first: ``read(sql, params)`` reads the store, ``ph`` is its parameter mark."""
    where = "answered_at IS NULL"
    params: tuple[Any, ...] = ()
    if table_id is not None:
        where += f" AND table_id = {ph}"
        params = (table_id,)
    rows = read(
        "SELECT transaction_id, operation, table_id, round_id, player_id, body, queued_at,"
        f" attempts, last_error FROM wallet_outbox WHERE {where} "
        "ORDER BY queued_at, transaction_id",
        params,
    )
    return [
        Pending(t, o, tb, r, p, int(json.loads(b)["amount"]), float(q), int(a), e)
        for t, o, tb, r, p, b, q, a, e in rows
    ]


# --- the sender ---------------------------------------------------------------------------------


class Outbox:
    """The outbox of one store, and the task sending it (``run``).

    ``write(apply)`` runs ``apply(connection)`` in the store's writer transaction and
    resolves once it is durable (a ``GroupCommitWriter.run``); ``read(sql, params)`` reads
    the store's rows; ``ph`` is its SQL's parameter mark. ``on_answered(call, balance)`` is
    told each call answered ok (the player's balance after it), once it is recorded."""

    def __init__(
        self,
        client: OperatorWalletClient,
        write: Callable[[Callable[[Any], Any]], Any],
        read: Callable[[str, tuple[Any, ...]], list[Any]],
        ph: str,
        *,
        on_answered: Callable[[OutboxCall, int], None] | None = None,
        clock: Callable[[], float] = time.time,
        rng: random.Random | None = None,
        first_pause: float = FIRST_PAUSE,
    ) -> None:
        self.client = client
        self._write, self._read, self._ph = write, read, ph
        self.on_answered = on_answered
        self._clock = clock
        self._random = rng or random.Random()
        self.first_pause = first_pause
        # (when due, order, call, attempts so far): the calls this process sends.
        self._due: list[tuple[float, int, OutboxCall, int]] = []
        self._queued: set[str] = set()  # their transaction ids
        self._order = 0
        self._wake: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        # ``take`` may come from another thread (a recovery's plain ``post``): the heap and
        # the set of held calls are shared under this lock.
        self._lock = threading.Lock()
        self._sending: set[asyncio.Task[None]] = set()
        self.sent = 0  # attempts made by this process

    async def queue(self, calls: list[OutboxCall]) -> None:
        """Write ``calls`` to the outbox (durable when this returns), then send them. A
        caller that writes them in a transaction of its own (with a settlement) calls
        ``queue_calls`` there and ``take`` after."""
        now = self._clock()
        await self._write(lambda conn: queue_calls(conn, self._ph, calls, now))
        self.take(calls)

    def take(self, calls: list[OutboxCall], attempts: int = 0) -> None:
        """Send ``calls``, already durable in the outbox, from this process (soon); from
        any thread."""
        for call in calls:
            with self._lock:
                if call.transaction_id in self._queued:
                    continue
                self._queued.add(call.transaction_id)
            self._push(0.0, call, attempts)

    def load(self, table_id: str | None = None) -> int:
        """Take every call of ``table_id`` (None: of every table) not yet answered ok, as
        at a start or when a node takes a table over: how many."""
        where = "answered_at IS NULL"
        params: tuple[Any, ...] = ()
        if table_id is not None:
            where += f" AND table_id = {self._ph}"
            params = (table_id,)
        rows = self._read(
            f"SELECT operation, body, attempts FROM wallet_outbox WHERE {where} "
            "ORDER BY queued_at, transaction_id",
            params,
        )
        before = len(self._queued)
        for operation, body, attempts in rows:
            self.take([OutboxCall(operation, json.loads(body))], int(attempts))
        return len(self._queued) - before

    def pending(self, table_id: str | None = None) -> list[Pending]:
        """The calls not yet answered ok, oldest first (``croupier wallet pending``)."""
        return pending_calls(self._read, self._ph, table_id)

    def holds(self, transaction_id: str) -> bool:
        """Whether this process holds the call to send it (not answered ok yet)."""
        with self._lock:
            return transaction_id in self._queued

    @property
    def in_flight(self) -> int:
        """Calls this process holds that are not answered ok yet."""
        return len(self._queued)

    async def run(self, concurrency: int = 32) -> None:
        """Send what is due, ``concurrency`` calls at most at once, until cancelled."""
        self._wake = asyncio.Event()
        self._loop = asyncio.get_running_loop()
        slots = asyncio.Semaphore(concurrency)
        try:
            while True:
                now = self._clock()
                while (due := self._pop_due(now)) is not None:
                    call, attempts = due
                    await slots.acquire()
                    task = asyncio.create_task(self._send(call, attempts, slots))
                    self._sending.add(task)
                    task.add_done_callback(self._sending.discard)
                self._wake.clear()
                with self._lock:
                    delay = self._due[0][0] - self._clock() if self._due else None
                try:
                    async with asyncio.timeout(delay):
                        await self._wake.wait()
                except TimeoutError:
                    pass
        finally:
            sending = list(self._sending)
            for task in sending:
                task.cancel()
            # Each ends before the store and the client it uses are closed; a call cut short
            # stays in the outbox, sent again after the restart.
            await asyncio.gather(*sending, return_exceptions=True)

    async def drained(self) -> None:
        """Wait until every call this process holds has been answered ok (tests, a clean
        stop that wants the operator settled first)."""
        while self._queued:
            await asyncio.sleep(0.01)

    async def _send(self, call: OutboxCall, attempts: int, slots: asyncio.Semaphore) -> None:
        try:
            sent_at = self._clock()
            began = time.perf_counter()
            answer = await self.client.call(call.operation, call.body)
            took = time.perf_counter() - began
            if isinstance(answer, Refused):  # never an answer to a credit or a rollback
                answer = Unknown(f"refused ({answer.code}: {answer.message}), not ok")
            self.sent += 1
            txid, op = call.transaction_id, call.operation
            await self._write(
                lambda conn: mark_attempt(conn, self._ph, txid, op, sent_at, took, answer)
            )
        except Exception as exc:  # the store failed: nothing is lost, the row is still there
            log.warning("outbox %s: %s; sent again later", call.transaction_id, exc)
            answer = Unknown(f"not recorded: {exc}")
        finally:
            slots.release()
        if isinstance(answer, Ok):
            with self._lock:
                self._queued.discard(call.transaction_id)
            if self.on_answered is not None:
                self.on_answered(call, answer.balance)
            return
        log.info("outbox %s %s: %s", call.operation, call.transaction_id, answer.reason)
        # (The exponent capped: the attempts count on across restarts and outages, and a
        # float cannot hold 2**1024.)
        pause = min(LAST_PAUSE, self.first_pause * 2 ** min(attempts, 16))
        self._push(self._clock() + pause * (0.5 + self._random.random() / 2), call, attempts + 1)

    def _push(self, due: float, call: OutboxCall, attempts: int) -> None:
        with self._lock:
            self._order += 1
            heapq.heappush(self._due, (due, self._order, call, attempts))
        wake, loop = self._wake, self._loop
        if wake is None or loop is None:
            return  # the sender has not started: it looks at the heap first
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            wake.set()
        elif not loop.is_closed():
            loop.call_soon_threadsafe(wake.set)

    def _pop_due(self, now: float) -> tuple[OutboxCall, int] | None:
        with self._lock:
            if not self._due or self._due[0][0] > now:
                return None
            _, _, call, attempts = heapq.heappop(self._due)
            return call, attempts
