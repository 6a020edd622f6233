"""The player station: an electronic gaming table's cabinet (bill validator, ticket reader
and printer, player-card reader, attendant key, doors) on the device link
(docs/electronic-tables.md; docs/devices.md, "Messages").

A station answers no table's chance: it names the tables it plays itself (``[[devices]]``
``tables`` and ``seat``), and the stations' service (``server/stations/``) serves its
messages. Its role is declared here with the messages it sends and the commands it takes;
its simulator is ``server.devices.station_simulator.StationSimulator``.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from server.devices.message_types import Count, DeviceId, Message, Staff, Text
from server.devices.roles.base import DeviceRole

__all__ = [
    "ROLE",
    "AttendantKey",
    "BillCredited",
    "BillEscrow",
    "BillReturned",
    "BillStacked",
    "BillVerdict",
    "CardIn",
    "CardOut",
    "PrintTicket",
    "Screen",
    "SelfTest",
    "StationState",
    "TicketCredited",
    "TicketIn",
    "TicketPrintFailed",
    "TicketPrinted",
    "TicketReturned",
    "TicketStacked",
    "TicketVerdict",
]


Money = Annotated[int, msgspec.Meta(ge=1, le=10**12)]  # minor units
# A TITO ticket's validation number as the reader read it: the server checks that it is 18
# digits with the right check digits, and logs anything else as forged
# (docs/electronic-tables.md, "Tickets").
Validation = Annotated[str, msgspec.Meta(min_length=1, max_length=40)]


class SelfTest(Message, tag="self_test", frozen=True):
    """The station's self-test, sent after every hello: ``passed``, or why not (``detail``).
    A station takes no bets until it has passed one since it connected; a failure locks it."""

    passed: bool
    detail: Text = ""


class BillEscrow(Message, tag="bill_escrow", frozen=True):
    """The bill validator holds a bill in escrow: ``bill`` the validator's own count of bills
    (1, 2, …), ``amount`` its denomination in minor units. The server answers
    ``bill_verdict``; only a bill it accepts may be stacked."""

    bill: Count
    amount: Money


class BillStacked(Message, tag="bill_stacked", frozen=True):
    """The bill went into the cash box: its value becomes credits (once per ``bill``)."""

    bill: Count
    amount: Money


class BillReturned(Message, tag="bill_returned", frozen=True):
    """The bill was given back to the player (refused, or the validator could not stack it)."""

    bill: Count


class TicketIn(Message, tag="ticket_in", frozen=True):
    """The ticket reader read a ticket and holds it: its ``validation`` number and the
    ``amount`` printed on it. The server answers ``ticket_verdict``: accepted, the ticket is
    held for this station (nobody else may redeem it) and the reader stacks it; refused,
    the reader gives it back."""

    validation: Validation
    amount: Money


class TicketStacked(Message, tag="ticket_stacked", frozen=True):
    """The ticket the server accepted is in the stacker: now its value becomes credits."""

    validation: Validation


class TicketReturned(Message, tag="ticket_returned", frozen=True):
    """The ticket the server accepted could not be stacked (a jam) and went back to the
    player: it is redeemable again, nothing was credited."""

    validation: Validation


class TicketPrinted(Message, tag="ticket_printed", frozen=True):
    """The printer printed the ticket the server asked for (``print_ticket``)."""

    validation: Validation


class TicketPrintFailed(Message, tag="ticket_print_failed", frozen=True):
    """The printer could not print it (out of paper, jam): the ticket is voided and its
    value goes back to the station's credits."""

    validation: Validation
    reason: Text = ""


class CardIn(Message, tag="card_in", frozen=True):
    """A player card went into the card reader: ``card``, the loyalty or account number."""

    card: DeviceId


class CardOut(Message, tag="card_out", frozen=True):
    """The player card was taken out."""


class AttendantKey(Message, tag="attendant_key", frozen=True):
    """The attendant key was turned ``on`` (by ``attendant``, the id on the key or staff
    card) or back off: the attendant menu opens or closes on the touchscreen."""

    on: bool
    attendant: Staff = ""


class StationState(Message, tag="station_state", frozen=True):
    """Server → station: ``enabled`` (the station may take bills, tickets and bets) or not,
    with its ``locks``; its ``credits``; a ``handpay`` pending (minor units); whether the
    attendant was ``called`` (the tower light)."""

    enabled: bool
    credits: int
    locks: tuple[str, ...] = ()
    handpay: int = 0
    called: bool = False


class BillVerdict(Message, tag="bill_verdict", frozen=True):
    """Server → station: stack the bill in escrow (``accept``) or return it (``reason``)."""

    bill: Count
    accept: bool
    reason: Text = ""


class BillCredited(Message, tag="bill_credited", frozen=True):
    """Server → station: the stacked ``bill`` is credits now, durably. Until this comes the
    station keeps the bill in its non-volatile memory and says ``bill_stacked`` again after
    every welcome (the server credits each bill once)."""

    bill: Count


class TicketCredited(Message, tag="ticket_credited", frozen=True):
    """Server → station: the stacked ticket is credits now, durably (as ``bill_credited``)."""

    validation: Validation


class TicketVerdict(Message, tag="ticket_verdict", frozen=True):
    """Server → station: stack the ticket (``accept``: it is good for ``amount``, credited
    once it is stacked) or give it back (``reason``)."""

    validation: Validation
    accept: bool
    amount: int = 0
    reason: Text = ""


class PrintTicket(Message, tag="print_ticket", frozen=True):
    """Server → station: print a cash-out ticket (TITO)."""

    validation: Validation
    amount: Money
    issued_at: Annotated[str, msgspec.Meta(max_length=40)]  # ISO 8601, UTC
    expires_at: Annotated[str, msgspec.Meta(max_length=40)]
    station: DeviceId


class Screen(Message, tag="screen", frozen=True):
    """Server → station, after every welcome: where the cabinet's touchscreen opens
    (``path``) and the token it says hello with (valid for this session of the station)."""

    path: Annotated[str, msgspec.Meta(max_length=200)]
    token: Annotated[str, msgspec.Meta(max_length=2000)]


ROLE = DeviceRole(
    name="station",
    short="station",
    sends=(
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
    ),
    commands=(
        StationState,
        BillVerdict,
        BillCredited,
        TicketVerdict,
        TicketCredited,
        PrintTicket,
        Screen,
    ),
    serves_table=False,  # a station names its tables itself ([[devices]] tables)
)
