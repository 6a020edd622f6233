"""The player stations of a server's electronic tables, on the event loop
(docs/electronic-tables.md).

A station is two clients: its **agent** speaks the device link for the cabinet's peripherals
(``role = "station"``: bills, tickets, the player card, doors, tilt, the attendant key) and
its **touchscreen** is a WebSocket client that logs in with the token the agent received
(``screen``) and bets as the player ``station:ID``. This service is the agent's listener on
the device hub, keeps each station's state (locks and a pending handpay, in critical
memory), moves its money (bills and tickets in, tickets out, handpays) and counts its
meters, and tells the touchscreens what changed.

Lockout (AGCO 11.1.2–11.1.3, NJAC 13:69E-1.28P, 25 CFR 547.10): a door open, a tilt, a lost
or silent link, a failed self-test or a failed check of the station's critical memory locks
it at once — no bet, bill, ticket or cash-out is taken from it; bets it placed before stand
— and the lock stays, across restarts of the station and of the server, until an attendant
clears it with the attendant key once its cause is gone.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from typing import Any, Final

import jwt

from server.config import DeviceSettings, ServerSettings
from server.devices.hub import DeviceHub
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
from server.journal.journal import Journal, RoundStatus
from server.protocol.messages import CashedOut, ServerMessage, StationLock, StationStatus, Winners
from server.stations import cashier
from server.stations.meters import CashKind, round_money, station_account
from server.stations.store import (
    CriticalMemoryError,
    ReadAfter,
    StationRow,
    StationStore,
    Synced,
    Ticket,
)
from server.wallet.ledger import Ledger, LedgerError, Transfer

__all__ = ["STATION_AUDIENCE", "StationRefused", "Stations"]

log = logging.getLogger("croupier.stations")

STATION_AUDIENCE: Final = "croupier-station"
# Locks that a station's own fault reports; the others the server sees itself.
CONNECTION: Final = "connection"
HEARTBEAT: Final = "heartbeat"
SELF_TEST: Final = "self_test"
CRITICAL_MEMORY: Final = "critical_memory"
# A cash-out waits this many tenths of a second for a round the station bet in to end.
CASH_OUT_WAIT_STEPS: Final = 30
# The commands a locked station may not give (a cancel returns money: always allowed).
_BETTING: Final = frozenset({"place", "repeat", "decide"})


class StationRefused(Exception):
    """A touchscreen's request refused: ``code`` goes to the client (docs/protocol.md)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def _iso(moment: float) -> str:
    return datetime.fromtimestamp(moment, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _print_command(ticket: Ticket) -> PrintTicket:
    return PrintTicket(
        validation=ticket.validation,
        amount=ticket.amount,
        issued_at=_iso(ticket.issued_at),
        expires_at=_iso(ticket.expires_at),
        station=ticket.station,
    )


def _new_lock(cause: str, detail: str, *, present: bool) -> dict[str, Any]:
    """A lock as kept in critical memory (and shown: ``StationLock``)."""
    return {"cause": cause, "since": _iso(time.time()), "detail": detail[:200], "present": present}


@dataclass
class _Station:
    """What the server knows of one station now (its locks and handpay are ``row.state``,
    kept in critical memory)."""

    settings: DeviceSettings
    row: StationRow
    memory_ok: bool = True
    up: bool = False
    session: int | None = None
    self_tested: bool = False  # a passed self-test since the link last came up
    attendant: str | None = None
    called: bool = False
    player_card: str | None = None
    last_ticket: dict[str, Any] | None = None
    screens: list[Callable[[ServerMessage], None]] = field(default_factory=list)

    @property
    def id(self) -> str:
        return self.settings.id

    @property
    def locks(self) -> list[dict[str, Any]]:
        locks: list[dict[str, Any]] = self.row.state.setdefault("locks", [])
        return locks

    @property
    def handpays(self) -> list[dict[str, Any]]:
        """The handpays waiting for an attendant, oldest first: ``{id, amount, kind, round}``."""
        handpays: list[dict[str, Any]] = self.row.state.setdefault("handpays", [])
        return handpays

    @property
    def handpay(self) -> dict[str, Any] | None:
        """The next handpay to pay (shown on the touchscreen), if any."""
        return self.handpays[0] if self.handpays else None

    def why_not(self) -> str | None:
        """Why the station takes no bets, bills, tickets or cash-out now; None if it does."""
        if self.locks:
            return "locked: " + ", ".join(lock["cause"] for lock in self.locks)
        if self.handpay is not None:
            waiting = sum(int(h["amount"]) for h in self.handpays)
            return f"handpays of {waiting} wait for an attendant"
        if not self.up:
            return "the station is not connected"
        if not self.self_tested:
            return "the station has not passed its self-test"
        return None


class Stations:
    """Every configured station; ``tables`` maps each electronic table to its stations."""

    def __init__(
        self,
        settings: ServerSettings,
        ledger: Ledger,
        journal: Journal,
        store: StationStore,
        hub: DeviceHub,
        *,
        token_key: bytes,
        ticket_key: bytes,
    ) -> None:
        self.rules = settings.stations
        self.play_money = settings.auth.mode == "demo"
        self.ledger, self.journal, self.store, self.hub = ledger, journal, store, hub
        self._token_key, self.ticket_key = token_key, ticket_key
        self.stations: dict[str, _Station] = {}
        self.tables: dict[str, list[str]] = {}
        self._viewers: dict[str, Callable[[ServerMessage], None]] = {}  # table -> broadcast
        self._tasks: set[asyncio.Task[Any]] = set()
        cashier.open_accounts(ledger)
        for device in settings.devices:
            if device.role != "station":
                continue
            ledger.open_account(station_account(device.id))
            station = _Station(device, StationRow(device.id))
            try:
                station.row = store.load(device.id)
            except CriticalMemoryError as exc:
                self._memory_failed(station, str(exc), store.load_unchecked(device.id))
            else:  # what ``croupier meters --table`` reads
                station.row.state.update(tables=list(device.tables), seat=device.seat)
                store.write(store.save_state(device.id, station.row.state))
            self.stations[device.id] = station
            hub.attach(device.id, ",".join(device.tables), _AgentListener(self, device.id))
            for table in device.tables:
                self.tables.setdefault(table, []).append(device.id)
        changed = cashier.reconcile_tickets(store, ledger)
        if changed:
            log.warning("tickets brought up to date with the ledger", extra={"tickets": changed})
        for station in self.stations.values():
            self._sync_now(station)

    def on_table(self, table_id: str, broadcast: Callable[[ServerMessage], None]) -> None:
        """How to tell every viewer of ``table_id`` something (the round's winners)."""
        self._viewers[table_id] = broadcast

    # --- the touchscreen ---------------------------------------------------------------------

    def login(self, token: str) -> str | None:
        """The station a touchscreen's token names, if it is a station token (None if it is
        not one); ``StationRefused(bad_token)`` for one that is not valid now."""
        try:
            claims = jwt.decode(token, self._token_key, algorithms=["HS256"], audience=STATION_AUDIENCE)  # fmt: skip  # noqa: E501
        except jwt.InvalidTokenError:  # another audience (a player's token), or no token of ours
            return None
        station = self.stations.get(str(claims.get("sub")))
        if station is None:
            raise StationRefused("bad_token", "no such station")
        if claims.get("session") != station.session:
            raise StationRefused("bad_token", "this station's session has ended: use its new token")  # fmt: skip  # noqa: E501
        return station.id

    def name(self, station_id: str) -> str:
        return f"Station {self.stations[station_id].settings.seat}"

    def watch(self, station_id: str, send: Callable[[ServerMessage], None]) -> Callable[[], None]:
        """Send ``send`` the station's status now and whenever it changes; returns the way to
        stop."""
        station = self.stations[station_id]
        station.screens.append(send)
        send(self.status(station_id))

        def stop() -> None:
            if send in station.screens:
                station.screens.remove(send)

        return stop

    def status(self, station_id: str, ref: int | None = None) -> StationStatus:
        s = self.stations[station_id]
        credits = self.credits(s.id)
        meters = None
        if s.attendant is not None:
            meters = dict(s.row.meters)
            meters["credits"] = credits
        return StationStatus(
            station=s.id,
            seat=s.settings.seat,
            tables=list(s.settings.tables),
            credits=credits,
            enabled=s.why_not() is None,
            locks=[StationLock(**lock) for lock in s.locks],
            handpay=({k: s.handpay[k] for k in ("amount", "kind", "round")} if s.handpay else None),
            attendant=s.attendant,
            meters=meters,
            called=s.called,
            player_card=s.player_card,
            last_ticket=s.last_ticket,
            ref=ref,
        )

    def credits(self, station_id: str) -> int:
        return self.ledger.balance(station_account(station_id))

    def gate(self, table_id: str, kind: str, player_id: str) -> tuple[str, str, Any] | None:
        """A player's command refused before the table sees it: a station's at a table it
        does not play or while it may not bet, and anyone else's bet at a table with
        stations."""
        if kind not in _BETTING:
            return None
        station = self._station_of(player_id)
        if station is None:
            if table_id in self.tables:
                return ("stations_only", "this table takes bets from its player stations only", table_id)  # fmt: skip  # noqa: E501
            return None
        if table_id not in station.settings.tables:
            return ("stations_only", f"station {station.id} plays {', '.join(station.settings.tables)} only", table_id)  # fmt: skip  # noqa: E501
        why = station.why_not()
        if why is not None:
            return ("station_locked", f"station {station.id}: {why}", station.id)
        return None

    def join_refusal(self, table_id: str, player_id: str, role: str) -> str | None:
        """Why ``player_id`` may not sit at ``table_id`` as ``role``: a table with stations
        seats its stations only, and a station sits at its own tables only."""
        if role != "player":
            return None
        station = self._station_of(player_id)
        if station is not None and table_id not in station.settings.tables:
            return f"station {station.id} plays {', '.join(station.settings.tables)} only"
        if station is None and table_id in self.tables:
            return "this table seats its player stations only: join it as a spectator"
        return None

    def _station_of(self, player_id: str) -> _Station | None:
        if not player_id.startswith("station:"):
            return None
        return self.stations.get(player_id.removeprefix("station:"))

    async def cash_out(self, station_id: str, ref: int | None = None) -> CashedOut | None:
        """Cash out every credit: a ticket (None when the amount is above the ticket limit:
        the station waits for a handpay instead)."""
        s = self.stations[station_id]
        why = s.why_not()
        if why is not None:
            raise StationRefused("station_locked", f"station {s.id}: {why}")
        # A round being dealt ends within moments (its winnings may be above the handpay
        # limit: they are checked when it ends); one still taking bets does not.
        for _ in range(CASH_OUT_WAIT_STEPS):
            if not self._in_play(s):
                break
            await asyncio.sleep(0.1)
        else:
            raise StationRefused("round_in_play", "a round you bet in has not ended yet")
        why = s.why_not()  # the round that ended may have brought a handpay
        if why is not None:
            raise StationRefused("station_locked", f"station {s.id}: {why}")
        amount = self.ledger.available(station_account(s.id))
        if amount <= 0:
            raise StationRefused("nothing_to_cash_out", "there are no credits to cash out")
        if amount > self.rules.ticket_limit:
            self._handpay(s, amount, "cancelled_credits", "")
            await self._save(s, "handpay_pending", detail=f"cash-out {amount} above the ticket limit")  # fmt: skip  # noqa: E501
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
            "expires_at": _iso(ticket.expires_at),
        }
        self.hub.send(s.id, _print_command(ticket))
        await self._money_moved(s)
        return CashedOut(
            validation=ticket.validation,
            amount=ticket.amount,
            expires_at=_iso(ticket.expires_at),
            ref=ref,
        )

    async def call_attendant(self, station_id: str, on: bool) -> None:
        s = self.stations[station_id]
        s.called = on
        await self._log(s, "attendant_called" if on else "attendant_call_cancelled")
        self._changed(s)

    async def attendant_action(self, station_id: str, action: str) -> None:
        s = self.stations[station_id]
        if s.attendant is None:
            raise StationRefused("attendant_key_required", "turn the attendant key first")
        if action == "clear":
            await self._clear(s, s.attendant)
        else:
            await self._pay_handpay(s, s.attendant)

    async def _clear(self, s: _Station, attendant: str) -> None:
        if not s.locks:
            raise StationRefused("nothing_to_clear", "the station has no lock to clear")
        present = [lock["cause"] for lock in s.locks if lock.get("present")]
        if present:
            raise StationRefused("fault_present", f"fix these first: {', '.join(present)}")
        causes = [lock["cause"] for lock in s.locks]
        s.locks.clear()
        if CRITICAL_MEMORY in causes:
            # The meters could not be trusted: counted again from the ledger, the reference.
            await self.store.awrite(self.store.rebuild(s.id, copy.deepcopy(s.row.state)))
            s.memory_ok = True
            await self._sync(s)
            await self._log(s, "critical_memory_cleared", attendant, "meters rebuilt from the ledger")  # fmt: skip  # noqa: E501
        await self._save(s, "locks_cleared", attendant, ", ".join(causes))

    def _handpay(self, s: _Station, amount: int, kind: str, round_id: str) -> None:
        """A handpay waits for an attendant (the station takes nothing until it is paid);
        its id names its ledger batch, so paying it twice pays once."""
        handpay_id = f"{s.id}:{round_id or 'cash-out'}:{time.time_ns()}"
        s.handpays.append({"id": handpay_id, "amount": amount, "kind": kind, "round": round_id})

    async def _pay_handpay(self, s: _Station, attendant: str) -> None:
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
        await self._save(s, "handpay_paid", attendant, f"{kind} {amount}")
        await self._money_moved(s)

    # --- the agent (the device link) ---------------------------------------------------------

    def agent_link(self, station_id: str, up: bool, cause: str, session: int | None) -> None:
        s = self.stations[station_id]
        if up:
            s.up, s.self_tested = True, False
            new_session = session != s.session
            s.session = session
            for lock in s.locks:
                if lock["cause"] in (CONNECTION, HEARTBEAT):
                    lock["present"] = False
            if new_session:
                s.attendant, s.player_card = None, None
            token = jwt.encode(
                {"sub": s.id, "aud": STATION_AUDIENCE, "session": session},
                self._token_key,
                "HS256",
            )
            self.hub.send(s.id, Screen(path=f"/station/{s.id}", token=token))
            self._spawn(self._save(s, "connected", detail=f"session {session}"))
            self._spawn(self._reprint(s))
        else:
            s.up = False
            self._lock(s, cause, f"the station's link is down ({cause})", present=True)

    def agent_message(self, station_id: str, message: Any) -> None:
        s = self.stations[station_id]
        match message:
            case SelfTest(passed=True):
                s.self_tested = True
                self._cause_gone(s, SELF_TEST)
            case SelfTest(passed=False, detail=detail):
                s.self_tested = False
                self._lock(s, SELF_TEST, detail or "the self-test failed", present=True)
            case DeviceFault(code=code, detail=detail, cleared=False):
                self._lock(s, code, detail, present=True)
            case DeviceFault(code=code, cleared=True):
                self._cause_gone(s, code)
            case BillEscrow(bill=bill, amount=amount):
                why = s.why_not()
                if why is None and amount not in self.rules.bills:
                    why = f"bills of {amount} are not accepted"
                self.hub.send(s.id, BillVerdict(bill=bill, accept=why is None, reason=why or ""))
            case BillStacked(bill=bill, amount=amount):
                self._spawn(self._bill_stacked(s, bill, amount))
            case BillReturned(bill=bill):
                self._spawn(self._log(s, "bill_returned", detail=f"bill {bill}"))
            case TicketIn(validation=validation, amount=amount):
                self._spawn(self._ticket_in(s, validation, amount))
            case TicketStacked(validation=validation):
                self._spawn(self._ticket_stacked(s, validation))
            case TicketReturned(validation=validation):
                self._spawn(self._ticket_returned(s, validation))
            case TicketPrinted(validation=validation):
                self._spawn(self._printed(s, validation))
            case TicketPrintFailed(validation=validation, reason=reason):
                self._spawn(self._not_printed(s, validation, reason))
            case CardIn(card=card):
                s.player_card = card
                self._spawn(self._save(s, "card_in", detail=card))
            case CardOut():
                s.player_card = None
                self._spawn(self._save(s, "card_out"))
            case AttendantKey(on=on, attendant=attendant):
                s.attendant = (attendant or "attendant") if on else None
                event = "attendant_key_on" if on else "attendant_key_off"
                self._spawn(self._save(s, event, attendant))

    async def _bill_stacked(self, s: _Station, bill: int, amount: int) -> None:
        """The bill is in the cash box: it becomes credits whatever happened since its
        escrow — once (a station says it again after every welcome until ``bill_credited``
        comes, so a crash between the link's ack and the ledger loses nothing)."""
        key = f"bill:{s.id}:{s.session}:{bill}"
        transfer = Transfer(cashier.CASH_BILLS, station_account(s.id), amount, CashKind.BILL_IN)
        posted = await self.ledger.apost(key, [transfer])
        self.hub.send(s.id, BillCredited(bill=bill))
        if posted.applied:
            await self._log(s, "bill_in", detail=f"bill {bill}: {amount}")
            await self._money_moved(s)

    async def _ticket_in(self, s: _Station, validation: str, amount: int) -> None:
        """The reader holds a ticket: hold it for this station if it is good (credited once
        the reader stacks it), else the reader gives it back."""
        why = s.why_not()
        if why is not None:
            await self._log(s, "ticket_returned", detail=f"{validation}: {why}")
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

    async def _ticket_stacked(self, s: _Station, validation: str) -> None:
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
            await self._log(s, "ticket_refused:not_held", detail=validation)
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
            await self._money_moved(s)

    async def _ticket_returned(self, s: _Station, validation: str) -> None:
        await self.store.awrite(self.store.release_ticket(validation, s.id))
        await self._log(s, "ticket_returned", detail=f"{validation}: not stacked")

    async def _printed(self, s: _Station, validation: str) -> None:
        await self.store.awrite(self.store.mark_printed(validation))
        await self._log(s, "ticket_printed", detail=validation)

    async def _reprint(self, s: _Station) -> None:
        """Ask the station again for the tickets it was asked to print and never said it
        printed (its link was down, the server restarted): the money is in them."""
        for ticket in self.store.tickets():
            if ticket.station == s.id and ticket.status == "issued" and not ticket.printed:
                self.hub.send(s.id, _print_command(ticket))

    async def _not_printed(self, s: _Station, validation: str, reason: str) -> None:
        ticket = self.store.ticket(validation)
        if ticket is None or ticket.station != s.id or ticket.printed:
            await self._log(s, "print_failure_ignored", detail=f"{validation}: not this station's unprinted ticket")  # fmt: skip  # noqa: E501
            return
        returned = await asyncio.to_thread(
            cashier.return_unprinted, self.store, self.ledger, validation, reason=reason
        )
        if returned is not None:
            s.last_ticket = None
            await self._money_moved(s)

    # --- rounds --------------------------------------------------------------------------------

    def round_ended(self, table_id: str, round_id: str, status: RoundStatus) -> None:
        """A round at an electronic table ended: count it into its stations' meters, lock a
        station it paid more than the handpay limit, and tell the table's viewers who won."""
        wins = []
        transfers = [t for _, t in self.ledger.round_transfers(round_id)]
        for station_id in self.tables.get(table_id, []):
            s = self.stations[station_id]
            staked, paid = round_money(station_account(station_id), transfers)
            if staked <= 0 and paid <= 0:
                continue
            self._spawn(self._money_moved(s))
            if status is not RoundStatus.SETTLED or paid <= 0:
                continue
            if paid > staked:  # a win (a push returns the stake: no winner)
                wins.append({"seat": s.settings.seat, "amount": paid - staked})
            if paid > self.rules.handpay_limit and all(h["round"] != round_id for h in s.handpays):
                self._handpay(s, paid, "jackpot", round_id)
                self._spawn(self._save(s, "handpay_pending", detail=f"round {round_id}: {paid}"))
        broadcast = self._viewers.get(table_id)
        if broadcast is not None and status is RoundStatus.SETTLED:
            wins.sort(key=lambda w: -w["amount"])
            broadcast(Winners(table=table_id, round=round_id, wins=wins))

    # --- state, meters, the log ------------------------------------------------------------------

    def _lock(self, s: _Station, cause: str, detail: str, *, present: bool) -> None:
        for lock in s.locks:
            if lock["cause"] == cause:
                lock["present"] = present
                break
        else:
            s.locks.append(_new_lock(cause, detail, present=present))
        log.warning("station locked", extra={"station": s.id, "cause": cause, "detail": detail})
        self._spawn(self._save(s, f"locked:{cause}", detail=detail))

    def _cause_gone(self, s: _Station, cause: str) -> None:
        for lock in s.locks:
            if lock["cause"] == cause and lock.get("present"):
                lock["present"] = False
                self._spawn(self._save(s, f"cause_gone:{cause}"))
        self._changed(s)

    def _memory_failed(self, s: _Station, detail: str, found: dict[str, Any] | None = None) -> None:  # fmt: skip  # noqa: E501
        """The station's row failed its check: its meters are not trusted (they are counted
        again from the ledger when an attendant clears the lock). What restricts the station
        is kept, the most restrictive reading: the locks and handpays this server holds, and
        those the failed row holds (``found``, at start)."""
        s.memory_ok = False
        locks = [lock for lock in s.locks if lock["cause"] != CRITICAL_MEMORY]
        handpays = list(s.handpays)
        for lock in (found or {}).get("locks", []):
            if isinstance(lock, dict) and lock.get("cause") not in {x["cause"] for x in locks}:
                locks.append(lock)
        for handpay in (found or {}).get("handpays", []):
            if isinstance(handpay, dict) and handpay not in handpays:
                handpays.append(handpay)
        s.row = StationRow(s.id)
        s.row.state.update(
            locks=locks, handpays=handpays, tables=list(s.settings.tables), seat=s.settings.seat
        )
        s.locks.append(_new_lock(CRITICAL_MEMORY, detail, present=False))
        log.error("station critical memory failed", extra={"station": s.id, "detail": detail})
        self._spawn_or_write(self.store.log(s.id, "critical_memory_failed", detail=detail))

    async def _save(self, s: _Station, event: str, actor: str = "", detail: str = "") -> None:
        """Keep the station's state in critical memory (not while it failed its check: the
        failed row stays as found, and the lock with it, until an attendant clears it) and
        log ``event``; then tell the agent and the touchscreens."""
        if s.memory_ok:
            try:  # a copy: the writer thread serialises it while the loop goes on
                await self.store.awrite(self.store.save_state(s.id, copy.deepcopy(s.row.state)))
            except CriticalMemoryError as exc:
                self._memory_failed(s, str(exc))
        await self._log(s, event, actor, detail)
        self._changed(s)

    async def _log(self, s: _Station, event: str, actor: str = "", detail: str = "") -> None:
        await self.store.awrite(self.store.log(s.id, event, actor, detail))

    async def _money_moved(self, s: _Station) -> None:
        await self._sync(s)
        self._changed(s)

    def _counted(self, s: _Station) -> Callable[[Any], Synced]:
        """The write that counts what the ledger holds for the station and its meters do
        not yet."""
        return self.store.sync(s.id, self._read_after(s), self._ended)

    def _sync_now(self, s: _Station) -> None:
        """``_sync`` at start, before the event loop runs the tables."""
        if s.memory_ok:
            try:
                s.row.meters = self.store.write(self._counted(s)).row.meters
            except CriticalMemoryError as exc:
                self._memory_failed(s, str(exc))

    async def _sync(self, s: _Station) -> None:
        if not s.memory_ok:
            return
        try:
            s.row.meters = (await self.store.awrite(self._counted(s))).row.meters
        except CriticalMemoryError as exc:
            self._memory_failed(s, str(exc))
            await self._save(s, f"locked:{CRITICAL_MEMORY}", detail=str(exc))

    def _in_play(self, s: _Station) -> bool:
        """Whether the station bet in a round that has not ended (or whose end its meters
        have not counted yet)."""
        return bool(self.store.open_rounds(s.id, self._read_after(s)))

    def _read_after(self, s: _Station) -> ReadAfter:
        """The station account's transfers after a ledger batch (only what is new since
        its meters' last count is ever read)."""
        return partial(self.ledger.history_after, station_account(s.id))

    def _ended(self, round_id: str) -> bool:
        status = self.journal.status(round_id)
        return status is not None and status is not RoundStatus.OPEN

    def _changed(self, s: _Station) -> None:
        status = self.status(s.id)
        for send in list(s.screens):
            send(status)
        if not s.up:  # the state is sent when it is back (a queue would only grow)
            return
        self.hub.send(
            s.id,
            StationState(
                enabled=status.enabled,
                credits=status.credits,
                locks=tuple(lock["cause"] for lock in s.locks),
                handpay=int(s.handpay["amount"]) if s.handpay else 0,
                called=s.called,
            ),
        )

    def _spawn_or_write(self, write: Callable[[Any], None]) -> None:
        """A store write: on the writer thread, awaited in a task when the loop runs (not
        at start)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            self.store.write(write)
            return
        self._spawn(self.store.awrite(write))

    def _spawn(self, work: Any) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("station work failed", exc_info=task.exception())

    async def drain(self) -> None:
        """Wait for the work in flight (tests, and a clean stop)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)


class _AgentListener:
    """The hub's listener for one station's agent."""

    def __init__(self, stations: Stations, station_id: str) -> None:
        self.stations, self.station_id = stations, station_id

    def device_message(self, role: str, message: Any) -> None:
        self.stations.agent_message(self.station_id, message)

    def device_link(self, up: bool, cause: str, session: int | None) -> None:
        self.stations.agent_link(self.station_id, up, cause, session)
