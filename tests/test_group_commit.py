"""The one group-commit writer on a database of lists: what becomes of a group when a write
refuses, breaks a rule, is undone by the database or meets a database that failed — with
savepoints (as SQLite) and without (as PostgreSQL)."""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future
from typing import Any

import pytest

from server.group_commit import Backend, GroupCommitWriter, Verdict, writes_in_flight
from server.stores import StorageError


class Broke(Exception):
    """The database refused one write (a constraint)."""


class Undone(Exception):
    """The database undid the transaction (a deadlock broken)."""


class Failed(Exception):
    """The database failed (the disk, the link)."""


class Lists(Backend[list[Any]]):
    """A database whose transaction is a list of values, committed into ``committed``."""

    errors = (Broke, Undone, Failed)

    def __init__(self) -> None:
        super().__init__("lists")
        self.committed: list[Any] = []
        self.pending: list[Any] = []
        self.marks: list[int] = []
        self.begun = self.rolled_back = 0
        self.no_connection = False
        self.commit_fails: list[Exception | None] = []  # the next commits', in turn

    def begin(self) -> list[Any]:
        if self.no_connection:
            raise StorageError("cannot connect")
        self.begun += 1
        self.pending = []
        return self.pending

    def commit(self) -> None:
        failure = self.commit_fails.pop(0) if self.commit_fails else None
        if failure is not None:
            raise failure
        self.committed += self.pending

    def rollback(self, exc: BaseException) -> None:
        self.rolled_back += 1
        self.pending.clear()

    def savepoint(self) -> None:
        self.marks.append(len(self.pending))

    def release(self) -> None:
        self.marks.pop()

    def rollback_to(self) -> None:
        del self.pending[self.marks.pop() :]

    def verdict(self, exc: BaseException) -> Verdict:
        kinds: dict[type[BaseException], Verdict] = {
            Broke: Verdict.BROKE,
            Undone: Verdict.UNDONE,
            Failed: Verdict.FAILED,
        }
        return kinds.get(type(exc), Verdict.REFUSAL)

    def storage_error(self, exc: BaseException, verdict: Verdict) -> StorageError:
        return StorageError(f"{verdict.name}: {exc}")


class SavepointLists(Lists):
    savepoints = True


class RetryingLists(Lists):
    attempts = 3
    max_group = 4


def _add(value: Any, then: Exception | None = None) -> Any:
    def apply(pending: list[Any]) -> Any:
        pending.append(value)
        if then is not None:
            raise then
        return value

    return apply


def _group(writer: GroupCommitWriter[list[Any]], *applies: Any) -> list[Future[Any]]:
    """Submit ``applies`` while the writer is held inside a transaction, so they make one
    group together; the held write itself commits first."""
    started, release = threading.Event(), threading.Event()

    def blocker(pending: list[Any]) -> None:
        started.set()
        assert release.wait(10)

    held = writer.submit(blocker)
    assert started.wait(10)
    futures = [writer.submit(apply) for apply in applies]
    release.set()
    held.result(10)
    for future in futures:
        future.exception(10)  # resolved, one way or the other
    return futures


@pytest.mark.parametrize("backend", [Lists, SavepointLists])
def test_a_refusal_and_a_broken_rule_fail_alone_and_the_rest_commits(
    backend: type[Lists],
) -> None:
    db = backend()
    writer = GroupCommitWriter(db)
    ok, refused, broke, last = _group(
        writer, _add("a"), _add("b", ValueError("mine")), _add("c", Broke("unique")), _add("d")
    )
    assert ok.result() == "a" and last.result() == "d"
    assert isinstance(refused.exception(), ValueError)
    assert str(broke.exception()) == "BROKE: unique"
    assert db.committed == ["a", "d"]
    writer.close()
    # With savepoints: one transaction for the group. Without: the group undone, then each
    # of its writes in a transaction of its own.
    assert db.begun == (2 if db.savepoints else 1 + 1 + 4)
    assert writer.writes == 5


