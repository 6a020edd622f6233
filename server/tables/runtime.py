"""One table on the event loop: performs what its ``TableCore`` says, in order.

The rules live in the sans-I/O core (``server.core``); this adapter only does the I/O:
players' commands queue in an inbox and reach the core in order; the core's effects are
performed in the order given — writes awaited on the stores' writer threads (a ``Wait``'s
writes together, so a bet's debit and journal record share the disk's time), chance
requests answered from the table's game (the virtual shoe or wheel), events encoded once and
handed to the fan-out, replies resolved — and the core is ticked at its deadlines from the
injected clock. A player's bet (``Wait.shared``) is written on a task of its own that hands
the core its answer, so the table takes the next players' bets meanwhile and
the stores' group commit writes them together; the table's own steps (a card, a settlement)
are awaited in place, as nothing else may run then. The last ``history`` events are kept
so a reconnecting viewer can resume.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from server.core import commands as cmd
from server.core import effects as fx
from server.core.table import SEQ_BLOCK, TABLE_HELD, TABLE_UNAVAILABLE, TableCore
from server.games.errors import Refusal
from server.games.table import TableGame, TableSettings
from server.journal.journal import Journal
from server.prompt import Prompt
from server.protocol.codec import encode
from server.protocol.messages import BalanceChanged, TableEvent, TableSnapshot
from server.storage import hold_in_flight, in_flight
from server.tables.clock import Clock
from server.tables.eager import eager_task
from server.tables.hooks import TableHooks
from server.tables.viewers import History, Viewer
from server.tables.waits import STATUS, ChanceDevices, TableStores
from server.wallet.ledger import Ledger, PostResult, player_account

__all__ = [
    "SEQ_BLOCK",
    "TableHooks",
    "TableReply",
    "TableRuntime",
    "Viewer",
    "say",
]


log = logging.getLogger("croupier.table")
LEVELS = {"warning": logging.WARNING, "error": logging.ERROR, "critical": logging.CRITICAL}


def say(effect: fx.Log) -> None:
    """Perform the core's ``Log`` effect (the core itself loads no logging machinery)."""
    log.log(LEVELS[effect.level], "%s", effect.message, exc_info=effect.error)


@dataclass
class TableReply:
    """The table's answer to one play command: its ``refusal``, or data."""

    refusal: Refusal | None = None
    data: dict[str, Any] = field(default_factory=dict)


