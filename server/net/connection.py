"""One WebSocket connection: hello, then requests, each answered or refused with a code.

Bad input never reaches a table: frames are decoded and validated first (``codec``), a
connection that sends faster than ``rate`` messages a second is refused with
``rate_limited``, and one that floods (several times the limit) is closed with 4008. A
viewer whose outgoing buffer passes ``max_backlog`` bytes is too slow to follow the table:
it is disconnected with 4009 and may resume from its last sequence number.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import time
import weakref
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import msgspec
from websockets.protocol import State

from server.core import commands as cmd
from server.games.errors import IllegalAction, Refusal
from server.net.fanout import ws_binary_frame
from server.net.metrics import Metrics
from server.net.reader import FrameConnection
from server.protocol.codec import ProtocolError, decode_client, encode
from server.protocol.messages import (
    PROTOCOL_VERSION,
    AttendantAction,
    BetAccepted,
    BetCancelled,
    CallAttendant,
    CancelBet,
    CashOut,
    ClientMessage,
    Decide,
    ErrorMessage,
    GetRecall,
    GetRules,
    Hello,
    Join,
    Joined,
    Leave,
    Left,
    ListTables,
    Ping,
    PlaceBet,
    Pong,
    Recall,
    RepeatBets,
    Resume,
    ServerMessage,
    Welcome,
)
from server.stations.service import StationRefused, Stations
from server.tables.door import TableDoor
from server.tables.eager import eager_task
from server.tables.floor import Floor
from server.tables.players import AuthError, Player
from server.tables.runtime import TableReply

__all__ = ["ConnectionLimits", "serve_connection"]

log = logging.getLogger("croupier.net")

CLOSE_FLOOD = 4008
CLOSE_TOO_SLOW = 4009
CLOSE_NO_HELLO = 4001
CLOSE_INTERNAL_ERROR = 1011  # our bug, while reading a message


@dataclass(frozen=True)
class ConnectionLimits:
    rate: float = 30.0  # messages per second, sustained
    burst: float = 60.0
    flood_factor: float = 4.0  # refused messages beyond burst × this: close the connection
    max_backlog: int = 1 << 20  # bytes waiting in the outgoing buffer
    hello_timeout: float = 10.0


class _Viewer:
    """What a table sees of this connection."""

    def __init__(self, session: _Session) -> None:
        self.session = session
        self.player_id = session.player.player_id if session.player else ""

    def deliver(self, frame: bytes) -> None:
        self.session.send_frame(frame)

    def write_wire(self, wire: bytes) -> bool:
        return self.session.write_wire(wire)


class _Outbox:
    """The connections with frames to write at the end of this turn of the event loop. A
    table event is encoded and framed once (``fanout``); a connection that takes several in
    one turn (a baccarat hand deals its cards in one step, a viewer watches several tables)
    gets them in one ``transport.write``, one system call instead of one a frame."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._sessions: list[_Session] = []

    def add(self, session: _Session) -> None:
        if not self._sessions:
            self._loop.call_soon(self._flush)
        self._sessions.append(session)

    def _flush(self) -> None:
        sessions, self._sessions = self._sessions, []
        for session in sessions:
            session.flush()


_OUTBOXES: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Outbox] = (
    weakref.WeakKeyDictionary()
)


def _outbox() -> _Outbox:
    """The running loop's outbox (one per loop: a test's loops never share one)."""
    loop = asyncio.get_running_loop()
    outbox = _OUTBOXES.get(loop)
    if outbox is None:
        outbox = _OUTBOXES[loop] = _Outbox(loop)
    return outbox


