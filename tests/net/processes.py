"""Real ``croupier serve`` processes for the tests: a free loopback port, HTTP, readiness."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

CROUPIER = Path(sys.executable).with_name("croupier")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def http_get(url: str) -> tuple[int, str]:
    """Status and body (an error status too)."""
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def serve(config: Path, data_dir: Path, port: int) -> subprocess.Popen[bytes]:
    """``croupier serve`` on ``port``, its output discarded."""
    return subprocess.Popen(
        [CROUPIER, "serve", "--config", config, "--data-dir", data_dir, "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def wait_ready(port: int) -> None:
    for _ in range(200):
        try:
            if http_get(f"http://127.0.0.1:{port}/readyz")[0] == 200:
                return
        except OSError:
            pass
        time.sleep(0.05)
    raise AssertionError(f"the server on port {port} never became ready")
