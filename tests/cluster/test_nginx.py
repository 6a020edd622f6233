"""deploy/nginx/croupier.conf in front of two real ``croupier serve`` nodes (the harness in
tests/cluster/nginx.py runs that very file): players log in over WebSockets through it,
are spread over both nodes, still get in when one node dies, and the health checks pass
through while the per-node pages do not."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from websockets.asyncio.client import ClientConnection, connect

from server.protocol.codec import decode_server, encode
from server.protocol.messages import PROTOCOL_VERSION, Hello, Welcome
from tests.cluster import nginx as harness
from tests.cluster.nginx import FAIL_TIMEOUT, NginxMissing
from tests.cluster.nodes import nginx_for
from tests.net import exposition
from tests.net.processes import http_get, serve, wait_ready

TABLES = """
[[tables]]
id = "b6"
name = "Big Six"
game = "big_six"
betting_seconds = 10
"""


@dataclass
class Node:
    port: int
    process: subprocess.Popen[bytes]

    @property
    def backend(self) -> tuple[str, int]:
        return ("127.0.0.1", self.port)

    def connections_open(self) -> float:
        status, text = http_get(f"http://127.0.0.1:{self.port}/metrics")
        assert status == 200
        return exposition.parse(text).value("croupier_connections_open")


@pytest.fixture
def nodes(tmp_path: Path) -> Iterator[list[Node]]:
    """Two embedded-default nodes, each on its own port and data directory."""
    config = tmp_path / "tables.toml"
    config.write_text(TABLES)
    started = []
    try:
        for name in ("node-1", "node-2"):
            process, port = serve(config, tmp_path / name)
            started.append(Node(port, process))
        for node in started:
            wait_ready(node.port, node.process)
        yield started
    finally:
        for node in started:
            if node.process.poll() is None:
                node.process.terminate()
        for node in started:
            try:
                node.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                node.process.kill()
                node.process.wait()


# How long a test waits for what must come (an answer, a count to settle): a bound for
# what never happens, generous on a loaded machine, never a measure of speed.
PATIENCE = 30.0


async def log_in(url: str, name: str) -> tuple[ClientConnection, Welcome]:
    """A player's WebSocket through nginx, and the server's welcome to its hello."""
    ws = await connect(url, compression=None, open_timeout=PATIENCE)
    await ws.send(encode(Hello(version=PROTOCOL_VERSION, name=name)))
    while True:
        message = decode_server(await asyncio.wait_for(ws.recv(decode=False), PATIENCE))
        if isinstance(message, Welcome):
            return ws, message


async def settles(node: Node, count: int) -> None:
    """Until ``node`` counts ``count`` connections open (closed ones leave its count once
    its side of the connection has ended)."""
    deadline = asyncio.get_running_loop().time() + PATIENCE
    while (now := await asyncio.to_thread(node.connections_open)) != count:
        assert asyncio.get_running_loop().time() < deadline, f"{now} open, never {count}"
        await asyncio.sleep(0.05)


def test_players_reach_both_nodes_through_nginx_and_the_survivor_when_one_dies(
    nodes: list[Node],
) -> None:
    first, second = nodes
    with nginx_for(nodes) as nginx:
        # The health checks pass through; one node's metrics and devices do not.
        assert http_get(nginx.http + "/healthz") == (200, "ok\n")
        assert http_get(nginx.http + "/readyz") == (200, "ready\n")
        assert http_get(nginx.http + "/metrics")[0] == 404
        assert http_get(nginx.http + "/devices")[0] == 404

        async def balanced() -> list[tuple[ClientConnection, Welcome]]:
            """Four players through nginx, two held open on each node (least connections).
            A node that did not answer nginx in time (a loaded test machine) is skipped
            for ``fail_timeout``, as it should be: then the players leave and come again."""
            for _ in range(3):
                players = [await log_in(nginx.url, f"ann-{i}") for i in range(4)]
                assert all(welcome.name == f"ann-{i}" for i, (_, welcome) in enumerate(players))
                split = (first.connections_open(), second.connections_open())
                if split == (2, 2):
                    return players
                # Only a node nginx found failing excuses the split.
                assert "upstream" in nginx.error_log(), split
                for ws, _ in players:
                    await ws.close()
                await settles(first, 0)
                await settles(second, 0)
                await asyncio.sleep(FAIL_TIMEOUT + 0.5)
            raise AssertionError(f"least connections never split four players 2/2: {split}")

        async def scenario() -> None:
            # The upgrade works through nginx and each login is answered, two per node.
            players = await balanced()

            first.process.kill()  # SIGKILL: no goodbye, its port now refuses
            first.process.wait()
            for ws, _ in players:
                await ws.close()  # those on the dead node were cut by nginx already
            # New players still get in, all on the survivor: nginx skips the dead node.
            survivors = [await log_in(nginx.url, f"bob-{i}") for i in range(3)]
            assert all(welcome.balance > 0 for _, welcome in survivors)
            await settles(second, 3)  # the players closed above leave the node's count
            assert http_get(nginx.http + "/healthz") == (200, "ok\n")

            # The operator takes the dead node out: reloaded, nginx balances on the survivor.
            nginx.reload([second.backend])
            survivors.append(await log_in(nginx.url, "cy"))
            assert second.connections_open() == 4
            for ws, _ in survivors:
                await ws.close()

        asyncio.run(scenario())
        upstreams = (nginx.prefix / "croupier-upstreams.conf").read_text()
        assert upstreams == f"server 127.0.0.1:{second.port} max_fails=1 fail_timeout=2s;\n"
    assert not nginx.prefix.exists()  # stop() left nothing behind


def test_without_nginx_the_harness_says_which_package_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(shutil, "which", lambda *args, **kwargs: None)
    with pytest.raises(NginxMissing, match="Debian package nginx"):
        harness.start_nginx([("127.0.0.1", 1)])