class _Session:
    def __init__(
        self, ws: FrameConnection, floor: Floor, metrics: Metrics, limits: ConnectionLimits
    ) -> None:
        self.ws = ws
        # websockets' ``state`` and ``transport`` are properties of the connection, read for
        # every frame sent: the objects behind them, kept (py-spy put 5.7% of a node's samples
        # in the two at 50,000 frames/s; a same-run comparison measured about 1% of its CPU).
        self._protocol = ws.protocol
        self._transport = ws.transport
        self.floor = floor
        self.metrics = metrics
        self.limits = limits
        self.player: Player | None = None
        self.viewers: dict[str, _Viewer] = {}
        self.tokens = limits.burst
        self.last_refill = asyncio.get_running_loop().time()
        self.refused = 0.0
        self.closing = False
        self.close_code, self.close_reason = 1000, ""
        self._closer: asyncio.Task[None] | None = None
        self.last_error = ""  # the code of the last error reply
        # Each table's commands from this connection, in the order sent: the last one's task
        # (``in_lane``); the connection reads on while they are written.
        self._lanes: dict[str, asyncio.Future[None]] = {}
        # The tables whose last command in the lane was queued at the table at once
        # (``in_lane``): the next one of those may be queued behind it without waiting.
        self._queued_at_once: set[str] = set()
        self.unwatch: Any = None  # a station's touchscreen: stop its status updates
        self._pending: bytes | list[bytes] | None = None  # this turn's frames, not yet written
        self._pending_bytes = 0
        self._outbox = _outbox()

    # --- sending -----------------------------------------------------------------------------

    def send(self, message: ServerMessage) -> None:
        self.send_frame(encode(message))

    def send_frame(self, frame: bytes) -> None:
        """A message to this connection alone (a reply, an error, a balance): written now,
        with the frames of this turn before it — an acknowledgement never waits for the end
        of a busy turn."""
        if self.write_wire(ws_binary_frame(frame)):
            self.metrics.frames_direct.value += 1
            self.flush()

    def write_wire(self, wire: bytes) -> bool:
        """Send an already framed message (``fanout``) if this connection can take it: at
        the end of the event loop's turn, with every other frame of the turn for this
        connection, in one ``transport.write`` (``_Outbox``)."""
        if self.closing or self._protocol.state is not State.OPEN:
            self.metrics.shed_closing.value += 1
            return False
        transport = self._transport
        if transport.get_write_buffer_size() + self._pending_bytes > self.limits.max_backlog:
            self.metrics.shed_too_slow.value += 1
            self.metrics.inc("croupier_slow_viewers_disconnected_total")
            self._close(CLOSE_TOO_SLOW, "too slow to follow the table; resume from your last seq")
            return False
        pending = self._pending
        if pending is None:  # the turn's first frame, as it is: no list to make (nor for the
            self._pending = wire  # cyclic GC to count) for a connection's one frame a turn
            self._outbox.add(self)
        elif isinstance(pending, bytes):
            self._pending = [pending, wire]
        else:
            pending.append(wire)
        self._pending_bytes += len(wire)
        return True

    def flush(self) -> None:
        """Write the frames of this turn (frames taken before a close still go out first:
        the close frame is written by a task that runs after this turn)."""
        frames, self._pending, self._pending_bytes = self._pending, None, 0
        if frames is not None and self._protocol.state is State.OPEN:
            self._transport.write(frames if isinstance(frames, bytes) else b"".join(frames))

    def _close(self, code: int, reason: str) -> None:
        """Stop sending and close the connection with ``code`` (outside the reader loop,
        through a task the session keeps, so it is not garbage-collected mid-close)."""
        if not self.closing:
            self.closing = True
            self.close_code, self.close_reason = code, reason
            self._closer = asyncio.get_running_loop().create_task(self.ws.close(code, reason))

    def error(self, code: str, message: str, value: Any = None, ref: int | None = None) -> None:
        self.metrics.inc("croupier_errors_total", code=code)
        self.last_error = code
        safe = value if isinstance(value, bool | int | str | float) or value is None else str(value)
        self.send(ErrorMessage(code=code, message=message, value=safe, ref=ref))

    # --- the rate limit ----------------------------------------------------------------------

    def admit(self) -> bool:
        now = asyncio.get_running_loop().time()
        elapsed = now - self.last_refill
        self.last_refill = now
        self.tokens = min(self.limits.burst, self.tokens + elapsed * self.limits.rate)
        self.refused = max(0.0, self.refused - elapsed * self.limits.rate)
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        self.refused += 1
        if self.refused > self.limits.burst * self.limits.flood_factor:
            self.metrics.inc("croupier_connections_closed_total", reason="flood")
            self._close(CLOSE_FLOOD, "flood: too many messages")
        elif self.refused <= 1:
            self.error("rate_limited", f"more than {self.limits.rate:g} messages a second")
        return False

    # --- requests ----------------------------------------------------------------------------

    async def handle(self, message: ClientMessage) -> None:
        if isinstance(message, Hello):
            await self._hello(message)
            shared = self.floor.shared_notices
            if self.player is not None and shared is not None:  # recovered on any node
                for notice in await shared(self.player.player_id):
                    self.send(notice)
            return None
        if self.player is None:
            return self.error("hello_first", "send hello before anything else", ref=message.ref)
        return await _HANDLERS[type(message)](self, message)

    async def _list_tables(self, message: ListTables) -> None:
        self.send_frame(self.floor.lobby_answer(message.ref))

    async def _leave_table(self, message: Leave) -> None:
        self._leave(message.table)
        self.send(Left(table=message.table, ref=message.ref))

    async def _recall(self, message: GetRecall) -> None:
        assert self.player is not None
        # Off the event loop: the journal's and the ledger's reads (round trips on a
        # shared database) and the replay of rounds not recalled before.
        rounds = await asyncio.to_thread(self.floor.recall, self.player.player_id, message.table)
        self.send(Recall(rounds=rounds, ref=message.ref))

    async def _rules(self, message: GetRules) -> None:
        rules = self.floor.rules(message.table)
        if rules is None:
            self.error("unknown_table", "no such table", message.table, message.ref)
        else:
            self.send(msgspec.structs.replace(rules, ref=message.ref))  # shared: copied

    async def _ping(self, message: Ping) -> None:
        self.send(Pong(nonce=message.nonce, ref=message.ref))

    async def _station_request(self, message: CashOut | CallAttendant | AttendantAction) -> None:
        """A player station's touchscreen (docs/electronic-tables.md)."""
        assert self.player is not None
        stations, station = self.floor.stations, self.player.station
        if stations is None or station is None:
            return self.error("not_a_station", "this connection is not a station's touchscreen", ref=message.ref)  # fmt: skip  # noqa: E501
        try:
            if isinstance(message, CashOut):
                ticket = await stations.cash_out(station, message.ref)
                if ticket is not None:
                    self.send(ticket)
                    return None
            elif isinstance(message, CallAttendant):
                await stations.call_attendant(station, message.on)
            else:
                await stations.attendant_action(station, message.action)
        except StationRefused as exc:
            return self.error(exc.code, str(exc), station, message.ref)
        self.send(stations.status(station, message.ref))
        return None

    async def _hello(self, message: Hello) -> None:
        if message.version != PROTOCOL_VERSION:
            return self.error(
                "unsupported_version",
                f"this server speaks protocol version {PROTOCOL_VERSION}",
                message.version,
                message.ref,
            )
        if self.player is not None:
            return self.error("already_welcomed", "hello was already accepted", ref=message.ref)
        try:
            # Off the event loop: a new player's account and grant are durable writes, and
            # with a shared database every store call is a round trip.
            player, balance = await asyncio.to_thread(self._login, message.name, message.token)
            balance = await self.floor.players.refresh(player, balance)
        except AuthError as exc:
            return self.error(exc.code, str(exc), ref=message.ref)
        self.player = player
        self.metrics.inc("croupier_logins_total", mode="demo" if player.play_money else "token")
        self.send(
            Welcome(
                version=PROTOCOL_VERSION,
                player_id=player.player_id,
                name=player.name,
                balance=balance,
                currency=self.floor.players.currency(player),
                play_money=player.play_money,
                token=player.token,
                station=player.station,
                ref=message.ref,
            )
        )
        for notice in self.floor.notices(player.player_id):
            self.send(notice)
        if player.station is not None and self.floor.stations is not None:
            self.unwatch = self.floor.stations.watch(player.station, self.send)
        return None

    def _login(self, name: str | None, token: str | None) -> tuple[Player, int]:
        player = self.floor.players.login(name, token)
        return player, self.floor.players.balance(player.player_id)

    def _table(self, table_id: str, ref: int | None) -> TableDoor | None:
        table = self.floor.door(table_id)
        if table is None:
            self.error("unknown_table", "no such table", table_id, ref)
        return table

    async def _join(self, message: Join | Resume) -> None:
        table = self._table(message.table, message.ref)
        if table is None:
            return
        assert self.player is not None
        player_id = self.player.player_id
        stations: Stations | None = self.floor.stations
        refusal = stations.join_refusal(table.id, player_id, message.role) if stations else None
        if refusal is not None:
            return self.error("stations_only", refusal, table.id, message.ref)
        old = self.viewers.pop(table.id, None)
        if old is not None:
            table.remove_viewer(old)
        viewer = _Viewer(self)
        last_seq = message.last_seq if isinstance(message, Resume) else None
        try:  # the table's seat rules: table_full when every seat is taken
            snapshot, resumed = await table.enter(viewer, message.role, last_seq)
        except IllegalAction as exc:
            if old is not None:  # still watching as before
                with contextlib.suppress(IllegalAction):
                    await table.enter(old, "spectator")
                    self.viewers[table.id] = old
            return self.refuse(exc.refusal, message.ref)
        self.viewers[table.id] = viewer
        self.send(
            Joined(
                table=table.id,
                role=message.role,
                snapshot=snapshot,
                resumed=resumed,
                ref=message.ref,
            )
        )
        table.entered(viewer)  # what came for it meanwhile (a cluster's remote table) follows
        return None

    def _leave(self, table_id: str) -> None:
        viewer = self.viewers.pop(table_id, None)
        table = self.floor.door(table_id)
        if viewer is not None and table is not None:
            table.remove_viewer(viewer)

    def drop(self) -> None:
        """The connection is gone: stop viewing; bets already accepted stand and settle."""
        if self.unwatch is not None:
            self.unwatch()
        for table_id, viewer in list(self.viewers.items()):
            table = self.floor.door(table_id)
            if table is not None:
                table.drop_viewer(viewer)
        self.viewers.clear()

    def refuse(self, refusal: Refusal, ref: int | None) -> None:
        self.error(refusal.code, refusal.message, refusal.value, ref)

    def in_lane(self, table: str, message: ClientMessage) -> None:
        """Handle ``message`` after this connection's earlier commands for ``table``, while
        the connection reads on: one bet's writes hold up neither a ping nor another
        table's commands, and one table's answers keep the order they were asked in
        (docs/protocol.md, "Order")."""
        before = self._lanes.get(table)
        if before is not None and before.done():  # answered: nothing to wait for
            before = None
        door = self.floor.door(table)
        if (
            door is not None
            and door.in_process
            and isinstance(message, _PLAYED)
            and (before is None or table in self._queued_at_once)
        ):
            # A bet (a cancel, a repeat, a decision) after nothing but such commands: queued
            # at the table now, behind them, so that a player's bets are written together
            # (the table keeps each player's commands in the order queued); answered once
            # the answers before it went out. Its first step, which queues it, runs now.
            task = eager_task(self._queued(door, before, message))
            self._queued_at_once.add(table)
        else:
            # Its first step now (``eager_task``) where the table runs in this process: a
            # command with nothing before it in its lane reaches the table in this turn of
            # the event loop, not the next (a join or a leave at such a table is done in that
            # step). A table on another node is asked through Redis, whose client times its
            # reads with ``asyncio.timeout``, bound to the current task — and a message is
            # taken as it is read, outside any task (server/tables/eager.py): so that
            # command starts on a task of its own.
            start = eager_task if door is None or door.in_process else asyncio.ensure_future
            task = start(self._after(before, message))
            self._queued_at_once.discard(table)
        self._lanes[table] = task
        task.add_done_callback(lambda done: self._lane_done(table, done))

    async def _after(self, before: asyncio.Future[None] | None, message: ClientMessage) -> None:
        if before is not None:
            await asyncio.wait([before])
        await self.safely(message)

    async def _queued(
        self, door: TableDoor, before: asyncio.Future[None] | None, message: Played
    ) -> None:
        """Queue ``message``'s command at the table at once, then answer it once the
        answers before it went out — ``internal_error`` in its turn if this fails."""
        outcome: TableReply | Exception
        try:
            outcome = await door.queue(self._command(message))
        except Exception as exc:
            outcome = exc
        if before is not None and not before.done():
            await asyncio.wait([before])
        if isinstance(outcome, TableReply):
            try:
                self._answer(message, outcome)
                return
            except Exception as exc:
                outcome = exc
        self._failed(message, outcome)

    def _lane_done(self, table: str, task: asyncio.Future[None]) -> None:
        if self._lanes.get(table) is task:
            del self._lanes[table]
            self._queued_at_once.discard(table)

    async def finish_lanes(self) -> None:
        """Let the commands under way end (a bet being written is answered or refused in
        full, as when the connection handled one message at a time)."""
        while self._lanes:
            await asyncio.wait(list(self._lanes.values()))

    async def safely(self, message: ClientMessage) -> None:
        try:
            await self.handle(message)
        except Exception as exc:
            self._failed(message, exc)

    def _failed(self, message: ClientMessage, exc: Exception) -> None:
        """Handling ``message`` raised ``exc`` — our bug: tell the client, log it, keep the
        table running."""
        log.error("request %s failed", type(message).__name__, exc_info=exc)
        self.error(
            "internal_error",
            "the server failed to handle this request",
            ref=getattr(message, "ref", None),
        )

    @property
    def player_id(self) -> str:
        assert self.player is not None  # commands come after hello
        return self.player.player_id

    def _command(self, m: Played) -> cmd.PlayCommand:
        """The table's command for a player's bet, cancel, repeat or decision."""
        player = self.player_id
        if isinstance(m, PlaceBet):
            return cmd.Place(player, m.round, m.bet_id, m.spot, m.amount)
        if isinstance(m, CancelBet):
            return cmd.Cancel(player, m.round, m.bet_id)
        if isinstance(m, RepeatBets):
            return cmd.Repeat(player, m.round, m.bet_id_prefix)
        return cmd.Decide(player, m.round, m.spot, m.decision)

    async def _play(self, m: Played) -> None:
        """A bet, cancel, repeat or decision: played at the table, then answered."""
        table = self._table(m.table, m.ref)
        if table is None:
            if isinstance(m, PlaceBet):
                self.metrics.bet_refused(self.last_error)
            return
        self._answer(m, await table.submit(self._command(m)))

    def _answer(self, m: Played, reply: TableReply) -> None:
        """The reply to ``m``: its refusal, or what it did (docs/protocol.md)."""
        if reply.refusal is not None:
            self.refuse(reply.refusal, m.ref)
            if isinstance(m, PlaceBet):
                self.metrics.bet_refused(reply.refusal.code)
            return
        d = reply.data
        if isinstance(m, PlaceBet):
            self.metrics.bet_accepted(self.floor.game_of(m.table))
            self.send(
                BetAccepted(
                    table=m.table,
                    round=m.round,
                    bet_id=d["bet_id"],
                    spot=d["spot"],
                    amount=d["amount"],
                    balance=d["balance"],
                    ref=m.ref,
                )
            )
            self.metrics.bet_acked(RECEIVED_AT.get())
        elif isinstance(m, CancelBet):
            self.send(
                BetCancelled(
                    table=m.table,
                    round=m.round,
                    bet_id=m.bet_id,
                    balance=d["balance"],
                    ref=m.ref,
                )
            )
        elif isinstance(m, RepeatBets):
            self.metrics.bet_accepted(self.floor.game_of(m.table), len(d["bets"]))
            for bet in d["bets"]:
                self.send(
                    BetAccepted(
                        table=m.table,
                        round=m.round,
                        bet_id=bet["bet_id"],
                        spot=bet["spot"],
                        amount=bet["amount"],
                        balance=bet["balance"],
                        ref=m.ref,
                    )
                )
        # a decision's answer is the table's events


