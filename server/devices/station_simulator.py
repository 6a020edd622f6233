"""A simulated player-station agent: the cabinet of an electronic gaming table (bill
validator, ticket printer and reader, player card reader, door switches, tilt, attendant key)
on the device link, in the role ``station`` (docs/devices.md, docs/protocol.md "Player
stations"). ``croupier device simulate --role station`` runs one from the command line.

It is a ``SimulatedDevice``: the same hello, link, transports (TCP, TLS, a serial line),
byte-level fault knobs and non-volatile memory (``state``: the session, the link's queue, and
here the bill validator's count and the bill in escrow), so that a restart resumes the
session and never reuses a bill number. After every welcome it reports its self-test; it
keeps the server's last ``station_state`` and ``screen`` (where the touchscreen opens, and
its token) and prints the tickets the server asks for (``print_ticket``).

The scriptable API (call it from the event loop the station runs on): ``insert_bill`` and
``insert_ticket`` send the bill or ticket and await the server's verdict (a bill accepted is
stacked, one refused returned), ``card_in``/``card_out``, ``open_door``/``close_door``,
``tilt``/``clear_tilt``, ``turn_key``/``release_key``, ``memory_fault``, and from
``SimulatedDevice`` ``go_silent``/``wake`` (frozen: nothing sent, not even heartbeats, the
connection kept open) and ``disconnect``. ``play_script`` drives it on a timeline
(``StationScript``), as the command line does.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import ssl
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import msgspec

from server.devices.messages import (
    AttendantKey,
    BillCredited,
    BillEscrow,
    BillReturned,
    BillStacked,
    BillVerdict,
    CardIn,
    CardOut,
    DeviceFault,
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
from server.devices.simulator import Faults, SimulatedDevice

__all__ = ["DOORS", "StationScript", "StationSimulator", "play_script"]

# ``open_door(which)`` -> the fault code the station reports.
DOORS: Final = {"main": "door_open", "cash_box": "cash_box_open"}
OUT_OF_PAPER: Final = "out of paper"
SELF_TEST_FAILED: Final = "simulated self-test failure"


class StationSimulator(SimulatedDevice):
    """A player station's agent. Knobs (attributes, which a test may change while it runs):
    ``self_test_fail`` (the self-test after each welcome fails), ``printer_fail`` (every
    ticket fails to print, out of paper), ``stack_fail`` (a bill or ticket the server
    accepts cannot be stacked and is returned)."""

    simulates = "station"

    def __init__(
        self,
        device_id: str,
        key: bytes,
        host: str,
        port: int,
        *,
        seed: int = 0,
        faults: Faults | None = None,
        state: Path | None = None,
        out: Callable[[str], None] = lambda line: None,
        serial: str | None = None,
        baudrate: int = 9600,
        tls: ssl.SSLContext | None = None,
        self_test_fail: bool = False,
        printer_fail: bool = False,
        stack_fail: bool = False,
        tickets_dir: Path | None = None,
        on_screen: Callable[[str, str], None] | None = None,
        on_state: Callable[[StationState], None] | None = None,
    ) -> None:
        # Set before the base class loads the state file (``_restore``).
        self.bills = 0  # the bill validator's own count of bills (non-volatile)
        self.escrow: dict[int, int] = {}  # bill -> amount, held until its verdict (non-volatile)
        # Stacked, not yet confirmed credited (non-volatile): said again after every welcome.
        self.uncredited_bills: dict[int, int] = {}
        self.uncredited_tickets: set[str] = set()
        self.printed_numbers: set[str] = set()  # never print the same ticket twice (non-volatile)
        super().__init__(
            device_id,
            "station",
            key,
            host,
            port,
            seed=seed,
            faults=faults,
            state=state,
            out=out,
            serial=serial,
            baudrate=baudrate,
            tls=tls,
        )
        self.self_test_fail = self_test_fail
        self.printer_fail = printer_fail
        self.stack_fail = stack_fail
        self.tickets_dir = tickets_dir
        self.on_screen = on_screen
        self.on_state = on_state
        self.state: StationState | None = None  # the server's last station_state
        self.screen_path: str | None = None  # the server's last screen
        self.screen_token: str | None = None
        self.printed: list[PrintTicket] = []  # tickets printed, in order
        self.print_failed: list[PrintTicket] = []  # tickets the printer could not print
        self.verdicts: list[BillVerdict | TicketVerdict] = []  # every verdict, in order
        self.doors: set[str] = set()  # doors open: ``main``, ``cash_box``
        self.tilted = False
        self.attendant: str | None = None  # who turned the attendant key, while it is on
        self.card: str | None = None  # the player card in the reader
        self._bill_waiters: dict[int, asyncio.Future[BillVerdict]] = {}
        # A ticket may be inserted again before its verdict: the verdicts pair with the
        # insertions in order.
        self._ticket_waiters: dict[str, deque[asyncio.Future[TicketVerdict]]] = {}

    # --- non-volatile memory -------------------------------------------------------------------

    def _memory(self) -> dict[str, Any]:
        memory = super()._memory()
        memory["bills"] = self.bills
        memory["escrow"] = {str(bill): amount for bill, amount in self.escrow.items()}
        memory["uncredited_bills"] = {str(b): a for b, a in self.uncredited_bills.items()}
        memory["uncredited_tickets"] = sorted(self.uncredited_tickets)
        memory["printed"] = sorted(self.printed_numbers)
        return memory

    def _restore(self, saved: dict[str, Any]) -> None:
        super()._restore(saved)
        self.bills = int(saved.get("bills", 0))
        self.escrow = {int(bill): int(amount) for bill, amount in saved.get("escrow", {}).items()}
        self.uncredited_bills = {
            int(bill): int(amount) for bill, amount in saved.get("uncredited_bills", {}).items()
        }
        self.uncredited_tickets = set(saved.get("uncredited_tickets", []))
        self.printed_numbers = set(saved.get("printed", []))

    # --- what the server says ------------------------------------------------------------------

    def _welcomed(self) -> None:
        """After every welcome: the self-test, the state of its doors and tilt (a server
        that restarted may not know it), and what it stacked that was not confirmed
        credited."""
        self.self_test()
        for which in sorted(self.doors):
            self.send(DeviceFault(code=self._door(which)))
        if self.tilted:
            self.send(DeviceFault(code="tilt"))
        for bill, amount in sorted(self.uncredited_bills.items()):
            self.send(BillStacked(bill=bill, amount=amount))
        for validation in sorted(self.uncredited_tickets):
            self.send(TicketStacked(validation=validation))

    def _answer(self, command: Any) -> None:
        if isinstance(command, BillCredited):
            self.uncredited_bills.pop(command.bill, None)
            self._save()
        elif isinstance(command, TicketCredited):
            self.uncredited_tickets.discard(command.validation)
            self._save()
        elif isinstance(command, BillVerdict):
            self._bill_verdict(command)
        elif isinstance(command, TicketVerdict):
            self._ticket_verdict(command)
        elif isinstance(command, PrintTicket):
            self._print(command)
        elif isinstance(command, StationState):
            self.state = command
            locks = ",".join(command.locks) or "-"
            self.out(
                f"{self.id}: {'enabled' if command.enabled else 'disabled'}, "
                f"credits {command.credits}, locks {locks}"
                + (f", handpay {command.handpay}" if command.handpay else "")
                + (", attendant called" if command.called else "")
            )
            if self.on_state is not None:
                self.on_state(command)
        elif isinstance(command, Screen):
            self.screen_path, self.screen_token = command.path, command.token
            if self.on_screen is not None:
                self.on_screen(command.path, command.token)
        else:
            super()._answer(command)

    def _bill_verdict(self, verdict: BillVerdict) -> None:
        self.verdicts.append(verdict)
        amount = self.escrow.pop(verdict.bill, None)
        if amount is None:
            # Not in escrow: given back already (no verdict in time), or never inserted.
            self.out(f"{self.id}: a verdict for bill {verdict.bill}, which is not in escrow")
            self._save()
        elif verdict.accept and not self.stack_fail:
            self.uncredited_bills[verdict.bill] = amount
            self._save()
            self.send(BillStacked(bill=verdict.bill, amount=amount))
            self.out(f"{self.id}: bill {verdict.bill} ({amount}) stacked")
        else:
            self.send(BillReturned(bill=verdict.bill))
            why = verdict.reason if not verdict.accept else "it could not be stacked"
            self.out(f"{self.id}: bill {verdict.bill} ({amount}) returned: {why}")
        waiter = self._bill_waiters.pop(verdict.bill, None)
        if waiter is not None and not waiter.done():
            waiter.set_result(verdict)

    def _ticket_verdict(self, verdict: TicketVerdict) -> None:
        self.verdicts.append(verdict)
        if verdict.accept and self.stack_fail:
            self.send(TicketReturned(validation=verdict.validation))
            self.out(f"{self.id}: ticket {verdict.validation} could not be stacked: returned")
        elif verdict.accept:
            self.uncredited_tickets.add(verdict.validation)
            self._save()
            self.send(TicketStacked(validation=verdict.validation))
            self.out(f"{self.id}: ticket {verdict.validation} stacked for {verdict.amount}")
        else:
            self.out(f"{self.id}: ticket {verdict.validation} returned: {verdict.reason}")
        waiters = self._ticket_waiters.get(verdict.validation)
        if not waiters:
            return
        waiter = waiters.popleft()
        if not waiters:
            del self._ticket_waiters[verdict.validation]
        if not waiter.done():
            waiter.set_result(verdict)

    def _print(self, ticket: PrintTicket) -> None:
        """Print a cash-out ticket: a file in ``tickets_dir`` (``<validation>.json``), then
        ``ticket_printed``; or ``ticket_print_failed`` (the knob ``printer_fail``, a number
        a barcode cannot carry, a file that cannot be written)."""
        if ticket.validation in self.printed_numbers:  # asked again: it was printed
            self.send(TicketPrinted(validation=ticket.validation))
            return
        reason = OUT_OF_PAPER if self.printer_fail else None
        if reason is None and not (ticket.validation.isascii() and ticket.validation.isdigit()):
            # A TITO barcode (interleaved 2 of 5) carries digits only; and the number names
            # a file.
            reason = "not a barcode number (digits only)"
        if reason is None and self.tickets_dir is not None:
            fields = msgspec.structs.asdict(ticket)
            try:
                self.tickets_dir.mkdir(parents=True, exist_ok=True)
                path = self.tickets_dir / f"{ticket.validation}.json"
                path.write_text(json.dumps(fields, indent=2) + "\n")
            except OSError as exc:
                reason = f"printer error: {exc.strerror or exc}"
        if reason is not None:
            self.print_failed.append(ticket)
            self.send(TicketPrintFailed(validation=ticket.validation, reason=reason))
            self.out(f"{self.id}: ticket {ticket.validation} not printed: {reason}")
            return
        self.printed.append(ticket)
        self.printed_numbers.add(ticket.validation)
        self._save()
        self.send(TicketPrinted(validation=ticket.validation))
        self.out(
            f"{self.id}: ticket {ticket.validation} printed: {ticket.amount}, "
            f"expires {ticket.expires_at}"
        )

    # --- the cabinet, scripted -------------------------------------------------------------------

    def self_test(self, passed: bool | None = None) -> None:
        """Report a self-test (after every welcome; again on demand): passed unless
        ``self_test_fail`` (or ``passed`` says)."""
        if passed is None:
            passed = not self.self_test_fail
        self.send(SelfTest(passed=passed, detail="" if passed else SELF_TEST_FAILED))
        self.out(f"{self.id}: self-test {'passed' if passed else 'failed'}")

    async def insert_bill(self, amount: int, *, timeout: float | None = None) -> BillVerdict:
        """A bill of ``amount`` (minor units) into the validator: escrowed under the next
        bill count, then stacked or returned as the server's verdict says; the verdict.
        Without a verdict within ``timeout`` the bill is returned and ``TimeoutError``
        raised (a verdict after that finds nothing in escrow)."""
        self.bills += 1
        bill = self.bills
        self.escrow[bill] = amount
        waiter: asyncio.Future[BillVerdict] = asyncio.get_running_loop().create_future()
        self._bill_waiters[bill] = waiter
        self.send(BillEscrow(bill=bill, amount=amount))  # the count and escrow saved with it
        self.out(f"{self.id}: bill {bill} ({amount}) in escrow")
        try:
            return await asyncio.wait_for(asyncio.shield(waiter), timeout)
        except TimeoutError:
            if self.escrow.pop(bill, None) is not None:
                self.send(BillReturned(bill=bill))
                self.out(f"{self.id}: bill {bill} ({amount}) returned: no verdict")
            raise
        finally:
            if self._bill_waiters.get(bill) is waiter:
                del self._bill_waiters[bill]

    async def insert_ticket(
        self, validation: str, amount: int, *, timeout: float | None = None
    ) -> TicketVerdict:
        """A ticket into the reader: its ``validation`` number and printed ``amount``; the
        server's verdict (``TimeoutError`` without one within ``timeout``)."""
        waiter: asyncio.Future[TicketVerdict] = asyncio.get_running_loop().create_future()
        # Kept until its own verdict comes, even after a timeout, so that later verdicts
        # for the same number pair with later insertions.
        self._ticket_waiters.setdefault(validation, deque()).append(waiter)
        self.send(TicketIn(validation=validation, amount=amount))
        self.out(f"{self.id}: ticket {validation} ({amount}) inserted")
        return await asyncio.wait_for(asyncio.shield(waiter), timeout)

    def card_in(self, card: str) -> None:
        """A player card into the card reader."""
        self.card = card
        self.send(CardIn(card=card))

    def card_out(self) -> None:
        """The player card taken out."""
        self.card = None
        self.send(CardOut())

    def open_door(self, which: str = "main") -> None:
        """Open the ``main`` door or the ``cash_box`` door: fault ``door_open`` or
        ``cash_box_open``."""
        code = self._door(which)
        self.doors.add(which)
        self.send(DeviceFault(code=code))
        self.out(f"{self.id}: {code}")

    def close_door(self, which: str = "main") -> None:
        """Close it again: the fault ``cleared``."""
        code = self._door(which)
        self.doors.discard(which)
        self.send(DeviceFault(code=code, cleared=True))
        self.out(f"{self.id}: {code} cleared")

    @staticmethod
    def _door(which: str) -> str:
        if which not in DOORS:
            raise ValueError(f"no door {which!r}: {' or '.join(DOORS)}")
        return DOORS[which]

    def tilt(self) -> None:
        """The cabinet tilts (a shock, a tamper switch): fault ``tilt``."""
        self.tilted = True
        self.send(DeviceFault(code="tilt"))
        self.out(f"{self.id}: tilt")

    def clear_tilt(self) -> None:
        self.tilted = False
        self.send(DeviceFault(code="tilt", cleared=True))
        self.out(f"{self.id}: tilt cleared")

    def turn_key(self, attendant: str) -> None:
        """The attendant key turned on by ``attendant`` (the attendant menu opens)."""
        self.attendant = attendant
        self.send(AttendantKey(on=True, attendant=attendant))
        self.out(f"{self.id}: attendant key on ({attendant})")

    def release_key(self) -> None:
        """The attendant key turned back off."""
        attendant, self.attendant = self.attendant or "", None
        self.send(AttendantKey(on=False, attendant=attendant))
        self.out(f"{self.id}: attendant key off")

    def memory_fault(self, detail: str = "", *, cleared: bool = False) -> None:
        """The station's memory failed its check (fault ``memory``), or that was fixed."""
        self.send(DeviceFault(code="memory", detail=detail, cleared=cleared))
        self.out(f"{self.id}: memory fault{' cleared' if cleared else ''}")


