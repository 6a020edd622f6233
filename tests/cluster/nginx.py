"""A real nginx in front of real ``croupier serve`` nodes, for the multi-node tests.

It runs deploy/nginx/croupier.conf itself, the file compose and Kubernetes use, not a copy:
``start_nginx`` writes a temporary prefix directory holding a main ``nginx.conf`` (pid file,
logs and every temporary path inside that directory, so nothing outside it is touched and
no privilege is needed) whose ``http {}`` includes croupier.conf by its absolute path, and
the two per-deployment files croupier.conf includes by relative path, which nginx resolves
against the directory of the main configuration file:

``croupier-upstreams.conf``
    one ``server 127.0.0.1:PORT max_fails=1 fail_timeout=2s;`` line per node (inside
    croupier.conf's ``upstream croupier_nodes``);
``croupier-listen.conf``
    ``listen 127.0.0.1:PORT;`` on a free loopback port (inside its ``server``).

Then ``nginx -p DIR -c DIR/nginx.conf`` runs in the foreground as a child process, as the
current user.
"""

from __future__ import annotations

import contextlib
import grp
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

__all__ = ["CROUPIER_CONF", "Nginx", "NginxError", "NginxMissing", "find_nginx", "start_nginx"]

FAIL_TIMEOUT = 2.0  # seconds nginx skips a node after one failure (max_fails=1)
CROUPIER_CONF = Path(__file__).resolve().parents[2] / "deploy" / "nginx" / "croupier.conf"
UPSTREAMS = "croupier-upstreams.conf"
LISTEN = "croupier-listen.conf"

Backend = tuple[str, int]


class NginxError(RuntimeError):
    """nginx refused the configuration or did not start; the message holds its error log."""


class NginxMissing(NginxError):
    """No nginx binary on this machine."""


def find_nginx() -> str:
    """The nginx binary: on the PATH, or where Debian puts it (/usr/sbin, which is not on an
    ordinary user's PATH)."""
    found = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/usr/local/sbin")
    if found is None:
        raise NginxMissing(
            "nginx is not installed: the multi-node tests run the real nginx in front of the "
            "nodes; install the Debian package nginx (apt-get install nginx; scripts/test "
            "installs it when run as root)"
        )
    return found


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _main_conf(prefix: Path) -> str:
    """The main configuration: everything nginx writes goes into ``prefix``."""
    lines = []
    if os.geteuid() == 0:
        # The workers would otherwise switch to "nobody", who may not enter this directory
        # (made private by mkdtemp): keep them as the user who started the test. A non-root
        # nginx cannot switch users and needs no such line.
        user = pwd.getpwuid(os.getuid()).pw_name
        group = grp.getgrgid(os.getgid()).gr_name
        lines.append(f"user {user} {group};")
    lines += [
        "daemon off;",
        "worker_processes 1;",
        # Load tests hold thousands of WebSockets, two connections each in nginx (the
        # player's and the one to a node): deploy/'s main configurations give each of their
        # workers (one per core) 8,192; this one worker has two such workers' worth, 8,192
        # players, within the 20,000 files a process may open here.
        "worker_rlimit_nofile 20000;",
        f"pid {prefix / 'nginx.pid'};",
        f"error_log {prefix / 'error.log'} notice;",
        "events { worker_connections 16384; }",
        "http {",
        f"    access_log {prefix / 'access.log'};",
        f"    client_body_temp_path {prefix / 'client_body_temp'};",
        f"    proxy_temp_path {prefix / 'proxy_temp'};",
        f"    fastcgi_temp_path {prefix / 'fastcgi_temp'};",
        f"    uwsgi_temp_path {prefix / 'uwsgi_temp'};",
        f"    scgi_temp_path {prefix / 'scgi_temp'};",
        f"    include {CROUPIER_CONF};",
        "}",
    ]
    return "\n".join(lines) + "\n"


def _upstreams(backends: list[Backend]) -> str:
    if not backends:
        raise ValueError("nginx needs at least one backend")
    return "".join(
        f"server {host}:{port} max_fails=1 fail_timeout={FAIL_TIMEOUT:g}s;\n"
        for host, port in backends
    )


