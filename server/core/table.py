"""One table as a sans-I/O state machine: commands in, effects out (docs/architecture.md,
principle 1).

``TableCore`` owns a table's round engine, its seats, its bets' bookkeeping and its sequence
numbers. It never waits, sleeps, reads a clock, draws a random number or touches a store:
it says what must happen (``effects``) in the order it must happen, and an adapter performs
it — the asyncio ``TableRuntime`` in the server; a test, synchronously. The rules that make
the table trustworthy live here once:

- a bet is acknowledged only once its debit and its journal record are both durable;
- a card or wheel result is journaled before the engine — and so any viewer — sees it;
- money moved by events (settlements, progressive awards) is posted before they are sent;
- after "no more bets" no wager is placed, altered or withdrawn.

Its life is written as generators: the table's life (rounds, betting windows, decisions,
pauses) is one; each player's command is another. A generator yields effects; a ``Wait``
suspends it until the adapter answers with ``Done`` (naming the ``Wait``'s ``wid``); a
``_Park`` suspends the table's life until a deadline passes (``Tick``) or a condition holds.
Meanwhile queued commands run — **many at once**: a bet (a cancel, a repeat) waits for its
writes while the next players' bets are taken and written, so a table takes as many bets a
second as the stores can write together, not one per write. A player's bets are written
together too — each bet that needs no other wager of the player beside it (a side wager
needs its main wager durable first) starts beside that player's other bets under way — and
every other command of a player waits for those before it; each player's replies go out in
the order sent, whatever order the writes finish in. A decision runs alone. When the park
ends (the betting window closes, the console says no more bets) no further command starts,
and the table's life goes on only once every command under way has its answer: bets taken
before "no more bets" and written after it stand, and no card is dealt while a bet of the
round is unanswered. Replay — game recall, ``croupier replay``, crash recovery — applies
journal records through the same ``apply_record`` as live play (``core/rounds.py``).
"""

from __future__ import annotations

import bisect
import itertools
from collections import deque
from collections.abc import Callable, Generator, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, cast

from server.core import commands as cmd
from server.core.effects import (
    AppendRecord,
    BalanceChanged,
    Chance,
    Deadline,
    Decided,
    Emit,
    Failed,
    FinishRound,
    Irregular,
    Log,
    NewShoe,
    OpenRound,
    Post,
    ReadAvailable,
    ReadLinked,
    Refused,
    Reply,
    RoundFinished,
    SaveState,
    SettleLinked,
    Wait,
)
from server.core.money import (
    bet_key,
    bet_transfer,
    cancel_key,
    cancel_transfer,
)
from server.core.rounds import apply_record, money_posts
from server.core.seats import Seats
from server.core.views import audience, event_name, public_data
from server.games.betting import NOT_AN_OPTION
from server.games.chance import CardRequest, ChanceRequest, HoleRangeRequest
from server.games.errors import (
    BETTING_CLOSED,
    DUPLICATE_BET_ID,
    MAIN_WAGER_REQUIRED,
    NO_DECISION_PENDING,
    GameError,
    IllegalAction,
    InvariantViolation,
    Refusal,
)
from server.games.events import BetAccepted, CardDealt, RoundSettled, WagerSettled
from server.games.round import DecidingEngine, DecisionRequest, Phase, RoundEngine
from server.games.wagers import Wager
from server.journal import records as rec
from server.wallet.ledger import PostResult, player_account

if TYPE_CHECKING:
    from server.games.table import TableGame, TableSettings

__all__ = [
    "INSUFFICIENT_FUNDS",
    "NOT_YOUR_BOX",
    "ROUND_NOT_OPEN",
    "SEQ_BLOCK",
    "STORAGE_FAILED",
    "TABLE_UNAVAILABLE",
    "TableCore",
]


INSUFFICIENT_FUNDS = "insufficient_funds"
NOT_YOUR_BOX = "not_your_box"
ROUND_NOT_OPEN = "round_not_open"
STORAGE_FAILED = "storage_failed"
TABLE_UNAVAILABLE = "table_unavailable"
TABLE_HELD = "table_held"  # a device hold: no player command is taken until it ends
# Events per epoch's block of sequence numbers (see ``TableCore.epoch``). A table that used
# half of its block starts a new epoch at its next round; 2^32 keeps seq an exact JavaScript
# number for 2^21 epochs.
SEQ_BLOCK = 2**32

Step = Generator[Any, Any, Any]


class TableFailure(Exception):
    """A write the table depended on failed, or the random number generator did: the table
    closes as a crash would leave it, and recovery at the next start completes or voids its
    round."""

    def __init__(self, message: str, *, rng: bool = False) -> None:
        super().__init__(message)
        self.rng = rng


@dataclass(frozen=True, slots=True)
class _AfterEarlier:
    """A bet's step waits until its player's commands started before it are answered: a
    side wager written beside its main wager learns the main wager's fate first."""


@dataclass(frozen=True, slots=True)
class _Running:
    """A player's command under way: its reply's ``cid``, its player, whether it runs
    alone (a decision: the engine's order of decisions is the journal's), and — for a bet,
    which may be written beside its player's other bets (``TableCore._beside``) — its bet
    id."""

    cid: int
    player: str
    alone: bool
    bet_id: str | None = None


@dataclass(frozen=True, slots=True)
class _Park:
    """The table's life waits until ``deadline`` (or until ``until()`` holds, or a stop)."""

    deadline: float
    until: Callable[[], bool] | None = None


