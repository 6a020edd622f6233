"""The WebSocket and HTTP edge of ``croupier serve``: ``/ws`` and the HTTP routes on the same
port (docs/operations.md, "HTTP endpoints").

``/healthz`` answers 200 while the process runs; ``/readyz`` 200 once the process says it is
ready (every table task running; on a cluster node, the node too), 503 before and after;
``/metrics`` is Prometheus text; ``/devices`` the devices' links as JSON (``croupier
devices``); any other path serves the browser client's built files from ``client-web/dist``
(or a page saying how to build them). Each WebSocket connection is served by
``connection.py`` against the casino's ``Floor``; what the edge is given — the floor, the
metrics, readiness, the devices' status — is chosen by the composition root
(``server/app/``).
"""

from __future__ import annotations

import http
import json
import mimetypes
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from server import __version__
from server.net.connection import ConnectionLimits, serve_connection
from server.net.fanout import fanout
from server.net.heartbeat import Heartbeat
from server.net.metrics import Metrics
from server.net.operator_api import OperatorApi
from server.net.reader import FrameConnection
from server.tables.floor import Floor

__all__ = ["CLIENT_DIST", "MAX_FRAME", "Edge"]

MAX_FRAME = 64 * 1024  # bytes; a larger frame closes the connection with 1009
CLIENT_DIST = Path(__file__).resolve().parents[2] / "client-web" / "dist"


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


class Edge:
    """The listening socket: WebSocket connections and HTTP routes."""

    def __init__(
        self,
        metrics: Metrics,
        limits: ConnectionLimits,
        *,
        ready: Callable[[], bool],
        devices: Callable[[], list[dict[str, Any]]],
        client_dist: Path = CLIENT_DIST,
    ) -> None:
        """``ready``: whether ``/readyz`` says ready; ``devices``: the devices' links for
        ``/devices``."""
        self.metrics, self.limits = metrics, limits
        self.ready, self.devices = ready, devices
        self.client_dist = client_dist
        self.server: Server | None = None
        # One keepalive task for every connection instead of websockets' task each
        # (server/net/heartbeat.py: fewer long-lived objects for the garbage collector).
        self.heartbeat = Heartbeat(interval=20, timeout=20, on_lag=metrics.loop_lag.observe)
        self.floor: Floor | None = None
        # The operator's round history API (``operator_api.py``), when configured.
        self.operator_api: OperatorApi | None = None
        self.connections = 0
        self.metrics.gauge(
            "croupier_connections_open",
            "WebSocket connections open now (handshake completed, not yet closed)",
            lambda: self.connections,
        )

    def fanout(self, targets: Iterable[Any], payload: bytes) -> int:
        """Hand one frame to many viewers (framed once), counted for ``/metrics``."""
        sent = fanout(targets, payload)
        self.metrics.frames_fanout.value += sent
        return sent

    async def start(self, floor: Floor, host: str, port: int) -> int:
        """Listen on ``host``:``port``, serving connections against ``floor``; the port
        listened on (``port`` 0: one the system chose)."""
        self.floor = floor
        self.server = await serve(
            self._handler,
            host,
            port,
            process_request=self._route,
            compression=None,  # permessage-deflate costs 3x memory and half the throughput
            max_size=MAX_FRAME,
            max_queue=32,
            create_connection=FrameConnection,  # messages taken as they are read
            ping_interval=None,  # the one Heartbeat pings every connection
            server_header=f"croupier/{__version__}",
        )
        self.heartbeat.start()
        sockets = self.server.sockets
        return int(sockets[0].getsockname()[1]) if sockets else port

    async def stop(self) -> None:
        await self.heartbeat.stop()
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()

    async def _handler(self, ws: ServerConnection) -> None:
        assert self.floor is not None  # set before listening
        assert isinstance(ws, FrameConnection)  # create_connection
        self.connections += 1
        self.heartbeat.add(ws)
        try:
            await serve_connection(ws, self.floor, self.metrics, self.limits)
        finally:
            self.heartbeat.discard(ws)
            self.connections -= 1

    def _route(
        self, connection: ServerConnection, request: Request
    ) -> Response | Awaitable[Response] | None:
        path = request.path.split("?", 1)[0]
        if path == "/ws":
            return None  # the WebSocket handshake proceeds
        if path.startswith("/operator/"):
            if self.operator_api is None:  # not the browser client's page either
                return _text(http.HTTPStatus.NOT_FOUND, "the operator API is not configured\n")
            return self._operator(self.operator_api, request)  # websockets awaits it
        if path == "/healthz":
            return _text(http.HTTPStatus.OK, "ok\n")
        if path == "/readyz":
            if self.ready():
                return _text(http.HTTPStatus.OK, "ready\n")
            return _text(http.HTTPStatus.SERVICE_UNAVAILABLE, "not ready\n")
        if path == "/devices":
            return _text(
                http.HTTPStatus.OK,
                json.dumps({"devices": self.devices()}),
                "application/json",
            )
        if path == "/metrics":
            return _text(
                http.HTTPStatus.OK,
                self.metrics.render(),
                "text/plain; version=0.0.4; charset=utf-8",
            )
        return self._static(path)

    async def _operator(self, api: OperatorApi, request: Request) -> Response:
        status, body = await api.answer(request.path, request.headers.get("Authorization"))
        data = json.dumps(body).encode()
        headers = Headers(
            [
                ("Content-Type", "application/json"),
                ("Content-Length", str(len(data))),
                ("Cache-Control", "no-store"),
            ]
        )
        return Response(status, http.HTTPStatus(status).phrase, headers, data)

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
