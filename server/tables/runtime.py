"""One table: an asyncio task that owns the game engine and serialises everything it does.

Players' commands (place, cancel, repeat, decide) go through ``submit``: they queue up and
the table's task handles them one at a time, in order, between its own steps, so an engine
never sees two things at once. The task runs rounds: open betting for ``betting_seconds`` of
the injected clock, "no more bets", answer the engine's chance requests (journaling every card
and wheel result *before* the engine — and so any viewer — sees it), wait for decisions until
their deadlines, settle every wager through the ledger, pause, and again.

Every event gets the table's next sequence number and goes to each viewer that may see it
(``views``); the last ``history`` events are kept so a reconnecting viewer can resume.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

from rng.errors import RngError
from server.games.chance import CardRequest, SpinRequest
from server.games.errors import (
    BETTING_CLOSED,
    DUPLICATE_BET_ID,
    NO_DECISION_PENDING,
    GameError,
    IllegalAction,
)
from server.games.events import BetAccepted, CardDealt, RoundSettled, WagerSettled
from server.games.round import (
    DecidingEngine,
    DecisionRequest,
    Phase,
    RoundEngine,
    WheelEngine,
)
from server.games.wagers import Wager
from server.journal.journal import Journal, RoundStatus
from server.protocol.codec import encode
from server.protocol.messages import BalanceChanged, TableEvent, TableSnapshot
from server.tables.clock import Clock
from server.tables.games import GameTable, TableSettings
from server.tables.money import post_bet, post_cancel, post_settlement
from server.tables.views import audience, event_name, public_data
from server.wallet.ledger import HOUSE, InsufficientFunds, Ledger, Transfer, player_account

__all__ = ["Reply", "TableRuntime", "Viewer"]

log = logging.getLogger("croupier.table")

INSUFFICIENT_FUNDS = "insufficient_funds"
ROUND_NOT_OPEN = "round_not_open"
TABLE_UNAVAILABLE = "table_unavailable"


class Viewer(Protocol):
    """A connection watching a table. ``deliver`` must not block (it queues or drops)."""

    player_id: str

    def deliver(self, frame: bytes) -> None: ...


@dataclass
class Reply:
    """The table's answer to one command: ``error`` (code, message, value) or data."""

    error: tuple[str, str, Any] | None = None
    data: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Command:
    kind: str
    player_id: str
    args: dict[str, Any]
    future: asyncio.Future[Reply]


@dataclass
class _Logged:
    seq: int
    round_id: str
    frame: bytes
    audience: str | None