@pytest.mark.parametrize("backend", [Lists, SavepointLists])
def test_a_failed_database_fails_the_whole_group_and_the_writer_goes_on(
    backend: type[Lists],
) -> None:
    db = backend()
    writer = GroupCommitWriter(db)
    futures = _group(writer, _add("a"), _add("b", Failed("disk full")), _add("c"))
    assert [str(f.exception()) for f in futures] == ["FAILED: disk full"] * 3
    assert db.committed == []
    db.commit_fails = [None, Failed("I/O error")]  # the held write's commits, the group's not
    futures = _group(writer, _add("d"), _add("e"))
    assert [str(f.exception()) for f in futures] == ["FAILED: I/O error"] * 2
    assert writer.call(_add("f")) == "f"
    assert db.committed == ["f"]
    writer.close()


def test_a_transaction_the_database_undid_is_made_again_one_write_at_a_time() -> None:
    db = RetryingLists()
    writer = GroupCommitWriter(db)
    # The held write commits; the group is undone, then "a" alone once: all made.
    db.commit_fails = [None, Undone("deadlock"), Undone("deadlock")]
    futures = _group(writer, _add("a"), _add("b"))
    assert [f.result() for f in futures] == ["a", "b"]
    assert db.committed == ["a", "b"]
    assert db.begun == 1 + 1 + 2 + 1
    db.commit_fails = [Undone("deadlock")] * 3  # undone as often as it is made: it fails
    with pytest.raises(StorageError, match="FAILED: deadlock"):
        writer.call(_add("c"))
    assert writer.call(_add("d")) == "d"
    writer.close()


def test_no_connection_fails_the_group_with_why_and_the_next_write_tries_again() -> None:
    db = Lists()
    writer = GroupCommitWriter(db)
    db.no_connection = True
    with pytest.raises(StorageError, match="cannot connect"):
        writer.call(_add("a"))
    db.no_connection = False
    assert writer.call(_add("b")) == "b"
    writer.close()


def test_a_group_holds_at_most_max_group_writes_in_submission_order() -> None:
    db = RetryingLists()
    writer = GroupCommitWriter(db)
    futures = _group(writer, *(_add(n) for n in range(10)))
    assert [f.result() for f in futures] == list(range(10))
    assert db.committed == list(range(10))
    assert writer.groups == 1 + 3  # the held write's, then 4 + 4 + 2
    writer.close()


def test_every_write_counts_in_flight_until_it_resolves() -> None:
    writer = GroupCommitWriter(Lists())
    started, release = threading.Event(), threading.Event()

    def blocker(pending: list[Any]) -> None:
        started.set()
        assert release.wait(10)

    before = writes_in_flight()
    held = writer.submit(blocker)
    queued = writer.submit(_add("a"))
    assert started.wait(10)
    assert writes_in_flight() == before + 2
    release.set()
    held.result(10), queued.result(10)
    deadline = time.monotonic() + 10  # a future's callbacks run just after its waiters wake
    while writes_in_flight() != before and time.monotonic() < deadline:
        time.sleep(0.001)
    assert writes_in_flight() == before
    writer.close()


class BatchingLists(Lists):
    batches = True  # as PostgreSQL: runs of batched writes set-based


def _many(calls: list[list[Any]]) -> Any:
    """A set-based write: appends its items in one call; an item "no" is refused alone."""

    def many(pending: list[Any], items: list[Any]) -> list[tuple[bool, Any]]:
        calls.append(list(items))
        out: list[tuple[bool, Any]] = []
        for item in items:
            if item == "no":
                out.append((False, ValueError("refused alone")))
            else:
                pending.append(item)
                out.append((True, item))
        return out

    return many


def test_a_run_of_batched_writes_is_one_call_per_kind_and_a_plain_write_splits_runs() -> None:
    """A backend that ``batches`` applies a run of consecutive batched writes with one call
    per kind, in their order; an item refused by it fails alone and the group commits; a
    plain write between two runs keeps its place (the run after it is a call of its own)."""
    from server.group_commit import Batched

    db = BatchingLists()
    writer = GroupCommitWriter(db)
    calls: list[list[Any]] = []
    many = _many(calls)
    other: list[list[Any]] = []
    many_other = _many(other)

    def batched(fn: Any, item: Any) -> Any:
        started = Batched(fn, item)
        return lambda pending: started.apply(pending), started

    started, release = threading.Event(), threading.Event()
    held = writer.submit(lambda pending: started.set() or release.wait(10))
    assert started.wait(10)
    writes = [batched(many, "a"), batched(many_other, "x"), batched(many, "no"),
              batched(many, "b"), (_add("plain"), None), batched(many, "c")]  # fmt: skip
    futures = [writer.submit(apply, batched=b) for apply, b in writes]
    release.set()
    held.result(10)
    outcomes = [f.exception(10) or f.result() for f in futures]
    assert outcomes[:2] == ["a", "x"] and isinstance(outcomes[2], ValueError)
    assert outcomes[3:] == ["b", "plain", "c"]
    assert calls == [["a", "no", "b"], ["c"]] and other == [["x"]]
    assert db.committed == ["a", "b", "x", "plain", "c"]  # one kind's run, then the next's
    assert db.begun == 2  # the held write, then one transaction for all the rest
    writer.close()


