"""TITO tickets' money: issuing, redeeming and voiding them, for the stations and for the
cashier's ``croupier tickets`` alike (docs/electronic-tables.md, "Tickets").

A ticket's value waits in ``tickets:outstanding`` between its issue and its redemption. The
ledger's idempotency keys make each step happen once whoever tries it: the issue is the
batch ``ticket:<number>``; the redemption the batch ``redeem:<number>`` — at a station or at
the cashier, the first to post it wins and any other attempt is refused as already
redeemed, even from another process at the same instant; a void ``void:<number>``. The
ticket's row in the stations' store follows the ledger, and ``reconcile_tickets`` brings
rows a crash left behind up to date at start.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Final

from server.stations import tickets as validation_numbers
from server.stations.meters import CashKind, station_account
from server.stations.store import StationStore, Ticket
from server.wallet.ledger import IdempotencyConflict, Ledger, LedgerError, Transfer

__all__ = [
    "CASHIER",
    "CASH_BILLS",
    "CASH_HANDPAYS",
    "TICKETS_OUTSTANDING",
    "TICKETS_VOIDED",
    "Refusal",
    "examine",
    "hold",
    "issue",
    "open_accounts",
    "reconcile_tickets",
    "redeem",
    "redeemed_into",
    "return_unprinted",
    "void",
]

log = logging.getLogger("croupier.stations")

CASH_BILLS: Final = "cash:bills"  # the bills in the stations' cash boxes (negative: cash held)
CASH_HANDPAYS: Final = "cash:handpays"  # paid by attendants' hands
CASHIER: Final = "cash:cashier"  # tickets paid out at the cashier
TICKETS_OUTSTANDING: Final = "tickets:outstanding"  # issued, not yet redeemed or voided
TICKETS_VOIDED: Final = "tickets:voided"  # voided by the cashier: unclaimed


def open_accounts(ledger: Ledger) -> None:
    ledger.open_account(CASH_BILLS, may_go_negative=True)
    for account in (CASH_HANDPAYS, CASHIER, TICKETS_OUTSTANDING, TICKETS_VOIDED):
        ledger.open_account(account)


@dataclass(frozen=True)
class Refusal:
    """A ticket refused: ``code`` (``forged``, ``altered``, ``redeemed``, ``voided``,
    ``expired``) and a message for people."""

    code: str
    message: str


def _refused(store: StationStore, where: str, validation: str, code: str, message: str) -> Refusal:  # fmt: skip  # noqa: E501
    """Log (the store's log, and the server's) and return a refusal."""
    store.write(store.log(where, f"ticket_refused:{code}", detail=f"{validation}: {message}"))
    log.warning("ticket refused", extra={"where": where, "validation": validation, "code": code})
    return Refusal(code, message)


def examine(
    store: StationStore,
    ledger: Ledger,
    key: bytes,
    validation: str,
    *,
    by: str,
    amount: int | None = None,
    now: float | None = None,
    holder: str | None = None,
) -> Ticket | Refusal:
    """The ticket under ``validation`` if it may be redeemed now by ``by`` (``holder``: the
    station whose reader holds it, which may complete its redemption), else why not —
    every refusal logged. ``amount`` is what a reader read printed on it (None at the
    cashier, who reads the number).

    The ledger says first whether the ticket's value has left ``tickets:outstanding``: a
    redemption or void posts there, then closes the ticket's row in the stations' store,
    a second store (the ledger may be PostgreSQL), so a row may still read ``held`` or
    ``issued`` for a moment after the money moved; the ledger's answer is the one given."""
    moment = time.time() if now is None else now
    if not validation_numbers.check(key, validation):
        return _refused(store, by, validation, "forged", "not a ticket this casino issued")
    ticket = store.ticket(validation)
    if ticket is None:
        return _refused(store, by, validation, "forged", "no ticket was issued with this number")
    if amount is not None and amount != ticket.amount:
        message = f"the ticket reads {amount}, but it was issued for {ticket.amount}"
        return _refused(store, by, validation, "altered", message)
    status = _status(ledger, ticket)
    if status == "voided":
        return _refused(store, by, validation, "voided", "this ticket was voided")
    if status == "redeemed":
        return _refused(store, by, validation, "redeemed", "this ticket was redeemed already")
    held_here = ticket.status == "held" and ticket.closed_by == holder
    if ticket.status == "held" and not held_here:
        message = "this ticket is being redeemed at another station"
        return _refused(store, by, validation, "held", message)
    if ticket.expired(moment) and not held_here:  # accepted before it expired: it stands
        when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(ticket.expires_at))
        return _refused(store, by, validation, "expired", f"this ticket expired on {when}")
    return ticket