class TableRuntime:
    def __init__(
        self,
        settings: TableSettings,
        game: GameTable,
        ledger: Ledger,
        journal: Journal,
        clock: Clock,
        *,
        history: int = 1024,
        first_round: int = 1,
    ) -> None:
        self.settings = settings
        self.id = settings.id
        self.game = game
        self.ledger = ledger
        self.journal = journal
        self.clock = clock
        self.seq = 0
        self.round_number = first_round - 1
        self.round_id: str | None = None
        self.engine: RoundEngine | None = None
        self.closes_at: float | None = None
        self.decision: tuple[DecisionRequest, float] | None = None
        self.viewers: dict[Viewer, str] = {}
        self._held: dict[str, float] = {}  # dropped players' seats, held until then
        self.grace_seconds = 60.0
        self.last_results: deque[str] = deque(maxlen=20)
        self.cards: dict[str, list[str]] = {}
        self.available = True
        self._log: deque[_Logged] = deque(maxlen=history)
        self._inbox: asyncio.Queue[_Command] = asyncio.Queue()
        self._bets: dict[tuple[str, str], Wager] = {}  # this round's bets by (player, bet id)
        self._asked: dict[tuple[str, str], tuple[str, int]] = {}  # as the client sent them
        self._spent_ids: set[tuple[str, str]] = set()  # cancelled ids may not be reused
        self._previous_bets: dict[str, list[Wager]] = {}  # for "repeat", per player
        self._round_bets: dict[str, list[Wager]] = {}
        self._stop = asyncio.Event()
        self.on_balance: Callable[[str], None] | None = None

    # --- viewers -----------------------------------------------------------------------------

    @property
    def seated(self) -> set[str]:
        """Players holding a seat: connected, or dropped less than ``grace_seconds`` ago."""
        now = self.clock.now()
        for player, until in list(self._held.items()):
            if until <= now:
                del self._held[player]
        players = {v.player_id for v, role in self.viewers.items() if role == "player"}
        return players | set(self._held)

    def add_viewer(self, viewer: Viewer, role: str) -> None:
        self.viewers[viewer] = role
        self._held.pop(viewer.player_id, None)

    def remove_viewer(self, viewer: Viewer) -> None:
        """The viewer left on purpose: the seat is free at once."""
        self.viewers.pop(viewer, None)

    def drop_viewer(self, viewer: Viewer) -> None:
        """The connection dropped: hold the seat for ``grace_seconds``. Bets stand."""
        role = self.viewers.pop(viewer, None)
        if role == "player":
            self._held[viewer.player_id] = self.clock.now() + self.grace_seconds

    def replay_since(self, viewer: Viewer, last_seq: int) -> bool:
        """Send ``viewer`` every event after ``last_seq`` it may see; False if some of them are
        no longer kept (the caller then sends a snapshot)."""
        if last_seq > self.seq:
            return False
        if self._log and self._log[0].seq > last_seq + 1 and last_seq < self.seq:
            return False
        if not self._log and last_seq < self.seq:
            return False
        for item in self._log:
            if item.seq > last_seq and item.audience in (None, viewer.player_id):
                viewer.deliver(item.frame)
        return True

    def snapshot(self, player_id: str) -> TableSnapshot:
        pending = None
        if self.decision is not None and self.decision[0].player_id == player_id:
            request, deadline = self.decision
            pending = {
                "spot": request.spot,
                "options": list(request.options),
                "default": request.default,
                "closes_in_ms": max(0, int((deadline - self.clock.now()) * 1000)),
            }
        bets = [
            {"bet_id": w.bet_id, "spot": w.spot, "amount": w.amount}
            for (player, _), w in self._bets.items()
            if player == player_id
        ]
        return TableSnapshot(
            table=self.id,
            seq=self.seq,
            round=self.round_id,
            phase=self.phase,
            closes_in_ms=self.closes_in_ms,
            cards={k: list(v) for k, v in self.cards.items()},
            my_bets=bets,
            pending_decision=pending,
            meters={},
            last_results=list(self.last_results),
        )

    @property
    def phase(self) -> str:
        if not self.available:
            return "closed"
        if self.engine is None:
            return "waiting"
        return self.engine.phase.value

    @property
    def closes_in_ms(self) -> int | None:
        if self.closes_at is None or self.engine is None or self.engine.phase is not Phase.BETTING:
            return None
        return max(0, int((self.closes_at - self.clock.now()) * 1000))

    # --- commands from players ---------------------------------------------------------------

    async def submit(self, kind: str, player_id: str, **args: Any) -> Reply:
        """Queue a player's command; resolves when the table has handled it."""
        if not self.available:
            return Reply(error=(TABLE_UNAVAILABLE, "this table is closed", self.id))
        future: asyncio.Future[Reply] = asyncio.get_running_loop().create_future()
        await self._inbox.put(_Command(kind, player_id, args, future))
        return await future

    def _handle(self, command: _Command) -> Reply:
        handler = getattr(self, f"_cmd_{command.kind}")
        try:
            reply: Reply = handler(command.player_id, **command.args)
        except IllegalAction as exc:
            reply = Reply(error=(exc.code, exc.message, exc.value))
        return reply

    def _current(self, round_id: str) -> RoundEngine:
        if self.engine is None or round_id != self.round_id:
            raise IllegalAction(
                ROUND_NOT_OPEN, f"round {round_id} is not this table's current round", round_id
            )
        return self.engine

    def _cmd_place(
        self, player_id: str, round_id: str, bet_id: str, spot: str, amount: int
    ) -> Reply:
        engine = self._current(round_id)
        key = (player_id, bet_id)
        earlier = self._bets.get(key)
        if earlier is not None:
            if self._asked[key] == (spot, amount):
                # The same bet again: a retried message. Acknowledge, never charge twice.
                return self._bet_reply(earlier, retried=True)
            raise IllegalAction(
                DUPLICATE_BET_ID, f"bet {bet_id!r} was already placed with other terms", bet_id
            )
        if key in self._spent_ids:
            raise IllegalAction(
                DUPLICATE_BET_ID, f"bet id {bet_id!r} was used and cancelled", bet_id
            )
        if engine.phase is not Phase.BETTING:
            raise IllegalAction(BETTING_CLOSED, "no more bets", round_id)
        events = engine.place(Wager(bet_id, player_id, spot, amount))
        # The engine may canonicalise the spot ("split:20-17" → "split:17-20").
        accepted = next(e.wager for e in events if isinstance(e, BetAccepted))
        try:
            post_bet(self.ledger, round_id, accepted)
        except InsufficientFunds as exc:
            engine.cancel(player_id, bet_id)  # undo in the engine; nothing was broadcast
            raise IllegalAction(
                INSUFFICIENT_FUNDS, f"the balance {exc.balance} does not cover {amount}", amount
            ) from None
        self.journal.append(
            round_id,
            "bet",
            {"player": player_id, "bet_id": bet_id, "spot": accepted.spot, "amount": amount},
        )
        self.journal.note_player(round_id, player_id)
        self._bets[key] = accepted
        self._asked[key] = (spot, amount)
        self._round_bets.setdefault(player_id, []).append(accepted)
        self._emit(events)
        return self._bet_reply(accepted, retried=False)

    def _bet_reply(self, wager: Wager, *, retried: bool) -> Reply:
        balance = self.ledger.balance(player_account(wager.player_id))
        return Reply(
            data={
                "bet_id": wager.bet_id,
                "spot": wager.spot,
                "amount": wager.amount,
                "balance": balance,
                "retried": retried,
            }
        )

    def _cmd_cancel(self, player_id: str, round_id: str, bet_id: str) -> Reply:
        engine = self._current(round_id)
        wager = self._bets.get((player_id, bet_id))
        events = engine.cancel(player_id, bet_id)  # raises if unknown or too late
        assert wager is not None
        post_cancel(self.ledger, round_id, wager)
        self.journal.append(round_id, "cancel", {"player": player_id, "bet_id": bet_id})
        del self._bets[(player_id, bet_id)]
        self._spent_ids.add((player_id, bet_id))
        self._round_bets[player_id].remove(wager)
        self._emit(events)
        balance = self.ledger.balance(player_account(player_id))
        return Reply(data={"bet_id": bet_id, "balance": balance})

    def _cmd_repeat(self, player_id: str, round_id: str, prefix: str) -> Reply:
        self._current(round_id)
        previous = self._previous_bets.get(player_id, [])
        if not previous:
            raise IllegalAction("nothing_to_repeat", "no bets in your previous round", None)
        placed = []
        for n, wager in enumerate(previous, 1):
            reply = self._cmd_place(player_id, round_id, f"{prefix}-{n}", wager.spot, wager.amount)
            placed.append(reply.data)
        return Reply(data={"bets": placed})

    def _cmd_decide(self, player_id: str, round_id: str, spot: str, decision: str) -> Reply:
        engine = self._current(round_id)
        if self.decision is None or self.decision[0].player_id != player_id:
            raise IllegalAction(NO_DECISION_PENDING, "the table is not waiting for you", None)
        events = cast(DecidingEngine, engine).decide(player_id, spot, decision)
        self.journal.append(
            round_id, "decision", {"player": player_id, "spot": spot, "decision": decision}
        )
        self.decision = None
        self._emit(events)
        return Reply(data={"decision": decision})

    # --- the round loop ----------------------------------------------------------------------

    async def run(self) -> None:
        """Play rounds until ``stop``."""
        while not self._stop.is_set() and self.available:
            try:
                await self._play_round()
            except RngError:
                log.exception("table %s: the random number generator failed; table closed", self.id)
                self._void_current("random number generator failure")
                self.available = False
                break
            await self._serve_until(self.clock.now() + self.settings.pause_seconds)
        self._refuse_queued()

    def stop(self) -> None:
        self._stop.set()

    async def _serve_until(self, deadline: float, until: Callable[[], bool] | None = None) -> None:
        """Handle commands as they come until ``deadline`` (or ``until()`` turns true)."""
        while not self._stop.is_set() and self.clock.now() < deadline:
            if until is not None and until():
                return
            get = asyncio.ensure_future(self._inbox.get())
            sleep = asyncio.ensure_future(self.clock.sleep_until(deadline))
            stop = asyncio.ensure_future(self._stop.wait())
            done, pending = await asyncio.wait(
                {get, sleep, stop}, return_when=asyncio.FIRST_COMPLETED
            )
            for task in pending:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            if get in done:
                command = get.result()
                command.future.set_result(self._handle(command))

    def _refuse_queued(self) -> None:
        while not self._inbox.empty():
            command = self._inbox.get_nowait()
            command.future.set_result(
                Reply(error=(TABLE_UNAVAILABLE, "the table stopped", self.id))
            )

    def _next_round_id(self) -> str:
        self.round_number += 1
        return f"{self.id}.{self.round_number}"

    async def _play_round(self) -> None:
        round_id = self._next_round_id()
        shoe = self.game.start_round()
        engine = self.game.new_round(round_id)
        self.journal.open_round(
            self.id,
            round_id,
            {"game": self.game.game, "variant": self.game.variant, "shoe": shoe},
        )
        self.round_id, self.engine = round_id, engine
        self._bets, self._asked, self._spent_ids, self._round_bets = {}, {}, set(), {}
        self.cards = {}
        if shoe is not None:
            self._emit_raw(
                round_id,
                "shoe_shuffled",
                {k: v for k, v in shoe.items() if k != "burned"} | {"burned": len(shoe["burned"])},
                None,
            )
        self._emit(engine.open())
        self.closes_at = self.clock.now() + self.settings.betting_seconds
        await self._serve_until(self.closes_at)
        if self._stop.is_set():
            self._void_current("the table was stopped")
            return
        self.journal.append(round_id, "closed", {})
        self._emit(engine.close_betting())
        try:
            await self._deal(round_id, engine)
        except GameError as exc:
            log.error("table %s round %s: %s; round voided", self.id, round_id, exc)
            self._void_current(f"irregularity: {exc}")
            return
        if engine.phase is Phase.SETTLED:
            self.journal.finish_round(
                round_id,
                RoundStatus.SETTLED,
                {"result": self.last_results[-1] if self.last_results else ""},
            )
            self._previous_bets = {p: list(ws) for p, ws in self._round_bets.items() if ws}

    async def _deal(self, round_id: str, engine: RoundEngine) -> None:
        while (request := engine.pending()) is not None:
            if isinstance(request, CardRequest):
                draw = self.game.deal_card()
                self.journal.append(
                    round_id,
                    "card",
                    {
                        "card": draw.card.code,
                        "target": request.target,
                        "seq": draw.seq,
                        "bound": draw.bound,
                        "value": draw.value,
                    },
                )
                self._emit(engine.provide_card(draw.card))
            elif isinstance(request, SpinRequest):
                value, record = self.game.spin()
                self.journal.append(round_id, "spin", record)
                self._emit(cast(WheelEngine, engine).provide_spin(value))
            elif isinstance(request, DecisionRequest):
                await self._await_decision(round_id, engine, request)
            else:
                raise TypeError(f"table {self.id} cannot answer {request!r}")

    async def _await_decision(
        self, round_id: str, engine: RoundEngine, request: DecisionRequest
    ) -> None:
        deadline = self.clock.now() + self.settings.decision_seconds
        self.decision = (request, deadline)
        self._emit_raw(
            round_id,
            "decision_requested",
            {
                "player_id": request.player_id,
                "spot": request.spot,
                "options": list(request.options),
                "default": request.default,
                "closes_in_ms": int(self.settings.decision_seconds * 1000),
            },
            None,
        )
        await self._serve_until(deadline, until=lambda: self.decision is None)
        if self.decision is not None:
            self.decision = None
            self.journal.append(round_id, "timeout", {"player": request.player_id})
            self._emit(cast(DecidingEngine, engine).time_out(request.player_id))

    def _void_current(self, reason: str) -> None:
        engine, round_id = self.engine, self.round_id
        if engine is None or round_id is None or engine.phase in (Phase.SETTLED, Phase.VOIDED):
            return
        self._emit(engine.void(reason))
        self.journal.finish_round(round_id, RoundStatus.VOIDED, {"reason": reason})

    # --- events out --------------------------------------------------------------------------

    def _emit(self, events: Iterable[object]) -> None:
        round_id = self.round_id or ""
        for event in events:
            if isinstance(event, WagerSettled):
                post_settlement(self.ledger, round_id, event.settlement)
            award = (
                getattr(event, "amount", None)
                if event_name(event) == "progressive_awarded"
                else None
            )
            if isinstance(award, int) and award > 0:
                e: Any = event
                self.ledger.post(
                    f"award:{round_id}:{e.player_id}:{e.bet_id}:{e.meter}",
                    [
                        Transfer(
                            HOUSE,
                            player_account(e.player_id),
                            award,
                            "progressive",
                            round_id,
                            e.bet_id,
                        )
                    ],
                )
            if isinstance(event, CardDealt) and event.face_up:
                self.cards.setdefault(event.target, []).append(event.card.code)
            if isinstance(event, RoundSettled):
                self.last_results.append(event.result)
            self._emit_raw(round_id, event_name(event), public_data(event), audience(event))
            if isinstance(event, WagerSettled):
                self._balance_changed(event.settlement.wager.player_id, "settlement")

    def _emit_raw(self, round_id: str, name: str, data: dict[str, Any], to: str | None) -> None:
        self.seq += 1
        frame = encode(
            TableEvent(table=self.id, seq=self.seq, round=round_id, event=name, data=data)
        )
        self._log.append(_Logged(self.seq, round_id, frame, to))
        for viewer in list(self.viewers):
            if to is None or viewer.player_id == to:
                viewer.deliver(frame)

    def _balance_changed(self, player_id: str, reason: str) -> None:
        balance = self.ledger.balance(player_account(player_id))
        frame = encode(BalanceChanged(balance=balance, reason=reason))
        for viewer in list(self.viewers):
            if viewer.player_id == player_id:
                viewer.deliver(frame)
