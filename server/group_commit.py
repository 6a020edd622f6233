"""The one group-commit writer of every store: a thread that owns the store's only writing
connection in this process and makes whatever writes are queued durable together.

The embedded SQLite files (``server.storage``) and a cluster's PostgreSQL
(``server.pg_storage``) write the same way, so the writer is written once; each database
supplies a ``Backend``: how a transaction begins, commits and rolls back on its connection
(connecting again when it must), its savepoints, what its own exceptions mean (``Verdict``)
and the ``StorageError`` they become, and its upkeep between groups (SQLite's WAL
checkpoint). What the writer promises, whatever the database:

- The event loop never waits for a disk: it ``await``s a write (``run``), or queues one at
  once and awaits it later (``queued``); tools and recovery wait (``call``).
- Writes are applied in the order they were submitted. Whatever is queued when the
  thread is free is applied in **one** transaction and made durable by **one** commit
  (group commit), and each write's future resolves only after that commit returned.
- A write that raises for its own reason (an ``InsufficientFunds``, a fencing token
  refused, a constraint it breaks: ``StorageError``) fails alone and the others of its
  group commit. With savepoints (SQLite, where one costs no round trip) it is rolled back
  to its own; without (PostgreSQL, where two round trips a write would be paid on every
  group to save work only on a rare refusal) the group is undone and its writes are made
  again, one transaction each.
- A failure of the database itself (disk full, I/O error, the connection lost) fails every
  write of its group with ``StorageError``: none of them was applied. A transaction the
  database undid itself (a deadlock broken) is made again, its writes one by one.
- A waiter that gives up before its write is taken up (its task cancelled) takes the write
  with it.
- Every write counts in ``writes_in_flight`` until the code waiting for it has the result.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import enum
import logging
import queue
import threading
import time
import weakref
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar, Final, Generic, TypeVar

from server.metrics import LATENCY_BUCKETS, Histogram
from server.prompt import Prompt
from server.stores import StorageError

__all__ = [
    "COMMIT_SECONDS",
    "Backend",
    "Batched",
    "GroupCommitWriter",
    "Prepared",
    "Verdict",
    "check_guards",
    "hold_in_flight",
    "in_flight",
    "joined",
    "writes_in_flight",
]

log = logging.getLogger("croupier.storage")

T = TypeVar("T")
C = TypeVar("C")  # a backend's connection

# Every store's commits, whichever writer thread made them (``/metrics``: the edge includes
# it). A commit is the durable flush — SQLite's fsync of its WAL, PostgreSQL's COMMIT with its
# WAL flush — which every write of the group waits for: a disk that stalls shows here, with
# the event loop idle, and nowhere else.
COMMIT_SECONDS: Final = Histogram(
    "croupier_store_commit_seconds",
    "Seconds each group commit of the stores took to be durable (every write of the group "
    "waits for it): the disk's or the database's flush, not the event loop",
    LATENCY_BUCKETS,
)
_commit_observed = threading.Lock()  # the writer threads observe it concurrently


def _observe_commit(seconds: float) -> None:
    with _commit_observed:
        COMMIT_SECONDS.observe(seconds)


# --- writes in flight ---------------------------------------------------------------------

_in_flight = 0  # writes submitted and not yet resolved (see ``writes_in_flight``)
_in_flight_lock = threading.Lock()


def _count_in_flight(change: int) -> None:
    global _in_flight
    with _in_flight_lock:
        _in_flight += change


@contextlib.contextmanager
def in_flight() -> Iterator[None]:
    """Count as one write in flight while the block runs: around awaiting several writes at
    once (``asyncio.gather`` starts them as tasks a loop iteration later and resumes the
    awaiting coroutine a loop iteration after the last), so that ``writes_in_flight`` never
    reads zero between one step's writes and the next's."""
    release = hold_in_flight()
    try:
        yield
    finally:
        release()


def hold_in_flight() -> Callable[[], None]:
    """Count as one write in flight until the returned function is called (once): a table's
    bet whose writes are answered on a task of its own, until the table has taken the
    answer."""
    _count_in_flight(+1)
    released = False

    def release() -> None:
        nonlocal released
        if not released:
            released = True
            _count_in_flight(-1)

    return release


def writes_in_flight() -> int:
    """How many writes, of every store of this process, are queued, being made, or resolved
    but not yet taken up by the coroutine awaiting them (``run`` and ``in_flight`` count
    until the coroutine has the result, so there is no instant between one write and the
    next step's write when a table looks idle). ``ManualClock.advance`` waits for them, so a
    test's table has taken its step — journal writes included — when time has moved."""
    return _in_flight


# --- what a database supplies -------------------------------------------------------------


class Verdict(enum.Enum):
    """What an exception raised inside a transaction means (``Backend.verdict``)."""

    REFUSAL = "the write's own refusal: its caller gets the exception as raised"
    BROKE = "the write broke a rule of the database (a constraint): StorageError, for it alone"
    UNDONE = "the database undid the transaction itself (a deadlock broken): make it again"
    FAILED = "the database failed (I/O, disk full, the connection lost): its group fails"


class Backend(ABC, Generic[C]):
    """One database's side of a ``GroupCommitWriter``: its connection and transactions.

    Every method but ``__init__`` runs on the writer's thread, which alone uses the
    connection. ``lock`` is held while a transaction is applied and committed (SQLite's
    in-memory database, whose one connection readers share)."""

    thread_name: ClassVar[str] = "writer"  # the thread is named ``<thread_name>:<name>``
    # True: each write in a savepoint of its own (``savepoint``, ``release``,
    # ``rollback_to``); False: a write that raises undoes its group, made again one by one.
    savepoints: ClassVar[bool] = False
    max_group: ClassVar[int | None] = None  # at most this many writes a transaction
    # True: a run of ``Batched`` writes is applied set-based, a few statements for the run
    # (worth it where each statement is a round trip); False: each alone, as ``apply``.
    batches: ClassVar[bool] = False
    attempts: ClassVar[int] = 1  # a write alone, undone by the database, is made this often
    errors: ClassVar[tuple[type[BaseException], ...]]  # what the database library raises

    def __init__(self, name: str) -> None:
        self.name = name
        self.lock: contextlib.AbstractContextManager[Any] = contextlib.nullcontext()

    @abstractmethod
    def begin(self) -> C:
        """Begin a transaction (connecting first when there is no connection); its
        connection. Raises one of ``errors``, or ``StorageError`` when no connection could
        be made."""

    @abstractmethod
    def commit(self) -> None:
        """Commit the transaction."""

    @abstractmethod
    def rollback(self, exc: BaseException) -> None:
        """End the transaction without its writes, after ``exc`` (raised by a write, by
        ``begin`` or by ``commit``); let go of a connection ``exc`` broke."""

    def savepoint(self) -> None:
        """Open the next write's savepoint (with ``savepoints``)."""
        raise NotImplementedError

    def release(self) -> None:
        """Keep the write made since ``savepoint``."""
        raise NotImplementedError

    def rollback_to(self) -> None:
        """Undo the write made since ``savepoint``, and close the savepoint."""
        raise NotImplementedError

    @abstractmethod
    def verdict(self, exc: BaseException) -> Verdict:
        """What ``exc`` means (asked after ``rollback`` when the transaction ends on it,
        before ``rollback_to`` when only the write's savepoint does)."""

    @abstractmethod
    def storage_error(self, exc: BaseException, verdict: Verdict) -> StorageError:
        """The ``StorageError`` a write fails with alone (``BROKE``), or a group
        (``FAILED``: also a transaction undone too often), after the database's ``exc``."""

    def upkeep(self, *, wrote: bool, quiet: bool) -> None:
        """Between groups: whether a group was just written, and whether nothing is queued."""

    def close(self) -> None:
        """The writer stops: everything queued is committed."""


# --- the writer ---------------------------------------------------------------------------


_Outcome = tuple[bool, Any]  # (True, what ``apply`` returned) or (False, what it fails with)


def check_guards(conn: Any, guards: list[Callable[[Any], None]]) -> None:
    """Run ``guards`` in the open transaction: those of a type with a ``check_many`` in one
    call of it, the others one by one; the first that fails raises."""
    by_kind: dict[Any, list[Callable[[Any], None]]] = {}
    for guard in guards:
        by_kind.setdefault(getattr(type(guard), "check_many", None), []).append(guard)
    for check_many, same in by_kind.items():
        if check_many is None:
            for guard in same:
                guard(conn)
        else:
            check_many(conn, same)


@dataclass(frozen=True, slots=True)
class Batched:
    """A write that may be applied set-based with the writes queued next to it (on a backend
    with ``batches``): of a run of consecutive batched writes in a group, ``many(conn,
    items)`` is called once for all the items of its kind, in their order, and returns one
    outcome per item — ``(True, value)``, or ``(False, exception)`` for an item refused for
    its own reason, which ``many`` left unapplied without undoing the others. Writes of
    different kinds in one run must commute (a ledger's batches and a journal's records);
    anything ``many`` raises undoes the group, whose writes are then made one by one.

    ``guard``: a check the write needs first, in the same transaction (a cluster table's
    fence, ``server.stores.guarded``). It travels with the item instead of wrapping
    ``many``, so that the writes of many tables still make one call of each kind; the run's
    distinct guards are checked before it, once per transaction — in one call for all of
    those whose type has a ``check_many(conn, guards)`` — and one that raises undoes the
    group as ``many`` raising does. Kinds whose ``many`` is marked ``takes_guards`` run
    after the others, and the first of them is handed the run's guards not yet checked
    instead, as a third argument, to check in its own statement (on PostgreSQL the tables'
    fences, read with the records or the debits: no round trip of their own); what it
    raises undoes the group all the same. A ``many`` marked ``locks_shared_rows`` runs
    last of all, so that rows every writer waits for (the ledger's ``wagers:open``) are
    held until the commit for as short a time as can be."""

    many: Callable[[Any, list[Any]], list[_Outcome]]
    item: Any
    guard: Callable[[Any], None] | None = None

    def apply(self, conn: Any) -> Any:
        """The write alone (what a backend without ``batches`` applies)."""
        if self.guard is not None and getattr(self.many, "takes_guards", False):
            ((ok, value),) = self.many(conn, [self.item], [self.guard])  # type: ignore[call-arg]
        else:
            if self.guard is not None:
                self.guard(conn)
            ((ok, value),) = self.many(conn, [self.item])
        if not ok:
            raise value
        return value


@dataclass(frozen=True, slots=True)
class Prepared:
    """A write made ready by a store but not submitted: ``apply`` (and its ``batched``
    form), for ``GroupCommitWriter.queue_all`` to apply with others in one transaction."""

    apply: Callable[[Any], Any]
    batched: Batched | None = None


@dataclass(slots=True)
class _Write:
    apply: Callable[[Any], Any]
    future: concurrent.futures.Future[Any]
    batched: Batched | None = None


_STOP: Final = object()


class _Undo(Exception):
    """A write raised ``error`` and its transaction ends without any of its writes."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(error)
        self.error = error


class _Wakeups:
    """Callbacks from the writer threads to one event loop, the loop woken once for all that
    are ready. ``call_soon_threadsafe`` writes a byte to wake the loop each time it is
    called; a group of N bets resolved by one commit would wake it N times (in a py-spy
    profile of a 4,000-user trial, 10 of the writer threads' 34 samples outside their
    waits for work and for the disk), and each wake-up is a turn of the loop. The first
    callback of a batch wakes the loop, the others join it (``_run`` takes them all)."""

    def __init__(self) -> None:
        # (The loop is not kept here: the registry below holds its loops weakly, and a
        # reference from the value would keep each of them alive.)
        self._lock = threading.Lock()
        self._ready: list[Callable[[], None]] = []

    def call(self, loop: asyncio.AbstractEventLoop, callback: Callable[[], None]) -> None:
        """Run ``callback`` on ``loop`` (this registry's) soon, from any thread."""
        with self._lock:
            self._ready.append(callback)
            if len(self._ready) > 1:
                return  # the wake-up of the first is on its way, and takes this one too
        if not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                loop.call_soon_threadsafe(self._run)

    def _run(self) -> None:
        with self._lock:
            ready, self._ready = self._ready, []
        for callback in ready:
            try:
                callback()
            except Exception:  # pragma: no cover - a bug: the others are still delivered
                log.exception("delivering a write's outcome failed")


_wakeups: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Wakeups] = (
    weakref.WeakKeyDictionary()
)


def _wakeups_of(loop: asyncio.AbstractEventLoop) -> _Wakeups:
    wakeups = _wakeups.get(loop)
    if wakeups is None:
        wakeups = _wakeups[loop] = _Wakeups()
    return wakeups


async def joined(futures: list[concurrent.futures.Future[Any]]) -> list[_Outcome]:
    """Await writes queued on writer threads — one writer's or several — each one's outcome,
    ``(True, value)`` or ``(False, exception)``.

    The event loop is called once, when the last of them is resolved — together with every
    other waiter whose writes were resolved meanwhile (``_Wakeups``) — and a task awaiting
    them runs one turn of the loop later; a coroutine driven by ``server.tables.eager`` (a
    bet's writes) goes on in that call, since what it waits on is a ``Prompt``. (Through
    ``asyncio.wrap_future`` and ``asyncio.gather`` it ran three turns later — the chained
    future, gather's callback, the task — each turn as long as everything else a busy loop
    runs in it.) A waiter that gives up cancels the writes not yet taken up, as ``run``'s
    does."""
    loop = asyncio.get_running_loop()
    done: Prompt[None] = Prompt(loop=loop)
    left = len(futures)
    lock = threading.Lock()
    wakeups = _wakeups_of(loop)

    def deliver() -> None:
        if not done.done():
            done.set_result(None)

    def one_more(_: concurrent.futures.Future[Any]) -> None:  # on a writer thread, mostly
        nonlocal left
        with lock:
            left -= 1
            last = left == 0
        if last:
            wakeups.call(loop, deliver)

    if not futures:
        return []
    for future in futures:
        future.add_done_callback(one_more)
    try:
        await done
    except asyncio.CancelledError:
        for future in futures:
            future.cancel()  # only those not yet taken up: a write under way ends as it ends
        raise
    return [_outcome(future) for future in futures]


def _outcome(future: concurrent.futures.Future[Any]) -> _Outcome:
    if future.cancelled():
        return (False, concurrent.futures.CancelledError())
    error = future.exception()
    return (True, future.result()) if error is None else (False, error)


class GroupCommitWriter(Generic[C]):
    """The one thread writing a store through ``backend`` (see the module's docstring).

    ``groups`` counts the transactions committed and ``writes`` the writes resolved (for
    tests and metrics). ``verified`` holds what a guard (``server.stores.guarded``: a
    table's fence) checked in the current transaction and holds until its commit, so that
    the other writes of the group need not ask again."""

    def __init__(self, backend: Backend[C]) -> None:
        self.name = backend.name
        self._backend = backend
        self._queue: queue.SimpleQueue[_Write | list[_Write] | object] = queue.SimpleQueue()
        self._closed = False
        self._close_lock = threading.Lock()
        self.verified: set[Any] = set()
        self.groups = 0
        self.writes = 0
        self._thread = threading.Thread(
            target=self._run, name=f"{backend.thread_name}:{self.name}", daemon=True
        )
        self._thread.start()

    # --- the callers' side ---------------------------------------------------------------

    def submit(
        self,
        apply: Callable[[C], T],
        *,
        counted: bool = True,
        batched: Batched | None = None,
    ) -> concurrent.futures.Future[T]:
        """Queue ``apply(connection)``; the future resolves once its transaction is durable,
        with what ``apply`` returned or raised (``StorageError`` when the database failed).
        With ``counted`` the write is in ``writes_in_flight`` until it resolves (``run``
        counts it itself, until the event loop has the result). ``batched``: the same write,
        to be applied set-based with its neighbours where the backend ``batches``."""
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        with self._close_lock:
            if self._closed:
                future.set_exception(StorageError(f"the {self.name} writer is closed"))
                return future
            if counted:
                _count_in_flight(+1)
                future.add_done_callback(lambda _: _count_in_flight(-1))
            self._queue.put(_Write(apply, future, batched))
        return future

    def queue_all(self, writes: list[Prepared]) -> list[concurrent.futures.Future[Any]]:
        """Queue ``writes`` now to be applied in the same transaction — queued as one, never
        split between groups: a bet's journal record and its debit where one database keeps
        both. Not counted in ``writes_in_flight`` (the caller holds ``in_flight``): their
        futures, to await with ``joined`` — also together with other writers'."""
        futures: list[concurrent.futures.Future[Any]] = [
            concurrent.futures.Future() for _ in writes
        ]
        with self._close_lock:
            if self._closed:
                for future in futures:
                    future.set_exception(StorageError(f"the {self.name} writer is closed"))
                return futures
            self._queue.put(
                [_Write(w.apply, f, w.batched) for w, f in zip(writes, futures, strict=True)]
            )
        return futures

    def call(self, apply: Callable[[C], T]) -> T:
        """``submit`` and wait: for tools, recovery and tests, never on a busy event loop."""
        return self.submit(apply).result()

    async def run(self, apply: Callable[[C], T], *, batched: Batched | None = None) -> T:
        """``submit`` and await, without blocking the event loop."""
        with in_flight():  # until this coroutine has the result
            return await asyncio.wrap_future(self.submit(apply, counted=False, batched=batched))

    def queued(self, apply: Callable[[C], T]) -> asyncio.Future[T]:
        """``submit`` now (so the write keeps its place in the order) and return an asyncio
        future to await later, in the running loop (counted in ``writes_in_flight`` until it
        resolves)."""
        return asyncio.wrap_future(self.submit(apply))

    def close(self) -> None:
        """Write and commit everything queued, then stop the thread. Idempotent."""
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
            self._queue.put(_STOP)
        self._thread.join()

    # --- the writer thread ---------------------------------------------------------------

    def _run(self) -> None:
        stopping = False
        while not stopping:
            group, stopping = self._take()
            # A waiter may give up (its task cancelled) until its write is taken up; from
            # here on the future cannot be cancelled, so resolving it cannot fail.
            group = [w for w in group if w.future.set_running_or_notify_cancel()]
            if group:
                try:
                    self._write(group)
                except BaseException as exc:  # pragma: no cover - a bug: never die silently
                    log.critical("%s writer failed; refusing every write", self.name, exc_info=True)
                    self._fail_everything(group, exc)
                    return
            self._backend.upkeep(wrote=bool(group), quiet=self._queue.empty())
        self._backend.close()

    def _take(self) -> tuple[list[_Write], bool]:
        """What is queued (waiting for a first write), up to the backend's ``max_group``;
        and whether ``close`` came after it (nothing is queued after that)."""
        group: list[_Write] = []
        limit = self._backend.max_group
        item = self._queue.get()
        while item is not _STOP:
            if isinstance(item, list):  # writes submitted together stay together
                group += item
            else:
                assert isinstance(item, _Write)
                group.append(item)
            if limit is not None and len(group) >= limit:
                return group, False
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                return group, False
        return group, True

    def _write(self, group: list[_Write]) -> None:
        """Apply ``group`` and resolve its futures: in one transaction, or — when that was
        undone, nothing of it applied — one write at a time."""
        if len(group) > 1:
            outcomes = self._transaction(group, again=True)
            if outcomes is not None:
                self._resolve(group, outcomes)
                return
        for write in group:
            self._alone(write)

    def _alone(self, write: _Write) -> None:
        """``write`` in a transaction of its own, made again while the database undoes it
        (up to the backend's ``attempts``)."""
        attempts = self._backend.attempts
        for attempt in range(1, attempts + 1):
            outcomes = self._transaction([write], again=attempt < attempts)
            if outcomes is not None:
                self._resolve([write], outcomes)
                return
        raise AssertionError("a last attempt always ends")  # pragma: no cover

    def _transaction(self, writes: list[_Write], *, again: bool) -> list[_Outcome] | None:
        """Apply ``writes`` in one transaction and commit it: each write's outcome. None when
        nothing of it was applied and its writes are to be made again one by one: the
        database undid it (and ``again``), or — without savepoints — one of several raised."""
        backend = self._backend
        with backend.lock:
            try:
                conn = backend.begin()
                self.verified.clear()  # what a guard checked held in the last transaction only
                outcomes = self._apply(conn, writes)
                began = time.perf_counter()
                backend.commit()
                _observe_commit(time.perf_counter() - began)
            except StorageError as exc:  # no connection could be made: nothing began
                return [(False, exc)] * len(writes)
            except _Undo as undo:
                return self._undone(writes, undo.error, again=again, by_a_write=True)
            except backend.errors as exc:  # the database failed to begin, commit …
                return self._undone(writes, exc, again=again, by_a_write=False)
        self.groups += 1
        return outcomes

    def _apply(self, conn: C, writes: list[_Write]) -> list[_Outcome]:
        """Each write in turn, in the open transaction. With savepoints, one that raises for
        its own reason is rolled back to its savepoint and the others go on; anything else
        a write raises ends the transaction (``_Undo``)."""
        backend = self._backend
        outcomes: list[_Outcome] = []
        at = 0
        while at < len(writes):
            if backend.batches and writes[at].batched is not None:
                end = at + 1
                while end < len(writes) and writes[end].batched is not None:
                    end += 1
                outcomes += self._batched(conn, writes[at:end])
                at = end
                continue
            write = writes[at]
            at += 1
            if backend.savepoints:
                backend.savepoint()
            try:
                value = write.apply(conn)
            except Exception as exc:
                verdict = backend.verdict(exc) if backend.savepoints else None
                if verdict is not Verdict.REFUSAL and verdict is not Verdict.BROKE:
                    raise _Undo(exc) from exc
                backend.rollback_to()
                self.verified.clear()  # what the write checked may have gone with it
                outcomes.append((False, self._refused(exc, verdict)))
            else:
                if backend.savepoints:
                    backend.release()
                outcomes.append((True, value))
        return outcomes

    def _batched(self, conn: C, run: list[_Write]) -> list[_Outcome]:
        """A run of batched writes: their guards checked, then each kind's items in one
        call, in their order — whichever tables they come from."""
        kinds: dict[Callable[[Any, list[Any]], list[_Outcome]], list[int]] = {}
        guards: dict[Callable[[Any], None], None] = {}  # (a dict: in order, once each)
        for n, write in enumerate(run):
            assert write.batched is not None
            kinds.setdefault(write.batched.many, []).append(n)
            guard = write.batched.guard
            if guard is not None and guard not in self.verified:
                guards[guard] = None
        checked = list(guards)  # each holds until the commit once passed (``verified``)
        takers = [many for many in kinds if getattr(many, "takes_guards", False)]
        try:
            if guards and not takers:
                check_guards(conn, list(guards))
        except Exception as exc:
            raise _Undo(exc) from exc
        outcomes: list[_Outcome | None] = [None] * len(run)
        order = sorted(  # (stable: kinds alike keep the order of their first items)
            kinds,
            key=lambda m: (
                getattr(m, "takes_guards", False),
                getattr(m, "locks_shared_rows", False),
            ),
        )
        for many in order:
            positions = kinds[many]
            items = [run[n].batched.item for n in positions]  # type: ignore[union-attr]
            try:
                if many in takers:
                    done = many(conn, items, list(guards))  # type: ignore[call-arg]
                    guards = {}  # checked by the first taker
                else:
                    done = many(conn, items)
            except Exception as exc:
                raise _Undo(exc) from exc
            for n, outcome in zip(positions, done, strict=True):
                outcomes[n] = outcome
        self.verified.update(checked)  # (not reached when one of them raised)
        return [o for o in outcomes if o is not None]

    def _undone(
        self, writes: list[_Write], exc: BaseException, *, again: bool, by_a_write: bool
    ) -> list[_Outcome] | None:
        """The transaction of ``writes`` ended on ``exc``: roll it back, and say what becomes
        of them (as ``_transaction``)."""
        backend = self._backend
        backend.rollback(exc)
        verdict = backend.verdict(exc)  # after the rollback, which may find the link gone
        if verdict is Verdict.UNDONE and again:
            return None
        if by_a_write and verdict in (Verdict.REFUSAL, Verdict.BROKE):
            if len(writes) > 1:
                return None  # made one by one: the others commit, and it fails alone
            return [(False, self._refused(exc, verdict))]
        log.error("%s: a group of %d writes failed: %s", self.name, len(writes), exc)
        return [(False, backend.storage_error(exc, Verdict.FAILED))] * len(writes)

    def _refused(self, exc: BaseException, verdict: Verdict) -> BaseException:
        """What a write that failed alone fails with."""
        return exc if verdict is Verdict.REFUSAL else self._backend.storage_error(exc, verdict)

    def _resolve(self, writes: list[_Write], outcomes: list[_Outcome]) -> None:
        # Counted first: whoever awaits a write may read the count as soon as it resolves.
        self.writes += len(writes)
        for write, (ok, value) in zip(writes, outcomes, strict=True):
            if ok:
                write.future.set_result(value)
            else:
                write.future.set_exception(value)

    def _fail_everything(self, group: list[_Write], exc: BaseException) -> None:
        """The writer cannot go on: fail what it holds and everything queued, and refuse
        what comes later (``submit`` on a closed writer)."""
        with self._close_lock:
            self._closed = True
        error = StorageError(f"the {self.name} writer failed: {exc!r}")
        for write in group:
            if not write.future.done():
                write.future.set_exception(error)
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                return
            for queued in item if isinstance(item, list) else [item]:
                if isinstance(queued, _Write) and queued.future.set_running_or_notify_cancel():
                    queued.future.set_exception(error)
