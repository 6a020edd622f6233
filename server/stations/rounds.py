"""A round's end at an electronic table, as its stations see it (docs/electronic-tables.md,
"Meters", "Handpays" and "The main display").

When a round ends the ledger holds what each station staked and was paid in it: that is
counted into the station's meters, a payout above the handpay limit locks the station until
an attendant pays it by hand (it never leaves on a ticket), and the table's viewers are told
who won.
"""

from __future__ import annotations

from collections.abc import Callable

from server.config import StationRules
from server.journal.journal import RoundStatus
from server.protocol.messages import ServerMessage, Winners
from server.stations.credits import Credits
from server.stations.memory import CriticalMemory
from server.stations.meters import round_money, station_account
from server.stations.station import Station
from server.stations.work import Work
from server.wallet.ledger import Ledger

__all__ = ["Rounds"]


class Rounds:
    """The end of each round at a table with stations: meters, handpays, winners."""

    def __init__(
        self,
        rules: StationRules,
        ledger: Ledger,
        stations: dict[str, Station],
        tables: dict[str, list[str]],
        memory: CriticalMemory,
        credits: Credits,
        work: Work,
    ) -> None:
        self.rules, self.ledger, self.stations, self.tables = rules, ledger, stations, tables
        self.memory, self.credits, self.work = memory, credits, work
        self._viewers: dict[str, Callable[[ServerMessage], None]] = {}  # table -> broadcast

    def on_table(self, table_id: str, broadcast: Callable[[ServerMessage], None]) -> None:
        """How to tell every viewer of ``table_id`` something (the round's winners)."""
        self._viewers[table_id] = broadcast

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
            self.work.spawn(self.memory.money_moved(s))
            if status is not RoundStatus.SETTLED or paid <= 0:
                continue
            if paid > staked:  # a win (a push returns the stake: no winner)
                wins.append({"seat": s.settings.seat, "amount": paid - staked})
            if paid > self.rules.handpay_limit and all(h["round"] != round_id for h in s.handpays):
                self.credits.handpay(s, paid, "jackpot", round_id)
                self.work.spawn(self.memory.save(s, "handpay_pending", detail=f"round {round_id}: {paid}"))  # fmt: skip  # noqa: E501
        broadcast = self._viewers.get(table_id)
        if broadcast is not None and status is RoundStatus.SETTLED:
            wins.sort(key=lambda w: -w["amount"])
            broadcast(Winners(table=table_id, round=round_id, wins=wins))