def test_writes_run_together_share_one_transaction_even_at_a_groups_limit() -> None:
    """``queue_all`` (a bet's record and debit where one database keeps both) queues its
    writes as one: they are applied in the same transaction even when the group they join
    reaches ``max_group`` with the first of them."""
    import asyncio

    from server.group_commit import Prepared, joined

    db = RetryingLists()  # max_group 4
    writer = GroupCommitWriter(db)
    seen: dict[str, int] = {}

    def noting(name: str) -> Any:
        def apply(pending: list[Any]) -> str:
            seen[name] = db.begun  # which transaction applied it
            pending.append(name)
            return name

        return apply

    async def scenario() -> list[tuple[bool, Any]]:
        started, release = threading.Event(), threading.Event()
        held = writer.submit(lambda pending: started.set() or release.wait(10))
        assert started.wait(10)
        singles = [writer.submit(noting(f"w{n}")) for n in range(3)]
        together = asyncio.ensure_future(
            joined(writer.queue_all([Prepared(noting("record")), Prepared(noting("debit"))]))
        )
        await asyncio.sleep(0.05)  # the pair is queued behind the three
        release.set()
        outcomes = await together
        for single in singles:
            single.result(10)
        held.result(10)
        return outcomes

    assert asyncio.run(scenario()) == [(True, "record"), (True, "debit")]
    assert seen["record"] == seen["debit"] == seen["w0"]  # 3 + 2 > 4: kept together
    writer.close()


def test_joined_awaits_several_writers_writes_each_with_its_outcome() -> None:
    """``joined`` (a bet's record and debit on two writers): every write's outcome, in the
    order given, a refusal as ``(False, exception)`` beside the others' values; nothing to
    await gives nothing."""
    import asyncio

    from server.group_commit import Prepared, joined

    first, second = GroupCommitWriter(SavepointLists()), GroupCommitWriter(SavepointLists())
    refused = ValueError("not enough")

    async def scenario() -> list[tuple[bool, Any]]:
        assert await joined([]) == []
        futures = first.queue_all([Prepared(_add("record"))]) + second.queue_all(
            [Prepared(_add("debit", then=refused)), Prepared(_add("other"))]
        )
        return await joined(futures)

    assert asyncio.run(scenario()) == [(True, "record"), (False, refused), (True, "other")]
    first.close()
    second.close()
    closed = first.queue_all([Prepared(_add("late"))])  # a closed writer refuses at once
    assert isinstance(closed[0].exception(0), StorageError)


def test_a_waiter_that_gives_up_on_joined_writes_takes_those_not_yet_taken_up() -> None:
    """A task cancelled while it awaits ``joined`` writes (a table abandoned): the writes
    the writer has not taken up yet are not applied; its cancellation is not swallowed."""
    import asyncio

    from server.group_commit import Prepared, joined

    db = Lists()
    writer = GroupCommitWriter(db)
    started, release = threading.Event(), threading.Event()
    held = writer.submit(lambda pending: started.set() or release.wait(10))
    assert started.wait(10)

    async def scenario() -> None:
        waiting = asyncio.ensure_future(joined(writer.queue_all([Prepared(_add("late"))])))
        await asyncio.sleep(0.01)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting

    asyncio.run(scenario())
    release.set()
    held.result(10)
    writer.submit(_add("after")).result(10)
    assert db.committed == ["after"]
    writer.close()


