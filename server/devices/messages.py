"""The device link's message bodies: MessagePack maps tagged by ``type``, validated by msgspec
on decoding (docs/devices.md, "Hello"). This step defines the handshake; the role messages
(cards read, the reader's lamp, wheel status) follow with the roles that use them."""

from __future__ import annotations

from typing import Annotated, Final, Literal

import msgspec

__all__ = [
    "ROLES",
    "DeviceMessageError",
    "Hello",
    "Refused",
    "Welcome",
    "decode_hello",
    "decode_welcome_or_refused",
    "encode_message",
]

ROLES: Final = ("card_source", "hole_card_reader", "wheel", "dealer_console")
Role = Literal["card_source", "hole_card_reader", "wheel", "dealer_console"]
DeviceId = Annotated[str, msgspec.Meta(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.:\-]+$")]
Seq = Annotated[int, msgspec.Meta(ge=0, le=2**32 - 1)]
Session = Annotated[int, msgspec.Meta(ge=1, le=2**63 - 1)]
Text = Annotated[str, msgspec.Meta(max_length=200)]


class Hello(msgspec.Struct, tag="hello", tag_field="type", forbid_unknown_fields=True):
    """A device's first frame on every connection (a control frame, with its MAC).

    ``session`` is the device's session number, kept in its non-volatile memory with its
    queue of unacknowledged messages: the same number resumes (the server sends again what
    the device has not acknowledged, ``last_acked``), a higher one starts afresh from seq 1,
    and a lower one is refused (a replayed hello)."""

    device: DeviceId
    role: Role
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


class DeviceMessageError(Exception):
    """A body that is not a valid message of the kind expected."""


_encoder = msgspec.msgpack.Encoder()
_hello = msgspec.msgpack.Decoder(Hello)
_answer = msgspec.msgpack.Decoder(Welcome | Refused)


def encode_message(message: Hello | Welcome | Refused) -> bytes:
    return _encoder.encode(message)


def decode_hello(body: bytes) -> Hello:
    try:
        return _hello.decode(body)
    except (msgspec.DecodeError, RecursionError) as exc:  # ValidationError is a DecodeError
        raise DeviceMessageError(f"not a hello: {exc}") from None


def decode_welcome_or_refused(body: bytes) -> Welcome | Refused:
    try:
        answer: Welcome | Refused = _answer.decode(body)
        return answer
    except (msgspec.DecodeError, RecursionError) as exc:
        raise DeviceMessageError(f"not a welcome: {exc}") from None