@dataclass(frozen=True)
class StationScript:
    """A timeline for ``play_script``, in seconds after the station first connected:
    ``bills`` (amounts) inserted one per second from 1 s, then ``tickets`` (validation,
    amount) one per second; the main door opened at ``door_open_at``, a tilt at ``tilt_at``,
    the attendant key turned by ``attendant`` at ``key_at`` — each closed, cleared or
    released ``clear_after`` seconds later (never, without it). ``verdict_seconds``: how long
    a bill or ticket waits for its verdict."""

    bills: tuple[int, ...] = ()
    tickets: tuple[tuple[str, int], ...] = ()
    door_open_at: float | None = None
    tilt_at: float | None = None
    clear_after: float | None = None
    attendant: str = ""
    key_at: float | None = None
    verdict_seconds: float = 10.0


async def play_script(station: StationSimulator, script: StationScript) -> None:
    """Play ``script`` on ``station`` (running elsewhere: ``station.run()``); returns when
    everything on it was done."""
    await station.connected.wait()
    loop = asyncio.get_running_loop()
    start = loop.time()

    async def at(seconds: float) -> None:
        await asyncio.sleep(max(0.0, start + seconds - loop.time()))

    async def money() -> None:
        slot = 1.0
        for amount in script.bills:
            await at(slot)
            slot += 1
            with contextlib.suppress(TimeoutError):  # returned, and said so
                await station.insert_bill(amount, timeout=script.verdict_seconds)
        for validation, amount in script.tickets:
            await at(slot)
            slot += 1
            try:
                await station.insert_ticket(validation, amount, timeout=script.verdict_seconds)
            except TimeoutError:
                station.out(f"{station.id}: ticket {validation}: no verdict, returned")

    async def event(when: float | None, on: Callable[[], None], off: Callable[[], None]) -> None:
        if when is None:
            return
        await at(when)
        on()
        if script.clear_after is not None:
            await asyncio.sleep(script.clear_after)
            off()

    await asyncio.gather(
        money(),
        event(script.door_open_at, station.open_door, station.close_door),
        event(script.tilt_at, station.tilt, station.clear_tilt),
        event(
            script.key_at,
            lambda: station.turn_key(script.attendant or "attendant"),
            station.release_key,
        ),
    )