# Commands for one table: answered in the order sent, each table's apart from the rest of the
# connection (``_Session.in_lane``). Everything else is answered as it comes.
_AT_A_TABLE = (Join, Resume, Leave, PlaceBet, CancelBet, RepeatBets, Decide)
# The messages handled on a task of their own (``_Reader``): their handlers may wait on what
# binds itself to the current task.
_ON_A_TASK = (Hello, CashOut, CallAttendant, AttendantAction)
# The commands the table itself plays (``TableDoor.submit``).
_PLAYED = (PlaceBet, CancelBet, RepeatBets, Decide)
Played = PlaceBet | CancelBet | RepeatBets | Decide
# When the frame a task handles arrived (``time.perf_counter``): a context variable, so each
# lane's task keeps the time of its own frame (the bet-ack histogram of /metrics).
RECEIVED_AT: contextvars.ContextVar[float] = contextvars.ContextVar("received_at", default=0.0)


# Each message a client may send after ``hello``, and the handler that takes it
# (docs/protocol.md, "Client messages").
_HANDLERS: dict[type[Any], Callable[[_Session, Any], Awaitable[None]]] = {
    ListTables: _Session._list_tables,
    Join: _Session._join,
    Resume: _Session._join,
    Leave: _Session._leave_table,
    PlaceBet: _Session._play,
    CancelBet: _Session._play,
    RepeatBets: _Session._play,
    Decide: _Session._play,
    GetRecall: _Session._recall,
    GetRules: _Session._rules,
    Ping: _Session._ping,
    CashOut: _Session._station_request,
    CallAttendant: _Session._station_request,
    AttendantAction: _Session._station_request,
}


