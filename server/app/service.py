"""Everything one ``croupier serve`` runs, put together: the composition root.

It chooses the stores (``stores.py``), builds each table's game, the devices and the player
stations (``parts.py``), the casino's tables with their hooks, the players' logins and the
lobby, the floor a connection meets, a cluster node when the configuration names Redis, and
the WebSocket and HTTP edge (``server/net/edge.py``). Nothing below it chooses any of that;
it is the one place to read how the process is wired (docs/architecture.md, "Layers").
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from server.app.parts import build_devices, build_stations
from server.app.process import cpu_seconds, resident_bytes, tune_gc
from server.app.stores import open_stores
from server.cluster.identity import default_node_id
from server.config import ServerSettings
from server.games.table import TableSettings
from server.net.connection import ConnectionLimits
from server.net.edge import CLIENT_DIST, Edge
from server.net.metrics import Metrics
from server.tables.casino import Casino
from server.tables.clock import Clock, SystemClock
from server.tables.floor import Floor
from server.tables.games import build_games
from server.tables.hooks import TableHooks
from server.tables.lobby import Lobby
from server.tables.players import Players

if TYPE_CHECKING:
    from server.cluster.node import ClusterNode

__all__ = ["Service"]

REDIS_CONNECTIONS = 256  # a node's connections to Redis at most (the bus's two are apart)
# At a stop, how long the operator wallet's outbox may take to send what the stop made due
# (the rollbacks of the rounds it voided) before what is left waits for the next start.
STOP_DRAIN_SECONDS = 2.0
CREDIT_RETRY_SECONDS = 5.0  # between attempts to queue a round's credits that failed

log = logging.getLogger("croupier.server")


class Service:
    """Everything ``croupier serve`` runs: storage, the tables, devices and stations, the
    cluster node if any, WebSocket and HTTP."""

    def __init__(
        self,
        settings: ServerSettings,
        data_dir: Path,
        *,
        host: str = "127.0.0.1",
        port: int = 8000,
        clock: Clock | None = None,
        limits: ConnectionLimits | None = None,
        client_dist: Path = CLIENT_DIST,
        database_url: str | None = None,
        redis_url: str | None = None,
        node_id: str | None = None,
    ) -> None:
        self.settings = settings
        self.host, self.port = host, port
        url = database_url or settings.cluster.database_url
        self.redis_url = redis_url or settings.cluster.redis_url
        self.node_id = node_id or settings.cluster.node_id or default_node_id()
        self.cluster: ClusterNode | None = None
        self.metrics = Metrics()
        self.limits = limits or ConnectionLimits()
        # The edge first: each table's fan-out is the edge's (``_hooks``).
        self.edge = Edge(
            self.metrics,
            self.limits,
            ready=self._ready,
            devices=lambda: self.devices.status(),
            client_dist=client_dist,
        )
        self.stores = stores = open_stores(data_dir, url, self.redis_url, settings.wallet)
        self.ledger, self.journal, self.stations_store = (
            stores.ledger,
            stores.journal,
            stores.stations,
        )
        self.lock, self.database_lock = stores.lock, stores.database_lock
        try:
            clock = clock or SystemClock()
            games = build_games(settings.tables, stores.journal)
            # Devices (docs/devices.md): one hub for the whole server, and each table with
            # devices answers its chance requests from them.
            self.devices, table_devices = build_devices(settings, stores.journal, clock, games)
            self.stations = build_stations(
                settings,
                stores.ledger,
                stores.journal,
                stores.stations,
                self.devices,
                token_key=stores.demo_key,
                ticket_key=stores.ticket_key,
            )
            self.casino = Casino(
                settings,
                stores.ledger,
                stores.journal,
                clock,
                games,
                table_devices=table_devices,
                stations=self.stations,
                clustered=self.redis_url is not None,
                hooks=self._hooks,
            )
        except BaseException:
            stores.release()
            raise
        self.players = Players(settings, stores.ledger, stores.demo_key, self.stations)
        if settings.operator_api_token is not None:  # the round history API (disputes)
            from server.net.operator_api import OperatorApi

            self.edge.operator_api = OperatorApi(
                settings.operator_api_token, stores.journal, stores.ledger, settings
            )
        self.lobby = Lobby(self.casino, self.stations)
        self.floor: Floor | None = None
        self._crediting: set[asyncio.Task[Any]] = set()  # rounds' credits being queued
        self._stopped = False
        self._outbox: asyncio.Task[None] | None = None  # an operator wallet's sender
        self._gauges()

    def _hooks(self, table: TableSettings) -> TableHooks:
        """Each table's hooks at the edge: the fan-out that frames an event once, and the
        round counter of its game."""
        counter = self.metrics.round_counter(table.game)
        if not self.settings.wallet.seamless:
            return TableHooks(fanout=self.edge.fanout, round_finished=counter)
        return TableHooks(
            fanout=self.edge.fanout, round_finished=counter, round_ended=self._credit_round
        )

    def _credit_round(self, round_id: str, status: object = None) -> None:
        """A round is over: the operator's wallet is credited what it returned to each player
        (docs/wallet.md), written first, sent by the outbox. A write that fails is tried
        again every few seconds; a crash before it is made good at the next start
        (``finish_settled``)."""
        if self._stopped:
            return
        ledger: Any = self.ledger  # a SeamlessLedger
        loop = asyncio.get_running_loop()
        task = loop.create_task(ledger.finish_round(round_id))
        self._crediting.add(task)

        def done(task: asyncio.Task[Any]) -> None:
            self._crediting.discard(task)
            if task.cancelled() or task.exception() is None:
                return
            log.error("crediting round %s failed; trying again", round_id,
                      exc_info=task.exception())  # fmt: skip
            if not self._stopped:
                loop.call_later(CREDIT_RETRY_SECONDS, self._credit_round, round_id)

        task.add_done_callback(done)

    def _ready(self) -> bool:
        return self.casino.ready and (self.cluster is None or self.cluster.ready)

    def _gauges(self) -> None:
        tables = self.casino.tables
        self.metrics.gauge(
            "croupier_tables", "Tables in the configuration file", lambda: len(tables)
        )
        self.metrics.gauge(
            "croupier_tables_running",
            "Tables whose task is running and taking bets (the others are closed)",
            lambda: sum(t.available for t in tables.values()),
        )
        self.metrics.gauge(
            "croupier_tables_stopped",
            "Tables closed because they could not go on (storage failure, RNG failure, an "
            "internal error): they take no bets until a restart recovers their round",
            lambda: sum(not t.available for t in tables.values()),
        )
        self.metrics.gauge(
            "croupier_open_wagers_minor_units",
            "Money held in open wagers (debited, not yet settled), in minor units",
            lambda: self.ledger.balance("wagers:open"),
        )
        # The process's own cost, the standard names: what a load test samples beside its
        # own figures (loadtests/README.md, "The report").
        self.metrics.counted(
            "process_cpu_seconds_total",
            "CPU time this server process has used, user and system, in seconds",
            cpu_seconds,
        )
        self.metrics.gauge(
            "process_resident_memory_bytes",
            "Memory this server process holds in RAM (resident set size), in bytes",
            resident_bytes,
        )

    @property
    def server(self) -> Any:
        """The listening WebSocket server (None before ``start``)."""
        return self.edge.server

    async def start(self, *, stagger: bool = True) -> None:
        if self.settings.wallet.seamless:
            # Before any table deals: debits a crash left unanswered are rolled back, the
            # rounds recovery completed are credited, and every call not yet answered ok is
            # sent again (docs/wallet.md, "How Croupier keeps its books"). A cluster node
            # does it for each table as it takes it over (``ClusterNode._take``).
            ledger: Any = self.ledger
            if self.redis_url is None:
                rolled = await ledger.recover()
                self.casino.recover()  # the rounds a crash left open: completed or voided
                credited = await ledger.finish_settled()  # those completed, credited
                log.info("operator wallet", extra={"rolled_back": rolled, "credited": credited})
            self._outbox = asyncio.get_running_loop().create_task(ledger.run(), name="outbox")
        if self.devices.channels:  # devices connect before their tables deal
            await self.devices.start()
        self.casino.start(stagger=stagger)
        self.metrics.watch(self.casino)  # rounds per game, and those recovery finished
        if self.redis_url is not None:
            self.cluster = self._cluster_node(self.redis_url)
            self.floor = Floor(
                self.casino,
                self.players,
                self.lobby,
                doors=self.cluster.doors,
                lobby_answer=self.cluster.lobby.answer,
                shared_notices=self.cluster.notices.take,
            )
        else:
            self.floor = Floor(self.casino, self.players, self.lobby)
        self.port = await self.edge.start(self.floor, self.host, self.port)
        if self.cluster is not None:  # listening first: the node's record names its port
            from server.cluster.metrics import cluster_metrics

            await self.cluster.start(address=f"{self.host}:{self.port}")
            cluster_metrics(self.metrics, self.cluster)
        log.info(
            "serving",
            extra={"host": self.host, "port": self.port, "tables": list(self.casino.tables)},
        )

    def _cluster_node(self, redis_url: str) -> ClusterNode:
        from redis.asyncio import BlockingConnectionPool, Redis

        from server.cluster.node import ClusterNode

        # PgLedger's (the local books' of an operator's wallet in front of it)
        shared: Any = getattr(self.ledger, "local", self.ledger)
        url = shared.url
        return ClusterNode(
            self.casino,
            self.lobby,
            # A pool that waits for a free connection instead of failing when a burst of
            # logins (each reads its notices) and cross-node commands passes its size.
            Redis.from_pool(  # the client owns the pool: closing it closes them all
                BlockingConnectionPool.from_url(
                    redis_url,
                    max_connections=REDIS_CONNECTIONS,
                    timeout=5,
                    socket_timeout=2,
                    socket_connect_timeout=2,
                )
            ),
            url,
            self.node_id,
            lease_seconds=self.settings.cluster.lease_seconds,
            fanout=self.edge.fanout,
        )

    async def stop(self) -> None:
        if self.cluster is not None:  # hand the tables over while still serving
            await self.cluster.leave()
        await self.edge.stop()
        await self.casino.stop()
        await self.devices.stop()
        if self.stations is not None:
            await self.stations.drain()
        if self._crediting:
            await asyncio.gather(*self._crediting, return_exceptions=True)
        self._stopped = True  # credits not queued yet: the next start's finish_settled
        if self._outbox is not None:
            ledger: Any = self.ledger
            # A moment for the rollbacks of the rounds just voided; whatever is still not
            # answered stays in the outbox and is sent after the restart.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(ledger.outbox.drained(), STOP_DRAIN_SECONDS)
            self._outbox.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._outbox
            await ledger.client.close()
        self.stores.close()

    async def run_forever(
        self, started: Callable[[Service], Awaitable[None]] | None = None
    ) -> None:
        """Serve until SIGINT or SIGTERM, then stop cleanly: open rounds are voided and
        their wagers returned. ``started`` runs once the server listens (the demo's
        simulated devices connect then)."""
        await self.start()
        if started is not None:
            await started(self)
        tune_gc()
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError):
                loop.add_signal_handler(sig, stop.set)
        await stop.wait()
        log.info("stopping")
        await self.stop()
