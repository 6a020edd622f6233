"""A ledger whose players' money is the operator's (docs/wallet.md): each stake debited at the
operator's wallet before it is taken, each round's returns credited there, each returned
stake rolled back there — with Croupier's own double-entry books kept beside it as the
local record.

The local books keep their accounts and rules (``wagers:open``, ``house``, the batches'
idempotency keys). A player's account is a transit account, at 0 between rounds: the
operator's wallet is ``issuer:operator-wallet`` (it may go negative), and money passes
through the player's account on its way in and out:

- a **debit** (a bet, a War or Double wager): first the intent is written (``wallet_debits``,
  state ``sending``), so that whatever happens next recovery knows the call may have
  reached the operator; then the call; then, in one write, its outcome — answered ok, the
  stake moves ``issuer:operator-wallet → player → wagers:open``; refused, nothing moves and
  the bet is refused with the operator's code (``OperatorRefused``); unknown, nothing moves,
  the debit's rollback is queued in the outbox and the bet is refused
  (``OperatorUnavailable``);
- a **returned stake** (a cancel, a void): the stake moves ``wagers:open → player →
  issuer:operator-wallet`` and the debit's rollback is queued, in one write;
- a **settlement** moves money to the player's account as in the embedded ledger; when the
  round is over, ``finish_round`` credits each player what the round returned to them, in one
  credit per player listing the debits it settles, and moves it on to
  ``issuer:operator-wallet`` — the local transfer and the credit's outbox row in one write.

The outbox (``outbox.Outbox``) sends the credits and rollbacks until they are answered ok.
``recover`` at a start turns every debit still ``sending`` into a rollback.

The store is a local ledger (``SqliteLedger``, ``PgLedger``) with this module's tables and the
outbox's in the same database, so that a batch and what it makes due commit together.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from server.stores import guarded
from server.wallet.books import row
from server.wallet.ledger import (
    OPEN_WAGERS,
    LedgerError,
    OperatorRefused,
    OperatorUnavailable,
    PostResult,
    Transfer,
    player_account,
)
from server.wallet.operator import contract as c
from server.wallet.operator.client import OperatorWalletClient
from server.wallet.operator.outbox import (
    OUTBOX_SCHEMA,
    Outbox,
    OutboxCall,
    mark_attempt,
    queue_calls,
)
from server.wallet.sqlite_ledger import SqliteLedger

__all__ = [
    "DEBITS_SCHEMA",
    "OPERATOR_WALLET",
    "OperatorRefused",
    "OperatorUnavailable",
    "SeamlessLedger",
    "SeamlessSqliteLedger",
    "calls_of_round",
    "wallet_tables",
]

OPERATOR_WALLET: Final = "issuer:operator-wallet"
_PLAYER = "player:"
# The kinds of transfer that return a stake to its player: its debit is rolled back.
_RETURNED: Final = frozenset({"cancel", "void"})

DEBITS_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS wallet_debits (
    transaction_id TEXT PRIMARY KEY,
    table_id TEXT NOT NULL,
    round_id TEXT NOT NULL,
    player_id TEXT NOT NULL,
    bet_id TEXT NOT NULL,
    amount BIGINT NOT NULL,
    currency TEXT NOT NULL,
    state TEXT NOT NULL,
    balance BIGINT,
    at DOUBLE PRECISION NOT NULL
);
CREATE INDEX IF NOT EXISTS wallet_debits_round ON wallet_debits(round_id, player_id);
"""


@dataclass(frozen=True, slots=True)
class _Debit:
    """One stake to debit at the operator, from its transfer."""

    key: str
    transfer: Transfer
    txid: str
    player_id: str
    table_id: str
    round_id: str
    bet_id: str


def table_of(round_id: str) -> str:
    """The table of a round id (``TABLE.NUMBER``, ``server.core.table``)."""
    table, dot, number = round_id.rpartition(".")
    if not dot or not table or not number.isdigit():
        raise LedgerError(f"round id {round_id!r} is not TABLE.NUMBER")
    return table