class _Reader:
    """Takes each message of a connection in the turn of the event loop that read it
    (``FrameConnection``): a table's command goes to its lane at once (``in_lane``); any
    other message is handled at once where it can be, and where it waits (a hello, a recall)
    the messages after it wait until it is done — as when the connection awaited each such
    message before reading on."""

    def __init__(self, session: _Session, ws: FrameConnection) -> None:
        self.session, self.ws = session, ws
        self._busy: asyncio.Future[None] | None = None  # a message handled now, not a lane's
        self._backlog: deque[tuple[bytes | str, float]] = deque()  # what came meanwhile
        self._paused = False
        # The last hello taken (its task), and a future set when the next one comes: the
        # hello timeout stops when a hello arrives, not when it is answered.
        self.hello: asyncio.Future[None] | None = None
        self.hello_came: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def message(self, frame: bytes | str) -> None:
        received = time.perf_counter()
        if self._busy is not None:
            self._backlog.append((frame, received))
            if len(self._backlog) >= self.session.limits.burst and not self._paused:
                self._paused = True  # read no more until those are taken
                self.ws.transport.pause_reading()
            return
        self._safely_take(frame, received)

    def _safely_take(self, frame: bytes | str, received: float) -> None:
        """``_take``, and should it raise (our bug) the connection is closed with 1011 — not
        left to websockets' ``data_received``, which would drop the TCP connection with the
        rest of what it read."""
        try:
            self._take(frame, received)
        except Exception:
            log.exception("reading a message failed; closing the connection")
            self.session._close(CLOSE_INTERNAL_ERROR, "internal error")

    def _take(self, frame: bytes | str, received: float) -> None:
        session = self.session
        if session.closing:  # closing: what the client sent meanwhile is dropped
            return
        RECEIVED_AT.set(received)  # each lane's task keeps its own (a copy of this context)
        if not session.admit():
            return
        try:
            message = decode_client(frame)
        except ProtocolError as exc:
            session.error(exc.code, exc.message, ref=exc.ref)
            return
        if isinstance(message, _AT_A_TABLE) and session.player is not None:
            session.in_lane(message.table, message)
            return
        busy: asyncio.Future[None]
        if isinstance(message, _ON_A_TASK):
            # A hello, a station's request: their handlers may use what binds to the current
            # task (a Redis client's timeouts), and there is none while a message is being
            # read (server/tables/eager.py).
            busy = asyncio.ensure_future(session.safely(message))
            if isinstance(message, Hello):
                self.hello = busy
                if not self.hello_came.done():
                    self.hello_came.set_result(None)
        else:
            # A lobby read, the rules, a ping: answered now (a recall goes to a thread), so a
            # bet behind it waits no turn of the event loop.
            busy = eager_task(session.safely(message))
            if busy.done():
                return
        self._busy = busy
        busy.add_done_callback(self._done)

    def _done(self, _: asyncio.Future[None]) -> None:
        self._busy = None
        try:
            while self._backlog and self._busy is None:
                self._safely_take(*self._backlog.popleft())
        finally:
            if self._paused and not self._backlog:
                self._paused = False
                if not self.ws.transport.is_closing():
                    self.ws.transport.resume_reading()

    async def finish(self) -> None:
        """Let the message handled now end (a hello being answered, a recall read)."""
        while self._busy is not None:
            await asyncio.wait([self._busy])


