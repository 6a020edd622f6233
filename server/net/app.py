"""The server process: WebSocket on ``/ws`` and HTTP routes on the same port.

``/healthz`` answers 200 while the process runs; ``/readyz`` 200 once every table task is
running (503 before and after); ``/metrics`` is Prometheus text; ``/devices`` the devices'
links as JSON (``croupier devices``); any other path serves the
browser client's built files from ``client-web/dist`` (or a page saying how to build them).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import http
import json
import logging
import mimetypes
import resource
import signal
import time
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from server import __version__
from server.cluster.identity import default_node_id
from server.config import ServerSettings
from server.datadir import DataDirLock
from server.games.table import TableSettings
from server.journal.journal import Journal
from server.journal.sqlite_journal import SqliteJournal
from server.net.connection import ConnectionLimits, serve_connection
from server.net.fanout import fanout
from server.net.metrics import Metrics
from server.stations.store import open_station_store
from server.stores import StorageError
from server.tables.casino import Casino
from server.tables.clock import Clock, SystemClock
from server.tables.hooks import TableHooks
from server.wallet.ledger import Ledger
from server.wallet.sqlite_ledger import SqliteLedger

if TYPE_CHECKING:
    from server.cluster.node import ClusterNode
    from server.pg_storage import DatabaseLock

__all__ = ["JsonLogFormatter", "Service", "configure_logging", "tune_gc"]

REDIS_CONNECTIONS = 256  # a node's connections to Redis at most (the bus's two are apart)

log = logging.getLogger("croupier.server")
MAX_FRAME = 64 * 1024  # bytes; a larger frame closes the connection with 1009
CLIENT_DIST = Path(__file__).resolve().parents[2] / "client-web" / "dist"


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _resident_bytes() -> float:
    """The resident set size now (``/proc/self/statm``; the peak where there is no /proc)."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * resource.getpagesize()
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


class JsonLogFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, and any ``extra`` fields."""

    _standard = set(logging.LogRecord("", 0, "", 0, "", (), None).__dict__) | {"message"}

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in record.__dict__.items():
            if key not in self._standard:
                entry[key] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


def tune_gc() -> None:
    """Keep Python's cyclic garbage collector from stalling the event loop.

    With thousands of connections the collector's full passes walk millions of objects and
    stop every table for 100 ms and more (measured by loadtests/bench_betack.py). The objects
    that exist once the server has started are moved out of its reach (``gc.freeze``) and
    collections run far less often; reference counting still frees almost everything."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(50_000, 50, 100)