def _status(ledger: Ledger, ticket: Ticket) -> str:
    """The ticket's status, the ledger's word first: its row is closed after the ledger
    moved its value (``examine``)."""
    if ticket.status in ("issued", "held"):
        moved = ledger.batch(f"redeem:{ticket.validation}")
        if moved:
            return "voided" if moved[0].destination == TICKETS_VOIDED else "redeemed"
    return ticket.status


def hold(
    store: StationStore, ledger: Ledger, key: bytes, validation: str, *, station: str, amount: int
) -> Ticket | Refusal:
    """A station's reader holds the ticket: if it may be redeemed, it is held for that
    station — no one else may redeem it — until the reader stacks it (``redeem``) or gives
    it back (``StationStore.release_ticket``)."""
    ticket = examine(store, ledger, key, validation, by=station, amount=amount, holder=station)
    if isinstance(ticket, Refusal):
        return ticket
    if ticket.status != "held" and not store.write(store.hold_ticket(validation, station)):
        return _refused(store, station, validation, "held", "this ticket was taken meanwhile")
    return ticket


def redeem(
    store: StationStore,
    ledger: Ledger,
    key: bytes,
    validation: str,
    *,
    destination: str,
    by: str,
    amount: int | None = None,
    now: float | None = None,
    holder: str | None = None,
) -> Ticket | Refusal:
    """Redeem a ticket into ``destination`` (a station's account once its reader stacked
    the ticket it holds, ``holder``; or ``CASHIER``), as ``by``. Every refusal is logged."""
    ticket = examine(store, ledger, key, validation, by=by, amount=amount, now=now, holder=holder)
    if isinstance(ticket, Refusal):
        return ticket
    kind = CashKind.TICKET_IN if destination != CASHIER else "ticket_cashier"
    transfer = Transfer(TICKETS_OUTSTANDING, destination, ticket.amount, kind)
    try:
        posted = ledger.post(f"redeem:{validation}", [transfer])
    except IdempotencyConflict:  # redeemed elsewhere first
        store.write(store.close_ticket(validation, "redeemed", "elsewhere"))
        return _refused(store, by, validation, "redeemed", "this ticket was redeemed already")
    if not posted.applied:  # this very redemption was posted before (a retry)
        return _refused(store, by, validation, "redeemed", "this ticket was redeemed already")
    store.write(store.close_ticket(validation, "redeemed", by))
    store.write(store.log(by, "ticket_redeemed", detail=f"{validation}: {ticket.amount}"))
    return ticket


def void(
    store: StationStore, ledger: Ledger, validation: str, *, by: str, reason: str
) -> Ticket | Refusal:
    """Void an issued ticket (the cashier): it can never be redeemed; its value moves to
    ``TICKETS_VOIDED``."""
    ticket = store.ticket(validation)
    if ticket is None:
        return _refused(store, by, validation, "forged", "no ticket was issued with this number")
    status = _status(ledger, ticket)
    if status == "redeemed":
        return Refusal("redeemed", "this ticket was redeemed already")
    if status != "issued":
        return Refusal(status, f"this ticket is {status}")
    transfer = Transfer(TICKETS_OUTSTANDING, TICKETS_VOIDED, ticket.amount, "ticket_voided")
    try:
        ledger.post(f"redeem:{validation}", [transfer])
    except IdempotencyConflict:
        store.write(store.close_ticket(validation, "redeemed", "elsewhere"))
        return Refusal("redeemed", "this ticket was redeemed already")
    store.write(store.close_ticket(validation, "voided", by, reason))
    store.write(store.log(by, "ticket_voided", actor=by, detail=f"{validation}: {reason}"))
    return ticket