class TableRuntime:
    in_process = True  # as a door (``TableDoor``): the table is here

    def __init__(
        self,
        settings: TableSettings,
        game: TableGame,
        ledger: Ledger,
        journal: Journal,
        clock: Clock,
        *,
        history: int = 1024,
        first_round: int = 1,
        epoch: int = 0,
        devices: ChanceDevices | None = None,
        hooks: TableHooks | None = None,
        viewers: dict[Viewer, str] | None = None,
        reserved: Mapping[str, int] | None = None,
    ) -> None:
        """``viewers``: the viewers to deliver to, when someone else keeps them too (a cluster
        node's door to the table keeps them while the table moves between nodes);
        ``reserved``: seats that are one player's whenever they sit (a player station's)."""
        self.settings, self.id, self.game = settings, settings.id, game
        self.ledger, self.journal, self.clock = ledger, journal, clock
        self.core = TableCore(
            settings, game, first_round=first_round, epoch=epoch, reserved=reserved
        )
        self.stores = TableStores(self.id, ledger, journal, game, devices)
        self.viewers: dict[Viewer, str] = {} if viewers is None else viewers
        self.hooks = hooks or TableHooks()
        self.history = History(history)
        # Commands for the table's loop, and the future it waits on while there are none
        # (``_next``; a set: whoever else waits there is woken too, never left behind): a
        # command wakes the loop one turn of the event loop after it came.
        self._inbox: deque[cmd.Command] = deque()
        self._waiters: set[asyncio.Future[None]] = set()
        # Bets' writes under way on tasks of their own (``_answer``), and for each its count
        # in ``writes_in_flight``, held until the core has taken its ``Done``.
        self._answering: set[asyncio.Future[None]] = set()
        self._holds: dict[int, Callable[[], None]] = {}
        # One driver of the core at a time: the loop, or a bet's task with its answer.
        self._stepping = asyncio.Lock()
        self._replies: dict[int, asyncio.Future[TableReply]] = {}
        self._cids = itertools.count(1)
        self._deadline: float | None = None
        self._ended = False  # the table's task has ended (``run``'s last step)
        # Balances the ledger reported with this step's posts (account → balance just
        # after): a reply or balance frame uses them instead of reading the store again — a
        # read on the event loop, a round trip each with a shared database.
        self._posted: dict[str, int] = {}
        if devices is not None:  # the dealer console's no more bets and voids
            devices.on_console(lambda staff: self._put(cmd.Console(staff)))

    # --- what the core knows, as the server reads it ------------------------------------------

    seq = property(lambda self: self.core.seq)
    epoch = property(lambda self: self.core.epoch)
    round_id = property(lambda self: self.core.round_id)
    phase = property(lambda self: self.core.phase)
    available = property(lambda self: self.core.available)
    last_results = property(lambda self: self.core.last_results)

    @property
    def lobby_state(self) -> tuple[int, int, str, int | None]:
        return self.core.lobby_state(self.clock.now())

    def snapshot(self, player_id: str) -> TableSnapshot:
        return TableSnapshot(**self.core.snapshot(player_id, self.clock.now()))

    # --- viewers --------------------------------------------------------------------------------

    def seat(self, command: cmd.Join | cmd.Leave | cmd.Drop) -> None:
        """The one way in for seating, for a viewer here or a player seen at another node
        (a cluster's): takes effect at once. ``Join`` raises ``IllegalAction(table_full)``
        when it needs a seat and none is free."""
        self.core.handle(command, self.clock.now())

    def add_viewer(self, viewer: Viewer, role: str) -> None:
        """Admit ``viewer``; ``IllegalAction(table_full)`` when it needs a seat and none is free."""
        self.seat(cmd.Join(viewer.player_id, role))
        self.viewers[viewer] = role

    def remove_viewer(self, viewer: Viewer) -> None:
        """The viewer left on purpose: the seat is free at once."""
        role = self.viewers.pop(viewer, None)
        if role is not None:
            self.seat(cmd.Leave(viewer.player_id, role))

    def drop_viewer(self, viewer: Viewer) -> None:
        """The connection dropped: the seat is held for the grace period. Bets stand."""
        role = self.viewers.pop(viewer, None)
        if role is not None:
            self.seat(cmd.Drop(viewer.player_id, role))

    def snapshot_data(self, player_id: str) -> dict[str, Any]:
        """The table as ``player_id`` sees it now (a snapshot's fields)."""
        return self.core.snapshot(player_id, self.clock.now())

    @property
    def finished(self) -> bool:
        """The table's life ended (stopped, handed over or closed), or its task did (a
        cluster node abandoned it)."""
        return self.core.finished or self._ended

    async def enter(
        self, viewer: Viewer, role: str, last_seq: int | None = None
    ) -> tuple[TableSnapshot, bool]:
        """Admit ``viewer`` (``IllegalAction(table_full)`` when it needs a seat and none is
        free); with ``last_seq`` (a resume) send it the events it missed first. The table
        as its player sees it now, and whether the missed events were all sent."""
        self.add_viewer(viewer, role)
        resumed = last_seq is not None and self.replay_since(viewer, last_seq)
        return self.snapshot(viewer.player_id), resumed

    def entered(self, viewer: Viewer) -> None:
        """The viewer's ``joined`` went out (nothing held back for it here)."""

    def replay_since(self, viewer: Viewer, last_seq: int) -> bool:
        """Send ``viewer`` every event after ``last_seq`` it may see; False if some of them are
        no longer kept or ``last_seq`` is not this run's (the caller then sends a snapshot)."""
        return self.history.replay_since(viewer, last_seq, self.core.seq)

    # --- commands -------------------------------------------------------------------------------

    async def submit(self, command: cmd.PlayCommand) -> TableReply:
        """Queue a player's command, as the edge built it; resolves when the table has
        handled it."""
        return await self.queue(command)

    def queue(self, command: cmd.PlayCommand) -> asyncio.Future[TableReply]:
        """Queue a player's command now, behind every command queued before it (the table
        takes each player's commands in the order queued): the future of its answer."""
        # A prompt: a connection's lane driven by ``eager_task`` answers the player in the
        # call that sets it (``_reply``), not a turn of the event loop later.
        future: Prompt[TableReply] = Prompt(loop=asyncio.get_running_loop())
        refusal: Refusal | None = None
        if not self.core.available or self.core.finished or self._ended:
            refusal = Refusal(TABLE_UNAVAILABLE, "this table is closed", self.id)
        elif (held := self.core.held) is not None:  # the table would take it after the hold
            refusal = Refusal(TABLE_HELD, f"the table is on hold: {held['reason']}", self.id)
        else:
            refusal = self.hooks.gate(command.kind, command.player_id)
        if refusal is not None:  # answered now
            future.set_result(TableReply(refusal))
            return future
        cid = next(self._cids)
        self._replies[cid] = future
        self._put(replace(command, cid=cid))
        return future

    def drain(self) -> None:
        """Finish the round in play and open no other (the table moves to another node)."""
        self._put(cmd.Drain())

    def stop(self) -> None:
        self._put(cmd.Stop())
        if self.stores.devices is not None:  # a round waiting for a device is voided
            self.stores.devices.stop()

    # --- the loop -------------------------------------------------------------------------------

    async def run(self, start_after: float = 0.0) -> None:
        """Play rounds until stopped or closed, the first after ``start_after`` seconds (the
        casino staggers its tables so they do not all change phase in the same instant)."""
        try:
            async with self._stepping:
                await self._perform(self.core.start(self.clock.now(), start_after))
            while not self.core.finished:
                command = await self._next()
                async with self._stepping:
                    await self._perform(self.core.handle(command, self.clock.now()))
        except Exception as exc:
            # A read between the core's steps failed (a balance for a reply, from a store
            # that went away): the table stops as a crash would, its round left open for
            # recovery, instead of dying unnoticed.
            for effect in self.core.crashed(f"{type(exc).__name__}: {exc}"):
                say(effect)
        finally:
            # Nothing takes a command any more: a command submitted from now on is answered
            # at once (a table abandoned by a cluster node is cancelled mid-round, with its
            # core neither finished nor closed: without this, its future waited for ever).
            self._ended = True
            for future in list(self._replies.values()):
                if not future.done():
                    future.set_result(
                        TableReply(Refusal(TABLE_UNAVAILABLE, "the table stopped", self.id))
                    )
            self._replies.clear()
            # Bets' writes still under way were answered by the core as it closed: their
            # results are not needed (what landed, recovery finds).
            for task in list(self._answering):
                task.cancel()
            for release in self._holds.values():
                release()
            self._holds.clear()

    def _put(self, command: cmd.Command) -> None:
        """Queue ``command`` for the table's loop, and wake the loop if it waits."""
        self._inbox.append(command)
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_result(None)

    async def _next(self) -> cmd.Command:
        """The next command from the inbox, or a tick when the core's deadline comes first.

        The loop waits on one future, which a command (``_put``) or the deadline's alarm
        completes: a bet reaches the core one turn of the event loop after it came. (A
        task for the inbox's ``get`` and one for the sleep, raced with ``asyncio.wait``,
        the loser cancelled and awaited, cost four or five turns — each as long as
        everything else a busy loop runs in it — before every command.)"""
        inbox = self._inbox
        if not inbox:
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiters.add(waiter)
            alarm = None
            if self._deadline is not None:
                alarm = asyncio.ensure_future(self._alarm(self._deadline, waiter))
            try:
                await waiter  # a cancellation of this task comes through here, as it is
            finally:
                self._waiters.discard(waiter)
                if alarm is not None:
                    alarm.cancel()  # not awaited: nothing waits on it, nothing is swallowed
            if not inbox:
                return cmd.Tick()
        return inbox.popleft()

    async def _alarm(self, deadline: float, waiter: asyncio.Future[None]) -> None:
        await self.clock.sleep_until(deadline)
        if not waiter.done():
            waiter.set_result(None)

    def _share(self, wait: fx.Wait) -> None:
        """Perform a bet's ``Wait`` on a task of its own, which hands the core its ``Done``.
        The task's first step runs now (``eager_task``): the writes reach the stores'
        writers in the order the core gave them (the journal's order is the engine's), in
        this turn of the event loop rather than the next. It cannot reach the core before
        this step ends: the core's driver holds ``_stepping`` until then."""
        self._holds[wait.wid] = hold_in_flight()
        task = eager_task(self._answer(wait))
        self._answering.add(task)
        task.add_done_callback(self._answering.discard)

    async def _answer(self, wait: fx.Wait) -> None:
        """Hand the core a bet's results as soon as they are in — not through the inbox,
        which would cost the acknowledgement a turn of a busy event loop — under the lock
        that gives the core one driver at a time. Only then is the bet no longer in flight."""
        try:
            results = await self._results(wait.effects)
            async with self._stepping:
                if self._ended:  # nobody takes the answer
                    return
                deadline = self._deadline
                self._posted.clear()
                self._took(results)
                done = cmd.Done(results, wait.wid)
                await self._perform(self.core.handle(done, self.clock.now()), fresh=False)
                if self._deadline != deadline or self.core.finished:
                    self._put(cmd.Tick())  # the loop waits on the new deadline
        finally:
            self._holds.pop(wait.wid, lambda: None)()

    async def _results(self, effects: Sequence[Any]) -> tuple[Any, ...]:
        if len(effects) == 1:
            return (await self.stores.result(effects[0]),)
        return await self.stores.results(tuple(effects))

    def _took(self, results: tuple[Any, ...]) -> None:
        for result in results:
            if type(result) is PostResult:
                self._posted.update(result.balances)

    async def _perform(self, effects: list[Any], *, fresh: bool = True) -> None:
        if fresh:
            self._posted.clear()  # only what this step posted is known to be current
        while True:
            wait = None
            unread = self._unread(effects)
            read = await self._read_balances(unread) if unread else {}
            for effect in effects:
                kind = type(effect)
                if kind is fx.Emit:
                    self._deliver(effect)
                elif kind is fx.Reply:
                    self._reply(effect)
                elif kind is fx.BalanceChanged:
                    self._balance_changed(effect.player_id, effect.reason, read)
                elif kind is fx.Deadline:
                    self._deadline = effect.at
                elif kind is fx.RoundFinished:
                    self.hooks.round_finished(STATUS[effect.status])
                    self.hooks.round_ended(effect.round_id, STATUS[effect.status])
                elif kind is fx.Wait:
                    if effect.shared:
                        self._share(effect)
                    else:
                        wait = effect
                elif kind is fx.Log:
                    say(effect)
            if wait is None:
                return
            if len(wait.effects) == 1:
                results = await self._results(wait.effects)
            else:  # counted as in flight until this task has the results (ManualClock)
                with in_flight():
                    results = await self._results(wait.effects)
            self._took(results)
            effects = self.core.handle(cmd.Done(results, wait.wid), self.clock.now())

    # --- out to viewers ---------------------------------------------------------------------------

    def _deliver(self, emit: fx.Emit) -> None:
        frame = encode(
            TableEvent(
                table=self.id, seq=emit.seq, round=emit.round_id, event=emit.name, data=emit.data
            )
        )
        self.history.append(emit.seq, frame, emit.audience)
        if self.hooks.published is not None:
            self.hooks.published(emit.seq, emit.audience, frame)
        if emit.audience is None:
            self.hooks.fanout(self.viewers, frame)
        else:
            self.hooks.fanout([v for v in self.viewers if v.player_id == emit.audience], frame)

    def _emit_raw(self, round_id: str, name: str, data: dict[str, Any], to: str | None) -> None:
        """An event injected outside the rounds (the fan-out benchmarks' paced load)."""
        self._deliver(self.core.event(round_id, name, data, to))

    def _reply(self, reply: fx.Reply) -> None:
        future = self._replies.pop(reply.cid, None)
        if future is None or future.done():
            return
        data = dict(reply.data or {})
        if reply.balance_of is not None:
            balance = self._balance(reply.balance_of)
            data["balance"] = balance
            # Each repeated bet shows the balance just after it (nothing else of this player's
            # can have moved while the table placed them one after another).
            for bet in reversed(data.get("bets", [])):
                bet["balance"] = balance
                balance += bet["amount"]
        future.set_result(TableReply(reply.refusal, data))

    def _balance(self, player_id: str) -> int:
        account = player_account(player_id)
        posted = self._posted.get(account)
        return self.ledger.balance(account) if posted is None else posted

    def _unread(self, effects: list[Any]) -> list[str]:
        """The accounts whose balance the step's balance frames need and its posts did not
        report (a lost wager: the stake left the player's account when the bet was
        placed)."""
        posted = self._posted
        return list(
            dict.fromkeys(
                account
                for effect in effects
                if type(effect) is fx.BalanceChanged
                and (account := player_account(effect.player_id)) not in posted
            )
        )

    async def _read_balances(self, accounts: list[str]) -> dict[str, int]:
        """``accounts``' balances, read before the step's frames go (in their order) and
        off the event loop: with a shared database each read is a round trip, and a
        settlement has one per losing player."""
        ledger = self.ledger
        return await self.stores.off_loop(lambda: {a: ledger.balance(a) for a in accounts})

    def _balance_changed(self, player_id: str, reason: str, read: Mapping[str, int]) -> None:
        account = player_account(player_id)
        balance = self._posted.get(account)
        self._send_balance(player_id, read[account] if balance is None else balance, reason)

    def _send_balance(self, player_id: str, balance: int, reason: str) -> None:
        frame = encode(BalanceChanged(balance=balance, reason=reason))
        if self.hooks.published is not None:
            self.hooks.published(None, player_id, frame)
        for viewer in list(self.viewers):
            if viewer.player_id == player_id:
                viewer.deliver(frame)