class SeamlessLedger:
    """The ``Ledger`` protocol with the players' money at the operator (module docstring).

    ``local``: the local ledger store, whose database also holds this module's tables;
    ``ph``: its SQL's parameter mark; ``namespace``: what tells this installation's
    transaction ids from any other's at the same operator; ``currency``: the players'
    currency unless ``set_currency`` says otherwise for one (``per_player_currency``:
    whether it may)."""

    def __init__(
        self,
        local: Any,
        client: OperatorWalletClient,
        *,
        namespace: str,
        currency: str,
        ph: str,
        first_pause: float | None = None,
        per_player_currency: bool = True,
    ) -> None:
        if not namespace:
            raise ValueError("an installation's transaction ids need a namespace")
        self.local, self.client = local, client
        self.namespace, self.currency, self._ph = namespace, currency, ph
        self._write: Callable[[Callable[[Any], Any]], Any] = local.writer.run
        self.outbox = Outbox(client, self._write, self._read, ph, on_answered=self._answered)
        if first_pause is not None:
            self.outbox.first_pause = first_pause
        self._currencies: dict[str, str] = {}
        self.per_player_currency = per_player_currency  # off in a cluster (``set_currency``)
        self._balances: dict[str, int] = {}  # player id → the operator's last answer
        # Per player, what the credits and rollbacks in the outbox will add to that answer
        # once they are answered ok.
        self._owed: dict[str, int] = defaultdict(int)
        self._owing: set[str] = set()  # the transaction ids counted in ``_owed``
        self._in_flight: dict[str, int] = defaultdict(int)  # player id → debits under way
        local.open_account(OPERATOR_WALLET, may_go_negative=True)
        local.open_account(OPEN_WAGERS, may_go_negative=False)

    def _read(self, sql: str, params: tuple[Any, ...]) -> list[Any]:
        rows: list[Any] = self.local._rows(sql, params)
        return rows

    # --- players ----------------------------------------------------------------------------

    def set_currency(self, player_id: str, currency: str) -> None:
        """``player_id`` plays in ``currency`` (the operator's token says so). ``ValueError``
        for another currency than the configuration's when ``per_player_currency`` is off:
        a cluster's other nodes, which may run the player's table, never hear of it."""
        if currency != self.currency and not self.per_player_currency:
            raise ValueError(
                f"this cluster plays in {self.currency} only (the token says {currency})"
            )
        self._currencies[player_id] = currency

    def currency_of(self, player_id: str) -> str:
        return self._currencies.get(player_id, self.currency)

    async def refresh(self, player_id: str) -> int | None:
        """The player's balance at the operator now (None when it did not answer ok)."""
        body = c.balance_body(player_id, self.currency_of(player_id))
        answer = await self.client.call("balance", body)
        if isinstance(answer, c.Ok):
            self._balances[player_id] = answer.balance
            return answer.balance
        return None

    def _answered(self, call: OutboxCall, balance: int) -> None:
        player = str(call.body["player_id"])
        self._balances[player] = balance
        if call.transaction_id in self._owing:
            self._owing.discard(call.transaction_id)
            self._settle_owed(player, -int(call.body["amount"]))

    def _settle_owed(self, player: str, change: int) -> None:
        left = self._owed[player] + change
        if left:
            self._owed[player] = left
        else:
            del self._owed[player]

    def _take(self, calls: list[OutboxCall], *, owed: bool = True) -> None:
        """Send ``calls`` (durable in the outbox). With ``owed`` (credits, and rollbacks of
        stakes returned), until each is answered the player's balance counts what it will
        add; a rollback of a debit whose outcome is unknown adds nothing the balance had
        lost (the debit was never counted)."""
        for call in calls:
            if owed and call.transaction_id not in self._owing:
                self._owing.add(call.transaction_id)
                self._settle_owed(str(call.body["player_id"]), int(call.body["amount"]))
        self.outbox.take(calls)

    # --- the Ledger protocol: reads ---------------------------------------------------------

    def balance(self, account: str) -> int:
        """A player's balance is the operator's as last answered, plus what is on its way
        there: the round's returns not yet credited (in the transit account), the credits and
        rollbacks not yet answered. Any other account's is the local books'."""
        local = int(self.local.balance(account))
        if account.startswith(_PLAYER):
            player = account.removeprefix(_PLAYER)
            return self._balances.get(player, 0) + local + self._owed.get(player, 0)
        return local

    def available(self, account: str) -> int:
        """The balance less the debits under way (not yet answered)."""
        if account.startswith(_PLAYER):
            return self.balance(account) - self._in_flight.get(account.removeprefix(_PLAYER), 0)
        return int(self.local.available(account))

    def open_account(self, account: str, *, may_go_negative: bool = False) -> None:
        self.local.open_account(account, may_go_negative=may_go_negative)

    def history(self, account: str) -> list[tuple[str, Transfer]]:
        return list(self.local.history(account))

    def round_transfers(self, round_id: str) -> list[tuple[str, Transfer]]:
        return list(self.local.round_transfers(round_id))

    def history_after(self, account: str, after: int) -> list[tuple[int, str, Transfer]]:
        return list(self.local.history_after(account, after))

    def batch(self, key: str) -> list[Transfer]:
        return list(self.local.batch(key))

    def reconcile(self) -> dict[str, tuple[int, int]]:
        return dict(self.local.reconcile())

    def total(self) -> int:
        return int(self.local.total())

    # No ``writer``, no ``post_write``: a table's stores must not see a writer they could
    # queue a bet's debit on together with its record (``server.tables.waits``) — that
    # would post the stake locally without asking the operator. A stake goes through
    # ``apost`` only.

    def close(self) -> None:
        self.local.close()

    # --- the Ledger protocol: writes --------------------------------------------------------

    def post(self, key: str, transfers: Sequence[Transfer]) -> PostResult:
        """A batch that moves no money at the operator, or returns a stake (a rollback,
        queued); a debit only goes through ``apost``, which can wait for the operator."""
        if self._debit_of(key, transfers) is not None:
            raise LedgerError("a debit at the operator's wallet is made with apost")
        apply, calls = self._local_write(key, transfers)
        result: PostResult = self.local.writer.call(apply)
        self._take(calls)
        return self._as_seen(result)

    async def apost(self, key: str, transfers: Sequence[Transfer]) -> PostResult:
        debit = self._debit_of(key, transfers)
        if debit is not None:
            return await self._debit(debit)
        apply, calls = self._local_write(key, transfers)
        result: PostResult = await self._write(apply)
        self._take(calls)
        return self._as_seen(result)

    async def apost_many(
        self, batches: Sequence[tuple[str, Sequence[Transfer]]]
    ) -> list[PostResult]:
        """Several batches as one local write (a round's settlements); none may be a debit."""
        if any(self._debit_of(key, transfers) for key, transfers in batches):
            raise LedgerError("a debit at the operator's wallet is posted alone")
        writes = [self._local_write(key, transfers) for key, transfers in batches]
        results: list[PostResult] = await self._write(
            lambda conn: [apply(conn) for apply, _ in writes]
        )
        self._take([call for _, calls in writes for call in calls])
        return [self._as_seen(result) for result in results]

    def _as_seen(self, result: PostResult) -> PostResult:
        """A local write's result with each player's balance as ``balance`` gives it: the
        local books hold only what is in transit (a round's returns before their credit),
        and a table shows a player the balance a settlement's result carries."""
        seen = {
            account: local
            + self._balances.get(account.removeprefix(_PLAYER), 0)
            + self._owed.get(account.removeprefix(_PLAYER), 0)
            if account.startswith(_PLAYER)
            else local
            for account, local in result.balances.items()
        }
        return PostResult(result.key, result.applied, result.sequence, seen)

    # --- debits -----------------------------------------------------------------------------

    def _debit_of(self, key: str, transfers: Sequence[Transfer]) -> _Debit | None:
        """The debit a batch asks of the operator (money leaving a player's account), or
        None. A debit is one stake to ``wagers:open``, with its round and bet."""
        out = [t for t in transfers if t.source.startswith(_PLAYER)]
        if not out:
            return None
        t = out[0]
        if len(transfers) != 1 or t.destination != OPEN_WAGERS or not t.round_id or not t.bet_id:
            raise LedgerError(f"batch {key!r}: a player's money leaves only as one stake")
        player = t.source.removeprefix(_PLAYER)
        txid = c.debit_id(self.namespace, t.round_id, player, t.bet_id)
        return _Debit(key, t, txid, player, table_of(t.round_id), t.round_id, t.bet_id)

    async def _debit(self, d: _Debit) -> PostResult:
        ph, amount = self._ph, d.transfer.amount
        currency = self.currency_of(d.player_id)
        rollback = self._rollback(d.txid, d.player_id, amount, d.round_id, currency)
        self._in_flight[d.player_id] += amount
        try:
            earlier = await self._write(lambda conn: _intend(conn, ph, d, currency, time.time()))
            if earlier == "ok":  # the same bet again (a retry): its post says so
                again: PostResult = await self._write(lambda conn: self._apply_debit(conn, d))
                return again
            if earlier is not None:
                raise OperatorUnavailable(f"this bet's debit was {earlier} before")
            body = c.debit_body(
                d.txid, d.player_id, currency, amount, d.round_id, d.table_id, d.bet_id
            )
            sent_at, began = time.time(), time.perf_counter()
            try:
                answer = await self.client.call("debit", body)
            except BaseException:  # cancelled (the table closed) with the call out: undo it
                self._take([rollback], owed=False)
                raise
            took = time.perf_counter() - began
        finally:
            self._in_flight[d.player_id] -= amount
            if not self._in_flight[d.player_id]:
                del self._in_flight[d.player_id]

        def outcome(conn: Any) -> PostResult | None:
            mark_attempt(conn, ph, d.txid, "debit", sent_at, took, answer)
            if isinstance(answer, c.Ok):
                _set_state(conn, ph, d.txid, "ok", answer.balance)
                return self._apply_debit(conn, d)
            if isinstance(answer, c.Refused):
                _set_state(conn, ph, d.txid, "refused", None)
                return None
            _give_back(conn, ph, d.txid, rollback)
            return None

        try:
            result = await self._write(outcome)
        except Exception:  # nothing of the outcome was written
            if isinstance(answer, c.Ok):  # taken at the operator, not recorded here: return it
                with contextlib.suppress(Exception):  # the rollback also goes out from memory
                    await self._write(lambda conn: _give_back(conn, ph, d.txid, rollback))
            if not isinstance(answer, c.Refused):
                # Sent from memory now; written or not, the debit is still ``sending`` or
                # ``unknown`` in the store, and the next start rolls it back again (the same
                # transaction id: the operator applies it once).
                self._take([rollback], owed=False)
            raise
        except BaseException:  # cancelled while the outcome is written (it may still be)
            if isinstance(answer, c.Unknown):  # never recorded ok: a rollback is safe
                self._take([rollback], owed=False)
            raise
        if isinstance(answer, c.Ok):
            self._balances[d.player_id] = answer.balance
            assert result is not None
            source = d.transfer.source  # the player's, as it stood just after the debit
            balances = {source: self._as_seen(result).balances[source]}
            return PostResult(result.key, result.applied, result.sequence, balances)
        if isinstance(answer, c.Refused):
            raise OperatorRefused(answer.code, answer.message)
        self._take([rollback], owed=False)
        raise OperatorUnavailable(answer.reason)

    def _apply_debit(self, conn: Any, d: _Debit) -> PostResult:
        """The local side of a debit answered ok: the stake through the player's account."""
        t = d.transfer
        rows = [
            row(
                Transfer(OPERATOR_WALLET, t.source, t.amount, "wallet-debit", t.round_id, t.bet_id)
            ),
            row(t),
        ]
        result: PostResult = type(self.local)._apply(d.key, rows, conn)
        return result

    def _rollback(
        self, debit: str, player_id: str, amount: int, round_id: str, currency: str
    ) -> OutboxCall:
        body = c.rollback_body(
            c.rollback_id(debit), debit, player_id, currency, amount, round_id, table_of(round_id)
        )
        return OutboxCall("rollback", body)

    # --- returned stakes and everything else ------------------------------------------------

    def _local_write(
        self, key: str, transfers: Sequence[Transfer]
    ) -> tuple[Callable[[Any], PostResult], list[OutboxCall]]:
        """A batch posted locally as it is, but for stakes returned to their players: each
        moves on to the operator's wallet, and its debit's rollback is queued with it (in
        the debit's currency). The calls' list is filled by the write, when it applies."""
        rows = [row(t) for t in transfers]
        returned: list[tuple[str, str, int, str]] = []  # debit, player, amount, round
        for t in transfers:
            if t.kind in _RETURNED and t.destination.startswith(_PLAYER):
                if not t.round_id or not t.bet_id:
                    raise LedgerError(f"batch {key!r}: a returned stake without its bet")
                player = t.destination.removeprefix(_PLAYER)
                debit = c.debit_id(self.namespace, t.round_id, player, t.bet_id)
                back = Transfer(t.destination, OPERATOR_WALLET, t.amount, "wallet-rollback",
                                t.round_id, t.bet_id)  # fmt: skip
                rows.append(row(back))
                returned.append((debit, player, t.amount, t.round_id))
        ph, apply, now = self._ph, type(self.local)._apply, time.time()
        calls: list[OutboxCall] = []

        def write(conn: Any) -> PostResult:
            result: PostResult = apply(key, rows, conn)
            calls.clear()  # a write made again (its group undone) starts over
            if result.applied and returned:
                for debit, player, amount, round_id in returned:
                    found = conn.execute(
                        f"SELECT currency FROM wallet_debits WHERE transaction_id = {ph}",
                        (debit,),
                    ).fetchone()
                    currency = str(found[0]) if found else self.currency_of(player)
                    calls.append(self._rollback(debit, player, amount, round_id, currency))
                    _set_state(conn, ph, debit, "rolled_back", None)
                queue_calls(conn, ph, calls, now)
            return result

        return write, calls

    # --- rounds -----------------------------------------------------------------------------

    async def finish_round(self, round_id: str) -> list[OutboxCall]:
        """Credit each player of ``round_id`` what its settlements returned to them, in one
        credit per player listing the debits it settles (0 for a round lost), queued in the
        outbox with the local transfer to the operator's wallet, in one write. Idempotent:
        a round finished before (a recovery) queues nothing again."""
        table, ph, now = table_of(round_id), self._ph, time.time()

        def write(conn: Any) -> list[OutboxCall]:
            debits: dict[str, list[str]] = defaultdict(list)
            currencies: dict[str, str] = {}
            for txid, player, currency in conn.execute(
                "SELECT transaction_id, player_id, currency FROM wallet_debits WHERE "
                f"round_id = {ph} AND state = 'ok' ORDER BY at, transaction_id",
                (round_id,),
            ).fetchall():
                debits[str(player)].append(str(txid))
                currencies[str(player)] = str(currency)  # the stakes' currency
            calls = []
            for player, settled in debits.items():
                account = player_account(player)
                (net,) = conn.execute(
                    _net_in_round(ph), (account, round_id, account, account)
                ).fetchone()
                net = int(net)
                if net < 0:  # a stake taken and never settled: the round is not over
                    raise LedgerError(f"round {round_id}: {player}'s stakes are not all settled")
                txid = c.credit_id(self.namespace, round_id, player)
                if net:
                    out = Transfer(account, OPERATOR_WALLET, net, "wallet-credit", round_id)
                    type(self.local)._apply(f"credit:{round_id}:{player}", [row(out)], conn)
                conn.execute(
                    f"UPDATE wallet_debits SET state = 'settled' WHERE round_id = {ph} "
                    f"AND player_id = {ph} AND state = 'ok'",
                    (round_id, player),
                )
                calls.append(
                    OutboxCall(
                        "credit",
                        c.credit_body(
                            txid, player, currencies[player], net, round_id, table, settled
                        ),
                    )
                )
            queue_calls(conn, ph, calls, now)
            return calls

        calls: list[OutboxCall] = await self._write(write)
        self._take(calls)
        return calls

    async def recover(self, table_id: str | None = None) -> int:
        """At a start (of ``table_id``'s rounds only: when a cluster node takes the table
        over, its fence raised, so the node that ran it writes nothing more): every debit
        whose call may have left without its answer recorded (``sending``) is rolled back;
        then every call not yet answered ok is taken up again. The number of debits turned
        into rollbacks."""
        ph, now = self._ph, time.time()
        of_table, params = _of_table(ph, table_id)
        rows = self._read(
            "SELECT transaction_id, player_id, amount, round_id, currency FROM wallet_debits "
            f"WHERE state = 'sending'{of_table}",
            params,
        )
        calls = [
            self._rollback(str(t), str(p), int(a), str(r), str(cur)) for t, p, a, r, cur in rows
        ]

        def write(conn: Any) -> None:
            for t, *_ in rows:
                _set_state(conn, ph, str(t), "unknown", None)
            queue_calls(conn, ph, calls, now)

        if calls:
            await self._write(write)
        self._take(calls, owed=False)
        returned = {  # the rollbacks of stakes returned (cancelled, voided): owed
            c.rollback_id(str(t))
            for (t,) in self._read(
                f"SELECT transaction_id FROM wallet_debits WHERE state = 'rolled_back'{of_table}",
                params,
            )
        }
        for pending in self.outbox.pending(table_id):  # the calls an earlier process left
            owed = pending.operation == "credit" or pending.transaction_id in returned
            if owed and pending.transaction_id not in self._owing:
                self._owing.add(pending.transaction_id)
                self._settle_owed(pending.player_id, pending.amount)
        self.outbox.load(table_id)
        return len(calls)

    async def finish_settled(self, table_id: str | None = None) -> list[str]:
        """``finish_round`` every round (of ``table_id``, when given) whose stakes are all
        settled or returned and which has debits not yet credited: at a start, after
        recovery has completed or voided the rounds a crash left open, the rounds whose
        credits were not queued before it. The round ids."""
        of_table, params = _of_table(self._ph, table_id)
        rounds = [
            str(r)
            for (r,) in self._read(
                f"SELECT DISTINCT round_id FROM wallet_debits WHERE state = 'ok'{of_table}",
                params,
            )
        ]
        finished = []
        for round_id in rounds:
            (held,) = self._read(
                _net_in_round(self._ph), (OPEN_WAGERS, round_id, OPEN_WAGERS, OPEN_WAGERS)
            )[0]
            if int(held) == 0:
                await self.finish_round(round_id)
                finished.append(round_id)
        return finished

    def fenced(self, guard: Callable[[Any], None]) -> SeamlessLedger:
        """A view whose every write of the local books runs ``guard`` first, in its own
        transaction (``server.stores.guarded``: a cluster table's fence). A node that lost
        the table writes none of its stakes' intents or outcomes, returned stakes,
        settlements or credits once the new owner has raised the fence; the new owner rolls
        back what it left ``sending``. The view shares this ledger's client, outbox and
        balances."""
        view = copy.copy(self)
        view.local = guarded(self.local, guard)
        view._write = view.local.writer.run
        view.close = lambda: None  # type: ignore[method-assign]
        return view

    def calls_of_round(self, round_id: str) -> list[dict[str, Any]]:
        """Every call made to the operator for ``round_id`` and its answer (disputes)."""
        return calls_of_round(self._read, self._ph, round_id)

    async def run(self) -> None:
        """The outbox's sender, until cancelled. It keeps at most half the client's
        connections busy (32 at most): a backlog of credits after an outage must not hold
        the players' debits waiting for a free connection."""
        await self.outbox.run(concurrency=max(1, min(32, self.client.connections // 2)))

    async def settled(self, timeout: float = 30.0) -> None:
        """Wait until every credit and rollback is answered ok (tests, a clean stop)."""
        await asyncio.wait_for(self.outbox.drained(), timeout)


class SeamlessSqliteLedger(SqliteLedger):
    """The embedded ledger file with the seamless wallet's tables beside its own: the local
    store of a ``SeamlessLedger`` on one node (a cluster's PostgreSQL gets them from its
    migration 6)."""

    _SCHEMA = SqliteLedger._SCHEMA + OUTBOX_SCHEMA + DEBITS_SCHEMA


def _intend(conn: Any, ph: str, d: _Debit, currency: str, now: float) -> str | None:
    """Write the debit's intent (``sending``) in ``currency`` — kept, so that its rollback
    and its round's credit use it after a restart too; the state it had if it was written
    before. A debit the operator refused is sent again (a decision's stake tried again,
    docs/wallet.md): it moved nothing, and the operator answers its id as it did or, if it
    now takes it, once."""
    found = conn.execute(
        f"SELECT state FROM wallet_debits WHERE transaction_id = {ph}", (d.txid,)
    ).fetchone()
    if found is not None and str(found[0]) == "refused":  # as it is asked now
        conn.execute(
            f"UPDATE wallet_debits SET state = 'sending', amount = {ph}, currency = {ph}, "
            f"at = {ph} WHERE transaction_id = {ph}",
            (d.transfer.amount, currency, now, d.txid),
        )
        return None
    if found is not None:
        return str(found[0])
    conn.execute(
        "INSERT INTO wallet_debits(transaction_id, table_id, round_id, player_id, bet_id, "
        f"amount, currency, state, at) VALUES ({ph}, {ph}, {ph}, {ph}, {ph}, {ph}, {ph}, "
        f"'sending', {ph})",
        (d.txid, d.table_id, d.round_id, d.player_id, d.bet_id, d.transfer.amount, currency, now),
    )
    return None


def wallet_tables(ledger: Any) -> str | None:
    """The SQL parameter mark of ``ledger``'s database when it holds the operator wallet's
    tables (a shared PostgreSQL database always does, from its migration 6; a SQLite file
    once a seamless ledger opened it), None when it does not: for the commands that read
    the record of the calls (``croupier wallet``, ``croupier replay``)."""
    if hasattr(ledger, "url"):  # PgLedger
        return "%s"
    found = ledger._rows(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'wallet_debits'", ()
    )
    return "?" if found else None


def calls_of_round(
    read: Callable[[str, tuple[Any, ...]], list[Any]], ph: str, round_id: str
) -> list[dict[str, Any]]:
    """Every call made to the operator for ``round_id`` — each debit, credit and rollback,
    each attempt with when it was sent, how long it took and its answer — in the order sent,
    from the record in the ledger's database (``read(sql, params)``)."""
    rows = read(
        "SELECT c.transaction_id, c.operation, c.attempt, c.sent_at, c.took_ms, c.outcome, "
        "c.detail, COALESCE(d.player_id, o.player_id), COALESCE(d.bet_id, ''), "
        "COALESCE(d.amount, 0), d.state, o.body FROM wallet_calls c "
        "LEFT JOIN wallet_debits d ON d.transaction_id = c.transaction_id "
        "LEFT JOIN wallet_outbox o ON o.transaction_id = c.transaction_id "
        f"WHERE d.round_id = {ph} OR o.round_id = {ph} ORDER BY c.sent_at, c.attempt",
        (round_id, round_id),
    )
    calls = []
    for txid, op, attempt, sent, took, outcome, detail, player, bet, amount, state, body in rows:
        call: dict[str, Any] = {
            "transaction_id": txid,
            "operation": op,
            "attempt": int(attempt),
            "player_id": player,
            "amount": int(amount) if body is None else int(json.loads(body)["amount"]),
            "sent_at": float(sent),
            "took_ms": round(float(took), 1),
            "outcome": outcome,
            "answer": detail,
        }
        if bet:
            call["bet_id"] = bet
        if state is not None:
            call["debit_state"] = state
        calls.append(call)
    return calls


def _of_table(ph: str, table_id: str | None) -> tuple[str, tuple[Any, ...]]:
    """The condition (and its parameters) that keeps a query of ``wallet_debits`` to one
    table's rows, or nothing."""
    return ("", ()) if table_id is None else (f" AND table_id = {ph}", (table_id,))


def _net_in_round(ph: str) -> str:
    """What one round moved into an account, less what it moved out: the parameters are
    the account, the round, the account and the account again."""
    return (
        f"SELECT COALESCE(SUM(CASE WHEN destination = {ph} THEN amount ELSE -amount END), 0) "
        f"FROM transfers WHERE round_id = {ph} AND (source = {ph} OR destination = {ph})"
    )


def _give_back(conn: Any, ph: str, txid: str, rollback: OutboxCall) -> None:
    """The debit ``txid`` is to be rolled back: its outcome is unknown, or it was taken
    and could not be recorded."""
    _set_state(conn, ph, txid, "unknown", None)
    queue_calls(conn, ph, [rollback], time.time())


def _set_state(conn: Any, ph: str, txid: str, state: str, balance: int | None) -> None:
    conn.execute(
        f"UPDATE wallet_debits SET state = {ph}, balance = COALESCE({ph}, balance) "
        f"WHERE transaction_id = {ph}",
        (state, balance, txid),
    )
