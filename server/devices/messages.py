"""The device link's message bodies: MessagePack maps tagged by ``type``, validated by msgspec
on decoding (docs/devices.md, "Hello" and "Messages").

The handshake (``Hello``, ``Welcome``, ``Refused``) travels in control frames; everything
else in data frames. Each role sends only its own messages (``FROM_DEVICE``): a card source
reports cards read and its shoe's state, a hole-card reader its lamp, a wheel its phase,
result and warnings, a dealer console its staff's actions. The server sends the commands of
each role (``TO_DEVICE``). A vendor's adapter translates its own lines into these."""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal, Union

import msgspec

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
]

ROLES: Final = ("card_source", "hole_card_reader", "wheel", "dealer_console", "station")
Role = Literal["card_source", "hole_card_reader", "wheel", "dealer_console", "station"]
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


RoundId = Annotated[str, msgspec.Meta(max_length=80)]
CardCode = Annotated[str, msgspec.Meta(min_length=2, max_length=3)]
Count = Annotated[int, msgspec.Meta(ge=1, le=2**31 - 1)]
GameNumber = Annotated[int, msgspec.Meta(ge=0, le=2**31 - 1)]
Staff = Annotated[str, msgspec.Meta(max_length=64)]


class _Message(
    msgspec.Struct, tag_field="type", forbid_unknown_fields=True, frozen=True, omit_defaults=True
):
    pass


# --- card source (a card-reading shoe) ---------------------------------------------------------


class CardRead(_Message, tag="card_read", frozen=True):
    """A card as it left the shoe: ``card`` its code (``AS``, ``10H``), ``count`` the shoe's own
    count of cards drawn since it was filled (1, 2, …: a gap is a card not read, a repeat a
    card read twice), ``round`` the round the server's ``expect_cards`` named (empty when
    none was armed), ``face_up`` a card found face up in the shoe (651a.11(a), 685a.12(a)),
    ``raw`` the reader's own reading, for the audit log."""

    card: CardCode
    count: Count
    round: RoundId = ""
    face_up: bool = False
    raw: Text = ""


class ShoeState(_Message, tag="shoe_state", frozen=True):
    """The shoe was ``inserted`` (filled: its count starts again), ``removed``, reached its
    ``cut_card``, or is ``empty``."""

    state: Literal["inserted", "removed", "cut_card", "empty"]


class ExpectCards(_Message, tag="expect_cards", frozen=True):
    """Server → shoe (and the dealer's display): no more bets in ``round``; draw its next card,
    for ``target`` (``player``, ``banker``, ``dealer``, a box). Cards read from now on are
    the round's."""

    round: RoundId
    target: Annotated[str, msgspec.Meta(max_length=40)] = ""


# --- hole-card reader (Down Under Blackjack's Masque Card Reader, 685a.7(h)) ----------------------


class HoleLamp(_Message, tag="hole_lamp", frozen=True):
    """The lamp the reader lit for the dealer's hole card (``lamp``: its colour, mapped to a
    range by the table's ``lights``), or ``none`` when it lit none."""

    round: RoundId
    lamp: Annotated[str, msgspec.Meta(min_length=1, max_length=20)]


class Arm(_Message, tag="arm", frozen=True):
    """Server → reader: read the hole card of ``round``. ``card`` is the card the server dealt
    face down when it deals from its virtual shoe (a simulated reader's input; a physical
    reader reads the card itself and ignores it)."""

    round: RoundId
    card: str = ""


# --- wheel (automated roulette or Big Six) ----------------------------------------------------


class WheelPhase(_Message, tag="wheel_phase", frozen=True):
    """The wheel's phase in its game ``game`` (its own counter)."""

    phase: Literal["idle", "spinning", "ball_launched", "no_more_bets", "result", "closed"]
    game: GameNumber


class WheelResult(_Message, tag="wheel_result", frozen=True):
    """The winning pocket (roulette: its label, ``0``, ``00``, ``17``) or section (Big Six: its
    index 0–53) of game ``game``, for ``round``."""

    round: RoundId
    game: GameNumber
    result: Annotated[str, msgspec.Meta(min_length=1, max_length=8)]


class WheelWarning(_Message, tag="wheel_warning", frozen=True):
    """A spin that produced no result: ``no_spin`` (617a.6: the ball did not complete four
    revolutions, left the wheel, a foreign object), ``ball_not_sensed``, ``ball_removed``,
    ``between_sections`` (619a.2(d): the clapper stopped between two sections), or
    ``wheel_stopped``."""

    round: RoundId
    warning: Literal[
        "no_spin", "ball_not_sensed", "ball_removed", "between_sections", "wheel_stopped"
    ]
    detail: Text = ""


class StartSpin(_Message, tag="start_spin", frozen=True):
    """Server → wheel: spin for ``round``; ``game`` is the game number the server expects."""

    round: RoundId
    game: GameNumber