def configure_logging(level: str) -> None:
    handler = logging.StreamHandler()
    handler.setFormatter(JsonLogFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    logging.getLogger("websockets").setLevel(max(logging.WARNING, root.level))


def _text(
    status: http.HTTPStatus, body: str, content_type: str = "text/plain; charset=utf-8"
) -> Response:
    data = body.encode()
    headers = Headers(
        [
            ("Content-Type", content_type),
            ("Content-Length", str(len(data))),
            ("Cache-Control", "no-store"),
        ]
    )
    return Response(status.value, status.phrase, headers, data)


_NOT_BUILT = """<!doctype html><meta charset="utf-8"><title>Croupier</title>
<h1>Croupier {version}</h1>
<p>The server is running; the browser client has not been built into
<code>client-web/dist</code>. WebSocket clients connect to <code>/ws</code>.</p>
"""


_CLIENT_ROUTES = ("table/", "station/", "display/")


class Service:
    """Everything ``croupier serve`` runs: storage, casino, WebSocket and HTTP."""

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
        self.host, self.port = host, port
        # Before anything is read or written there: a second server on the same directory
        # would run crash recovery on this one's live rounds (``DataDirInUse``).
        self.lock = DataDirLock(data_dir)
        self.database_lock: DatabaseLock | None = None
        url = database_url or settings.cluster.database_url
        self.redis_url = redis_url or settings.cluster.redis_url
        self.node_id = node_id or settings.cluster.node_id or default_node_id()
        # PostgreSQL and Redis (psycopg, redis-py and the cluster) are imported only where
        # they are used: the embedded default starts without loading them (a third faster).
        self.cluster: ClusterNode | None = None
        self.metrics = Metrics()
        token_key = None
        try:
            self.ledger: Ledger
            self.journal: Journal
            if self.redis_url:  # several nodes share the tables out (leases in Redis)
                if not url:
                    raise StorageError(
                        "a cluster keeps its ledger and journal in PostgreSQL: "
                        "give the database URL too"
                    )
                from server.cluster.node import check_redis
                from server.journal.pg_journal import PgJournal
                from server.pg_storage import migrate, shared_key
                from server.wallet.pg_ledger import PgLedger

                check_redis(self.redis_url)
                migrate(url)
                token_key = shared_key(url, "demo-token")  # a demo player may meet any node
                self.ledger, self.journal = PgLedger(url), PgJournal(url)
            elif url:  # the shared PostgreSQL store (docs/operations.md, "Running a cluster")
                from server.journal.pg_journal import PgJournal
                from server.pg_storage import DatabaseLock, migrate
                from server.wallet.pg_ledger import PgLedger

                migrate(url)
                self.database_lock = DatabaseLock(url)
                self.ledger, self.journal = PgLedger(url), PgJournal(url)
            else:
                self.ledger = SqliteLedger(data_dir / "ledger.sqlite")
                self.journal = SqliteJournal(data_dir / "journal.sqlite")
            self.stations_store, ticket_key = open_station_store(data_dir)
            self.casino = Casino(
                settings,
                self.ledger,
                self.journal,
                clock or SystemClock(),
                secret_file=data_dir / "token-key",
                token_key=token_key,
                stations_store=self.stations_store,
                ticket_key=ticket_key,
                clustered=self.redis_url is not None,
                hooks=self._hooks,
            )
        except BaseException:
            if self.database_lock is not None:
                self.database_lock.release()
            self.lock.release()
            raise
        self.limits = limits or ConnectionLimits()
        self.client_dist = client_dist
        self.server: Server | None = None
        self._connections = 0
        self.metrics.gauge(
            "croupier_connections_open",
            "WebSocket connections open now (handshake completed, not yet closed)",
            lambda: self._connections,
        )
        self.metrics.gauge(
            "croupier_tables", "Tables in the configuration file", lambda: len(self.casino.tables)
        )
        self.metrics.gauge(
            "croupier_tables_running",
            "Tables whose task is running and taking bets (the others are closed)",
            lambda: sum(t.available for t in self.casino.tables.values()),
        )
        self.metrics.gauge(
            "croupier_tables_stopped",
            "Tables closed because they could not go on (storage failure, RNG failure, an "
            "internal error): they take no bets until a restart recovers their round",
            lambda: sum(not t.available for t in self.casino.tables.values()),
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
            _cpu_seconds,
        )
        self.metrics.gauge(
            "process_resident_memory_bytes",
            "Memory this server process holds in RAM (resident set size), in bytes",
            _resident_bytes,
        )

    async def _handler(self, ws: ServerConnection) -> None:
        self._connections += 1
        try:
            await serve_connection(ws, self.casino, self.metrics, self.limits)
        finally:
            self._connections -= 1

    def _route(self, connection: ServerConnection, request: Request) -> Response | None:
        path = request.path.split("?", 1)[0]
        if path == "/ws":
            return None  # the WebSocket handshake proceeds
        if path == "/healthz":
            return _text(http.HTTPStatus.OK, "ok\n")
        if path == "/readyz":
            if self.casino.ready and (self.cluster is None or self.cluster.ready):
                return _text(http.HTTPStatus.OK, "ready\n")
            return _text(http.HTTPStatus.SERVICE_UNAVAILABLE, "not ready\n")
        if path == "/devices":
            return _text(
                http.HTTPStatus.OK,
                json.dumps({"devices": self.casino.devices.status()}),
                "application/json",
            )
        if path == "/metrics":
            return _text(
                http.HTTPStatus.OK,
                self.metrics.render(),
                "text/plain; version=0.0.4; charset=utf-8",
            )
        return self._static(path)

    def _static(self, path: str) -> Response:
        root = self.client_dist
        if not root.is_dir():
            if path in ("/", "/index.html"):
                return _text(
                    http.HTTPStatus.OK,
                    _NOT_BUILT.format(version=__version__),
                    "text/html; charset=utf-8",
                )
            return _text(http.HTTPStatus.NOT_FOUND, "not found\n")
        relative = path.lstrip("/") or "index.html"
        target = (root / relative).resolve()
        if not target.is_relative_to(root.resolve()) or not target.is_file():
            # Client-side routes: a path without a file extension, and the pages named by an
            # id (a station's id may hold a dot: /station/st.1).
            if "." not in relative.rsplit("/", 1)[-1] or relative.startswith(_CLIENT_ROUTES):
                target = root / "index.html"
            else:
                return _text(http.HTTPStatus.NOT_FOUND, "not found\n")
        body = target.read_bytes()
        kind = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
        # Vite names assets by their content hash: they never change; the page must be fresh.
        cache = (
            "public, max-age=31536000, immutable" if relative.startswith("assets/") else "no-cache"
        )
        headers = Headers(
            [("Content-Type", kind), ("Content-Length", str(len(body))), ("Cache-Control", cache)]
        )
        return Response(200, "OK", headers, body)

    def _fanout(self, targets: Iterable[Any], payload: bytes) -> int:
        sent = fanout(targets, payload)
        self.metrics.frames_fanout.value += sent
        return sent

    def _hooks(self, table: TableSettings) -> TableHooks:
        """Each table's hooks at the edge: the fan-out that frames an event once, and the
        round counter of its game."""
        return TableHooks(
            fanout=self._fanout, round_finished=self.metrics.round_counter(table.game)
        )

    async def start(self, *, stagger: bool = True) -> None:
        if self.casino.devices.channels:  # devices connect before their tables deal
            await self.casino.devices.start()
        self.casino.start(stagger=stagger)
        self.metrics.watch(self.casino)  # rounds per game, and those recovery finished
        self.server = await serve(
            self._handler,
            self.host,
            self.port,
            process_request=self._route,
            compression=None,  # permessage-deflate costs 3x memory and half the throughput
            max_size=MAX_FRAME,
            max_queue=32,
            ping_interval=20,
            ping_timeout=20,
            server_header=f"croupier/{__version__}",
        )
        sockets = self.server.sockets
        if sockets:
            self.port = sockets[0].getsockname()[1]
        if self.redis_url is not None:  # listening first: the node's record names its port
            await self._join_cluster(self.redis_url)
        log.info(
            "serving",
            extra={"host": self.host, "port": self.port, "tables": list(self.casino.tables)},
        )

    async def _join_cluster(self, redis_url: str) -> None:
        from redis.asyncio import BlockingConnectionPool, Redis

        from server.cluster.metrics import cluster_metrics
        from server.cluster.node import ClusterNode

        url = self.ledger.url  # type: ignore[attr-defined]  # PgLedger's
        settings = self.casino.settings.cluster
        self.cluster = ClusterNode(
            self.casino,
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
            lease_seconds=settings.lease_seconds,
            address=f"{self.host}:{self.port}",
            fanout=self._fanout,
        )
        await self.cluster.start()
        cluster_metrics(self.metrics, self.cluster)

    async def stop(self) -> None:
        if self.cluster is not None:  # hand the tables over while still serving
            await self.cluster.leave()
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()
        await self.casino.stop()
        await self.casino.devices.stop()
        if self.casino.stations is not None:
            await self.casino.stations.drain()
        self.ledger.close()
        self.journal.close()
        self.stations_store.close()
        if self.database_lock is not None:
            self.database_lock.release()
        self.lock.release()

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