def issue(
    store: StationStore,
    ledger: Ledger,
    key: bytes,
    station: str,
    amount: int,
    expiry_seconds: float,
    now: float | None = None,
) -> Ticket:
    """Issue a cash-out ticket for ``amount`` of the station's credits: the row first (so a
    crash never leaves money in ``tickets:outstanding`` without its ticket), then the debit;
    ``LedgerError`` when the credits are not there (the row is voided)."""
    moment = time.time() if now is None else now
    validation = validation_numbers.new_validation(key)
    ticket = Ticket(
        validation, amount, station, moment, moment + expiry_seconds, "issued", False,
        None, None, "",
    )  # fmt: skip
    store.write(store.issue(ticket))
    transfer = Transfer(station_account(station), TICKETS_OUTSTANDING, amount, CashKind.TICKET_OUT)
    try:
        ledger.post(f"ticket:{validation}", [transfer])
    except LedgerError:
        store.write(store.close_ticket(validation, "voided", station, "never debited"))
        raise
    store.write(store.log(station, "ticket_issued", detail=f"{validation}: {amount}"))
    return ticket


def redeemed_into(ledger: Ledger, validation: str) -> str | None:
    """Where the ticket's value went when it left ``tickets:outstanding`` (a station's
    account, the cashier, ``tickets:voided``), if it did."""
    moved = ledger.batch(f"redeem:{validation}")
    return moved[0].destination if moved else None


def reconcile_tickets(store: StationStore, ledger: Ledger) -> list[str]:
    """At start: rows a crash left behind the ledger. An issued ticket that was never debited
    is voided; one whose value left ``tickets:outstanding`` is marked redeemed or voided as
    the ledger says. A ticket a reader held stays held: the station says whether it stacked
    it (credited then) or gave it back when it reconnects. The validation numbers changed."""
    history = ledger.history(TICKETS_OUTSTANDING)
    moved = {key.removeprefix("redeem:"): t for key, t in history if key.startswith("redeem:")}
    keys = {key for key, _ in history}
    changed = []
    for ticket in [t for t in store.tickets() if t.status in ("issued", "held")]:
        v = ticket.validation
        if v in moved:
            kind = moved[v].kind
            voided = kind in ("ticket_voided", CashKind.TICKET_VOID)
            store.write(store.close_ticket(v, "voided" if voided else "redeemed", "recovery"))
            changed.append(v)
        elif ticket.status == "held":
            continue
        elif f"ticket:{v}" not in keys:
            store.write(store.close_ticket(v, "voided", "recovery", "never debited"))
            changed.append(v)
    return changed


def return_unprinted(
    store: StationStore, ledger: Ledger, validation: str, *, reason: str
) -> Ticket | None:
    """A ticket its station's printer could not print: voided, its value back on the
    station's credits. None when it was not issued any more (redeemed or voided already)."""
    ticket = store.ticket(validation)
    if ticket is None or ticket.status != "issued":
        return None
    back = Transfer(TICKETS_OUTSTANDING, station_account(ticket.station), ticket.amount, CashKind.TICKET_VOID)  # fmt: skip  # noqa: E501
    try:
        ledger.post(f"redeem:{validation}", [back])
    except IdempotencyConflict:
        return None
    store.write(store.close_ticket(validation, "voided", ticket.station, f"not printed: {reason}"))
    store.write(store.log(ticket.station, "ticket_not_printed", detail=f"{validation}: {reason}"))
    return ticket
