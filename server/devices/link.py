"""One end of a device link, sans-I/O: messages in order, exactly once, over frames that may be
lost, duplicated, reordered or corrupted (docs/devices.md, "Link").

Each direction numbers its messages 1, 2, 3 … (``seq``) and every frame carries a cumulative
``ack``: the highest seq received in order. A receiver delivers only the next seq; an earlier
one is a duplicate and a later one arrives after a loss or out of order, and both are
dropped and answered with an ack, so the sender learns where the receiver stands. A sender
keeps every message until it is acknowledged and sends them all again (go-back-N) when
``retransmit_after`` passes without progress. When it has sent nothing for
``heartbeat_every`` it sends an ack-only frame, and a link that hears no valid frame for
``silence_limit`` is down.

Unacknowledged messages survive a lost connection: after the device reconnects, ``resume``
with the other side's last acknowledged seq (from the hello) drops what arrived and sends the
rest again, under the same numbers, so nothing is lost and nothing is applied twice.

No clock is read here: every call takes ``now`` (seconds, monotonic), and ``next_deadline``
says when ``tick`` must be called next. Bytes go out through ``data_to_send``.
"""

from __future__ import annotations

import hmac
from collections import deque
from dataclasses import dataclass, field

from server.devices.frames import MAC, Corrupt, Frame, FrameDecoder, encode_frame, frame_mac

__all__ = [
    "Control",
    "Delivered",
    "Dropped",
    "Link",
    "LinkDown",
    "LinkError",
]


class LinkError(Exception):
    """The link cannot go on (a queue limit, a sequence number exhausted)."""


@dataclass(frozen=True, slots=True)
class Delivered:
    """The next message body from the other side, in order, once."""

    seq: int
    body: bytes


@dataclass(frozen=True, slots=True)
class Control:
    """A control body (the hello and its answer): outside the sequence, never acknowledged.
    ``frame`` is the frame it came in (a hello again, on a serial line: the handshake reads
    the frame itself)."""

    body: bytes
    frame: Frame | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class Dropped:
    """A frame that was not delivered: ``reason`` is ``duplicate``, ``ahead`` (a gap before
    it: lost or reordered), ``unauthenticated`` (no MAC or a wrong one) or a ``Corrupt``
    reason."""

    reason: str
    seq: int = 0


@dataclass(frozen=True, slots=True)
class LinkDown:
    """Nothing valid was heard for ``silence_limit`` seconds."""

    silent_for: float


_MAX_SEQ = 2**32 - 1


