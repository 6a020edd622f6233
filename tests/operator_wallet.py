"""The reference operator wallet (``reference/wallet``) as a real process for the tests, and
a small signed HTTP client for talking to it as Croupier and as the operator's staff do."""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import http.client
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["Answer", "OperatorWallet", "running"]

ROOT = Path(__file__).resolve().parents[1]
SIGNATURE_HEADER = "X-Croupier-Signature"


class Answer:
    """One HTTP answer: its status, JSON body (None when it is not JSON), raw bytes and
    whether its signature header matches the body."""

    def __init__(self, status: int, raw: bytes, signature: str | None, secret: bytes) -> None:
        self.status, self.raw = status, raw
        self.signed = signature is not None and hmac.compare_digest(
            signature, "sha256=" + hmac.new(secret, raw, hashlib.sha256).hexdigest()
        )
        try:
            self.body: Any = json.loads(raw)
        except ValueError:
            self.body = None

    def __repr__(self) -> str:
        return f"Answer({self.status}, {self.body!r}, signed={self.signed})"


class OperatorWallet:
    """``python -m reference.wallet`` on a free port with its books in ``workdir``;
    ``restart`` (after ``kill``) keeps them."""

    def __init__(
        self, workdir: Path, *, auto_create: int | None = None, options: tuple[str, ...] = ()
    ) -> None:
        self.workdir = workdir
        self.secret = b"test-secret-" + os.urandom(8).hex().encode()
        self.secret_file = workdir / "wallet.secret"
        self.secret_file.write_bytes(self.secret)
        self.db = workdir / "wallet.sqlite"
        self.auto_create = auto_create
        self.options = options  # more of the command's options
        self.process: subprocess.Popen[str] | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        argv = [sys.executable, "-m", "reference.wallet", "--db", str(self.db)]
        argv += ["--secret-file", str(self.secret_file), "--port", str(self.port)]
        if self.auto_create is not None:
            argv += ["--auto-create", str(self.auto_create)]
        argv += self.options
        self.process = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"the reference wallet did not start (exit {self.process.wait()})")
        self.port = json.loads(line)["port"]

    def kill(self) -> None:
        """``kill -9``: what was answered is in the books, nothing else."""
        if self.process is not None:
            self.process.send_signal(signal.SIGKILL)
            self._reap()

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self._reap()

    def _reap(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        self.process.wait(timeout=10)
        self.process.stdout.close()
        self.process = None

    # --- calls ----------------------------------------------------------------------------

    def post(
        self,
        path: str,
        body: Any,
        *,
        signed: bool = True,
        timeout: float = 10.0,
        raw: bytes | None = None,
    ) -> Answer:
        """``POST path`` with ``body`` as JSON (or ``raw`` bytes), signed unless told not."""
        data = raw if raw is not None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json"}
        if signed:
            digest = hmac.new(self.secret, data, hashlib.sha256).hexdigest()
            headers[SIGNATURE_HEADER] = "sha256=" + digest
        return self._request("POST", path, data, headers, timeout)

    def get(self, path: str) -> Answer:
        return self._request("GET", path, None, {}, 10.0)

    def _request(
        self, method: str, path: str, data: bytes | None, headers: dict[str, str], timeout: float
    ) -> Answer:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            conn.request(method, path, body=data, headers=headers)
            response = conn.getresponse()
            return Answer(
                response.status, response.read(), response.getheader(SIGNATURE_HEADER), self.secret
            )
        finally:
            conn.close()

    def call(self, operation: str, **body: Any) -> Answer:
        return self.post(f"/{operation}", body)

    def knobs(self, **knobs: Any) -> None:
        answer = self.post("/_reference/knobs", knobs)
        assert answer.status == 200, answer

    def player(self, player_id: str, balance: int, currency: str = "USD", **extra: Any) -> None:
        body = {"player_id": player_id, "currency": currency, "balance": balance, **extra}
        answer = self.post("/_reference/players", body)
        assert answer.status == 200, answer

    def state(self) -> dict[str, Any]:
        answer = self.get("/_reference/state")
        assert answer.status == 200, answer
        state: dict[str, Any] = answer.body
        return state

    def balance_of(self, player_id: str) -> int:
        balance: int = self.state()["players"][player_id]["balance"]
        return balance

    def statement(self) -> list[dict[str, Any]]:
        answer = self.get("/_reference/statement")
        assert answer.status == 200, answer
        return [json.loads(line) for line in answer.raw.decode().splitlines()]


@contextlib.contextmanager
def running(workdir: Path, *players: str, balance: int = 10_000) -> Iterator[OperatorWallet]:
    """The reference wallet started with its books in ``workdir``, each of ``players``
    opened in USD with ``balance``; stopped afterwards."""
    workdir.mkdir(parents=True, exist_ok=True)
    wallet = OperatorWallet(workdir)
    wallet.start()
    try:
        for player in players:
            wallet.player(player, balance)
        yield wallet
    finally:
        wallet.stop()