class Restart(_Message, tag="restart", frozen=True):
    """Server → wheel: no spin; spin ``round`` again."""

    round: RoundId
    reason: Text = ""


# --- dealer console -------------------------------------------------------------------------

CONSOLE_ACTIONS: Final = ("confirm", "void", "continue", "dead", "reopen")


class ConsoleAction(_Message, tag="console_action", frozen=True):
    """The dealer and a supervisor (two people) decide a held round or reopen a table:
    ``confirm`` the read (or enter the physical card or result: ``value``), ``void`` the round
    (held or not: a correction), ``continue`` or call the hands ``dead`` after a wrong
    hole-card lamp (685a.12(h)), ``reopen`` a table closed for a device (685a.12(i), a tilted
    wheel). The dealer alone calls ``no_more_bets`` (betting closes now)."""

    action: Literal["confirm", "void", "continue", "dead", "reopen", "no_more_bets"]
    table: Annotated[str, msgspec.Meta(min_length=1, max_length=40)]
    dealer: Staff
    supervisor: Staff = ""
    value: Annotated[str, msgspec.Meta(max_length=8)] = ""


class Prompt(_Message, tag="prompt", frozen=True):
    """Server → console: what the table needs now (a hold's reason and its options), or why an
    action was refused."""

    table: str
    text: Text
    options: tuple[str, ...] = ()


# --- station (a player station of an electronic gaming table: its cabinet's peripherals) -------

Money = Annotated[int, msgspec.Meta(ge=1, le=10**12)]  # minor units
# A TITO ticket's validation number as the reader read it: the server checks that it is 18
# digits with the right check digits, and logs anything else as forged
# (docs/electronic-tables.md, "Tickets").
Validation = Annotated[str, msgspec.Meta(min_length=1, max_length=40)]


class SelfTest(_Message, tag="self_test", frozen=True):
    """The station's self-test, sent after every hello: ``passed``, or why not (``detail``).
    A station takes no bets until it has passed one since it connected; a failure locks it."""

    passed: bool
    detail: Text = ""


class BillEscrow(_Message, tag="bill_escrow", frozen=True):
    """The bill validator holds a bill in escrow: ``bill`` the validator's own count of bills
    (1, 2, …), ``amount`` its denomination in minor units. The server answers
    ``bill_verdict``; only a bill it accepts may be stacked."""

    bill: Count
    amount: Money


class BillStacked(_Message, tag="bill_stacked", frozen=True):
    """The bill went into the cash box: its value becomes credits (once per ``bill``)."""

    bill: Count
    amount: Money


class BillReturned(_Message, tag="bill_returned", frozen=True):
    """The bill was given back to the player (refused, or the validator could not stack it)."""

    bill: Count


class TicketIn(_Message, tag="ticket_in", frozen=True):
    """The ticket reader read a ticket and holds it: its ``validation`` number and the
    ``amount`` printed on it. The server answers ``ticket_verdict``: accepted, the ticket is
    held for this station (nobody else may redeem it) and the reader stacks it; refused,
    the reader gives it back."""

    validation: Validation
    amount: Money


class TicketStacked(_Message, tag="ticket_stacked", frozen=True):
    """The ticket the server accepted is in the stacker: now its value becomes credits."""

    validation: Validation


class TicketReturned(_Message, tag="ticket_returned", frozen=True):
    """The ticket the server accepted could not be stacked (a jam) and went back to the
    player: it is redeemable again, nothing was credited."""

    validation: Validation


class TicketPrinted(_Message, tag="ticket_printed", frozen=True):
    """The printer printed the ticket the server asked for (``print_ticket``)."""

    validation: Validation


class TicketPrintFailed(_Message, tag="ticket_print_failed", frozen=True):
    """The printer could not print it (out of paper, jam): the ticket is voided and its
    value goes back to the station's credits."""

    validation: Validation
    reason: Text = ""


class CardIn(_Message, tag="card_in", frozen=True):
    """A player card went into the card reader: ``card``, the loyalty or account number."""

    card: DeviceId


class CardOut(_Message, tag="card_out", frozen=True):
    """The player card was taken out."""


class AttendantKey(_Message, tag="attendant_key", frozen=True):
    """The attendant key was turned ``on`` (by ``attendant``, the id on the key or staff
    card) or back off: the attendant menu opens or closes on the touchscreen."""

    on: bool
    attendant: Staff = ""


class StationState(_Message, tag="station_state", frozen=True):
    """Server → station: ``enabled`` (the station may take bills, tickets and bets) or not,
    with its ``locks``; its ``credits``; a ``handpay`` pending (minor units); whether the
    attendant was ``called`` (the tower light)."""

    enabled: bool
    credits: int
    locks: tuple[str, ...] = ()
    handpay: int = 0
    called: bool = False


class BillVerdict(_Message, tag="bill_verdict", frozen=True):
    """Server → station: stack the bill in escrow (``accept``) or return it (``reason``)."""

    bill: Count
    accept: bool
    reason: Text = ""