class Link:
    """One end of one device's link (the server keeps one per device session, across its
    connections; a device keeps one per session in its non-volatile memory)."""

    def __init__(
        self,
        now: float,
        *,
        key: bytes | None = None,
        retransmit_after: float = 0.25,
        heartbeat_every: float = 1.0,
        silence_limit: float = 3.0,
        max_unacked: int = 1024,
    ) -> None:
        self.key = key  # frames sent carry a MAC, and frames received must
        self.retransmit_after = retransmit_after
        self.heartbeat_every = heartbeat_every
        self.silence_limit = silence_limit
        self.max_unacked = max_unacked
        self.sent_seq = 0  # the last seq given to a message of ours
        self.received = 0  # the last seq delivered from the other side, in order
        self.peer_acked = 0  # the last of ours the other side acknowledged
        self.up = True
        self.retransmits = 0
        self._unacked: deque[tuple[int, bytes]] = deque()  # (seq, body), in order
        self._decoder = FrameDecoder()
        self._out = bytearray()
        self._last_heard = now
        self._last_sent = now
        self._progress_at = now  # the last time the other side acknowledged something new
        self._ack_owed = False

    # --- sending --------------------------------------------------------------------------

    def send(self, body: bytes, now: float) -> int:
        """Queue one message body for the other side; its seq."""
        if len(self._unacked) >= self.max_unacked:
            raise LinkError(f"{self.max_unacked} messages are waiting for an ack")
        if self.sent_seq >= _MAX_SEQ:
            raise LinkError("sequence numbers exhausted: start a new session")
        self.sent_seq += 1
        if not self._unacked:
            self._progress_at = now
        self._unacked.append((self.sent_seq, body))
        self._frame(self.sent_seq, body, now)
        return self.sent_seq

    def send_control(self, body: bytes, now: float) -> None:
        """Send a body outside the sequence (the hello and its answer)."""
        self._out += encode_frame(0, self.received, body, key=self.key, control=True)
        self._last_sent = now

    def data_to_send(self) -> bytes:
        """The bytes to write now (and forget)."""
        data = bytes(self._out)
        self._out.clear()
        return data

    @property
    def unacked(self) -> int:
        return len(self._unacked)

    def memory(self) -> dict[str, object]:
        """What a device keeps in non-volatile memory to resume its session after a power
        loss: its numbering and its unacknowledged messages (JSON-compatible)."""
        return {
            "sent_seq": self.sent_seq,
            "received": self.received,
            "peer_acked": self.peer_acked,
            "unacked": [[seq, body.hex()] for seq, body in self._unacked],
        }

    def restore_memory(self, memory: dict[str, object]) -> None:
        """Take back what ``memory`` kept (then ``resume`` on the new connection)."""
        self.sent_seq = int(memory["sent_seq"])  # type: ignore[call-overload]
        self.received = int(memory["received"])  # type: ignore[call-overload]
        self.peer_acked = int(memory["peer_acked"])  # type: ignore[call-overload]
        unacked: list[list[object]] = memory["unacked"]  # type: ignore[assignment]
        self._unacked = deque((int(seq), bytes.fromhex(str(body))) for seq, body in unacked)  # type: ignore[call-overload]

    def unacked_bodies(self) -> list[bytes]:
        """The messages not yet acknowledged, in order (to carry into a new session)."""
        return [body for _, body in self._unacked]

    @property
    def last_heard(self) -> float:
        return self._last_heard

    def resume(self, peer_last_acked: int, now: float, control: bytes = b"") -> None:
        """A new connection: the other side has everything up to ``peer_last_acked``; the
        rest is sent again under the same numbers, after ``control`` (the hello's answer)."""
        self._decoder = FrameDecoder()
        self._out.clear()
        self.up = True
        self._last_heard = now
        if control:
            self.send_control(control, now)
        self._take_ack(peer_last_acked, now)
        for seq, body in self._unacked:
            self._frame(seq, body, now)
        self._progress_at = now

    def reset(self, now: float) -> None:
        """A new session: numbering starts again in both directions and nothing is kept."""
        self.sent_seq = self.received = self.peer_acked = 0
        self._unacked.clear()
        self.resume(0, now)

    # --- receiving ------------------------------------------------------------------------

    def receive_data(self, data: bytes, now: float) -> list[Delivered | Control | Dropped]:
        events: list[Delivered | Control | Dropped] = []
        for item in self._decoder.feed(data):
            if isinstance(item, Corrupt):
                events.append(Dropped(item.reason))
            else:
                events.extend(self._receive(item, now))
        if self._ack_owed:
            self._ack_owed = False
            self._frame(0, b"", now)
        return events

    def _receive(self, frame: Frame, now: float) -> list[Delivered | Control | Dropped]:
        if self.key is not None and not self._authentic(frame, self.key):
            return [Dropped("unauthenticated", frame.seq)]
        self._last_heard = now
        self._take_ack(frame.ack, now)
        if frame.ack_only:
            return []
        if frame.control:
            return [Control(frame.body, frame)]
        self._ack_owed = True  # every data frame is answered, even a dropped one
        if frame.seq == self.received + 1:
            self.received = frame.seq
            return [Delivered(frame.seq, frame.body)]
        return [Dropped("duplicate" if frame.seq <= self.received else "ahead", frame.seq)]

    @staticmethod
    def _authentic(frame: Frame, key: bytes) -> bool:
        return bool(frame.flags & MAC) and hmac.compare_digest(
            frame_mac(key, frame.signed), frame.mac
        )

    def _take_ack(self, ack: int, now: float) -> None:
        if ack > self.sent_seq:
            return  # acknowledges what was never sent (a stale session): ignore it
        if ack > self.peer_acked:
            self.peer_acked = ack
            self._progress_at = now
        unacked = self._unacked
        while unacked and unacked[0][0] <= ack:
            unacked.popleft()

    # --- time -----------------------------------------------------------------------------

    def next_deadline(self) -> float:
        """When ``tick`` must be called next."""
        deadlines = [self._last_sent + self.heartbeat_every, self._last_heard + self.silence_limit]
        if self._unacked:
            deadlines.append(self._progress_at + self.retransmit_after)
        return min(deadlines)

    def tick(self, now: float) -> LinkDown | None:
        """Send again what is overdue, send a heartbeat when due; ``LinkDown`` once the other
        side has been silent too long (reported once; ``resume`` brings the link up)."""
        if not self.up:
            return None
        silent = now - self._last_heard
        if silent >= self.silence_limit:
            self.up = False
            return LinkDown(silent)
        if self._unacked and now - self._progress_at >= self.retransmit_after:
            self.retransmits += 1
            self._progress_at = now
            for seq, body in self._unacked:
                self._frame(seq, body, now)
        if now - self._last_sent >= self.heartbeat_every:
            self._frame(0, b"", now)
        return None

    def _frame(self, seq: int, body: bytes, now: float) -> None:
        self._out += encode_frame(seq, self.received, body, key=self.key)
        self._last_sent = now
