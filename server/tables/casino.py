"""Every table of one server process, and their lives.

It starts by recovering whatever a previous process left open (``recovery``), then runs one
task per table; a cluster node instead takes the tables whose lease it holds (``take``) and
hands them over (``drain``) or drops them (``abandon``). Each table's runtime gets its
hooks at construction (``server.tables.hooks``): the edge's, the player stations' and a
cluster node's. What the tables are built from — the games, the devices, the stations, the
stores — is chosen by the process's composition root (``server/app/``).
"""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import replace
from functools import partial
from typing import Any

from server.config import ServerSettings
from server.devices.table_devices import TableDevices
from server.games.table import ConfigError, TableGame, TableSettings
from server.journal.journal import Journal, RoundStatus
from server.protocol.codec import encode
from server.protocol.messages import Notice, ServerMessage
from server.stations.meters import station_player
from server.stations.service import Stations
from server.tables.clock import Clock
from server.tables.games import table_game
from server.tables.hooks import Publish, TableHooks
from server.tables.recovery import Recovered, recover_open_rounds
from server.tables.runtime import TableRuntime
from server.tables.viewers import Viewer
from server.wallet.ledger import Ledger

__all__ = ["Casino", "next_epoch"]

log = logging.getLogger("croupier.casino")


def next_epoch(journal: Journal, table_id: str) -> int:
    """The epoch of the table's next run, durable before it returns (called once per table at
    start, before any event): one more than the last run's; 1 for a table whose journal
    predates epochs, 0 for a new one."""
    saved = journal.load_state(table_id, "epoch")
    if saved is not None:
        epoch = int(saved["epoch"]) + 1
    else:
        epoch = 0 if journal.last_round(table_id) is None else 1
    journal.save_state(table_id, "epoch", {"epoch": epoch})
    return epoch