class BillCredited(_Message, tag="bill_credited", frozen=True):
    """Server → station: the stacked ``bill`` is credits now, durably. Until this comes the
    station keeps the bill in its non-volatile memory and says ``bill_stacked`` again after
    every welcome (the server credits each bill once)."""

    bill: Count


class TicketCredited(_Message, tag="ticket_credited", frozen=True):
    """Server → station: the stacked ticket is credits now, durably (as ``bill_credited``)."""

    validation: Validation


class TicketVerdict(_Message, tag="ticket_verdict", frozen=True):
    """Server → station: stack the ticket (``accept``: it is good for ``amount``, credited
    once it is stacked) or give it back (``reason``)."""

    validation: Validation
    accept: bool
    amount: int = 0
    reason: Text = ""


class PrintTicket(_Message, tag="print_ticket", frozen=True):
    """Server → station: print a cash-out ticket (TITO)."""

    validation: Validation
    amount: Money
    issued_at: Annotated[str, msgspec.Meta(max_length=40)]  # ISO 8601, UTC
    expires_at: Annotated[str, msgspec.Meta(max_length=40)]
    station: DeviceId


class Screen(_Message, tag="screen", frozen=True):
    """Server → station, after every welcome: where the cabinet's touchscreen opens
    (``path``) and the token it says hello with (valid for this session of the station)."""

    path: Annotated[str, msgspec.Meta(max_length=200)]
    token: Annotated[str, msgspec.Meta(max_length=2000)]


# --- every role -------------------------------------------------------------------------------


class DeviceFault(_Message, tag="fault", frozen=True):
    """A device's own fault: ``door_open``, ``tilt``, ``power`` …, and ``cleared`` once it is
    fixed."""

    code: Annotated[str, msgspec.Meta(min_length=1, max_length=40)]
    detail: Text = ""
    cleared: bool = False


FROM_DEVICE: Final[dict[str, tuple[type[_Message], ...]]] = {
    "card_source": (CardRead, ShoeState, DeviceFault),
    "hole_card_reader": (HoleLamp, DeviceFault),
    "wheel": (WheelPhase, WheelResult, WheelWarning, DeviceFault),
    "dealer_console": (ConsoleAction, DeviceFault),
    "station": (
        SelfTest,
        BillEscrow,
        BillStacked,
        BillReturned,
        TicketIn,
        TicketStacked,
        TicketReturned,
        TicketPrinted,
        TicketPrintFailed,
        CardIn,
        CardOut,
        AttendantKey,
        DeviceFault,
    ),
}
TO_DEVICE: Final = (
    ExpectCards,
    Arm,
    StartSpin,
    Restart,
    Prompt,
    StationState,
    BillVerdict,
    BillCredited,
    TicketVerdict,
    TicketCredited,
    PrintTicket,
    Screen,
)


class DeviceMessageError(Exception):
    """A body that is not a valid message of the kind expected."""


# What msgspec raises for a body it cannot decode: ``DecodeError`` (``ValidationError`` is
# one), ``UnicodeDecodeError`` for a string that is not UTF-8 (not a DecodeError), and
# ``RecursionError`` for nesting too deep.
_UNDECODABLE = (msgspec.DecodeError, UnicodeDecodeError, RecursionError)


_encoder = msgspec.msgpack.Encoder()
_hello = msgspec.msgpack.Decoder(Hello)
_answer = msgspec.msgpack.Decoder(Welcome | Refused)
_from_device = {
    role: msgspec.msgpack.Decoder(Union[kinds])  # noqa: UP007 (a runtime tuple of types)
    for role, kinds in FROM_DEVICE.items()
}
_to_device = msgspec.msgpack.Decoder(Union[TO_DEVICE])  # noqa: UP007


def encode_message(message: Hello | Welcome | Refused | _Message) -> bytes:
    return _encoder.encode(message)


def decode_from_device(role: str, body: bytes) -> Any:
    """A message a device of ``role`` may send; ``DeviceMessageError`` for anything else
    (another role's message, a field missing or of the wrong type, an unknown field)."""
    try:
        return _from_device[role].decode(body)
    except _UNDECODABLE as exc:
        raise DeviceMessageError(f"not a {role} message: {exc}") from None


def decode_to_device(body: bytes) -> Any:
    """A command from the server (the simulators' side)."""
    try:
        return _to_device.decode(body)
    except _UNDECODABLE as exc:
        raise DeviceMessageError(f"not a server command: {exc}") from None


def decode_hello(body: bytes) -> Hello:
    try:
        return _hello.decode(body)
    except _UNDECODABLE as exc:
        raise DeviceMessageError(f"not a hello: {exc}") from None


def decode_welcome_or_refused(body: bytes) -> Welcome | Refused:
    try:
        answer: Welcome | Refused = _answer.decode(body)
        return answer
    except _UNDECODABLE as exc:
        raise DeviceMessageError(f"not a welcome: {exc}") from None
