"""A real Redis for the cluster's tests: a ``redis-server`` of the test run's own, on a free
loopback port, without persistence, stopped at the end (so a test may also restart it).
Without the binary the tests that need it fail in CI (never silently skipped there) and are
skipped elsewhere, saying how to get it."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

__all__ = ["RedisServer", "run_redis"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class RedisServer:
    """One ``redis-server`` process; ``restart`` loses every key, as a Redis without
    persistence does."""

    def __init__(self, binary: str, workdir: Path) -> None:
        self.binary, self.workdir = binary, workdir
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None
        self.started = False

    def start(self) -> None:
        """Start it; at its first start, on another free port if the one chosen was taken
        meanwhile (redis-server cannot bind port 0 and say which it got). A restart keeps
        its port: the nodes know it."""
        for attempt in range(5):
            if self._start():
                self.started = True
                return
            if self.started or attempt == 4:
                break
            self.port = free_port()
            self.url = f"redis://127.0.0.1:{self.port}/0"
        raise RuntimeError(f"redis-server did not answer on port {self.port}")

    def _start(self) -> bool:
        """Whether it answers a PING (False: it exited at once, its port in use)."""
        self.process = subprocess.Popen(
            [
                self.binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.workdir),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and self.process.poll() is None:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        return True
            except OSError:
                time.sleep(0.05)
        self.stop()
        return False

    def stop(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def flush(self) -> None:
        with socket.create_connection(("127.0.0.1", self.port), timeout=2) as s:
            s.sendall(b"FLUSHALL\r\n")
            s.recv(16)


def run_redis(workdir: Path) -> Iterator[RedisServer]:
    binary = shutil.which("redis-server")
    if binary is None:
        message = (
            "no redis-server on PATH: run scripts/test as root to install it (Debian package "
            "redis-server), or install it yourself"
        )
        pytest.skip(message)  # a failure under CI (tests/conftest.py)
    server = RedisServer(binary, workdir)
    server.start()
    try:
        yield server
    finally:
        server.stop()