def test_the_writers_wake_the_event_loop_once_for_all_the_waiters_resolved_meanwhile() -> None:
    """A group of bets resolved by one commit wakes the event loop once, not once a bet
    (``_Wakeups``): 200 bets' writes held, then committed together while the loop is busy —
    every waiter gets its outcome, and the writer thread called the loop once (200 times
    before)."""
    import asyncio

    from server.group_commit import Prepared, joined

    writer = GroupCommitWriter(SavepointLists())
    started, release = threading.Event(), threading.Event()
    held = writer.submit(lambda pending: started.set() or release.wait(10))
    assert started.wait(10)

    async def scenario() -> tuple[list[list[tuple[bool, Any]]], int]:
        loop = asyncio.get_running_loop()
        wakes = 0
        plain = loop.call_soon_threadsafe

        def counted(callback: Any, *args: Any) -> Any:
            nonlocal wakes
            wakes += 1
            return plain(callback, *args)

        loop.call_soon_threadsafe = counted  # type: ignore[method-assign]
        writes = [writer.queue_all([Prepared(_add(f"bet{i}"))]) for i in range(200)]
        waiters = [asyncio.ensure_future(joined(futures)) for futures in writes]
        await asyncio.sleep(0.05)  # every waiter waiting, every bet queued behind the held write
        release.set()  # the 200 are committed together and resolved ...
        deadline = time.monotonic() + 10
        while not all(f.done() for futures in writes for f in futures):
            assert time.monotonic() < deadline
            time.sleep(0.001)  # ... while the loop is busy (this thread holds it)
        return await asyncio.gather(*waiters), wakes

    outcomes, wakes = asyncio.run(scenario())
    assert outcomes == [[(True, f"bet{i}")] for i in range(200)]
    assert wakes == 1
    held.result(10)
    writer.close()


def test_callbacks_from_many_threads_each_run_once_on_the_loop() -> None:
    """``_Wakeups`` from eight threads at once, the loop running batches meanwhile: every
    callback runs exactly once, on the loop's thread."""
    import asyncio

    from server.group_commit import _wakeups_of

    async def scenario() -> list[int]:
        loop = asyncio.get_running_loop()
        wakeups = _wakeups_of(loop)
        ran: list[int] = []
        loop_thread = threading.get_ident()
        all_ran = loop.create_future()

        def callback(n: int) -> None:
            assert threading.get_ident() == loop_thread
            ran.append(n)
            if len(ran) == 8 * 500:
                all_ran.set_result(None)

        def caller(first: int) -> None:
            for n in range(first, first + 500):
                wakeups.call(loop, lambda n=n: callback(n))
                if n % 50 == 0:
                    time.sleep(0.001)  # let the loop take a batch meanwhile

        threads = [threading.Thread(target=caller, args=(k * 500,)) for k in range(8)]
        for thread in threads:
            thread.start()
        await asyncio.wait_for(all_ran, 10)
        for thread in threads:
            thread.join()
        return ran

    assert sorted(asyncio.run(scenario())) == list(range(8 * 500))


def test_a_loop_that_is_gone_leaves_no_wake_ups_behind() -> None:
    """The registry of wake-ups holds its loops weakly: once a loop is closed and dropped
    (each ``asyncio.run`` makes one), nothing keeps it alive."""
    import asyncio
    import gc
    import weakref

    from server.group_commit import _wakeups_of

    async def use() -> weakref.ref[asyncio.AbstractEventLoop]:
        loop = asyncio.get_running_loop()
        _wakeups_of(loop)
        return weakref.ref(loop)

    gone = asyncio.run(use())
    gc.collect()
    assert gone() is None


def test_each_commit_is_timed_in_the_histogram_an_operator_scrapes() -> None:
    """``croupier_store_commit_seconds``: a commit that stalls (the disk flushing) lands in
    the bucket of its time — the one place a stall with the event loop idle shows."""
    from server.group_commit import COMMIT_SECONDS

    class Stalling(Lists):
        def commit(self) -> None:
            time.sleep(0.03)
            super().commit()

    def bucket(bound: float) -> int:
        return sum(COMMIT_SECONDS.counts[: COMMIT_SECONDS.bounds.index(bound) + 1])

    total, within_25_ms, within_50_ms = sum(COMMIT_SECONDS.counts), bucket(0.025), bucket(0.05)
    writer = GroupCommitWriter(Stalling())
    assert writer.call(_add(1)) == 1
    writer.close()
    assert sum(COMMIT_SECONDS.counts) == total + 1
    assert bucket(0.025) == within_25_ms  # it took 30 ms: not within 25
    assert bucket(0.05) == within_50_ms + 1
