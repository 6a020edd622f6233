"""A table's kept events (``server.tables.viewers.History``): what a resume replays, and
that the hundreds of thousands a busy server keeps cost its garbage collector nothing
(docs/architecture.md, "Garbage collection")."""

from __future__ import annotations

import gc

import pytest

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


def test_the_server_collects_young_objects_often_and_full_passes_rarely(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The test worker's own collector is left as it is: no collection, no freeze (a
    # collection here would finalize other tests' leftovers at an unrelated moment).
    calls: list[str] = []
    monkeypatch.setattr(gc, "collect", lambda *args: calls.append("collect") or 0)
    monkeypatch.setattr(gc, "freeze", lambda: calls.append("freeze"))
    thresholds: list[tuple[int, ...]] = []
    monkeypatch.setattr(gc, "set_threshold", lambda *t: thresholds.append(t))
    tune_gc()
    assert calls == ["collect", "freeze"]  # what exists at start is out of reach
    ((young, middle, full),) = thresholds
    assert young == 5_000  # a young pass of a few ms, not 40-110 ms at 50,000
    # a full pass no more often than every 250 million allocations, as before
    assert young * middle * full >= 250_000_000
