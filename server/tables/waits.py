"""The effects a table core waits on, performed against the table's stores and its game.

A ``Wait`` (``server.core.effects``) holds writes (ledger posts, journal records),
reads (a player's available balance) and chance requests (a card, a wheel result, a hole
card's range). ``TableStores.result`` performs one of them on the event loop and returns
what the core takes back in ``Done``: the effect's value, or ``Refused``/``Failed`` — the
core knows no store's own exceptions, so the same core runs on SQLite here and on any other
implementation of the ``Ledger`` and ``Journal`` protocols.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any, Protocol, TypeVar

from rng.errors import RngError
from server.core import effects as fx
from server.games.table import TableGame
from server.journal.journal import Journal, RoundStatus
from server.journal.records import payload_of
from server.storage import in_flight, joined
from server.tables.chance import answer_chance
from server.wallet.ledger import (
    InsufficientFunds,
    Ledger,
    OperatorRefused,
    OperatorUnavailable,
)

T = TypeVar("T")

__all__ = ["STATUS", "WALLET_UNAVAILABLE", "ChanceDevices", "TableStores", "failure"]

# A bet whose debit at an operator's wallet has an unknown outcome (docs/protocol.md).
WALLET_UNAVAILABLE = "wallet_unavailable"


class ChanceDevices(Protocol):
    """A table's devices (``server.devices.table_devices.TableDevices``)."""

    def answers(self, request: Any) -> bool: ...

    async def answer(self, chance: fx.Chance) -> Any: ...

    def stop(self) -> None: ...

    def on_console(self, deliver: Callable[[Any], None]) -> None:
        """Where the dealer console's actions outside a hold go (``commands.Console``'s
        staff record)."""


# A finished round's journal status, by the kind of its last record (and RoundFinished's).
STATUS = {"settled": RoundStatus.SETTLED, "voided": RoundStatus.VOIDED}


def _shared_writer(ledger: Any, journal: Any) -> Any:
    """The writer the ledger and the journal share, if they do (PostgreSQL: one database,
    ``server.app.stores``); None for stores of their own (the SQLite files)."""
    mine, theirs = getattr(journal, "writer", None), getattr(ledger, "writer", None)
    if mine is None or theirs is None or not hasattr(mine, "queue_all"):
        return None
    same = getattr(mine, "inner", mine) is getattr(theirs, "inner", theirs)
    return mine if same else None


def _own_writers(ledger: Any, journal: Any) -> tuple[Any, Any] | None:
    """The journal's writer and the ledger's, where both queue writes to be awaited
    together (``queue_all``); None for stores without (a test's, or another kind)."""
    mine, theirs = getattr(journal, "writer", None), getattr(ledger, "writer", None)
    if not (hasattr(mine, "queue_all") and hasattr(theirs, "queue_all")):
        return None
    if not (hasattr(journal, "append_write") and hasattr(ledger, "post_write")):
        return None
    return mine, theirs


def _value(outcome: tuple[bool, Any]) -> Any:
    ok, value = outcome
    return value if ok else failure(value)


def failure(exc: Exception) -> fx.Refused | fx.Failed:
    """An effect's exception as a table core takes it (it knows no store's own errors)."""
    if isinstance(exc, InsufficientFunds):
        return fx.Refused(exc.account, exc.balance, exc.needed)
    if isinstance(exc, OperatorRefused):  # an operator's wallet (docs/wallet.md)
        return fx.Refused("", 0, 0, exc.code, exc.message)
    if isinstance(exc, OperatorUnavailable):
        message = f"the operator's wallet did not answer, nothing was charged: {exc.reason}"
        return fx.Failed(message, code=WALLET_UNAVAILABLE)
    if isinstance(exc, RngError):
        return fx.Failed(f"the random number generator failed: {exc}", rng=True)
    return fx.Failed(f"{type(exc).__name__}: {exc}")  # StorageError, LedgerError, a refused write


