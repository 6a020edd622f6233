"""Real ``croupier serve`` processes for the tests: each on a port it bound itself
(``--port 0``, the port read back from ``--port-file``), HTTP, readiness."""

from __future__ import annotations

import asyncio
import itertools
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import IO, Any

CROUPIER = Path(sys.executable).with_name("croupier")
_files = itertools.count(1)


def http_get(url: str) -> tuple[int, str]:
    """Status and body (an error status too)."""
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def port_file_in(folder: Path) -> Path:
    """A fresh file name in ``folder`` for ``--port-file`` (never one an earlier start left)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"port-{os.getpid()}-{next(_files)}"
    path.unlink(missing_ok=True)
    return path


def _exited(process: subprocess.Popen[bytes] | asyncio.subprocess.Process) -> int | None:
    if isinstance(process, subprocess.Popen):
        return process.poll()
    return process.returncode


def _read_port(port_file: Path) -> int | None:
    try:
        return int(port_file.read_text())
    except (FileNotFoundError, ValueError):
        return None


def _not_listening(what: str, code: int | None, log: Path | None) -> AssertionError:
    said = f":\n{log.read_text(errors='replace')}" if log is not None and log.exists() else ""
    if code is not None:
        return AssertionError(f"{what} exited with status {code} before it listened{said}")
    return AssertionError(f"{what} did not listen within its time{said}")


def port_of(
    process: subprocess.Popen[bytes],
    port_file: Path,
    *,
    timeout: float = 60.0,
    log: Path | None = None,
) -> int:
    """The port a server started with ``--port 0 --port-file port_file`` bound, once it
    listens; an error naming its exit status (and its log) if it exits first."""
    deadline = time.monotonic() + timeout
    while (port := _read_port(port_file)) is None:
        code = _exited(process)
        if code is not None or time.monotonic() > deadline:
            raise _not_listening("croupier serve", code, log)
        time.sleep(0.02)
    return port


async def aport_of(
    process: asyncio.subprocess.Process, port_file: Path, *, timeout: float = 60.0
) -> int:
    """``port_of`` for a server started with asyncio."""
    deadline = time.monotonic() + timeout
    while (port := _read_port(port_file)) is None:
        code = _exited(process)
        if code is not None or time.monotonic() > deadline:
            raise _not_listening("croupier serve", code, None)
        await asyncio.sleep(0.02)
    return port


def serve_command(
    config: Path | None, data_dir: Path, port_file: Path, *more: str | Path
) -> list[str | Path]:
    """``croupier serve`` on a port of its own choosing, which it writes to ``port_file``."""
    args: list[str | Path] = [CROUPIER, "serve", "--port", "0", "--port-file", port_file]
    if config is not None:
        args += ["--config", config]
    return [*args, "--data-dir", data_dir, *more]


def serve(
    config: Path,
    data_dir: Path,
    *more: str | Path,
    output: IO[bytes] | int = subprocess.DEVNULL,
    **popen: Any,
) -> tuple[subprocess.Popen[bytes], int]:
    """``croupier serve`` on a free port it bound itself, its output discarded (or sent to
    ``output``); the process and its port, once it listens."""
    port_file = port_file_in(data_dir.parent / "ports")
    process = subprocess.Popen(
        serve_command(config, data_dir, port_file, *more),
        stdout=output,
        stderr=output,
        **popen,
    )
    try:
        return process, port_of(process, port_file)
    except BaseException:
        process.kill()
        process.wait()
        raise


def wait_ready(port: int, process: subprocess.Popen[bytes] | None = None) -> None:
    """Until ``/readyz`` answers 200 (an error at once if ``process`` exits first)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise AssertionError(f"the server on port {port} exited ({process.returncode})")
        try:
            if http_get(f"http://127.0.0.1:{port}/readyz")[0] == 200:
                return
        except OSError:
            pass
        time.sleep(0.05)
    raise AssertionError(f"the server on port {port} never became ready")


def stop(process: subprocess.Popen[bytes], timeout: float = 20.0) -> None:
    """SIGTERM, then kill -9 if it has not exited within ``timeout``."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
