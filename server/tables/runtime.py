"""One table: an asyncio task that owns the game engine and serialises everything it does.

Players' commands (place, cancel, repeat, decide) go through ``submit``: they queue up and
the table's task handles them one at a time, in order, between its own steps, so an engine
never sees two things at once. The task runs rounds: open betting for ``betting_seconds`` of
the injected clock, "no more bets", answer the engine's chance requests (journaling every card
and wheel result *before* the engine — and so any viewer — sees it), wait for decisions until
their deadlines, settle every wager through the ledger, pause, and again.

Every write to the ledger and the journal is awaited (``apost``, ``aappend`` ...): it is made
by the store's writer thread with group commit, so the event loop — and every other table —
goes on while it reaches the disk, and this table acknowledges a bet once its debit *and* its
journal record are durable (written at the same time, by the two writers) and reveals a card
only once it is journaled. A write that fails (``StorageError``) refuses the command that
needed it when nothing had changed yet (the bet is not placed, no money moved); when the
table had already changed, the table closes as a crash would leave it, and the next start's
recovery completes or voids its open round.

Every event gets the table's next sequence number and goes to each viewer that may see it
(``views``); the last ``history`` events are kept so a reconnecting viewer can resume.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

from rng.cards import Card
from rng.errors import RngError
from server.games.chance import CardRequest, HoleRangeRequest, MysteryHitRequest, SpinRequest
from server.games.errors import (
    BETTING_CLOSED,
    DUPLICATE_BET_ID,
    NO_DECISION_PENDING,
    GameError,
    IllegalAction,
    InvariantViolation,
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
from server.storage import StorageError, wait_durable
from server.tables.clock import Clock
from server.tables.games import GameTable, TableSettings
from server.tables.money import apost_bet, apost_cancel, apost_settlement
from server.tables.views import audience, event_name, public_data
from server.wallet.ledger import (
    HOUSE,
    InsufficientFunds,
    Ledger,
    LedgerError,
    Transfer,
    player_account,
)

__all__ = [
    "SEQ_BLOCK",
    "Fanout",
    "Reply",
    "TableRuntime",
    "Viewer",
    "allocate_epoch",
    "deliver_each",
    "next_epoch",
]

log = logging.getLogger("croupier.table")

INSUFFICIENT_FUNDS = "insufficient_funds"
NOT_YOUR_BOX = "not_your_box"
ROUND_NOT_OPEN = "round_not_open"
STORAGE_FAILED = "storage_failed"
BET_REFUSED = "bet_refused"  # journal: the bet recorded just before never stood
# Events per epoch's block of sequence numbers (see ``TableRuntime.epoch``). A table that
# used half of its block starts a new epoch at its next round; 2^32 keeps seq an exact
# JavaScript number for 2^21 epochs.
SEQ_BLOCK = 2**32
TABLE_UNAVAILABLE = "table_unavailable"


class Viewer(Protocol):
    """A connection watching a table. ``deliver`` must not block (it queues or drops)."""

    player_id: str

    def deliver(self, frame: bytes) -> None: ...


Fanout = Callable[[Iterable[Any], bytes], int]


def deliver_each(viewers: Iterable[Viewer], frame: bytes) -> int:
    """The plain fan-out: ``deliver`` to each viewer. The server installs a faster one that
    frames the message once (``server.net.fanout``)."""
    count = 0
    for viewer in viewers:
        viewer.deliver(frame)
        count += 1
    return count


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


def next_epoch(journal: Journal, table_id: str) -> int:
    """The epoch of the table's next run, made durable before it returns (the server calls
    it once per table at start, before any event): one more than the last run's; 1 for a
    table whose journal predates epochs, 0 for a new one."""
    saved = journal.load_state(table_id, "epoch")
    if saved is not None:
        epoch = int(saved["epoch"]) + 1
    else:
        epoch = 0 if journal.last_round(table_id) is None else 1
    journal.save_state(table_id, "epoch", {"epoch": epoch})
    return epoch


async def allocate_epoch(journal: Journal, table_id: str, current: int) -> int:
    """A new epoch for a table whose block of sequence numbers is half used."""
    await journal.asave_state(table_id, "epoch", {"epoch": current + 1})
    return current + 1


def _storage_failed(exc: StorageError) -> Reply:
    return Reply(error=(STORAGE_FAILED, f"not recorded, nothing was charged: {exc}", None))


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
        epoch: int = 0,
    ) -> None:
        self.settings = settings
        self.id = settings.id
        self.game = game
        self.ledger = ledger
        self.journal = journal
        self.clock = clock
        # Sequence numbers never repeat, across restarts too: each run of the table (an
        # epoch, counted durably in the journal by ``allocate_epoch``) numbers its events
        # from its own block, epoch × SEQ_BLOCK. A client resuming with a seq of an earlier
        # run is thus always recognised, and gets a snapshot instead of a silent gap.
        self.epoch = epoch
        self.seq = epoch * SEQ_BLOCK
        self.round_number = first_round - 1
        self.round_id: str | None = None
        self.engine: RoundEngine | None = None
        self.closes_at: float | None = None
        # Decisions awaited now, each with its deadline: (player, spot) -> (request, deadline).
        self.decisions: dict[tuple[str, str], tuple[DecisionRequest, float]] = {}
        self._decided = asyncio.Event()
        self._hole: Card | None = None  # the face-down card, for the virtual hole-card reader
        self.seat_of: dict[str, int] = {}  # a seated player's seat number (a betting box)
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
        self._bet_records: list[asyncio.Future[int]] = []  # journal records on the way to disk
        self._stop = asyncio.Event()
        self.fanout: Fanout = deliver_each
        self.round_finished: Callable[[RoundStatus], object] = lambda status: None  # metrics

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
        if role == "player":
            player = viewer.player_id
            taken = {self.seat_of[p] for p in self.seated if p in self.seat_of and p != player}
            if self.seat_of.get(player) in (None, *taken):
                self.seat_of[player] = next(
                    n for n in range(1, self.settings.seats + 2) if n not in taken
                )

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
        for (player, _), (request, deadline) in self.decisions.items():
            if player == player_id:
                pending = {
                    "spot": request.spot,
                    "options": list(request.options),
                    "default": request.default,
                    "closes_in_ms": max(0, int((deadline - self.clock.now()) * 1000)),
                }
                break
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
            meters=self.game.meter_amounts(),
            last_results=list(self.last_results),
            seat=self.seat_of.get(player_id),
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

    async def _handle(self, command: _Command) -> Reply:
        handler = getattr(self, f"_cmd_{command.kind}")
        try:
            reply: Reply = await handler(command.player_id, **command.args)
        except IllegalAction as exc:
            reply = Reply(error=(exc.code, exc.message, exc.value))
        except StorageError as exc:  # the table had changed: it closes (``run``)
            message = f"not recorded ({exc}); the table is closed until its round is recovered"
            command.future.set_result(Reply(error=(STORAGE_FAILED, message, self.id)))
            raise
        except BaseException:
            command.future.set_result(
                Reply(error=(TABLE_UNAVAILABLE, "the table failed and is closed", self.id))
            )
            raise
        return reply

    def _current(self, round_id: str) -> RoundEngine:
        if self.engine is None or round_id != self.round_id:
            raise IllegalAction(
                ROUND_NOT_OPEN, f"round {round_id} is not this table's current round", round_id
            )
        return self.engine

    async def _cmd_place(
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
        if self.game.boxed:
            seat = self.seat_of.get(player_id)
            if seat is None or not spot.endswith(f":{seat}"):
                raise IllegalAction(
                    NOT_YOUR_BOX, f"bet in your own box, {seat} (kind:{seat})", spot
                )
        if key in self._spent_ids:
            raise IllegalAction(
                DUPLICATE_BET_ID, f"bet id {bet_id!r} was used and cancelled", bet_id
            )
        if engine.phase is not Phase.BETTING:
            raise IllegalAction(BETTING_CLOSED, "no more bets", round_id)
        self._check_bet_records()
        events = engine.place(Wager(bet_id, player_id, spot, amount))
        # The engine may canonicalise the spot ("split:20-17" → "split:17-20").
        accepted = next(e.wager for e in events if isinstance(e, BetAccepted))
        # The bet's journal record and its debit are written at the same time, by the
        # journal's and the ledger's writers, and the bet is acknowledged once *both* are
        # durable: every acknowledged bet is in the round's journal (the audit record, game
        # recall's source) and in the ledger. Queued now, the record keeps its place ahead
        # of everything later in the round.
        record = self.journal.append_queued(
            round_id,
            "bet",
            {"player": player_id, "bet_id": bet_id, "spot": accepted.spot, "amount": amount},
            player=player_id,
        )
        try:
            await apost_bet(self.ledger, round_id, accepted)
        except (InsufficientFunds, StorageError) as exc:  # nothing was debited
            engine.cancel(player_id, bet_id)  # undo in the engine; nothing was broadcast
            # The journal says the bet never stood (replay skips it); "no more bets" waits
            # for both records.
            self._bet_records += [
                record,
                self.journal.append_queued(
                    round_id, BET_REFUSED, {"player": player_id, "bet_id": bet_id}
                ),
            ]
            if isinstance(exc, StorageError):
                return _storage_failed(exc)
            raise IllegalAction(
                INSUFFICIENT_FUNDS, f"the balance {exc.balance} does not cover {amount}", amount
            ) from None
        (written,) = await wait_durable([record])
        if isinstance(written, BaseException):
            # Debited but not journaled: the bet is not acknowledged, and its round can only
            # be voided. The table closes (``_handle``, ``run``); recovery at the next start
            # returns the debit with every other wager of the round.
            raise StorageError(f"the bet could not be journaled: {written}")
        self._bets[key] = accepted
        self._asked[key] = (spot, amount)
        self._round_bets.setdefault(player_id, []).append(accepted)
        await self._emit(events)
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

    async def _cmd_cancel(self, player_id: str, round_id: str, bet_id: str) -> Reply:
        engine = self._current(round_id)
        wager = self._bets.get((player_id, bet_id))
        events = engine.cancel(player_id, bet_id)  # raises if unknown or too late
        assert wager is not None
        await apost_cancel(self.ledger, round_id, wager)
        await self.journal.aappend(round_id, "cancel", {"player": player_id, "bet_id": bet_id})
        del self._bets[(player_id, bet_id)]
        self._spent_ids.add((player_id, bet_id))
        self._round_bets[player_id].remove(wager)
        await self._emit(events)
        balance = self.ledger.balance(player_account(player_id))
        return Reply(data={"bet_id": bet_id, "balance": balance})

    async def _cmd_repeat(self, player_id: str, round_id: str, prefix: str) -> Reply:
        self._current(round_id)
        previous = self._previous_bets.get(player_id, [])
        if not previous:
            raise IllegalAction("nothing_to_repeat", "no bets in your previous round", None)
        placed: list[dict[str, Any]] = []
        for n, wager in enumerate(previous, 1):
            try:
                reply = await self._cmd_place(
                    player_id, round_id, f"{prefix}-{n}", wager.spot, wager.amount
                )
            except IllegalAction as exc:
                reply = Reply(error=(exc.code, exc.message, exc.value))
            if reply.error is not None:
                if placed:  # the bets before it stand: say which
                    code, message, value = reply.error
                    stand = ", ".join(str(p["bet_id"]) for p in placed)
                    return Reply(error=(code, f"{message}; placed and standing: {stand}", value))
                return reply
            placed.append(reply.data)
        return Reply(data={"bets": placed})

    async def _cmd_decide(self, player_id: str, round_id: str, spot: str, decision: str) -> Reply:
        engine = cast(DecidingEngine, self._current(round_id))
        if (player_id, spot) not in self.decisions:
            raise IllegalAction(NO_DECISION_PENDING, "the table is not waiting for you", spot)
        stake = engine.stake_of(player_id, spot, decision)  # raises if not an option
        # What the balance will be once the debits on their way to disk (this player's bets
        # at other tables) are durable: the debit below must not be refused.
        balance = self.ledger.available(player_account(player_id))
        if stake > balance:
            raise IllegalAction(
                INSUFFICIENT_FUNDS, f"the balance {balance} does not cover {stake}", stake
            )
        events = engine.decide(player_id, spot, decision)
        added = False
        for event in events:  # wagers the decision adds (a War Wager, a Double Down ...)
            if isinstance(event, BetAccepted):
                await apost_bet(self.ledger, round_id, event.wager)
                added = True
        await self.journal.aappend(
            round_id, "decision", {"player": player_id, "spot": spot, "decision": decision}
        )
        # Answered: a further decision on the same hand (another hit) is a new request.
        del self.decisions[(player_id, spot)]
        await self._emit(events)
        if added:
            self._balance_changed(player_id, "decision")
        self._decided.set()
        return Reply(data={"decision": decision})

    # --- the round loop ----------------------------------------------------------------------

    async def run(self, start_after: float = 0.0) -> None:
        """Play rounds until ``stop``, the first after ``start_after`` seconds (the casino
        staggers its tables so that they do not all change phase in the same instant)."""
        if start_after > 0:
            await self._serve_until(self.clock.now() + start_after)
        while not self._stop.is_set() and self.available:
            try:
                await self._play_round()
            except RngError:
                log.exception("table %s: the random number generator failed; table closed", self.id)
                self.available = False
                await self._void_current("random number generator failure")
                break
            except (StorageError, LedgerError):
                # As a crash would: the round stays open in the journal, and the next start's
                # recovery completes or voids it and returns every wager it still holds.
                log.critical(
                    "table %s: the ledger or journal could not be written; table closed, "
                    "round %s left for recovery at the next start",
                    self.id,
                    self.round_id,
                    exc_info=True,
                )
                self.available = False
                break
            except Exception:
                # Our own failure (a broken invariant, a journal that refuses the round):
                # never die silently with the table still counted as running. The round
                # stays open for recovery at the next start, as after a crash.
                log.critical(
                    "table %s failed; table closed, round %s left for recovery at the next start",
                    self.id,
                    self.round_id,
                    exc_info=True,
                )
                self.available = False
                break
            await self._serve_until(self.clock.now() + self.settings.pause_seconds)
        self._forget_bet_records()
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
                reply = await self._handle(command)
                command.future.set_result(reply)

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
        try:
            await self._run_round()
        finally:
            if self.available:
                await self._save_meters()

    async def _save_meters(self) -> None:
        """Persist the progressive meters after every round, and show players the amounts."""
        state = self.game.meter_state()
        if state is not None:
            await self.journal.asave_state(self.id, "meters", state)
            if self.round_id is not None:
                self._emit_raw(self.round_id, "meters", self.game.meter_amounts(), None)

    async def _run_round(self) -> None:
        if self.seq - self.epoch * SEQ_BLOCK >= SEQ_BLOCK // 2:
            self.epoch = await allocate_epoch(self.journal, self.id, self.epoch)
            self.seq = self.epoch * SEQ_BLOCK
        round_id = self._next_round_id()
        shoe = self.game.start_round()
        engine = self.game.new_round(round_id)
        await self.journal.aopen_round(
            self.id,
            round_id,
            {"game": self.game.game, "variant": self.game.variant, "shoe": shoe},
        )
        self.round_id, self.engine = round_id, engine
        self._bets, self._asked, self._spent_ids, self._round_bets = {}, {}, set(), {}
        self._bet_records = []
        self.cards = {}
        if shoe is not None:
            self._emit_raw(
                round_id,
                "shoe_shuffled",
                {k: v for k, v in shoe.items() if k != "burned"} | {"burned": len(shoe["burned"])},
                None,
            )
        await self._emit(engine.open())
        self.closes_at = self.clock.now() + self.settings.betting_seconds
        await self._serve_until(self.closes_at)
        if self._stop.is_set():
            await self._void_current("the table was stopped")
            return
        await self._bets_journaled()
        await self.journal.aappend(round_id, "closed", {})
        await self._emit(engine.close_betting())
        try:
            await self._deal(round_id, engine)
        except GameError as exc:
            log.error("table %s round %s: %s; round voided", self.id, round_id, exc)
            await self._void_current(f"irregularity: {exc}")
            return
        finally:
            self.decisions = {}
        if engine.phase is Phase.SETTLED:
            await self.journal.afinish_round(
                round_id,
                RoundStatus.SETTLED,
                {"result": self.last_results[-1] if self.last_results else ""},
            )
            self.round_finished(RoundStatus.SETTLED)
            self._previous_bets = {p: list(ws) for p, ws in self._round_bets.items() if ws}

    async def _deal(self, round_id: str, engine: RoundEngine) -> None:
        self.decisions, self._hole = {}, None
        while (request := engine.pending()) is not None:
            if isinstance(request, CardRequest):
                draw = self.game.deal_card()
                if not request.face_up and request.target == "dealer":
                    self._hole = draw.card
                await self.journal.aappend(
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
                await self._emit(engine.provide_card(draw.card))
            elif isinstance(request, SpinRequest):
                value, record = self.game.spin()
                await self.journal.aappend(round_id, "spin", record)
                await self._emit(cast(WheelEngine, engine).provide_spin(value))
            elif isinstance(request, MysteryHitRequest):
                # 631b.6(c)(3): journaled before it takes effect, like a card; no event
                # carries it, so no client ever learns it.
                value, record = cast(Any, self.game).draw_mystery_hit(request)
                await self.journal.aappend(round_id, "mystery_hit", record)
                await self._emit(cast(Any, engine).provide_mystery_hit(value))
            elif isinstance(request, HoleRangeRequest):
                if self._hole is None:
                    raise InvariantViolation("the hole-card reader was asked before a hole card")
                value, record = cast(Any, self.game).read_hole(self._hole)
                await self.journal.aappend(round_id, "hole_range", record)
                await self._emit(cast(Any, engine).provide_hole_range(value))
            elif isinstance(request, DecisionRequest):
                await self._await_decisions(round_id, cast(DecidingEngine, engine))
            else:
                raise TypeError(f"table {self.id} cannot answer {request!r}")

    async def _await_decisions(self, round_id: str, engine: DecidingEngine) -> None:
        """Wait for every decision the engine awaits now (several players may decide at
        once, e.g. each tie hand in Casino War), each until its own deadline; a player who
        lets it pass gets the option that places no further money (the engine's time-out)."""
        awaited = getattr(engine, "decisions_awaited", None)
        requests = tuple(awaited) if awaited is not None else (engine.pending(),)
        now = self.clock.now()
        live = {}
        for request in requests:
            if not isinstance(request, DecisionRequest):
                continue
            key = (request.player_id, request.spot)
            if key in self.decisions:
                live[key] = self.decisions[key]
                continue
            deadline = now + self.settings.decision_seconds
            live[key] = (request, deadline)
            # The engine announced the request (decision_requested); the table adds when it
            # closes, so every viewer can show the countdown.
            self._emit_raw(
                round_id,
                "decision_deadline",
                {"player_id": request.player_id, "spot": request.spot,
                 "closes_in_ms": int(self.settings.decision_seconds * 1000)},
                None,
            )  # fmt: skip
        self.decisions = live
        if not live:
            return
        earliest = min(deadline for _, deadline in live.values())
        self._decided.clear()
        await self._serve_until(earliest, until=self._decided.is_set)
        if self.clock.now() >= earliest and self.engine is engine:
            late = sorted({player for (player, _), (_, d) in live.items() if d <= self.clock.now()})
            for player in late:
                if engine.phase is not Phase.DECIDING:
                    break
                await self.journal.aappend(round_id, "timeout", {"player": player})
                await self._emit(engine.time_out(player))

    async def _void_current(self, reason: str) -> None:
        engine, round_id = self.engine, self.round_id
        if engine is None or round_id is None or engine.phase in (Phase.SETTLED, Phase.VOIDED):
            return
        await self._bets_journaled()
        await self._emit(engine.void(reason))
        await self.journal.afinish_round(round_id, RoundStatus.VOIDED, {"reason": reason})
        self.round_finished(RoundStatus.VOIDED)

    # --- events out --------------------------------------------------------------------------

    async def _bets_journaled(self) -> None:
        """Wait until every bet record of the round is durable; raise ``StorageError`` (the
        table closes: ``run``) if one could not be written."""
        records, self._bet_records = self._bet_records, []
        failures = [r for r in await wait_durable(records) if isinstance(r, BaseException)]
        if failures:
            raise failures[0]

    def _check_bet_records(self) -> None:
        """Raise ``StorageError`` (the table closes) as soon as a bet record of the round has
        failed: its round can only be voided, so no further bet is taken into it."""
        for record in self._bet_records:
            if record.done() and not record.cancelled() and record.exception() is not None:
                raise StorageError("a bet of this round could not be journaled")

    def _forget_bet_records(self) -> None:
        """The table stops without waiting for them: mark their outcome as seen (a failure
        is the reason it stopped, or recovery's business)."""
        for record in self._bet_records:
            record.add_done_callback(lambda f: f.cancelled() or f.exception())
        self._bet_records = []

    async def _emit(self, events: Iterable[object]) -> None:
        """Post the money the events move — every settlement and award of the step at once,
        so they share a group commit — and once it is durable, send the events."""
        round_id = self.round_id or ""
        events = list(events)
        posts: list[Awaitable[object]] = []
        for event in events:
            if isinstance(event, WagerSettled):
                posts.append(apost_settlement(self.ledger, round_id, event.settlement))
            award = (
                getattr(event, "amount", None)
                if event_name(event) == "progressive_awarded"
                else None
            )
            if isinstance(award, int) and award > 0:
                e: Any = event
                posts.append(
                    self.ledger.apost(
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
                )
        if posts:
            await asyncio.gather(*posts)
        for event in events:
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
        if to is None:
            self.fanout(self.viewers, frame)
        else:
            self.fanout([v for v in self.viewers if v.player_id == to], frame)

    def _balance_changed(self, player_id: str, reason: str) -> None:
        balance = self.ledger.balance(player_account(player_id))
        frame = encode(BalanceChanged(balance=balance, reason=reason))
        for viewer in list(self.viewers):
            if viewer.player_id == player_id:
                viewer.deliver(frame)
