"""A table's kept events (``server.tables.viewers.History``): what a resume replays, and
that the hundreds of thousands a busy server keeps cost its garbage collector nothing
(docs/architecture.md, "Garbage collection")."""

from __future__ import annotations

import asyncio
import gc

import pytest

from server.app import process
from server.app.process import tune_gc
from server.tables.viewers import History


class _Viewer:
    def __init__(self, player_id: str | None) -> None:
        self.player_id = player_id
        self.frames: list[bytes] = []

    def deliver(self, frame: bytes) -> None:
        self.frames.append(frame)


def test_kept_events_leave_the_collectors_reach_after_one_pass() -> None:
    gc.freeze()  # the pass below looks at this test's objects only, not others' leftovers
    try:
        history = History(500)
        for seq in range(1, 501):
            history.append(seq, b"frame %d" % seq, None if seq % 2 else "alice")
        kept = list(history._events)
        assert all(gc.is_tracked(item) for item in kept)  # new tuples are tracked at first
        gc.collect()
        assert [gc.is_tracked(item) for item in kept].count(True) == 0
    finally:
        gc.unfreeze()


def test_a_resume_replays_what_the_viewer_may_see_after_its_last_seq() -> None:
    history = History(4)
    for seq, audience in ((1, None), (2, "bob"), (3, "alice"), (4, None), (5, None)):
        history.append(seq, b"e%d" % seq, audience)
    alice = _Viewer("alice")
    assert history.replay_since(alice, 2, 5)
    assert alice.frames == [b"e3", b"e4", b"e5"]
    assert not history.replay_since(_Viewer("alice"), 0, 5)  # event 1 is no longer kept


def test_the_server_collects_on_a_clock_young_often_middle_every_tenth_full_rarely(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``tune_gc`` runs the collector from the event loop: a young pass each tick, a middle
    one each tenth tick, a full one once the middle passes since the last reach the full
    threshold — not when 3.11's allocation count says, which old objects' deaths hold back
    (docs/architecture.md, "Garbage collection")."""
    # At the real rhythm: a young pass at least every 50 ms, a full one at most every 20
    # minutes.
    assert process.YOUNG_EVERY <= 0.05
    assert process.YOUNG_EVERY * process.MIDDLE_EVERY * process.FULL_EVERY >= 20 * 60
    # The test worker's own collector is left as it is: no collection, no freeze (a
    # collection here would finalize other tests' leftovers at an unrelated moment).
    calls: list[tuple[object, ...]] = []
    middles = 0

    def collect(*generation: int) -> int:
        nonlocal middles
        calls.append(generation)
        middles = 0 if generation == (2,) else middles + (generation == (1,))
        return 0

    monkeypatch.setattr(gc, "collect", collect)
    monkeypatch.setattr(gc, "freeze", lambda: calls.append(("freeze",)))
    monkeypatch.setattr(gc, "get_count", lambda: (0, 0, middles))  # middle passes since a full
    thresholds: list[tuple[int, ...]] = []
    monkeypatch.setattr(gc, "set_threshold", lambda *t: thresholds.append(t))
    monkeypatch.setattr(process, "YOUNG_EVERY", 0.0005)
    monkeypatch.setattr(process, "FULL_EVERY", 3)

    async def two_full_passes() -> None:
        tune_gc()
        tune_gc()  # one clock per loop: a second would put passes out of step below
        while calls.count((2,)) < 2:
            await asyncio.sleep(0.001)

    asyncio.run(asyncio.wait_for(two_full_passes(), 30))
    assert calls[:2] == [(), ("freeze",)]  # what exists at start is out of reach
    young, middle, full = [(0,)] * 9, [(1,)], [(2,)]
    forty = [*young, *middle] * 3 + [*young, *full]  # the fourth middle pass is a full one
    assert calls[2:82] == forty * 2
    # The collector's own thresholds are the net between ticks: a young pass after 5,000
    # allocations (a few ms), not 50,000 (40-110 ms at 3,000 users).
    assert thresholds == [(5_000, process.MIDDLE_EVERY, 3)]
