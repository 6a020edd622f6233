"""Who watches a table, and what a returning viewer missed.

The table runtime hands each event to its viewers through a ``Fanout`` (the server installs
one that frames the message once, ``server.net.fanout``) and keeps the last events in a
``History``, so a viewer that reconnects with the last sequence number it saw gets exactly
the events it missed — or, when they are gone or the number is another run's, a snapshot.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from typing import Any, Protocol

__all__ = ["Fanout", "History", "Viewer", "deliver_each"]


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


# One kept event: (seq, frame, audience). A plain tuple of an int, bytes and a str, which
# the garbage collector stops tracking after its first pass (a table keeps hundreds, a
# server hundreds of thousands, which every pass would walk again were they objects of a
# tracked kind; a tuple subclass such as a NamedTuple stays tracked: docs/architecture.md,
# "Garbage collection").
_Logged = tuple[int, bytes, str | None]


class History:
    """The table's last ``size`` events as sent, each with its sequence number and audience."""

    def __init__(self, size: int) -> None:
        self._events: deque[_Logged] = deque(maxlen=size)

    def append(self, seq: int, frame: bytes, audience: str | None) -> None:
        self._events.append((seq, frame, audience))

    def replay_since(self, viewer: Viewer, last_seq: int, seq: int) -> bool:
        """Send ``viewer`` every kept event after ``last_seq`` it may see; False (nothing sent)
        when ``last_seq`` is ahead of the table's ``seq`` or some of the events after it are no
        longer kept — an earlier run's number included, as runs number from their own block."""
        events = self._events
        if last_seq > seq or (last_seq < seq and (not events or events[0][0] > last_seq + 1)):
            return False
        for kept, frame, audience in events:
            if kept > last_seq and audience in (None, viewer.player_id):
                viewer.deliver(frame)
        return True
