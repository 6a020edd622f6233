"""The data directory belongs to one server process at a time.

``croupier serve`` takes an exclusive lock on ``<data dir>/croupier.lock`` before it reads or
writes anything there, and keeps it until it exits. The lock is the kernel's (``flock``):
it is released when the process ends in any way, ``kill -9`` included, so a crash never
leaves a stale lock behind. A second server on the same directory is refused at once, with
the directory and the PID holding it — before it could run crash recovery on rounds that
the first server is still playing (recovery voids every open round it finds).

Other commands that write there (``croupier wallet credit|debit``) do not take the lock:
they are safe beside a live server (docs/operations.md) because every write to the ledger
is one SQLite transaction that checks the balance inside it, whichever process makes it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
from pathlib import Path
from typing import Final

__all__ = ["LOCK_NAME", "DataDirInUse", "DataDirLock", "load_key"]

LOCK_NAME: Final = "croupier.lock"


class DataDirInUse(Exception):
    """Another process holds the data directory."""

    def __init__(self, path: Path, pid: int | None) -> None:
        holder = f"process {pid}" if pid else "another process"
        super().__init__(
            f"the data directory {path} is in use by {holder} (a croupier server); "
            "stop it first, or give this one another --data-dir"
        )
        self.path = path
        self.pid = pid


class DataDirLock:
    """An exclusive, non-blocking lock on a data directory, held until ``release``."""

    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir
        data_dir.mkdir(parents=True, exist_ok=True)
        lock_file = data_dir / LOCK_NAME
        fd = os.open(lock_file, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = _read_pid(fd)
            os.close(fd)
            raise DataDirInUse(data_dir.resolve(), pid) from None
        # The holder's PID, for the message a second process prints (and for operators).
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd: int | None = fd

    def release(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, 0)
            os.close(self._fd)  # closing the descriptor releases the flock
            self._fd = None

    def __enter__(self) -> DataDirLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _read_pid(fd: int) -> int | None:
    text = os.pread(fd, 32, 0).decode(errors="replace").strip()
    return int(text) if text.isdigit() else None


def load_key(path: Path) -> bytes:
    """The secret key kept in ``path`` (hex), made — 32 random bytes, mode 0600 — when
    missing: the demo tokens', the stations' critical memory's, the tickets'. Never logged."""
    if path.exists():
        return bytes.fromhex(path.read_text().strip())
    key = secrets.token_bytes(32)
    path.write_text(key.hex())
    path.chmod(0o600)
    return key