def _children(pid: int) -> set[int]:
    """The process ids whose parent is ``pid`` (nginx's workers)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            stat = (entry / "stat").read_text()
            # "pid (comm) state ppid ...": comm may hold spaces and parentheses.
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.add(int(entry.name))
    return found


def _command(binary: str, prefix: Path, *extra: str) -> list[str]:
    # -e: the error log from the very start, before the configuration names it (nginx would
    # otherwise first open its compiled-in /var/log/nginx/error.log).
    conf, log = prefix / "nginx.conf", prefix / "error.log"
    return [binary, "-p", f"{prefix}/", "-c", str(conf), "-e", str(log), *extra]


def _check(binary: str, prefix: Path) -> None:
    """``nginx -t`` on the files as they are now."""
    result = subprocess.run(
        _command(binary, prefix, "-t"), capture_output=True, text=True, timeout=30
    )
    if result.returncode != 0:
        raise NginxError(f"nginx refused the configuration:\n{result.stderr}")


class Nginx:
    """A running nginx: ``url`` is the WebSocket endpoint through it."""

    def __init__(self, binary: str, prefix: Path, port: int, process: subprocess.Popen[bytes]):
        self.binary, self.prefix, self.port, self.process = binary, prefix, port, process

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    @property
    def http(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _command(self, *extra: str) -> list[str]:
        return _command(self.binary, self.prefix, *extra)

    def error_log(self) -> str:
        with contextlib.suppress(OSError):
            return (self.prefix / "error.log").read_text()
        return ""

    def _wait_listening(self, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while True:
            if self.process.poll() is not None:
                raise NginxError(
                    f"nginx exited with status {self.process.returncode}:\n{self.error_log()}"
                )
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5),
            ):
                return
            if time.monotonic() > deadline:
                raise NginxError(f"nginx never listened on {self.port}:\n{self.error_log()}")
            time.sleep(0.02)

    def reload(self, backends: list[Backend], timeout: float = 10.0) -> None:
        """Balance over ``backends`` from now on: the upstream file rewritten, checked, then
        ``nginx -s reload``; returns once a worker with the new configuration runs (the old
        worker finishes its open connections, as in production)."""
        old = _children(self.process.pid)
        (self.prefix / UPSTREAMS).write_text(_upstreams(backends))
        _check(self.binary, self.prefix)
        result = subprocess.run(
            self._command("-s", "reload"), capture_output=True, text=True, timeout=30
        )
        if result.returncode != 0:
            raise NginxError(f"nginx -s reload failed:\n{result.stderr}")
        deadline = time.monotonic() + timeout
        while not _children(self.process.pid) - old:
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise NginxError(f"nginx did not reload:\n{self.error_log()}")
            time.sleep(0.02)
        self._wait_listening(timeout)

    def stop(self) -> None:
        """Stop at once (open connections are cut) and remove the directory."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)  # nginx's fast shutdown
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.prefix, ignore_errors=True)

    def __enter__(self) -> Nginx:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_nginx(backends: list[Backend]) -> Nginx:
    """nginx on a free loopback port, balancing over ``backends`` with croupier.conf.
    Raises NginxMissing when nginx is not installed, NginxError when it does not start."""
    binary = find_nginx()
    for attempt in range(3):
        try:
            return _start(binary, backends)
        except NginxError as exc:  # the free port was taken meanwhile: another one
            if "Address already in use" not in str(exc) or attempt == 2:
                raise
    raise AssertionError("unreachable")


def _start(binary: str, backends: list[Backend]) -> Nginx:
    prefix = Path(tempfile.mkdtemp(prefix="croupier-nginx-"))
    try:
        port = _free_port()
        (prefix / "nginx.conf").write_text(_main_conf(prefix))
        (prefix / UPSTREAMS).write_text(_upstreams(backends))
        (prefix / LISTEN).write_text(f"listen 127.0.0.1:{port};\n")
        _check(binary, prefix)
        process = subprocess.Popen(
            _command(binary, prefix),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    except BaseException:
        shutil.rmtree(prefix, ignore_errors=True)
        raise
    nginx = Nginx(binary, prefix, port, process)
    try:
        nginx._wait_listening()
    except BaseException:
        nginx.stop()
        raise
    return nginx
