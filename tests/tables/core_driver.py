"""A table core driven without the runtime's loop: every effect performed at once, in order,
by the runtime's own ``TableStores`` (server/tables/waits.py: a ``Wait``'s several posts as
one ``apost_many``, a store's exception as the core's ``Failed``) on a private event loop —
what the asyncio ``TableRuntime`` does, one step at a time. The stores are in-memory SQLite
unless given (PostgreSQL, say). ``faults`` makes chosen store writes raise, or the random
number generator fail, so the core's failure paths run; ``restart`` is the next start of the
server after the table closed: recovery, then a new core on the same stores.

``holding``: a player's bets, cancels and repeats (``Wait.shared``) are written at once — the
stores' writers take writes in the order given — but their answers are held back
(``held``) until the test hands them to the core with ``complete``, in whatever order it
chooses: many bets in flight. Meanwhile the driver checks that the table's life takes no step
that waits alone (no card, no "no more bets", no settlement) while a bet is in flight."""

from __future__ import annotations

import asyncio
import itertools
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rng import seeded_source
from rng.errors import HealthTestFailure
from server.core import TableCore
from server.core import commands as cmd
from server.core import effects as fx
from server.games.table import TableSettings
from server.journal import SqliteJournal
from server.journal.journal import Journal
from server.journal.records import payload_of
from server.stores import StorageError
from server.tables.casino import next_epoch
from server.tables.games import build_game
from server.tables.recovery import Recovered, recover_open_rounds
from server.tables.runtime import say
from server.tables.waits import STATUS, TableStores
from server.wallet import HOUSE, OPEN_WAGERS, PLAY_MONEY_ISSUER, SqliteLedger, Transfer
from server.wallet.ledger import Ledger, PostResult, player_account

# Which journaled record makes each revealing event possible (a card, a wheel result, the
# reader's light): a viewer may never have seen more of them than the journal holds.
REVEALED_BY = {
    "card_dealt": "card",
    "card_burned": "card",
    "ball_landed": "spin",
    "wheel_stopped": "spin",
    "hole_card_range_read": "hole_range",
}

WRITE_TIMEOUT = 60.0  # seconds: far beyond any write of these stores, even on a busy machine
# What ``Faults`` can make fail: a ledger post (one ``apost``, ``apost_many`` or a bet's
# ``post_write``), a journal record (``aappend``, a bet's ``append_write``), a round's opening
# or finishing, a saved state; "write" is any of them; "rng" a draw.
WRITE_KINDS = ("post", "record", "open", "finish", "state")
FAULT_KINDS = (*WRITE_KINDS, "write", "rng")


@dataclass
class Faults:
    """Failures on purpose. ``arm(kind, skip, count)``: of the coming writes (or draws) of
    ``kind``, the next ``skip`` go through, the ``count`` after them raise before anything
    is applied — ``StorageError``, as a store whose commit failed does, or the RNG's
    ``HealthTestFailure`` — and later ones go through again."""

    kind: str = ""
    skip: int = 0
    left: int = 0
    raised: list[tuple[str, str]] = field(default_factory=list)  # (kind, what), each failure

    def arm(self, kind: str, skip: int = 0, count: int = 1) -> None:
        assert kind in FAULT_KINDS, kind
        self.kind, self.skip, self.left = kind, skip, count

    def clear(self) -> None:
        self.left = 0

    def check(self, kind: str, what: str) -> None:
        if self.left <= 0 or (kind != self.kind and (self.kind != "write" or kind == "rng")):
            return
        if self.skip > 0:
            self.skip -= 1
            return
        self.left -= 1
        self.raised.append((kind, what))
        if kind == "rng":
            raise HealthTestFailure(f"injected: the continuous test failed at {what}")
        raise StorageError(f"injected: {kind} {what} could not be made durable")