class Casino:
    def __init__(
        self,
        settings: ServerSettings,
        ledger: Ledger,
        journal: Journal,
        clock: Clock,
        games: dict[str, TableGame],
        *,
        table_devices: Mapping[str, TableDevices] | None = None,
        stations: Stations | None = None,
        clustered: bool = False,
        hooks: Callable[[TableSettings], TableHooks] = lambda table: TableHooks(),
    ) -> None:
        """``games``: each table's game, its shoe or wheel bound (``tables.games``);
        ``table_devices``: the devices of the tables that have any; ``stations``: the
        player stations of the electronic tables; ``hooks``: each table's lifecycle hooks as
        the edge wants them (its fan-out, its round counter) — the casino adds the player
        stations'."""
        self.settings = settings
        self.hooks = hooks
        self.ledger = ledger
        self.journal = journal
        self.clock = clock
        self.table_settings = {t.id: t for t in settings.tables}
        self.games = games
        self.table_devices = dict(table_devices or {})
        self.stations = stations
        if stations is not None:
            for table_id in stations.tables:
                if games[table_id].boxed:
                    raise ConfigError(
                        f"table {table_id}: player stations play tables without betting "
                        "boxes; a station's seat is not a box"
                    )
        # A cluster node (docs/operations.md, "Running a cluster") runs only the tables whose
        # lease it holds, each taken with ``take`` on its fenced stores; one process alone
        # runs every table from the start.
        self.clustered = clustered
        if clustered and settings.devices:
            raise ConfigError(
                "devices and player stations connect to one node: a configuration with "
                "[[devices]] runs on a single croupier serve, not in a cluster"
            )
        self.tables: dict[str, TableRuntime] = {}
        for table in () if clustered else settings.tables:
            self.tables[table.id] = self._runtime(table, ledger, journal)
        # What recovery told each player (a round of theirs completed or voided), until
        # they next log in here.
        self.notices: dict[str, list[Notice]] = defaultdict(list)
        self._tasks: list[asyncio.Task[None]] = []
        self._running: dict[str, asyncio.Task[None]] = {}
        self.recovered: list[Recovered] = []
        self._recovered_once = False

    def _runtime(
        self,
        table: TableSettings,
        ledger: Ledger,
        journal: Journal,
        *,
        published: Publish | None = None,
        viewers: dict[Viewer, str] | None = None,
    ) -> TableRuntime:
        """The table's runtime, numbering its rounds after the journal's last and starting a
        new epoch (a durable write), with its hooks: the edge's, the player stations' and —
        on a cluster node — ``published`` (its events to the other nodes) and ``viewers``
        (the node's door's)."""
        last = journal.last_round(table.id)
        first = int(last.rsplit(".", 1)[1]) + 1 if last else 1
        hooks = self.hooks(table)
        stations = self.stations
        if stations is not None:  # a station bets at its own tables only
            hooks = replace(hooks, gate=partial(stations.gate, table.id))
            if table.id in stations.tables:
                hooks = replace(hooks, round_ended=partial(stations.round_ended, table.id))
        if published is not None:
            hooks = replace(hooks, published=published)
        reserved = {}
        if stations is not None:  # each station sits at its own seat
            for station_id in stations.tables.get(table.id, ()):
                reserved[station_player(station_id)] = stations.stations[station_id].settings.seat
        runtime = TableRuntime(
            table,
            self.games[table.id],
            ledger,
            journal,
            self.clock,
            first_round=first,
            epoch=next_epoch(journal, table.id),
            devices=self.table_devices.get(table.id),
            hooks=hooks,
            viewers=viewers,
            reserved=reserved,
        )
        if stations is not None and table.id in stations.tables:
            stations.on_table(table.id, self._broadcaster(runtime))
        return runtime

    @staticmethod
    def _broadcaster(table: TableRuntime) -> Any:
        def broadcast(message: ServerMessage) -> None:
            table.hooks.fanout(list(table.viewers), encode(message))

        return broadcast

    # --- lifecycle ---------------------------------------------------------------------------

    def recover(self) -> list[Recovered]:
        """Complete or void every round a crash left open, once (``start`` asks again: the
        composition root may have asked first, to act on the rounds it completed)."""
        if self.clustered:  # each table's, when this node takes it
            return []
        if not self._recovered_once:
            self._recovered_once = True
            self.recovered = recover_open_rounds(
                self.journal, self.ledger, self.games, self._announce
            )
        return self.recovered

    def _announce(self, item: Recovered) -> None:
        if item.outcome == "voided":
            text = (
                f"Round {item.round_id} was interrupted by a server restart and voided; "
                "every wager was returned."
            )
        else:
            text = f"Round {item.round_id} was completed after a server restart."
        for player in item.players:
            self.notices[player].append(
                Notice(
                    code=f"round_{item.outcome}",
                    message=text,
                    table=item.table_id,
                    round=item.round_id,
                )
            )

    def start(self, *, stagger: bool = True) -> None:
        """Recover, then run every table. Tables start spread over one round's length so
        that hundreds of tables never open, close and deal in the same instant."""
        self.recover()
        if self.stations is not None:  # a round recovery completed may call for a handpay
            for item in self.recovered:
                status = RoundStatus.SETTLED if item.outcome == "completed" else RoundStatus.VOIDED
                self.stations.round_ended(item.table_id, item.round_id, status)
        count = len(self.tables)
        for n, table in enumerate(self.tables.values()):
            cycle = table.settings.betting_seconds + table.settings.pause_seconds
            offset = cycle * n / count if stagger and count > 1 else 0.0
            self._run(table, offset)

    def _run(self, table: TableRuntime, start_after: float) -> None:
        task = asyncio.create_task(table.run(start_after=start_after), name=f"table:{table.id}")
        self._tasks.append(task)
        self._running[table.id] = task

    # --- a cluster node's tables (server.cluster.node) -----------------------------------------

    async def take(
        self,
        table_id: str,
        ledger: Ledger,
        journal: Journal,
        *,
        published: Publish | None = None,
        viewers: dict[Viewer, str] | None = None,
        start_after: float = 0.0,
    ) -> list[Recovered]:
        """Run ``table_id`` here on ``ledger`` and ``journal`` (the node's fenced views of the
        shared stores): first recover its rounds left open by the node that ran it before
        — completed or voided exactly as after a crash — then play on from its next round
        number in a new epoch, the first after ``start_after`` seconds. The blocking reads
        and writes run off the event loop. ``prepare`` sees the runtime before its first
        step. ``published`` and ``viewers``: the node's hooks for it (``_runtime``)."""
        settings = self.table_settings[table_id]

        def recover() -> tuple[list[Recovered], TableRuntime]:
            game = table_game(settings, journal)
            recovered = recover_open_rounds(
                journal, ledger, {table_id: game}, self._announce, tables={table_id}
            )
            self.games[table_id] = game
            runtime = self._runtime(settings, ledger, journal, published=published, viewers=viewers)
            return recovered, runtime

        recovered, table = await asyncio.to_thread(recover)
        self.recovered.extend(recovered)
        self.tables[table_id] = table
        self._run(table, start_after)
        return recovered

    async def drain(self, table_id: str) -> None:
        """Hand the table over: its round in play finishes, no next one opens; returns when
        its task has ended."""
        table, task = self.tables.get(table_id), self._running.get(table_id)
        if table is None or task is None:
            return
        table.drain()
        await asyncio.gather(task, return_exceptions=True)
        self._forget(table_id)

    async def abandon(self, table_id: str) -> None:
        """Stop running the table at once, writing nothing more (its lease was lost: another
        node recovers its round)."""
        task = self._running.get(table_id)
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        self._forget(table_id)

    def _forget(self, table_id: str) -> None:
        task = self._running.pop(table_id, None)
        if task in self._tasks:
            self._tasks.remove(task)
        self.tables.pop(table_id, None)

    async def stop(self) -> None:
        for table in self.tables.values():
            table.stop()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks.clear()

    @property
    def ready(self) -> bool:
        if self.clustered:  # a node with no table yet is ready for players all the same
            return all(not t.done() for t in self._tasks)
        return bool(self._tasks) and all(not t.done() for t in self._tasks)