class TableStores:
    """The ledger, journal and game one table's waits are performed against."""

    def __init__(
        self,
        table_id: str,
        ledger: Ledger,
        journal: Journal,
        game: TableGame,
        devices: ChanceDevices | None = None,
    ) -> None:
        self.table_id, self.ledger, self.journal, self.game = table_id, ledger, journal, game
        self.devices = devices
        # Where one database keeps both stores, their shared writer (the journal's view of
        # it, guarded like the ledger's): a bet's record and debit go in one transaction.
        self._together = _shared_writer(ledger, journal)
        # Where each has a writer of its own (the SQLite files), both: a bet's record and
        # debit are queued at once and awaited together (``group_commit.joined``).
        self._apart = None if self._together is not None else _own_writers(ledger, journal)

    async def results(self, effects: tuple[Any, ...]) -> tuple[Any, ...]:
        """Perform a ``Wait``'s effects at once; its ledger posts, when there are several
        (a round's settlements), as one write of the ledger (``Ledger.apost_many``); a bet's
        record and debit queued at once and awaited together (``_record_and_debit``), in
        the same transaction where the ledger and the journal share a writer."""
        if (
            (self._together is not None or self._apart is not None)
            and len(effects) == 2
            and type(effects[0]) is fx.AppendRecord
            and type(effects[1]) is fx.Post
        ):
            return await self._record_and_debit(effects[0], effects[1])
        posts = [effect for effect in effects if type(effect) is fx.Post]
        if len(posts) < 2:
            return tuple(await asyncio.gather(*map(self.result, effects)))
        others = [effect for effect in effects if type(effect) is not fx.Post]
        posted, *done = await asyncio.gather(self._posts(posts), *map(self.result, others))
        by_kind = iter(posted), iter(done)
        return tuple(next(by_kind[type(effect) is not fx.Post]) for effect in effects)

    async def _record_and_debit(self, record: fx.AppendRecord, post: fx.Post) -> tuple[Any, Any]:
        """A bet's journal record and its debit: in one transaction where one database keeps
        both (never one without the other, whatever instant a crash comes), else each on its
        store's writer. Both are queued at once, in that order, from this task (a task each
        would queue them a turn of the event loop later) and awaited together: the answer
        comes one turn after the (later) commit. Either half may fail alone."""
        journal: Any = self.journal
        ledger: Any = self.ledger
        halves: list[Any] = []
        makes: tuple[Callable[[], Any], ...] = (
            partial(
                journal.append_write,
                record.round_id,
                record.record.kind,
                payload_of(record.record),
                player=record.player,
            ),
            partial(ledger.post_write, post.key, post.transfers),
        )
        for make in makes:
            try:
                halves.append(make())
            except Exception as exc:  # refused before it was queued: that half fails
                halves.append(exc)
        with ledger.pending(post.transfers):  # what ``available`` holds back meanwhile
            futures: list[Any] = []
            if self._together is not None:
                futures = self._together.queue_all(
                    [h for h in halves if not isinstance(h, Exception)]
                )
            else:
                assert self._apart is not None
                for half, writer in zip(halves, self._apart, strict=True):
                    if not isinstance(half, Exception):
                        futures += writer.queue_all([half])
            with in_flight():  # until this task has the results
                outcomes = iter(await joined(futures))
        journaled, debited = (
            failure(half) if isinstance(half, Exception) else _value(next(outcomes))
            for half in halves
        )
        return journaled, debited

    async def _posts(self, posts: list[fx.Post]) -> list[Any]:
        try:
            return list(await self.ledger.apost_many([(p.key, p.transfers) for p in posts]))
        except Exception as exc:  # one refused: none is applied
            return [failure(exc)] * len(posts)

    async def result(self, effect: Any) -> Any:
        """Perform one effect of a ``Wait``: its value, or ``Refused``/``Failed``."""
        try:
            started = self._start(effect)
            return await started if isinstance(started, Awaitable) else started
        except Exception as exc:
            return failure(exc)

    @staticmethod
    async def off_loop(read: Callable[[], T]) -> T:
        """A read of the stores, off the event loop: with a shared database a round trip,
        which on the loop would hold every connection of the node. Counted in flight until
        it is in (a test's ``ManualClock`` waits for it)."""
        with in_flight():
            return await asyncio.to_thread(read)

    def _start(self, effect: Any) -> Awaitable[Any] | Any:
        """Start one effect: an awaitable (a write, on the store's writer thread), or the
        answer at once (a read, a chance outcome)."""
        match effect:
            case fx.Post(key=key, transfers=transfers):
                return self.ledger.apost(key, transfers)
            case fx.AppendRecord(round_id=round_id, record=record, player=player):
                return self.journal.aappend(
                    round_id, record.kind, payload_of(record), player=player
                )
            case fx.OpenRound(round_id=round_id, record=record):
                return self.journal.aopen_round(self.table_id, round_id, payload_of(record))
            case fx.FinishRound(round_id=round_id, record=record):
                return self.journal.afinish_round(round_id, STATUS[record.kind], payload_of(record))
            case fx.SaveState(key=key, state=state):
                return self.journal.asave_state(self.table_id, key, state)
            case fx.SettleLinked(round_id=round_id, ops=ops):
                return self._settle_linked(round_id, list(ops))
            case fx.ReadLinked():
                return self._read_linked()
            case fx.ReadAvailable(account=account):
                return self.off_loop(partial(self.ledger.available, account))
            case fx.Chance(request=request, hole=hole):
                if self.devices is not None and self.devices.answers(request):
                    return self._from_devices(effect)
                return answer_chance(self.game, request, hole)
        raise TypeError(f"table {self.table_id} cannot perform {effect!r}")

    async def _settle_linked(self, round_id: str, ops: list[dict[str, Any]]) -> Any:
        """The shared meters take the round once (``server.games.baccarat.linked``); the hit
        values a reset may need are drawn here, on the table's own thread, from its RNG."""
        game = self.game
        apply = partial(game.settle_linked, ops, game.hit_values_for(ops))
        result = await self.journal.asettle_meters(round_id, game.linked, apply)
        game.restore_linked(result["states"])
        return result

    async def _read_linked(self) -> dict[str, Any]:
        keys = self.game.linked
        states = await asyncio.to_thread(self.journal.linked_meters, list(keys.values()))
        by_name = {name: states.get(key) for name, key in keys.items()}
        self.game.restore_linked(by_name)
        return by_name

    async def _from_devices(self, chance: fx.Chance) -> Any:
        """A device's answer (a record, ``Held``, ``Irregular``, ``Decided``), or the virtual
        shoe's or wheel's where the devices leave it to them."""
        assert self.devices is not None
        answer = await self.devices.answer(chance)
        if answer == fx.VIRTUAL:
            return answer_chance(self.game, chance.request, chance.hole)
        if isinstance(answer, fx.Decided) and answer.answer == fx.VIRTUAL:
            return fx.Decided(answer.staff, answer_chance(self.game, chance.request, chance.hole))
        return answer