class _FaultyLedger:
    """The table's ledger, whose awaited writes (the runtime's) may be made to fail."""

    def __init__(self, ledger: Ledger, faults: Faults) -> None:
        self._ledger, self._faults = ledger, faults

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ledger, name)

    async def apost(self, key: str, transfers: Sequence[Transfer]) -> PostResult:
        self._faults.check("post", key)
        return await self._ledger.apost(key, transfers)

    async def apost_many(
        self, batches: Sequence[tuple[str, Sequence[Transfer]]]
    ) -> list[PostResult]:
        self._faults.check("post", " + ".join(key for key, _ in batches))
        return await self._ledger.apost_many(batches)

    def post_write(self, key: str, transfers: Sequence[Transfer]) -> Any:
        """A bet's debit, made ready to be written with its record (``TableStores``)."""
        self._faults.check("post", key)
        return self._ledger.post_write(key, transfers)


class _FaultyJournal:
    """The table's journal, whose awaited writes may be made to fail."""

    def __init__(self, journal: Journal, faults: Faults) -> None:
        self._journal, self._faults = journal, faults

    def __getattr__(self, name: str) -> Any:
        return getattr(self._journal, name)

    async def aappend(self, round_id: str, kind: str, payload: Any, **kw: Any) -> Any:
        self._faults.check("record", f"{round_id} {kind}")
        return await self._journal.aappend(round_id, kind, payload, **kw)

    def append_write(self, round_id: str, kind: str, payload: Any, **kw: Any) -> Any:
        """A bet's record, made ready to be written with its debit (``TableStores``)."""
        self._faults.check("record", f"{round_id} {kind}")
        return self._journal.append_write(round_id, kind, payload, **kw)

    async def aopen_round(self, table_id: str, round_id: str, payload: Any) -> Any:
        self._faults.check("open", round_id)
        return await self._journal.aopen_round(table_id, round_id, payload)

    async def afinish_round(self, round_id: str, status: Any, payload: Any) -> Any:
        self._faults.check("finish", round_id)
        return await self._journal.afinish_round(round_id, status, payload)

    async def asave_state(self, table_id: str, key: str, state: Any) -> Any:
        self._faults.check("state", key)
        return await self._journal.asave_state(table_id, key, state)


class _FailingRng:
    """Stands where a table's devices would (``TableStores``' ``ChanceDevices``), only to
    take the draws ``Faults`` makes fail: the RNG's health test fails at that draw."""

    def __init__(self, faults: Faults) -> None:
        self._faults = faults

    def answers(self, request: Any) -> bool:
        try:
            self._faults.check("rng", type(request).__name__)
        except HealthTestFailure as exc:
            self._failure: HealthTestFailure = exc
            return True
        return False

    async def answer(self, chance: fx.Chance) -> Any:
        raise self._failure

    def stop(self) -> None:
        pass

    def on_console(self, deliver: Any) -> None:
        pass


