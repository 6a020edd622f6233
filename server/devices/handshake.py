"""The server's side of a device's hello, sans-I/O (docs/devices.md, "Hello").

Every connection starts with the device's ``Hello`` in a control frame. The server accepts
it only from a device it knows, in the role it was configured for, with the frame's MAC
made under that device's key, and for a session no older than the last one it accepted from
the device (so a recorded hello replayed later is refused). It answers ``Welcome`` and
gives the connection the device's ``Link``: the same link, resumed where the device stands,
when the session is the same — nothing unacknowledged is lost across a reconnect — or a
fresh one for a new session. Anything else is answered ``Refused`` with a code and the
connection is closed by the transport, which logs it.
"""

from __future__ import annotations

import hmac
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from server.devices.frames import MAC, Frame, encode_frame, frame_mac
from server.devices.link import Link
from server.devices.messages import (
    DeviceMessageError,
    Refused,
    Welcome,
    decode_hello,
    encode_message,
)

__all__ = [
    "INVALID_HELLO",
    "NOT_A_HELLO",
    "STALE_SESSION",
    "UNAUTHENTICATED",
    "UNKNOWN_DEVICE",
    "WRONG_ROLE",
    "Accepted",
    "DeviceSessions",
    "KnownDevice",
    "Refusal",
]

NOT_A_HELLO: Final = "not_a_hello"
INVALID_HELLO: Final = "invalid_hello"
UNKNOWN_DEVICE: Final = "unknown_device"
UNAUTHENTICATED: Final = "unauthenticated"
WRONG_ROLE: Final = "wrong_role"
STALE_SESSION: Final = "stale_session"


@dataclass(frozen=True, slots=True)
class KnownDevice:
    """A device the configuration names: its id, role and key."""

    id: str
    role: str
    key: bytes


@dataclass(frozen=True, slots=True)
class Accepted:
    device: KnownDevice
    session: int
    link: Link  # its first bytes to send are the Welcome
    resumed: bool  # the same session as before: unacknowledged messages are sent again


@dataclass(frozen=True, slots=True)
class Refusal:
    code: str
    message: str
    device: str | None = None  # the id the hello claimed, when it could be read

    def reply(self) -> bytes:
        """The ``Refused`` control frame (without a MAC: the device may be unknown)."""
        return encode_frame(0, 0, encode_message(Refused(self.code, self.message)), control=True)


class DeviceSessions:
    """The known devices, and each one's current session and link."""

    def __init__(
        self,
        devices: Iterable[KnownDevice],
        *,
        retransmit_after: float = 0.25,
        heartbeat_every: float = 1.0,
        silence_limit: float = 3.0,
    ) -> None:
        self.devices = {d.id: d for d in devices}
        self.retransmit_after = retransmit_after
        self.heartbeat_every = heartbeat_every
        self.silence_limit = silence_limit
        self._current: dict[str, tuple[int, Link]] = {}
        self._restored: set[str] = set()  # restored from the journal, not yet resumed

    def restore(self, device_id: str, session: int, received: int, now: float) -> None:
        """The session and the last seq received of a device as the journal kept them across a
        server restart: an older session stays refused, and the same session resumes with
        nothing received applied twice. The server's own unacknowledged messages did not
        survive; it numbers on from what the device says it received."""
        device = self.devices.get(device_id)
        if device is None:
            return
        link = self._new_link(device, now)
        link.received = received
        self._current[device_id] = (session, link)
        self._restored.add(device_id)

    def _new_link(self, device: KnownDevice, now: float) -> Link:
        return Link(
            now,
            key=device.key,
            retransmit_after=self.retransmit_after,
            heartbeat_every=self.heartbeat_every,
            silence_limit=self.silence_limit,
        )

    def session_of(self, device_id: str) -> int | None:
        current = self._current.get(device_id)
        return current[0] if current is not None else None

    def hello(self, frame: Frame, now: float) -> Accepted | Refusal:
        """Accept or refuse a connection's first frame."""
        if not frame.control:
            return Refusal(NOT_A_HELLO, "a connection starts with a hello (a control frame)")
        try:
            hello = decode_hello(frame.body)
        except DeviceMessageError as exc:
            return Refusal(INVALID_HELLO, str(exc)[:200])
        device = self.devices.get(hello.device)
        if device is None:
            return Refusal(UNKNOWN_DEVICE, f"no device {hello.device!r} is configured", hello.device)  # fmt: skip  # noqa: E501
        if not frame.flags & MAC or not hmac.compare_digest(
            frame_mac(device.key, frame.signed), frame.mac
        ):
            return Refusal(UNAUTHENTICATED, "the hello's MAC is missing or wrong", device.id)
        if hello.role != device.role:
            message = f"{device.id} is configured as {device.role}, not {hello.role}"
            return Refusal(WRONG_ROLE, message, device.id)
        current = self._current.get(device.id)
        if current is not None and hello.session < current[0]:
            message = f"session {hello.session} is older than the current {current[0]}"
            return Refusal(STALE_SESSION, message, device.id)
        resumed = current is not None and hello.session == current[0]
        if current is not None and resumed:
            link = current[1]
            if device.id in self._restored:  # numbering on from where the device stands
                link.sent_seq = link.peer_acked = max(link.sent_seq, hello.last_acked)
        else:
            link = self._new_link(device, now)
        self._restored.discard(device.id)
        self._current[device.id] = (hello.session, link)
        welcome = Welcome(
            session=hello.session,
            last_acked=link.received,
            heartbeat_ms=round(self.heartbeat_every * 1000),
            silence_ms=round(self.silence_limit * 1000),
        )
        # The welcome goes first, then whatever the device has not acknowledged.
        link.resume(hello.last_acked, now, control=encode_message(welcome))
        return Accepted(device, hello.session, link, resumed)
