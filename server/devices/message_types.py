"""What every device message is (docs/devices.md, "Hello" and "Messages"): a MessagePack map
tagged by ``type``, validated by msgspec on decoding, an unknown field refused.

The handshake (``Hello``, ``Welcome``, ``Refused``) travels in control frames and the
``fault`` every role may send in data frames; each role's own messages are declared in its
module (``server.devices.roles``) on ``Message`` and the field types here.
``server.devices.messages`` decodes them by role.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

__all__ = [
    "CardCode",
    "Count",
    "DeviceFault",
    "DeviceId",
    "DeviceMessageError",
    "GameNumber",
    "Hello",
    "Message",
    "Refused",
    "RoleName",
    "RoundId",
    "Seq",
    "Session",
    "Staff",
    "Text",
    "Welcome",
]

DeviceId = Annotated[str, msgspec.Meta(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.:\-]+$")]
# A registered role's name (``server.devices.roles``); ``decode_hello`` refuses any other.
RoleName = Annotated[str, msgspec.Meta(min_length=1, max_length=40)]
Seq = Annotated[int, msgspec.Meta(ge=0, le=2**32 - 1)]
Session = Annotated[int, msgspec.Meta(ge=1, le=2**63 - 1)]
Text = Annotated[str, msgspec.Meta(max_length=200)]
RoundId = Annotated[str, msgspec.Meta(max_length=80)]
CardCode = Annotated[str, msgspec.Meta(min_length=2, max_length=3)]
Count = Annotated[int, msgspec.Meta(ge=1, le=2**31 - 1)]
GameNumber = Annotated[int, msgspec.Meta(ge=0, le=2**31 - 1)]
Staff = Annotated[str, msgspec.Meta(max_length=64)]


class DeviceMessageError(Exception):
    """A body that is not a valid message of the kind expected."""


class Hello(msgspec.Struct, tag="hello", tag_field="type", forbid_unknown_fields=True):
    """A device's first frame on every connection (a control frame, with its MAC).

    ``session`` is the device's session number, kept in its non-volatile memory with its
    queue of unacknowledged messages: the same number resumes (the server sends again what
    the device has not acknowledged, ``last_acked``), a higher one starts afresh from seq 1,
    and a lower one is refused (a replayed hello)."""

    device: DeviceId
    role: RoleName
    session: Session
    last_acked: Seq
    vendor: Text = ""


class Welcome(msgspec.Struct, tag="welcome", tag_field="type", forbid_unknown_fields=True):
    """The server's answer: the session accepted, the last device seq it received (the device
    sends again what follows), and the link's timing."""

    session: Session
    last_acked: Seq
    heartbeat_ms: int
    silence_ms: int


class Refused(msgspec.Struct, tag="refused", tag_field="type", forbid_unknown_fields=True):
    """The hello was refused (``code``, docs/devices.md); the server closes the connection."""

    code: str
    message: Text


class Message(
    msgspec.Struct, tag_field="type", forbid_unknown_fields=True, frozen=True, omit_defaults=True
):
    """The base of every message after the welcome: a role's (``tag`` its ``type``) or the
    server's command to a role."""


class DeviceFault(Message, tag="fault", frozen=True):
    """A device's own fault: ``door_open``, ``tilt``, ``power`` …, and ``cleared`` once it is
    fixed. Every role may send it."""

    code: Annotated[str, msgspec.Meta(min_length=1, max_length=40)]
    detail: Text = ""
    cleared: bool = False