@dataclass
class Driver:
    settings: TableSettings
    seed: int = 1
    now: float = 0.0
    # The stores (opened by the caller, who closes them); in-memory SQLite when not given.
    ledger: Any = None
    journal: Any = None
    deadline: float | None = None
    faults: Faults = field(default_factory=Faults)
    replies: dict[int, fx.Reply] = field(default_factory=dict)
    emits: list[fx.Emit] = field(default_factory=list)
    # Every store write made durable, in order; a ``Wait``'s writes as one group.
    writes: list[list[Any]] = field(default_factory=list)
    journaled: Counter[tuple[str, str]] = field(default_factory=Counter)  # (round, kind)
    revealed: Counter[tuple[str, str]] = field(default_factory=Counter)
    meters_after: dict[str, Any] = field(default_factory=dict)  # a round's id -> meter state
    finished: list[fx.RoundFinished] = field(default_factory=list)  # as the core said
    recovered: list[Recovered] = field(default_factory=list)  # by each restart's recovery
    restarts: int = 0
    holding: bool = False
    # Shared waits written, answers not yet handed to the core: wid -> (wait, results).
    held: dict[int, tuple[fx.Wait, tuple[Any, ...]]] = field(default_factory=dict)
    answered: list[int] = field(default_factory=list)  # cids, in the order replied

    def __post_init__(self) -> None:
        self._own_stores = self.ledger is None
        if self.ledger is None:
            self.ledger = SqliteLedger(":memory:")
            self.journal = SqliteJournal(":memory:")
        for account, negative in ((PLAY_MONEY_ISSUER, True), (HOUSE, True), (OPEN_WAGERS, False)):
            self.ledger.open_account(account, may_go_negative=negative)
        self.loop = asyncio.new_event_loop()
        self._cids = itertools.count(1)
        self._begin(build_game(self.settings, seeded_source(self.seed)), first_round=1, epoch=0)

    def _begin(self, game: Any, first_round: int, epoch: int) -> None:
        self.game = game
        self.core = TableCore(self.settings, game, first_round=first_round, epoch=epoch)
        self.stores = TableStores(
            self.settings.id,
            _FaultyLedger(self.ledger, self.faults),  # type: ignore[arg-type]
            _FaultyJournal(self.journal, self.faults),  # type: ignore[arg-type]
            game,
            _FailingRng(self.faults),
        )
        self.deadline = None
        self.perform(self.core.start(self.now))

    def restart(self) -> list[Recovered]:
        """The server's next start, as a node taking the table does it (server/tables/casino.py):
        a new game with the table's saved meters, recovery of its open rounds, then a new core
        numbering its rounds after the journal's last, in a new epoch. What recovery did."""
        assert self.core.finished, "restart a table whose life ended"
        self.faults.clear()  # the disk was repaired
        self.held.clear()  # answers the closed table no longer takes
        self.restarts += 1
        game = build_game(self.settings, seeded_source(f"{self.seed}/{self.restarts}"))
        saved = self.journal.load_state(self.settings.id, "meters")
        if saved is not None:
            game.restore_meters(saved)
        done = recover_open_rounds(
            self.journal, self.ledger, {self.settings.id: game}, tables={self.settings.id}
        )
        self.recovered += done
        last = self.journal.last_round(self.settings.id)
        first = int(last.rsplit(".", 1)[1]) + 1 if last else 1
        self._begin(game, first, next_epoch(self.journal, self.settings.id))
        return done

    def close(self) -> None:
        self.loop.close()
        if self._own_stores:
            self.ledger.close()
            self.journal.close()

    # --- commands ------------------------------------------------------------------------------

    def fund(self, player: str, amount: int) -> None:
        self.ledger.open_account(player_account(player))
        self.ledger.post(
            f"grant:{player}",
            [Transfer(PLAY_MONEY_ISSUER, player_account(player), amount, "grant")],
        )

    def seat(self, player: str, role: str = "player") -> str | None:
        """Join; the refusal's code, if any."""
        from server.games.errors import IllegalAction

        try:
            self.core.handle(cmd.Join(player, role), self.now)
        except IllegalAction as exc:
            return exc.code
        return None

    def play(self, kind: type, player: str, **args: Any) -> fx.Reply | None:
        """A player's command; its reply once the table has handled it (None while queued)."""
        cid = self.submit(kind, player, **args)
        return self.replies.pop(cid, None)

    def submit(self, kind: type, player: str, **args: Any) -> int:
        """Send a player's command; its cid (the reply lands in ``replies``)."""
        cid = next(self._cids)
        self.send(kind(player, **args, cid=cid))
        return cid

    def complete(self, wid: int) -> None:
        """Hand the core the answer of held wait ``wid``."""
        _, results = self.held.pop(wid)
        self.send(cmd.Done(results, wid))

    def held_stakes(self) -> int:
        """What the held bets' and cancels' posts, made durable, moved into open wagers."""
        moved = 0
        for wait, results in self.held.values():
            for effect, result in zip(wait.effects, results, strict=True):
                if isinstance(effect, fx.Post) and not _failed(result):
                    for t in effect.transfers:
                        if t.destination == OPEN_WAGERS:
                            moved += t.amount
                        elif t.source == OPEN_WAGERS:
                            moved -= t.amount
        return moved

    def advance(self, seconds: float) -> None:
        self.now += seconds
        self.send(cmd.Tick())

    def run_until(self, when: float) -> None:
        """Tick at every deadline up to ``when``."""
        while self.deadline is not None and self.deadline <= when:
            self.now = max(self.now, self.deadline)
            self.send(cmd.Tick())
        self.now = max(self.now, when)
        self.send(cmd.Tick())

    def send(self, command: cmd.Command) -> None:
        self.perform(self.core.handle(command, self.now))

    # --- effects -------------------------------------------------------------------------------

    def perform(self, effects: list[Any]) -> None:
        while True:
            wait = None
            for effect in effects:
                if isinstance(effect, fx.Emit):
                    self.emits.append(effect)
                    kind = REVEALED_BY.get(effect.name)
                    if kind is not None:
                        self.revealed[(effect.round_id, kind)] += 1
                        assert (
                            self.revealed[(effect.round_id, kind)]
                            <= self.journaled[(effect.round_id, kind)]
                        ), f"{effect.name} sent before its {kind} record was journaled"
                elif isinstance(effect, fx.Reply):
                    self.replies[effect.cid] = effect
                    self.answered.append(effect.cid)
                elif isinstance(effect, fx.Deadline):
                    self.deadline = effect.at
                elif isinstance(effect, fx.RoundFinished):
                    self.finished.append(effect)
                elif isinstance(effect, fx.Wait):
                    if effect.shared and self.holding:
                        self.held[effect.wid] = (effect, self._results(tuple(effect.effects)))
                        continue
                    # The table's life (or a decision) waits alone: never with a bet in flight.
                    assert not self.held, f"{effect} while bets were in flight"
                    wait = effect
                elif isinstance(effect, fx.Log):
                    say(effect)
            if wait is None:
                return
            results = self._results(tuple(wait.effects))
            effects = self.core.handle(cmd.Done(results, wait.wid), self.now)

    def _results(self, effects: tuple[Any, ...]) -> tuple[Any, ...]:
        """A ``Wait``'s results as the runtime gets them (one effect alone, or together)."""
        if len(effects) == 1:
            results: tuple[Any, ...] = (self._complete(self.stores.result(effects[0])),)
        else:
            results = self._complete(self.stores.results(effects))
        done = [e for e, r in zip(effects, results, strict=True) if not _failed(r)]
        writes = [e for e in done if _is_write(e)]
        if writes:
            self.writes.append(writes)
        for effect in done:
            if isinstance(effect, fx.AppendRecord):
                self.journaled[(effect.round_id, effect.record.kind)] += 1
            elif isinstance(effect, fx.FinishRound):
                self.meters_after[effect.round_id] = self.game.meter_state()
        return results

    def _complete(self, performing: Any) -> Any:
        """The effects performed: a store that never answers fails the test, not hangs it."""
        return self.loop.run_until_complete(asyncio.wait_for(performing, WRITE_TIMEOUT))


def _failed(result: Any) -> bool:
    return isinstance(result, fx.Failed | fx.Refused)


def _is_write(effect: Any) -> bool:
    return isinstance(
        effect, fx.Post | fx.AppendRecord | fx.OpenRound | fx.FinishRound | fx.SaveState
    )


def perform_write(ledger: Ledger, journal: Journal, table: str, effect: Any) -> Any:
    """One store write, synchronously (as the runtime's awaited twins do)."""
    match effect:
        case fx.Post(key=key, transfers=transfers):
            return ledger.post(key, transfers)
        case fx.AppendRecord(round_id=round_id, record=record, player=player):
            return journal.append(round_id, record.kind, payload_of(record), player=player)
        case fx.OpenRound(round_id=round_id, record=record):
            return journal.open_round(table, round_id, payload_of(record))
        case fx.FinishRound(round_id=round_id, record=record):
            return journal.finish_round(round_id, STATUS[record.kind], payload_of(record))
        case fx.SaveState(key=key, state=state):
            return journal.save_state(table, key, state)
    raise TypeError(effect)
