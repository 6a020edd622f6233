"""The stations' agents on the device hub (docs/electronic-tables.md, "What a station is").

A station's agent speaks the device link in the role ``station`` for the cabinet's
peripherals. Its link coming up gives its touchscreen a token and asks again for the
tickets it never said it printed; its link going down, a failed self-test or a fault it
reports locks it (``locks.py``); bills and tickets move its credits (``credits.py``); the
player card and the attendant key are kept for the touchscreen to show.
"""

from __future__ import annotations

from typing import Any

from server.devices.hub import DeviceHub
from server.devices.messages import (
    AttendantKey,
    BillEscrow,
    BillReturned,
    BillStacked,
    CardIn,
    CardOut,
    DeviceFault,
    Screen,
    SelfTest,
    TicketIn,
    TicketPrinted,
    TicketPrintFailed,
    TicketReturned,
    TicketStacked,
)
from server.stations import screen_token
from server.stations.credits import Credits
from server.stations.locks import Lockout
from server.stations.memory import CriticalMemory
from server.stations.station import CONNECTION, HEARTBEAT, SELF_TEST, Station
from server.stations.work import Work

__all__ = ["AgentListener", "Agents"]


class Agents:
    """What each station's agent says on its link, and what the server answers."""

    def __init__(
        self,
        stations: dict[str, Station],
        hub: DeviceHub,
        memory: CriticalMemory,
        lockout: Lockout,
        credits: Credits,
        work: Work,
        *,
        token_key: bytes,
    ) -> None:
        self.stations, self.hub = stations, hub
        self.memory, self.lockout, self.credits, self.work = memory, lockout, credits, work
        self._token_key = token_key

    def link(self, station_id: str, up: bool, cause: str, session: int | None) -> None:
        """The agent's link came up (a hello accepted: ``session``) or went down (``cause``)."""
        s = self.stations[station_id]
        if not up:
            s.up = False
            self.lockout.lock(s, cause, f"the station's link is down ({cause})", present=True)
            return
        s.up, s.self_tested = True, False
        new_session = session != s.session
        s.session = session
        for lock in s.locks:
            if lock["cause"] in (CONNECTION, HEARTBEAT):
                lock["present"] = False
        if new_session:
            s.attendant, s.player_card = None, None
        token = screen_token.mint(self._token_key, s.id, session)
        self.hub.send(s.id, Screen(path=f"/station/{s.id}", token=token))
        self.work.spawn(self.memory.save(s, "connected", detail=f"session {session}"))
        self.work.spawn(self.credits.reprint(s))

    def message(self, station_id: str, message: Any) -> None:
        s = self.stations[station_id]
        spawn, memory, credits = self.work.spawn, self.memory, self.credits
        match message:
            case SelfTest(passed=True):
                s.self_tested = True
                self.lockout.cause_gone(s, SELF_TEST)
            case SelfTest(passed=False, detail=detail):
                s.self_tested = False
                self.lockout.lock(s, SELF_TEST, detail or "the self-test failed", present=True)
            case DeviceFault(code=code, detail=detail, cleared=False):
                self.lockout.lock(s, code, detail, present=True)
            case DeviceFault(code=code, cleared=True):
                self.lockout.cause_gone(s, code)
            case BillEscrow(bill=bill, amount=amount):
                credits.escrow(s, bill, amount)
            case BillStacked(bill=bill, amount=amount):
                spawn(credits.bill_stacked(s, bill, amount))
            case BillReturned(bill=bill):
                spawn(memory.log(s, "bill_returned", detail=f"bill {bill}"))
            case TicketIn(validation=validation, amount=amount):
                spawn(credits.ticket_in(s, validation, amount))
            case TicketStacked(validation=validation):
                spawn(credits.ticket_stacked(s, validation))
            case TicketReturned(validation=validation):
                spawn(credits.ticket_returned(s, validation))
            case TicketPrinted(validation=validation):
                spawn(credits.printed(s, validation))
            case TicketPrintFailed(validation=validation, reason=reason):
                spawn(credits.not_printed(s, validation, reason))
            case CardIn(card=card):
                s.player_card = card
                spawn(memory.save(s, "card_in", detail=card))
            case CardOut():
                s.player_card = None
                spawn(memory.save(s, "card_out"))
            case AttendantKey(on=on, attendant=attendant):
                s.attendant = (attendant or "attendant") if on else None
                event = "attendant_key_on" if on else "attendant_key_off"
                spawn(memory.save(s, event, attendant))


class AgentListener:
    """The hub's listener for one station's agent."""

    def __init__(self, agents: Agents, station_id: str) -> None:
        self.agents, self.station_id = agents, station_id

    def device_message(self, role: str, message: Any) -> None:
        self.agents.message(self.station_id, message)

    def device_link(self, up: bool, cause: str, session: int | None) -> None:
        self.agents.link(self.station_id, up, cause, session)
