"""A station's credits and the money that moves them, posted to the ledger
(docs/electronic-tables.md, "Credits", "Tickets" and "Handpays").

Credits are the balance of the station's ledger account. Money comes in as bills and
tickets and leaves as tickets and handpays; each move is one ledger batch whose
idempotency key makes it happen once, however often the station says it again (it repeats
a stacked bill or ticket after every welcome until the server confirms it), and then is
counted into the meters (``CriticalMemory.money_moved``). The tickets' own steps — issue,
hold, redeem, void — are ``cashier.py``'s, shared with the cashier's ``croupier tickets``.
"""

from __future__ import annotations

import asyncio
import time

from server.config import StationRules
from server.devices.hub import DeviceHub
from server.devices.messages import (
    BillCredited,
    BillVerdict,
    PrintTicket,
    TicketCredited,
    TicketVerdict,
)
from server.protocol.messages import CashedOut
from server.stations import cashier
from server.stations.memory import CriticalMemory
from server.stations.meters import CashKind, station_account
from server.stations.station import Station, StationRefused, iso
from server.stations.store import StationStore, Ticket
from server.wallet.ledger import Ledger, LedgerError, Transfer

__all__ = ["Credits", "print_command"]


def print_command(ticket: Ticket) -> PrintTicket:
    return PrintTicket(
        validation=ticket.validation,
        amount=ticket.amount,
        issued_at=iso(ticket.issued_at),
        expires_at=iso(ticket.expires_at),
        station=ticket.station,
    )


