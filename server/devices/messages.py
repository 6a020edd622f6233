"""The device link's message bodies, decoded by role (docs/devices.md, "Hello" and "Messages").

Every body is a MessagePack map tagged by ``type`` (``server.devices.message_types``),
validated by msgspec on decoding. The handshake (``Hello``, ``Welcome``, ``Refused``) travels
in control frames; everything else in data frames. Each role sends only its own messages
(``FROM_DEVICE``) and takes its own commands: a card source reports cards read and its shoe's
state, a hole-card reader its lamp, a wheel its phase, result and warnings, a dealer console
its staff's actions, a station its cabinet's peripherals. The roles and their messages are
declared in their modules and read from the registry (``server.devices.roles``), so a role
registered later is decoded like a built-in one; the built-in roles' messages are named here
too. A vendor's adapter translates its own lines into these."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final, Union

import msgspec

from server.devices.message_types import (
    DeviceFault,
    DeviceMessageError,
    Hello,
    Message,
    Refused,
    Welcome,
)
from server.devices.roles import ROLES, device_role, registered
from server.devices.roles.base import on_change
from server.devices.roles.card_source import CardRead, ExpectCards, ShoeState
from server.devices.roles.dealer_console import CONSOLE_ACTIONS, ConsoleAction, Prompt
from server.devices.roles.hole_card_reader import Arm, HoleLamp
from server.devices.roles.station import (
    AttendantKey,
    BillCredited,
    BillEscrow,
    BillReturned,
    BillStacked,
    BillVerdict,
    CardIn,
    CardOut,
    PrintTicket,
    Screen,
    SelfTest,
    StationState,
    TicketCredited,
    TicketIn,
    TicketPrinted,
    TicketPrintFailed,
    TicketReturned,
    TicketStacked,
    TicketVerdict,
)
from server.devices.roles.wheel import Restart, StartSpin, WheelPhase, WheelResult, WheelWarning

__all__ = [
    "CONSOLE_ACTIONS",
    "FROM_DEVICE",
    "ROLES",
    "Arm",
    "AttendantKey",
    "BillCredited",
    "BillEscrow",
    "BillReturned",
    "BillStacked",
    "BillVerdict",
    "CardIn",
    "CardOut",
    "CardRead",
    "ConsoleAction",
    "DeviceFault",
    "DeviceMessageError",
    "ExpectCards",
    "Hello",
    "HoleLamp",
    "PrintTicket",
    "Prompt",
    "Refused",
    "Restart",
    "Screen",
    "SelfTest",
    "ShoeState",
    "StartSpin",
    "StationState",
    "TicketCredited",
    "TicketIn",
    "TicketPrintFailed",
    "TicketPrinted",
    "TicketReturned",
    "TicketStacked",
    "TicketVerdict",
    "Welcome",
    "WheelPhase",
    "WheelResult",
    "WheelWarning",
    "decode_from_device",
    "decode_hello",
    "decode_to_device",
    "decode_welcome_or_refused",
    "encode_message",
    "to_device",
]


class _FromDevice(Mapping[str, tuple[type[Message], ...]]):
    """Role name -> the messages its devices may send (its own, and ``fault``), read from
    the registry when asked."""

    def __getitem__(self, role: str) -> tuple[type[Message], ...]:
        return (*device_role(role).sends, DeviceFault)

    def __iter__(self) -> Iterator[str]:
        return iter([role.name for role in registered()])

    def __len__(self) -> int:
        return len(registered())


FROM_DEVICE: Final[Mapping[str, tuple[type[Message], ...]]] = _FromDevice()


def to_device() -> tuple[type[Message], ...]:
    """Every command the server sends, any role's."""
    return tuple(kind for role in registered() for kind in role.commands)


# What msgspec raises for a body it cannot decode: ``DecodeError`` (``ValidationError`` is
# one), ``UnicodeDecodeError`` for a string that is not UTF-8 (not a DecodeError), and
# ``RecursionError`` for nesting too deep.
_UNDECODABLE = (msgspec.DecodeError, UnicodeDecodeError, RecursionError)


_encoder = msgspec.msgpack.Encoder()
_hello = msgspec.msgpack.Decoder(Hello)
_answer = msgspec.msgpack.Decoder(Welcome | Refused)
# Decoders made from the registry when first needed, and again after it changes.
_from_device: dict[str, msgspec.msgpack.Decoder[Any]] = {}
_to_device: list[msgspec.msgpack.Decoder[Any]] = []


def _forget_decoders() -> None:
    _from_device.clear()
    _to_device.clear()


on_change(_forget_decoders)


def _decoder_from(role: str) -> msgspec.msgpack.Decoder[Any]:
    decoder = _from_device.get(role)
    if decoder is None:
        kinds = FROM_DEVICE[role]
        decoder = _from_device[role] = msgspec.msgpack.Decoder(Union[kinds])  # noqa: UP007 (a runtime tuple of types)
    return decoder


def encode_message(message: Hello | Welcome | Refused | Message) -> bytes:
    return _encoder.encode(message)


def decode_from_device(role: str, body: bytes) -> Any:
    """A message a device of ``role`` may send; ``DeviceMessageError`` for anything else
    (another role's message, a field missing or of the wrong type, an unknown field);
    ``UnknownRole`` for a role nobody registered."""
    decoder = _decoder_from(role)
    try:
        return decoder.decode(body)
    except _UNDECODABLE as exc:
        raise DeviceMessageError(f"not a {role} message: {exc}") from None


def decode_to_device(body: bytes) -> Any:
    """A command from the server (the simulators' side)."""
    if not _to_device:
        _to_device.append(msgspec.msgpack.Decoder(Union[to_device()]))  # noqa: UP007
    try:
        return _to_device[0].decode(body)
    except _UNDECODABLE as exc:
        raise DeviceMessageError(f"not a server command: {exc}") from None


def decode_hello(body: bytes) -> Hello:
    try:
        hello = _hello.decode(body)
    except _UNDECODABLE as exc:
        raise DeviceMessageError(f"not a hello: {exc}") from None
    if hello.role not in ROLES:
        raise DeviceMessageError(
            f"not a hello: unknown role {hello.role!r} (one of {', '.join(ROLES)}) - at `$.role`"
        )
    return hello


def decode_welcome_or_refused(body: bytes) -> Welcome | Refused:
    try:
        answer: Welcome | Refused = _answer.decode(body)
        return answer
    except _UNDECODABLE as exc:
        raise DeviceMessageError(f"not a welcome: {exc}") from None
