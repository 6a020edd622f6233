"""Real ``croupier serve`` cluster nodes for the multi-node tests: each a process of its own
on a loopback port it bound itself, on the test run's Redis and PostgreSQL, its log in a file."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.cluster.nginx import Nginx, NginxMissing, start_nginx
from tests.net.processes import CROUPIER, http_get, port_file_in, port_of

__all__ = ["Node", "nginx_for", "start_node"]


@dataclass
class Node:
    """A node binds a free port itself at its first start (``--port 0``, read back from its
    ``--port-file``) and keeps it across restarts, as a supervised node keeps its address."""

    node_id: str
    config: Path
    data_dir: Path
    redis_url: str
    database_url: str
    log: Path
    process: subprocess.Popen[bytes] | None = None
    starts: int = field(default=0)
    _port: int = 0
    _port_file: Path | None = None

    @property
    def port(self) -> int:
        """The port it listens on (at its first start: once it has bound one)."""
        if not self._port:
            assert self.process is not None and self._port_file is not None, "never started"
            self._port = port_of(self.process, self._port_file, log=self.log)
        return self._port

    @property
    def backend(self) -> tuple[str, int]:
        return ("127.0.0.1", self.port)

    def start(self) -> None:
        self.starts += 1
        where: list[str | Path] = ["--port", str(self._port)]
        if not self._port:
            self._port_file = port_file_in(self.log.parent / "ports")
            where += ["--port-file", self._port_file]
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                [
                    CROUPIER,
                    "serve",
                    "--config",
                    self.config,
                    "--data-dir",
                    self.data_dir,
                    *where,
                    "--redis",
                    self.redis_url,
                    "--database",
                    self.database_url,
                    "--node-id",
                    self.node_id,
                ],
                stdout=log,
                stderr=log,
            )

    def wait_ready(self, timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.process is not None and self.process.poll() is None, self.log.read_text()
            try:
                if http_get(f"http://127.0.0.1:{self.port}/readyz")[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.05)
        raise AssertionError(f"node {self.node_id} never became ready:\n{self.log.read_text()}")

    def kill(self) -> None:
        """``kill -9``: no hand-over, no goodbye."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def signal(self, sig: signal.Signals) -> None:
        assert self.process is not None
        os.kill(self.process.pid, sig)

    def stop(self, timeout: float = 40.0) -> None:
        """SIGTERM: the node hands its tables over (or finishes their rounds) and exits."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise AssertionError(
                f"node {self.node_id} did not stop on SIGTERM:\n{self.log.read_text()[-4000:]}"
            ) from None


def start_node(
    tmp_path: Path, node_id: str, config: Path, redis_url: str, database_url: str
) -> Node:
    node = Node(
        node_id, config, tmp_path / node_id, redis_url, database_url, tmp_path / f"{node_id}.log"
    )
    node.start()
    return node


def nginx_for(nodes: Sequence[Any]) -> Nginx:
    """deploy/nginx/croupier.conf in front of the nodes (anything with a ``backend``, its
    host and port; tests/cluster/nginx.py)."""
    try:
        return start_nginx([node.backend for node in nodes])
    except NginxMissing as exc:
        pytest.skip(str(exc))  # a failure under CI (tests/conftest.py)