class Credits:
    """Bills and tickets in, tickets and handpays out: each posted once, then counted."""

    def __init__(
        self,
        rules: StationRules,
        store: StationStore,
        ledger: Ledger,
        hub: DeviceHub,
        memory: CriticalMemory,
        *,
        ticket_key: bytes,
    ) -> None:
        self.rules, self.store, self.ledger, self.hub = rules, store, ledger, hub
        self.memory, self.ticket_key = memory, ticket_key

    # --- in: bills and tickets ---------------------------------------------------------------

    def escrow(self, s: Station, bill: int, amount: int) -> None:
        """The validator holds a bill: stack it if the station takes money now and the bill
        is of a denomination it accepts, else the validator gives it back."""
        why = s.why_not()
        if why is None and amount not in self.rules.bills:
            why = f"bills of {amount} are not accepted"
        self.hub.send(s.id, BillVerdict(bill=bill, accept=why is None, reason=why or ""))

    async def bill_stacked(self, s: Station, bill: int, amount: int) -> None:
        """The bill is in the cash box: it becomes credits whatever happened since its
        escrow — once (a station says it again after every welcome until ``bill_credited``
        comes, so a crash between the link's ack and the ledger loses nothing)."""
        key = f"bill:{s.id}:{s.session}:{bill}"
        transfer = Transfer(cashier.CASH_BILLS, station_account(s.id), amount, CashKind.BILL_IN)
        posted = await self.ledger.apost(key, [transfer])
        self.hub.send(s.id, BillCredited(bill=bill))
        if posted.applied:
            await self.memory.log(s, "bill_in", detail=f"bill {bill}: {amount}")
            await self.memory.money_moved(s)

    async def ticket_in(self, s: Station, validation: str, amount: int) -> None:
        """The reader holds a ticket: hold it for this station if it is good (credited once
        the reader stacks it), else the reader gives it back."""
        why = s.why_not()
        if why is not None:
            await self.memory.log(s, "ticket_returned", detail=f"{validation}: {why}")
            verdict = TicketVerdict(validation=validation, accept=False, reason=why)
        else:
            held = await asyncio.to_thread(
                cashier.hold,
                self.store,
                self.ledger,
                self.ticket_key,
                validation,
                station=s.id,
                amount=amount,
            )
            if isinstance(held, cashier.Refusal):
                verdict = TicketVerdict(validation=validation, accept=False, reason=held.message)
            else:
                verdict = TicketVerdict(validation=validation, accept=True, amount=held.amount)
        self.hub.send(s.id, verdict)

    async def ticket_stacked(self, s: Station, validation: str) -> None:
        """The ticket this station's reader held is in the stacker: its value becomes
        credits, once (said again after every welcome until ``ticket_credited``). A ticket
        the station did not hold is not credited."""
        ticket = self.store.ticket(validation)
        account = station_account(s.id)
        if ticket is not None and ticket.status == "redeemed":
            if cashier.redeemed_into(self.ledger, validation) == account:  # said again
                self.hub.send(s.id, TicketCredited(validation=validation))
            return
        if ticket is None or ticket.status != "held" or ticket.closed_by != s.id:
            await self.memory.log(s, "ticket_refused:not_held", detail=validation)
            return
        redeemed = await asyncio.to_thread(
            cashier.redeem,
            self.store,
            self.ledger,
            self.ticket_key,
            validation,
            destination=account,
            by=s.id,
            holder=s.id,
        )
        if not isinstance(redeemed, cashier.Refusal):
            self.hub.send(s.id, TicketCredited(validation=validation))
            await self.memory.money_moved(s)

    async def ticket_returned(self, s: Station, validation: str) -> None:
        await self.store.awrite(self.store.release_ticket(validation, s.id))
        await self.memory.log(s, "ticket_returned", detail=f"{validation}: not stacked")

    # --- out: tickets ------------------------------------------------------------------------

    async def cash_out(self, s: Station, ref: int | None) -> CashedOut | None:
        """Every credit out on a ticket, printed by the station (None when the amount is
        above the ticket limit: a handpay waits for an attendant instead)."""
        amount = self.ledger.available(station_account(s.id))
        if amount <= 0:
            raise StationRefused("nothing_to_cash_out", "there are no credits to cash out")
        if amount > self.rules.ticket_limit:
            self.handpay(s, amount, "cancelled_credits", "")
            await self.memory.save(s, "handpay_pending", detail=f"cash-out {amount} above the ticket limit")  # fmt: skip  # noqa: E501
            return None
        expiry = self.rules.ticket_expiry_days * 86_400
        try:
            ticket = await asyncio.to_thread(
                cashier.issue, self.store, self.ledger, self.ticket_key, s.id, amount, expiry
            )
        except LedgerError as exc:  # the credits moved meanwhile (a bet): nothing issued
            raise StationRefused("nothing_to_cash_out", f"the credits changed: {exc}") from None
        s.last_ticket = {
            "validation": ticket.validation,
            "amount": ticket.amount,
            "expires_at": iso(ticket.expires_at),
        }
        self.hub.send(s.id, print_command(ticket))
        await self.memory.money_moved(s)
        return CashedOut(
            validation=ticket.validation,
            amount=ticket.amount,
            expires_at=iso(ticket.expires_at),
            ref=ref,
        )

    async def printed(self, s: Station, validation: str) -> None:
        await self.store.awrite(self.store.mark_printed(validation))
        await self.memory.log(s, "ticket_printed", detail=validation)

    async def reprint(self, s: Station) -> None:
        """Ask the station again for the tickets it was asked to print and never said it
        printed (its link was down, the server restarted): the money is in them."""
        for ticket in self.store.tickets():
            if ticket.station == s.id and ticket.status == "issued" and not ticket.printed:
                self.hub.send(s.id, print_command(ticket))

    async def not_printed(self, s: Station, validation: str, reason: str) -> None:
        """The printer could not print a ticket: its value comes back as credits."""
        ticket = self.store.ticket(validation)
        if ticket is None or ticket.station != s.id or ticket.printed:
            await self.memory.log(s, "print_failure_ignored", detail=f"{validation}: not this station's unprinted ticket")  # fmt: skip  # noqa: E501
            return
        returned = await asyncio.to_thread(
            cashier.return_unprinted, self.store, self.ledger, validation, reason=reason
        )
        if returned is not None:
            s.last_ticket = None
            await self.memory.money_moved(s)

    # --- out: handpays -----------------------------------------------------------------------

    def handpay(self, s: Station, amount: int, kind: str, round_id: str) -> None:
        """A handpay waits for an attendant (the station takes nothing until it is paid);
        its id names its ledger batch, so paying it twice pays once."""
        handpay_id = f"{s.id}:{round_id or 'cash-out'}:{time.time_ns()}"
        s.handpays.append({"id": handpay_id, "amount": amount, "kind": kind, "round": round_id})

    async def pay_handpay(self, s: Station, attendant: str) -> None:
        handpay = s.handpay
        if handpay is None:
            raise StationRefused("no_handpay", "no handpay is waiting")
        kind = CashKind.HANDPAY if handpay["kind"] == "jackpot" else CashKind.CANCELLED_CREDITS
        amount = int(handpay["amount"])
        transfer = Transfer(station_account(s.id), cashier.CASH_HANDPAYS, amount, kind)
        try:
            await self.ledger.apost(f"handpay:{handpay['id']}", [transfer])
        except LedgerError as exc:  # the credits are not there: never expected while locked
            raise StationRefused("no_handpay", f"the handpay cannot be paid: {exc}") from None
        s.handpays.remove(handpay)
        await self.memory.save(s, "handpay_paid", attendant, f"{kind} {amount}")
        await self.memory.money_moved(s)