class TableCore:
    def __init__(
        self,
        settings: TableSettings,
        game: TableGame,
        *,
        first_round: int = 1,
        epoch: int = 0,
        reserved: Mapping[str, int] | None = None,
        grace_seconds: float = 60.0,
    ) -> None:
        self.settings = settings
        self.id = settings.id
        self.game = game
        # Sequence numbers never repeat, across restarts too: each run of the table (an
        # epoch, counted durably in the journal) numbers its events from its own block,
        # epoch × SEQ_BLOCK, so a client resuming with a seq of an earlier run is always
        # recognised and gets a snapshot instead of a silent gap.
        self.epoch = epoch
        self.seq = epoch * SEQ_BLOCK
        self.round_number = first_round - 1
        self.round_id: str | None = None
        self.engine: RoundEngine | None = None
        self.closes_at: float | None = None
        self.now = 0.0
        # Decisions awaited now, each with its deadline: (player, spot) -> (request, deadline).
        self.decisions: dict[tuple[str, str], tuple[DecisionRequest, float]] = {}
        self.seats = Seats(settings.id, settings.seats, grace_seconds)
        # Seats that belong to one player whenever they sit (a player station's).
        self.seats.reserved.update(reserved or {})
        self.last_results: deque[str] = deque(maxlen=20)
        self.cards: dict[str, list[str]] = {}
        self.available = True
        self.finished = False  # the table's life ended (stopped or closed)
        self._hole: str | None = None  # the face-down card, for the hole-card reader
        self._before_open: list[rec.Record] = []  # a hold's records before its round opened
        self.held: dict[str, Any] | None = None  # the hold the table waits on: {reason, options}
        self._console_close: rec.StaffDecision | None = None  # the dealer said no more bets
        self._console_void: rec.StaffDecision | None = None  # dealer and supervisor void
        self._bets: dict[tuple[str, str], Wager] = {}  # this round's bets by (player, bet id)
        # When each bet of the round was taken, by (player, bet id): a player's bets stand in
        # the order taken (the journal's, and "repeat"'s) whatever order their writes finish in.
        self._taken: dict[tuple[str, str], int] = {}
        self._takes = itertools.count()
        self._asked: dict[tuple[str, str], tuple[str, int]] = {}  # as the client sent them
        self._spent_ids: set[tuple[str, str]] = set()  # cancelled ids may not be reused
        self._previous_bets: dict[str, list[Wager]] = {}  # for "repeat", per player
        self._round_bets: dict[str, list[Wager]] = {}
        self._decided = False
        self._stopping = False
        self._draining = False  # no next round: the table is handed to another node
        self._queue: deque[cmd.PlayCommand] = deque()
        # When each queued ``decide`` came (its cid → the table's time): one sent before its
        # deadline is not timed out while another decision's debit holds the table.
        self._decide_came: dict[int, float] = {}
        # Bets written beside the player's earlier bets and waiting for their answers
        # (``_AfterEarlier``), by cid; the bets in flight, taken by the engine and not yet
        # answered; and those of them withdrawn because the main wager they need was
        # refused (each refused when its own write is answered).
        self._after: dict[int, tuple[Step, _Running]] = {}
        self._in_flight: dict[tuple[str, str], Wager] = {}
        self._withdrawn: set[tuple[str, str]] = set()
        self._closing = False  # a command failed: the table closes
        self._out: list[Any] = []
        self._life: Step | None = None
        self._parked: _Park | None = None
        # Waits not yet answered, by wid: the generator suspended on it and, for a player's
        # command, the command (None: the table's life).
        self._waiting: dict[int, tuple[Step, _Running | None]] = {}
        # How many of them are the table's life's, kept up to date rather than counted each
        # time: ``_pump`` asks before every command it starts, and a burst of bets keeps
        # dozens of waits under way.
        self._life_waiting = 0
        self._wids = itertools.count(1)
        # Players with commands under way, and those commands in the order they started; a
        # command stays here, its reply held back in ``_early``, until the replies of the
        # player's commands before it went out.
        self._busy: dict[str, list[_Running]] = {}
        self._early: dict[int, Reply] = {}
        self._alone = False  # a command that runs alone is under way
        self._told_no_tick = False  # Deadline(None) sent while the park waits for commands
        # Moved by every call that may change what the table's lobby line shows (its seq,
        # seats, phase or countdown) — ``start``, ``handle``, ``crashed``, ``event``: a lobby
        # read looks again only at the tables whose mark moved (``Lobby.answer``).
        self.lobby_mark = 0

    # --- driving the core ---------------------------------------------------------------------

    def start(self, now: float, start_after: float = 0.0) -> list[Any]:
        """Begin the table's life: its first round after ``start_after`` seconds."""
        self.lobby_mark += 1
        self.now = now
        self._out = []
        self._life = self._table_life(start_after)
        self._step(self._life, None, None)
        self._pump()
        return self._out

    def handle(self, command: cmd.Command, now: float) -> list[Any]:
        """Take one command at time ``now``; the effects it causes, in order.

        Seat commands take effect at once and cause no effect of their own: an adapter may
        give them at any time, also while it is performing the effects of another command
        (they never run the table)."""
        self.lobby_mark += 1
        if isinstance(command, cmd.Join | cmd.Leave | cmd.Drop):
            self._seat(command, max(self.now, now))
            return []
        self.now = max(self.now, now)
        out: list[Any] = []
        self._out = out
        if isinstance(command, cmd.Done):
            wid = command.wid
            if wid is None and len(self._waiting) == 1:  # the only wait: no need to name it
                (wid,) = self._waiting
            entry = self._waiting.pop(wid, None) if wid is not None else None
            if entry is None:
                if self.finished:  # a write of a command the closing table already answered
                    return out
                raise InvariantViolation(f"an answer came for no wait of the table ({wid})")
            gen, running = entry
            if running is None:
                self._life_waiting -= 1
            self._step(gen, command.results, running)
        elif isinstance(command, cmd.Stop):
            self._stopping = True
        elif isinstance(command, cmd.Drain):
            self._draining = True
        elif isinstance(command, cmd.Console):
            self._console(command.staff)
        elif not isinstance(command, cmd.Tick):
            if type(command) is cmd.Decide:
                self._decide_came[command.cid] = self.now
            self._queue.append(command)
        self._pump()
        return out

    def _pump(self) -> None:
        """Run whatever may run now: the table's life when its park is over and no command
        is under way; otherwise every queued command that may start — never while the
        table's life waits for a ``Done``."""
        while not self._life_waits():
            park = self._parked
            if park is not None and (
                self._stopping
                or self.now >= park.deadline
                or (park.until is not None and park.until())
            ):
                if self._busy:  # the commands under way are answered first
                    if not self._told_no_tick:  # the last answer moves the table on, not time
                        self._told_no_tick = True
                        self._out.append(Deadline(None))
                    return
                self._parked = None
                self._told_no_tick = False
                assert self._life is not None
                self._step(self._life, None, None)
            elif self.finished and self._queue:
                command = self._queue.popleft()
                self._decide_came.pop(command.cid, None)
                self._out.append(
                    Reply(command.cid, Refusal(TABLE_UNAVAILABLE, "the table stopped", self.id))
                )
            elif park is not None and self._queue:
                startable = self._startable()
                if startable is None:
                    return
                running = _Running(
                    startable.cid,
                    startable.player_id,
                    type(startable) is cmd.Decide,
                    startable.bet_id if type(startable) is cmd.Place else None,
                )
                self._busy.setdefault(running.player, []).append(running)
                self._alone = running.alone
                self._step(self._command(startable), None, running)
            else:
                return

    def _life_waits(self) -> bool:
        return self._life_waiting > 0

    def _startable(self) -> cmd.PlayCommand | None:
        """Take from the queue the first command that may start now: its player has none
        queued before it, and none under way unless it is a bet that may be written beside
        them (``_beside``); a decision only when nothing else is under way."""
        if self._alone:
            return None
        behind: set[str] = set()
        busy = self._busy
        for n, command in enumerate(self._queue):
            player = command.player_id
            if player in behind:
                continue
            under_way = busy.get(player)
            if (under_way and not self._beside(command, under_way)) or (
                type(command) is cmd.Decide and busy
            ):
                behind.add(player)
                continue
            del self._queue[n]
            self._decide_came.pop(command.cid, None)
            return command
        return None

    def _beside(self, command: cmd.PlayCommand, under_way: list[_Running]) -> bool:
        """Whether ``command`` may start while its player's ``under_way`` commands wait for
        their writes: a bet beside bets only, none with its bet id (a bet sent again waits
        for the first's answer, and is acknowledged as sent again). A side wager starts
        beside the main wager it needs (``TableGame.depends_on``) and learns its fate
        before it is answered (``_AfterEarlier``); a main wager starts beside the side
        wagers sent before it, which stand on the wagers sent before them only
        (``_take_back``)."""
        if type(command) is not cmd.Place:
            return False
        bet_id = command.bet_id
        return all(r.bet_id is not None and r.bet_id != bet_id for r in under_way)

    def _earlier_under_way(self, running: _Running) -> bool:
        """Whether a command of ``running``'s player that started before it is unanswered."""
        for other in self._busy.get(running.player, ()):
            if other.cid == running.cid:
                return False
            if other.cid not in self._early:
                return True
        return False

    def _step(self, gen: Step, value: Any, running: _Running | None) -> None:
        """Run ``gen`` until it waits, parks or ends, collecting its effects."""
        out = self._out
        try:
            item = gen.send(value)
            while True:
                if isinstance(item, Wait):
                    wid = next(self._wids)
                    shared = running is not None and not running.alone
                    out.append(replace(item, wid=wid, shared=shared))
                    self._waiting[wid] = (gen, running)
                    if running is None:
                        self._life_waiting += 1
                    return
                if isinstance(item, _Park):
                    self._parked = item
                    out.append(Deadline(item.deadline))
                    return
                if isinstance(item, _AfterEarlier):
                    assert running is not None
                    if self._earlier_under_way(running):
                        self._after[running.cid] = (gen, running)  # resumed by ``_answer``
                        return
                    item = gen.send(None)
                    continue
                out.append(item)
                item = gen.send(None)
        except StopIteration as done:
            if running is not None:
                self._answer(running, done.value)
            else:  # the table's life ended
                self.finished = True
                out.append(Deadline(None))
        except IllegalAction as exc:  # a command refused; nothing changed
            assert running is not None
            self._answer(running, Reply(running.cid, exc.refusal))
        except TableFailure as exc:  # from a command: the table had changed, so it closes
            assert running is not None
            self._closing = True  # no bet waiting for this one goes on (``_answer``)
            message = f"not recorded ({exc}); the table is closed until its round is recovered"
            self._answer(running, Reply(running.cid, Refusal(STORAGE_FAILED, message, self.id)))
            self._close(f"the ledger or journal could not be written: {exc}")
        except Exception as exc:
            if running is None:
                raise  # the table's life handles its own failures: this is a bug
            self._closing = True
            self._say("critical", f"table {self.id}: command failed", exc)
            refusal = Refusal(TABLE_UNAVAILABLE, "the table failed and is closed", self.id)
            self._answer(running, Reply(running.cid, refusal))
            self._close("a command failed")

    def _answer(self, running: _Running, reply: Reply) -> None:
        """``running`` ended with ``reply``: it goes out now if the player's commands that
        started before it have had theirs, else once they have (a player's replies keep
        the order sent, whatever order their writes finished in)."""
        if running.alone:
            self._alone = False
        under_way = self._busy[running.player]
        early = self._early
        early[running.cid] = reply
        while under_way and under_way[0].cid in early:
            self._out.append(early.pop(under_way.pop(0).cid))
        if not under_way:
            del self._busy[running.player]
        if self._closing:  # the bets waiting for it are answered as the table closes
            return
        # The player's bets waiting for this one go on (each may end and resume others:
        # looked up again each time).
        for cid in [c for c, (_, a) in self._after.items() if a.player == running.player]:
            entry = self._after.get(cid)
            if entry is None or self._earlier_under_way(entry[1]):
                continue
            del self._after[cid]
            self._step(entry[0], None, entry[1])

    def _abandon_commands(self) -> None:
        """The table closes with commands under way: each is answered now (its writes may
        still land; recovery voids the round and returns every stake)."""
        message = "the table failed and is closed: its round will be voided, stakes returned"
        after, self._after = list(self._after.values()), {}
        for held, bet in after:
            held.close()
            self._answer(bet, Reply(bet.cid, Refusal(TABLE_UNAVAILABLE, message, self.id)))
        for wid, (gen, running) in list(self._waiting.items()):
            if running is None:
                continue
            del self._waiting[wid]
            gen.close()
            self._answer(running, Reply(running.cid, Refusal(TABLE_UNAVAILABLE, message, self.id)))
        # Every command under way waited for its writes, so none is left; were one left (a
        # bug), it is answered all the same rather than waiting for ever.
        for under_way in self._busy.values():  # pragma: no cover
            for running in under_way:
                refusal = Refusal(TABLE_UNAVAILABLE, message, self.id)
                self._out.append(self._early.pop(running.cid, Reply(running.cid, refusal)))
        self._busy.clear()
        self._early.clear()
        self._alone = False

    def crashed(self, reason: str) -> list[Any]:
        """The adapter failed between steps: the table is closed as a crash would leave it
        (its round open, for recovery). Returns the effects to perform (what to log)."""
        self.lobby_mark += 1
        self._out = []
        if self._life is not None:
            self._life.close()
        self._log_closed(reason)
        self.available = False
        self.finished = True
        self._parked = None
        self._abandon_commands()  # the adapter answers them (it failed: no reply effects)
        self._waiting.clear()
        self._life_waiting = 0
        return [e for e in self._out if not isinstance(e, Reply)]

    def _close(self, reason: str) -> None:
        """Close the table as a crash would: the round stays open for recovery. Called while
        the table's life is parked (a command failed), never from inside it."""
        self._log_closed(reason)
        self._abandon_commands()
        self.available = False
        if self._life is not None:
            self._life.close()
        self._parked = None
        self.finished = True
        self._out.append(Deadline(None))

    def _say(self, level: str, message: str, error: BaseException | None = None) -> None:
        """Log ``message`` through the adapter (a ``Log`` effect, performed in order)."""
        self._out.append(Log(level, message, error))

    def _log_closed(self, reason: str) -> None:
        self._say(
            "critical",
            f"table {self.id} failed: {reason}; table closed, "
            f"round {self.round_id} left for recovery at the next start",
        )

    def _console(self, staff: rec.StaffDecision) -> None:
        """Note the console's action; the table's life applies it where it waits (betting,
        decisions) — a wait it releases at once."""
        engine = self.engine
        if engine is None or engine.phase in (Phase.SETTLED, Phase.VOIDED):
            self._say(
                "warning", f"table {self.id}: console {staff.action} ignored: no round in play"
            )
        elif staff.action == "no_more_bets" and engine.phase is Phase.BETTING:
            self._console_close = staff
        elif staff.action == "void":
            self._console_void = staff
        else:
            self._say("warning", f"table {self.id}: console {staff.action} ignored in {self.phase}")

    def _staff_void(self) -> Step:
        """Journal who voided the round from the console; the caller voids it."""
        staff, self._console_void = self._console_void, None
        assert staff is not None
        yield from self._journal(staff)
        return Irregular.by_console(staff).reason

    # --- seats and views ----------------------------------------------------------------------

    def _seat(self, command: cmd.Join | cmd.Leave | cmd.Drop, now: float) -> None:
        if isinstance(command, cmd.Join):
            self.seats.join(command.player_id, command.role, now, command.seat)
        elif isinstance(command, cmd.Leave):
            self.seats.leave(command.player_id, command.role)
        else:
            self.seats.drop(command.player_id, command.role, now)

    def seated(self, now: float) -> set[str]:
        return self.seats.seated(now)

    def lobby_state(self, now: float) -> tuple[int, int, str, int | None]:
        """What a lobby line shows that changes — ``seq`` (an event: a result), the number
        seated, the phase — and the betting countdown: one call per table per lobby read, so
        it reads the engine's phase once (``phase`` and ``closes_in_ms`` in one)."""
        engine = self.engine
        if not self.available or engine is None:
            return self.seq, self.seats.count(now), self.phase, None
        phase = engine.phase
        closes_at = self.closes_at
        closes = None
        if closes_at is not None and phase is Phase.BETTING:
            closes = int((closes_at - now) * 1000)
            if closes < 0:
                closes = 0
        # ``_value_`` is the member's value as stored; ``.value`` is a descriptor call
        return self.seq, self.seats.count(now), phase._value_, closes

    def lobby_line(self, now: float) -> tuple[int, int, str, float | None, float]:
        """``lobby_state`` as a lobby keeps it until ``lobby_mark`` moves: the betting
        window's end (None: not betting) instead of the countdown, and when the number
        seated changes by itself next (a held seat's end; infinity: none held)."""
        seq, seated, phase, closes = self.lobby_state(now)
        closes_at = None if closes is None else self.closes_at  # a countdown: it is betting
        return seq, seated, phase, closes_at, self.seats.next_end()

    @property
    def phase(self) -> str:
        if not self.available:
            return "closed"
        if self.engine is None:
            return "waiting"
        return self.engine.phase.value

    def closes_in_ms(self, now: float) -> int | None:
        if self.closes_at is None or self.engine is None or self.engine.phase is not Phase.BETTING:
            return None
        return max(0, int((self.closes_at - now) * 1000))

    def snapshot(self, player_id: str, now: float) -> dict[str, Any]:
        """The table as ``player_id`` may see it now (the ``joined`` message's snapshot)."""
        pending = None
        for (player, _), (request, deadline) in self.decisions.items():
            if player == player_id:
                pending = {
                    "spot": request.spot,
                    "options": list(request.options),
                    "default": request.default,
                    "closes_in_ms": max(0, int((deadline - now) * 1000)),
                }
                break
        bets = [
            {"bet_id": w.bet_id, "spot": w.spot, "amount": w.amount}
            for (player, _), w in self._bets.items()
            if player == player_id
        ]
        return {
            "table": self.id,
            "seq": self.seq,
            "round": self.round_id,
            "phase": self.phase,
            "closes_in_ms": self.closes_in_ms(now),
            "cards": {k: list(v) for k, v in self.cards.items()},
            "my_bets": bets,
            "pending_decision": pending,
            "meters": self.game.meter_amounts(),
            "last_results": list(self.last_results),
            "seat": self.seats.seat_of.get(player_id),
            "held": dict(self.held) if self.held is not None else None,
        }

    # --- the table's life ---------------------------------------------------------------------

    def _table_life(self, start_after: float) -> Step:
        drained = lambda: self._draining  # noqa: E731 -- the waits between rounds end early
        if start_after > 0:
            yield _Park(self.now + start_after, drained)
        while not self._stopping and not self._draining and self.available:
            try:
                yield from self._play_round()
            except TableFailure as exc:
                self.available = False
                if not exc.rng:
                    self._log_closed(f"the ledger or journal could not be written: {exc}")
                    return
                self._say(
                    "critical", f"table {self.id}: the random number generator failed; table closed"
                )
                yield from self._void_current("random number generator failure")
                return
            except Exception as exc:
                # Our own failure (a broken invariant, a journal that refuses the round): never
                # go on silently, and leave the round open for recovery, as after a crash.
                self.available = False
                self._say("error", f"table {self.id}: internal error", exc)
                self._log_closed("an internal error")
                return
            if not self._stopping and not self._draining:
                yield _Park(self.now + self.settings.pause_seconds, drained)

    def _play_round(self) -> Step:
        yield from self._run_round()
        yield from self._save_meters()

    def _save_meters(self) -> Step:
        """Persist the progressive meters after every round, and show players the amounts
        (a linked meter's as the link's store holds it now, whichever table moved it)."""
        state = self.game.meter_state()
        if state is not None:
            yield from self._must(SaveState("meters", state))
        if self.game.linked:
            yield from self._must(ReadLinked())
        if (state is not None or self.game.linked) and self.round_id is not None:
            yield self.event(self.round_id, "meters", self.game.meter_amounts(), None)

    def _run_round(self) -> Step:
        if self.seq - self.epoch * SEQ_BLOCK >= SEQ_BLOCK // 2:
            yield from self._must(SaveState("epoch", {"epoch": self.epoch + 1}))
            self.epoch += 1
            self.seq = self.epoch * SEQ_BLOCK
        self.round_number += 1
        round_id = f"{self.id}.{self.round_number}"
        shoe = yield from self._chance(NewShoe(), round_id, opened=False)
        engine = self.game.new_round(round_id)
        opened = rec.Opened(game=self.game.game, variant=self.game.variant, shoe=shoe)
        yield from self._must(OpenRound(round_id, opened))
        self.round_id, self.engine = round_id, engine
        for record in self._before_open:  # a hold before the round opened, and its decision
            yield from self._journal(record)
        self._before_open = []
        self._bets, self._asked, self._spent_ids, self._round_bets = {}, {}, set(), {}
        self._in_flight, self._withdrawn = {}, set()
        self._taken = {}
        self.cards = {}
        if self._console_void is not None or self._console_close is not None:
            self._say("warning", f"table {self.id}: a console action came after its round ended")
        self._console_close = self._console_void = None
        if shoe is not None:
            shown = {k: v for k, v in shoe.items() if k != "burned"}
            yield self.event(
                round_id, "shoe_shuffled", shown | {"burned": len(shoe["burned"])}, None
            )
        yield from self._emit(engine.open())
        self.closes_at = self.now + self.settings.betting_seconds
        yield _Park(self.closes_at, lambda: bool(self._console_close or self._console_void))
        if self._stopping:
            yield from self._void_current("the table was stopped")
            return
        if self._console_void is not None:
            reason = yield from self._staff_void()
            yield from self._void_current(reason)
            return
        if self._console_close is not None:  # who called no more bets before the time
            staff, self._console_close = self._console_close, None
            yield from self._journal(staff)
        yield from self._journal(rec.Closed())
        yield from self._emit(apply_record(self.game, engine, rec.Closed()))
        try:
            yield from self._deal(round_id, engine)
        except _Stopping:
            yield from self._void_current("the table was stopped")
            return
        except GameError as exc:
            self._say("error", f"table {self.id} round {round_id}: {exc}; round voided")
            yield from self._void_current(f"irregularity: {exc}")
            return
        except _Irregular as exc:  # a device's fault or staff's decision voids the round
            self._say("warning", f"table {self.id} round {round_id} voided: {exc}")
            yield from self._void_current(str(exc))
            return
        finally:
            self.decisions = {}
        if engine.phase is Phase.SETTLED:
            result = self.last_results[-1] if self.last_results else ""
            yield from self._must(FinishRound(round_id, rec.Settled(result=result)))
            yield RoundFinished("settled", round_id)
            self._previous_bets = {p: list(ws) for p, ws in self._round_bets.items() if ws}

    def _deal(self, round_id: str, engine: RoundEngine) -> Step:
        self.decisions, self._hole = {}, None
        while (request := engine.pending()) is not None:
            if isinstance(request, ChanceRequest):  # journaled, then given to the engine
                if isinstance(request, HoleRangeRequest) and self._hole is None:
                    raise InvariantViolation("the hole-card reader was asked before a hole card")
                record = yield from self._chance(request, round_id)
                if (
                    isinstance(request, CardRequest)
                    and not request.face_up
                    and request.target == "dealer"
                ):
                    self._hole = cast(rec.CardDrawn, record).card
                yield from self._journal(record)
                yield from self._emit(apply_record(self.game, engine, record))
            elif isinstance(request, DecisionRequest):
                yield from self._await_decisions(round_id, cast(DecidingEngine, engine))
            else:
                raise TypeError(f"table {self.id} cannot answer {request!r}")

    def _chance(self, request: Any, round_id: str, *, opened: bool = True) -> Step:
        """The answer to a chance request. A device may first put the table on hold (``Held``:
        journaled and shown to every viewer, then asked again until staff decide) or find the
        round irregular (``Irregular``: the round is voided). Before the round has opened
        (``opened`` False: the new shoe), the hold's records wait for the round to open."""
        held = False
        while True:
            result = yield from self._must(Chance(request, self._hole, round_id))
            if isinstance(result, rec.Held):
                # Each hold is journaled and shown: a second one (a fault while already held
                # for a missing card) changes what staff are asked to decide.
                held = True
                yield from self._record(result, opened)
                self.held = {"reason": result.reason, "options": list(result.options)}
                yield self.event(round_id, "table_held", dict(self.held), None)
                continue
            if isinstance(result, Decided):
                yield from self._record(result.staff, opened)
                result = result.answer
            if held:
                self.held = None
                yield self.event(round_id, "table_resumed", {}, None)
            if isinstance(result, Irregular):
                raise _Irregular(result.reason)
            return result

    def _record(self, record: rec.Record, opened: bool) -> Step:
        if opened:
            yield from self._journal(record)
        else:
            self._before_open.append(record)

    def _await_decisions(self, round_id: str, engine: DecidingEngine) -> Step:
        """Wait for every decision the engine awaits now (several players may decide at
        once, e.g. each tie hand in Casino War), each until its own deadline; a player who
        lets it pass gets the option that places no further money (the engine's time-out)."""
        awaited = getattr(engine, "decisions_awaited", None)
        requests = tuple(awaited) if awaited is not None else (engine.pending(),)
        live = {}
        for request in requests:
            if not isinstance(request, DecisionRequest):
                continue
            key = (request.player_id, request.spot)
            if key in self.decisions:
                live[key] = self.decisions[key]
                continue
            deadline = self.now + self.settings.decision_seconds
            live[key] = (request, deadline)
            # The engine announced the request (decision_requested); the table adds when it
            # closes, so every viewer can show the countdown.
            data = {
                "player_id": request.player_id,
                "spot": request.spot,
                "closes_in_ms": int(self.settings.decision_seconds * 1000),
            }
            yield self.event(round_id, "decision_deadline", data, None)
        self.decisions = live
        if not live:
            return
        # A decision sent in time but still queued (another's debit at an operator's wallet
        # held the table) is taken, not timed out: its deadline waits for it.
        sent = self._sent_in_time(live)
        earliest = min(
            (d for key, (_, d) in live.items() if key not in sent),
            default=self.now + self.settings.decision_seconds,
        )
        self._decided = False

        def over() -> bool:
            # A decision sent in time, once run and refused, leaves its player to time out
            # now rather than at a later deadline.
            in_time = bool(sent) and not self._sent_in_time(live) and not self._busy
            return self._decided or self._console_void is not None or in_time

        yield _Park(earliest, over)
        if self._stopping:
            raise _Stopping
        if self._console_void is not None:
            raise _Irregular((yield from self._staff_void()))
        if self.now >= earliest and self.engine is engine:
            waiting = {player for player, _ in self._sent_in_time(live)}  # a decide queued
            late = sorted({p for (p, _), (_, d) in live.items() if d <= self.now} - waiting)
            for player in late:
                if engine.phase is not Phase.DECIDING:
                    break
                record = rec.Timeout(player=player)
                yield from self._journal(record)
                yield from self._emit(apply_record(self.game, engine, record))

    def _sent_in_time(
        self, live: Mapping[tuple[str, str], tuple[DecisionRequest, float]]
    ) -> set[tuple[str, str]]:
        """The decisions awaited (``live``: each with its deadline) whose player's
        ``decide`` waits in the queue, sent before that deadline."""
        return {
            (c.player_id, c.spot)
            for c in self._queue
            if type(c) is cmd.Decide
            and (c.player_id, c.spot) in live
            and self._decide_came.get(c.cid, float("inf")) <= live[(c.player_id, c.spot)][1]
        }

    def _void_current(self, reason: str) -> Step:
        engine, round_id = self.engine, self.round_id
        if engine is None or round_id is None or engine.phase in (Phase.SETTLED, Phase.VOIDED):
            return
        yield from self._emit(engine.void(reason))
        yield from self._must(FinishRound(round_id, rec.Voided(reason=reason)))
        yield RoundFinished("voided", round_id)

    # --- players' commands ----------------------------------------------------------------------

    def _command(self, command: cmd.PlayCommand) -> Step:
        if isinstance(command, cmd.Place):
            reply = yield from self._place(
                command.player_id, command.round_id, command.bet_id, command.spot, command.amount
            )
        elif isinstance(command, cmd.Cancel):
            reply = yield from self._cancel(command.player_id, command.round_id, command.bet_id)
        elif isinstance(command, cmd.Repeat):
            reply = yield from self._repeat(command.player_id, command.round_id, command.prefix)
        else:
            reply = yield from self._decide(
                command.player_id, command.round_id, command.spot, command.decision
            )
        refusal, data, balance_of = reply
        return Reply(command.cid, refusal, data, balance_of)

    def _current(self, round_id: str) -> RoundEngine:
        if self.engine is None or round_id != self.round_id:
            raise IllegalAction(
                ROUND_NOT_OPEN, f"round {round_id} is not this table's current round", round_id
            )
        return self.engine

    def _place(self, player_id: str, round_id: str, bet_id: str, spot: str, amount: int) -> Step:
        self.seats.require_seated(player_id)
        engine = self._current(round_id)
        key = (player_id, bet_id)
        earlier = self._bets.get(key)
        if earlier is not None:
            if self._asked[key] == (spot, amount):
                # The same bet again: a retried message. Acknowledge, never charge twice.
                return None, _bet_data(earlier, retried=True), player_id
            raise IllegalAction(
                DUPLICATE_BET_ID, f"bet {bet_id!r} was already placed with other terms", bet_id
            )
        if self.game.boxed:
            seat = self.seats.seat_of.get(player_id)
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
        events = engine.place(Wager(bet_id, player_id, spot, amount))
        # The engine may canonicalise the spot ("split:20-17" → "split:17-20").
        accepted = next(e.wager for e in events if isinstance(e, BetAccepted))
        # The bet's journal record and its debit are written at the same time, and the bet is
        # acknowledged once *both* are durable: every acknowledged bet is in the round's
        # journal (the audit record, game recall's source) and in the ledger.
        bet = rec.Bet(player=player_id, bet_id=bet_id, spot=accepted.spot, amount=amount)
        self._taken[key] = next(self._takes)
        self._in_flight[key] = accepted
        journaled, debited = yield Wait(
            (
                AppendRecord(round_id, bet, player_id),
                Post(bet_key(round_id, accepted), (bet_transfer(round_id, accepted),)),
            )
        )
        if self.game.depends_on(accepted.spot):  # the main wager's fate first
            yield _AfterEarlier()
        del self._in_flight[key]
        if key in self._withdrawn:  # the main wager it needs was refused meanwhile
            yield from self._withdraw(round_id, accepted, journaled, debited)
        if isinstance(debited, Refused | Failed):  # nothing was debited
            withdrawn = self._take_back(engine, player_id, bet_id)  # nothing was broadcast
            # The journal says the bet never stood (replay skips it), nor the side wagers
            # withdrawn with it: their records were written before these.
            for wager in (*withdrawn, accepted):
                yield from self._journal(rec.BetRefused(player=player_id, bet_id=wager.bet_id))
            if isinstance(debited, Failed):
                if debited.code is not None:  # an operator's wallet that did not answer
                    return Refusal(debited.code, debited.message, None), None, None
                message = f"not recorded, nothing was charged: {debited.message}"
                return Refusal(STORAGE_FAILED, message, None), None, None
            if debited.message is not None:  # an operator's wallet refused it
                raise IllegalAction(debited.code, debited.message, amount)
            message = f"the balance {debited.balance} does not cover {amount}"
            raise IllegalAction(INSUFFICIENT_FUNDS, message, amount)
        if isinstance(journaled, Failed):
            # Debited but not journaled: the bet is not acknowledged and its round can only
            # be voided; recovery at the next start returns the debit.
            raise TableFailure(f"the bet could not be journaled: {journaled.message}")
        self._bets[key] = accepted
        self._asked[key] = (spot, amount)
        taken = self._taken
        bisect.insort(
            self._round_bets.setdefault(player_id, []),
            accepted,
            key=lambda w: taken[(player_id, w.bet_id)],
        )
        yield from self._emit(events)
        data = _bet_data(accepted, retried=False)
        if isinstance(debited, PostResult):
            balance = debited.balances.get(player_account(player_id))
            if balance is not None:
                # The balance just after this debit, not when the reply goes out: a reply
                # held back behind the player's earlier bets must not show their debits.
                data["balance"] = balance
                return None, data, None
        return None, data, player_id

    def _take_back(self, engine: RoundEngine, player_id: str, bet_id: str) -> list[Wager]:
        """Undo a bet the ledger refused in the engine. Side wagers of the player's taken
        beside it that need it are withdrawn from the engine first (returned): each is
        refused once its own write is answered (``_withdraw``). A side wager stands on the
        wagers its player sent before it, as if each bet were taken in turn: one left with
        none of those is withdrawn even where a main wager sent after it, written beside
        it, would hold it up in the engine. Every wager left then stands on another, so the
        engine lets the bet go."""
        withdrawn = self._unsupported(engine, player_id, bet_id)
        try:
            engine.cancel(player_id, bet_id)
        except IllegalAction as exc:  # a wager still leans on it: a bug
            raise InvariantViolation(f"bet {bet_id} refused but not undone: {exc}") from exc
        return withdrawn

    def _unsupported(self, engine: RoundEngine, player_id: str, bet_id: str) -> list[Wager]:
        """Withdraw from the engine the side wagers in flight that ``bet_id``'s refusal
        leaves without a wager sent before them that they may stand on (oldest first, each
        gone with the ones before it); the withdrawn. They are still in flight: each waits
        for the bets sent before it before it is answered (``_AfterEarlier``)."""
        taken, gone = self._taken, {bet_id}
        refused_at = taken[(player_id, bet_id)]
        flying = [
            w
            for (player, other), w in self._in_flight.items()
            if player == player_id and (player, other) not in self._withdrawn
        ]
        standing = flying + self._round_bets.get(player_id, [])
        withdrawn: list[Wager] = []
        for side in sorted(flying, key=lambda w: taken[(player_id, w.bet_id)]):
            needed = self.game.depends_on(side.spot)
            side_at = taken[(player_id, side.bet_id)]
            if not needed or side_at < refused_at:
                continue
            if any(
                w.spot in needed and w.bet_id not in gone and taken[(player_id, w.bet_id)] < side_at
                for w in standing
            ):
                continue
            try:
                engine.cancel(player_id, side.bet_id)
            except IllegalAction as exc:
                raise InvariantViolation(f"side wager {side.bet_id}: {exc}") from exc
            self._withdrawn.add((player_id, side.bet_id))
            gone.add(side.bet_id)
            withdrawn.append(side)
        return withdrawn

    def _withdraw(
        self, round_id: str, wager: Wager, journaled: Any, debited: Any
    ) -> Generator[Any, Any, None]:
        """A side wager withdrawn from the engine because the main wager it needs was refused
        while both were written (the main wager's refusal journaled that it never stood):
        its stake, if debited, goes back (its id is spent), and it is refused
        (``main_wager_required``)."""
        key = (wager.player_id, wager.bet_id)
        self._withdrawn.discard(key)
        if isinstance(journaled, Failed):
            raise TableFailure(f"the bet could not be journaled: {journaled.message}")
        if not isinstance(debited, Refused | Failed):
            yield from self._must(
                Post(cancel_key(round_id, wager), (cancel_transfer(round_id, wager),))
            )
            self._spent_ids.add(key)
        raise IllegalAction(MAIN_WAGER_REQUIRED, "the main wager it needs was refused", wager.spot)

    def _cancel(self, player_id: str, round_id: str, bet_id: str) -> Step:
        engine = self._current(round_id)
        wager = self._bets.get((player_id, bet_id))
        events = engine.cancel(player_id, bet_id)  # raises if unknown or too late
        assert wager is not None
        yield from self._must(
            Post(cancel_key(round_id, wager), (cancel_transfer(round_id, wager),))
        )
        yield from self._journal(rec.Cancel(player=player_id, bet_id=bet_id))
        del self._bets[(player_id, bet_id)]
        self._spent_ids.add((player_id, bet_id))
        self._round_bets[player_id].remove(wager)
        yield from self._emit(events)
        return None, {"bet_id": bet_id}, player_id

    def _repeat(self, player_id: str, round_id: str, prefix: str) -> Step:
        self._current(round_id)
        previous = self._previous_bets.get(player_id, [])
        if not previous:
            raise IllegalAction("nothing_to_repeat", "no bets in your previous round", None)
        placed: list[dict[str, Any]] = []
        for n, wager in enumerate(previous, 1):
            try:
                refusal, data, _ = yield from self._place(
                    player_id, round_id, f"{prefix}-{n}", wager.spot, wager.amount
                )
            except IllegalAction as exc:
                refusal, data = exc.refusal, None
            if refusal is not None:
                if placed:  # the bets before it stand: say which
                    stand = ", ".join(str(p["bet_id"]) for p in placed)
                    message = f"{refusal.message}; placed and standing: {stand}"
                    return Refusal(refusal.code, message, refusal.value), None, None
                return refusal, None, None
            assert data is not None
            placed.append(data)
        return None, {"bets": placed}, player_id

    def _decide(self, player_id: str, round_id: str, spot: str, decision: str) -> Step:
        engine = cast(DecidingEngine, self._current(round_id))
        if (player_id, spot) not in self.decisions:
            raise IllegalAction(NO_DECISION_PENDING, "the table is not waiting for you", spot)
        stake = engine.stake_of(player_id, spot, decision)  # raises if not an option
        # What the balance will be once the debits on their way to disk (this player's bets
        # at other tables) are durable: the debit below must not be refused.
        balance = yield from self._must(ReadAvailable(player_account(player_id)))
        if stake > balance:
            raise IllegalAction(
                INSUFFICIENT_FUNDS, f"the balance {balance} does not cover {stake}", stake
            )
        record = rec.Decision(player=player_id, spot=spot, decision=decision)
        announced = list(engine.wagers_added(player_id, spot, decision))
        if announced:
            refusal = yield from self._debit_decision(round_id, record, announced)
            if refusal is not None:
                return refusal, None, None
        # The decision's record once its wagers' stakes are debited: a crash between the two
        # leaves the round waiting for a decision it never journaled, and recovery voids it,
        # returning the stakes. Nothing of the round goes on until the record is durable.
        yield from self._journal(record)
        events = apply_record(self.game, engine, record)
        added = [e.wager for e in events if isinstance(e, BetAccepted)]
        if added != announced:  # what was debited is not what the engine added: a bug
            raise InvariantViolation(f"{record}: debited {announced}, the engine added {added}")
        # Answered: a further decision on the same hand (another hit) is a new request.
        del self.decisions[(player_id, spot)]
        yield from self._emit(events)
        if added:
            yield BalanceChanged(player_id, "decision")
        self._decided = True
        return None, {"decision": decision}, None

    def _debit_decision(
        self, round_id: str, record: rec.Decision, added: list[Wager]
    ) -> Generator[Any, Any, Refusal | None]:
        """Debit the wagers ``record`` adds (``added``: a War Wager, a Double Down …) *before*
        the engine takes the decision: an operator's wallet may refuse a stake (docs/wallet.md),
        and a decision the engine has taken cannot be taken back. The refusal to tell the
        player (the decision still awaited, the engine untouched), or None once every stake
        is debited. A stake debited beside one refused (a Tie Wager beside its War Wager) is
        returned, and its id is spent: a decision that adds it again is refused
        (``not_an_option``) rather than debited under an id whose money already came
        back."""
        player = record.player
        if any((player, w.bet_id) in self._spent_ids for w in added):
            message = f"{record.decision!r} was refused here before; choose another option"
            return Refusal(NOT_AN_OPTION, message, record.decision)
        # One at a time: an operator's wallet answers each stake apart, where several posts
        # of one ``Wait`` are one write, whole or not at all. The last first: a War's Tie
        # Wager refused leaves nothing debited, and the War alone may still be chosen.
        debited: list[Wager] = []
        for wager in reversed(added):
            (result,) = yield Wait(
                (Post(bet_key(round_id, wager), (bet_transfer(round_id, wager),)),)
            )
            if isinstance(result, Refused | Failed):
                refused = result
                break
            debited.append(wager)
        else:
            return None
        for wager in debited:  # taken beside the refused one: returned
            yield from self._must(
                Post(cancel_key(round_id, wager), (cancel_transfer(round_id, wager),))
            )
            self._spent_ids.add((player, wager.bet_id))
        if isinstance(refused, Failed):
            if refused.code is None:
                raise TableFailure(str(refused))
            return Refusal(refused.code, refused.message, None)
        if refused.message is not None:  # an operator's wallet refused it
            return Refusal(refused.code, refused.message, record.decision)
        message = f"the balance {refused.balance} does not cover {refused.needed}"
        return Refusal(INSUFFICIENT_FUNDS, message, record.decision)

    # --- effects ----------------------------------------------------------------------------------

    def _must(self, effect: Any) -> Step:
        """Perform one effect and return its result; a failure closes the table."""
        (result,) = yield Wait((effect,))
        if isinstance(result, Failed):
            raise TableFailure(result.message, rng=result.rng)
        if isinstance(result, Refused):
            raise TableFailure(f"{result.account} holds {result.balance}, needs {result.needed}")
        return result

    def _journal(self, record: rec.Record) -> Step:
        assert self.round_id is not None
        yield from self._must(AppendRecord(self.round_id, record))

    def _emit(self, events: Iterable[object]) -> Step:
        """Post the money the events move — every settlement and award of the step at once,
        so they share a group commit — and once it is durable, send the events."""
        round_id = self.round_id or ""
        events = list(events)
        if self.game.linked:  # a shared meter pays what it holds: the link's store says
            wagers = {(p, w.bet_id): w.amount for p, ws in self._round_bets.items() for w in ws}
            ops = self.game.linked_ops(events, wagers)
            if ops:
                result = yield from self._must(SettleLinked(round_id, tuple(ops)))
                events = self.game.relinked(events, result)
        posts = money_posts(round_id, events)
        if posts:
            results = yield Wait(tuple(posts))
            for result in results:
                if isinstance(result, Failed | Refused):
                    raise TableFailure(str(result))
        for event in events:
            if isinstance(event, CardDealt) and event.face_up:
                self.cards.setdefault(event.target, []).append(event.card.code)
            if isinstance(event, RoundSettled):
                self.last_results.append(event.result)
            yield self.event(round_id, event_name(event), public_data(event), audience(event))
            if isinstance(event, WagerSettled):
                yield BalanceChanged(event.settlement.wager.player_id, "settlement")

    def event(self, round_id: str, name: str, data: dict[str, Any], to: str | None) -> Emit:
        """Event ``name`` with the table's next sequence number (also for events from outside
        its rounds' steps: the fan-out benchmarks inject paced events this way)."""
        self.lobby_mark += 1
        self.seq += 1
        return Emit(self.seq, round_id, name, data, to)


class _Stopping(Exception):
    """The table was stopped while its round waited for decisions."""


class _Irregular(Exception):
    """A device or staff found the round irregular: it is voided (``Irregular``)."""


def _bet_data(wager: Wager, *, retried: bool) -> dict[str, Any]:
    return {"bet_id": wager.bet_id, "spot": wager.spot, "amount": wager.amount, "retried": retried}
