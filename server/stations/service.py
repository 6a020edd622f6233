"""The player stations of a server's electronic tables, on the event loop, as the one object
the rest of the server holds (docs/electronic-tables.md).

A station is two clients: its **agent** speaks the device link for the cabinet's peripherals
(``role = "station"``: bills, tickets, the player card, doors, tilt, the attendant key) and
its **touchscreen** is a WebSocket client that logs in with the token the agent received
(``screen``) and bets as the player ``station:ID``. ``Stations`` builds the parts that do
the work, one concern each, and passes the server's calls to them:

- ``station.py``: one station's state now, and why it may not play (``why_not``);
- ``memory.py``: its row in critical memory (locks, handpays, meters), checked and logged;
- ``locks.py``: the lockout (AGCO 11.1.2–11.1.3, NJAC 13:69E-1.28P, 25 CFR 547.10);
- ``credits.py``: its money with the ledger (bills and tickets in, tickets and handpays out);
- ``rounds.py``: a round's end (meters, a handpay above the limit, the winners);
- ``agents.py``: the agents on the device hub; ``touchscreen.py``: the touchscreens;
- ``gate.py``: the bets and seats a table with stations refuses; ``status.py``: what the
  touchscreens and the agent show; ``work.py``: the tasks in flight.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Final

from server.config import ServerSettings
from server.devices.hub import DeviceHub
from server.games.errors import Refusal
from server.journal.journal import Journal, RoundStatus
from server.protocol.messages import CashedOut, ServerMessage, StationStatus
from server.stations import cashier
from server.stations.agents import AgentListener, Agents
from server.stations.credits import Credits
from server.stations.gate import Gate
from server.stations.locks import Lockout
from server.stations.memory import CriticalMemory
from server.stations.meters import station_account
from server.stations.rounds import Rounds
from server.stations.screen_token import STATION_AUDIENCE
from server.stations.station import Station, StationRefused
from server.stations.status import StatusBoard
from server.stations.store import StationStore
from server.stations.touchscreen import Touchscreens
from server.stations.work import Work
from server.wallet.ledger import Ledger

__all__ = ["STATION_AUDIENCE", "StationRefused", "Stations"]

log = logging.getLogger("croupier.stations")

# A cash-out waits this many tenths of a second for a round the station bet in to end (read
# at each cash-out, so that a test may shorten it here).
CASH_OUT_WAIT_STEPS: Final = 30


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
        self.ticket_key = ticket_key
        self.stations: dict[str, Station] = {}
        self.tables: dict[str, list[str]] = {}
        self._work = Work()
        self._board = StatusBoard(ledger, hub)
        memory = self._memory = CriticalMemory(store, ledger, journal, self._board, self._work)
        lockout = Lockout(memory, self._board, self._work)
        credits = Credits(self.rules, store, ledger, hub, memory, ticket_key=ticket_key)
        self._rounds = Rounds(self.rules, ledger, self.stations, self.tables, memory, credits, self._work)  # fmt: skip  # noqa: E501
        self._agents = Agents(self.stations, hub, memory, lockout, credits, self._work, token_key=token_key)  # fmt: skip  # noqa: E501
        self._screens = Touchscreens(self.stations, memory, lockout, credits, self._board, token_key=token_key)  # fmt: skip  # noqa: E501
        self._gate = Gate(self.stations, self.tables)
        self._open(settings)

    def _open(self, settings: ServerSettings) -> None:
        """The ledger's accounts, each station as critical memory left it, on the hub, and
        its meters brought up to date with the ledger (at start)."""
        cashier.open_accounts(self.ledger)
        for device in settings.devices:
            if device.role != "station":
                continue
            self.ledger.open_account(station_account(device.id))
            self.stations[device.id] = self._memory.load(device)
            self.hub.attach(device.id, ",".join(device.tables), AgentListener(self._agents, device.id))  # fmt: skip  # noqa: E501
            for table in device.tables:
                self.tables.setdefault(table, []).append(device.id)
        changed = cashier.reconcile_tickets(self.store, self.ledger)
        if changed:
            log.warning("tickets brought up to date with the ledger", extra={"tickets": changed})
        for station in self.stations.values():
            self._memory.count_now(station)

    # --- the tables ----------------------------------------------------------------------------

    def on_table(self, table_id: str, broadcast: Callable[[ServerMessage], None]) -> None:
        self._rounds.on_table(table_id, broadcast)

    def round_ended(self, table_id: str, round_id: str, status: RoundStatus) -> None:
        self._rounds.round_ended(table_id, round_id, status)

    def gate(self, table_id: str, kind: str, player_id: str) -> Refusal | None:
        return self._gate.gate(table_id, kind, player_id)

    def join_refusal(self, table_id: str, player_id: str, role: str) -> str | None:
        return self._gate.join_refusal(table_id, player_id, role)

    # --- the touchscreens ----------------------------------------------------------------------

    def login(self, token: str) -> str | None:
        return self._screens.login(token)

    def name(self, station_id: str) -> str:
        return self._screens.name(station_id)

    def watch(self, station_id: str, send: Callable[[ServerMessage], None]) -> Callable[[], None]:
        return self._board.watch(self.stations[station_id], send)

    def status(self, station_id: str, ref: int | None = None) -> StationStatus:
        return self._board.status(self.stations[station_id], ref)

    def credits(self, station_id: str) -> int:
        return self._board.credits(station_id)

    async def cash_out(self, station_id: str, ref: int | None = None) -> CashedOut | None:
        return await self._screens.cash_out(station_id, ref, wait_steps=CASH_OUT_WAIT_STEPS)

    async def call_attendant(self, station_id: str, on: bool) -> None:
        await self._screens.call_attendant(station_id, on)

    async def attendant_action(self, station_id: str, action: str) -> None:
        await self._screens.attendant_action(station_id, action)

    async def drain(self) -> None:
        """Wait for the work in flight (tests, and a clean stop)."""
        await self._work.drain()