async def serve_connection(
    ws: FrameConnection, floor: Floor, metrics: Metrics, limits: ConnectionLimits
) -> None:
    """Serve one connection until it closes: its messages are taken as they are read
    (``_Reader``); this waits for the hello (closing the connection with 4001 when none came
    within ``hello_timeout``), then for the connection to close."""
    session = _Session(ws, floor, metrics, limits)
    metrics.inc("croupier_connections_total")
    reader = _Reader(session, ws)
    ws.attach(reader.message)
    try:
        closed = asyncio.ensure_future(ws.wait_closed())
        loop = asyncio.get_running_loop()
        while session.player is None and not closed.done():
            # Until it has logged in, a hello must come within ``hello_timeout`` (of the
            # connection, or of the answer to a hello that failed).
            came = reader.hello_came
            await asyncio.wait([closed, came], timeout=limits.hello_timeout, return_when=asyncio.FIRST_COMPLETED)  # fmt: skip  # noqa: E501
            if closed.done():
                break
            if not came.done():
                session._close(CLOSE_NO_HELLO, "no hello")
                break
            # Answered in its own time (a login may wait on the platform's keys, a shared
            # store): the hello, and any hello taken behind it.
            while reader.hello is not None and not reader.hello.done() and not closed.done():
                await asyncio.wait([closed, reader.hello], return_when=asyncio.FIRST_COMPLETED)
            if session.player is None:
                reader.hello_came = loop.create_future()  # it failed: the next one, timed
        await closed
    finally:
        try:
            await reader.finish()
            await session.finish_lanes()
        finally:  # the seats are given up even if the wait is cut short (a cancellation)
            session.drop()
