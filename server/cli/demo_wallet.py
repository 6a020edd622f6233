"""``croupier serve --wallet-demo``: the demo lobby with the players' money at an operator.

The reference operator wallet (``reference/wallet``, docs/wallet.md) runs beside the server
as a process of its own, as an operator's platform would, and the server plays with it as
an operator's deployment does: ``[wallet] mode = "seamless"`` and ``[auth] mode = "jwt"``.
The reference also plays the operator's platform: its page lists the demo players with
their balances at the operator, and opens the game as one of them with a token it signs
(``/#token=JWT``, docs/protocol.md, "Players").

Everything lives in one folder (``--data-dir``'s ``wallet-demo``): the server's data, the
operator's books (``operator.sqlite``) and the two secrets, made once and kept, so a demo
started again finds its players, their money and its outbox as it left them. The reference
is started from the repository checkout (it is not part of the installed package), which
``scripts/serve`` runs from.
"""

from __future__ import annotations

import json
import secrets
import subprocess
import sys
import urllib.request
from pathlib import Path

from server.config import ServerSettings, demo_config_text, parse_config
from server.wallet.operator.contract import SIGNATURE_HEADER, sign

__all__ = ["DemoWallet", "WalletDemoError"]

ROOT = Path(__file__).resolve().parents[2]
PLAYERS = ("alice", "bob", "carol", "dave")
OPENING = 100_000  # each demo player's money at the operator: $1,000.00
START_SECONDS = 20.0


class WalletDemoError(Exception):
    """The reference wallet could not be started."""


def _kept_secret(path: Path) -> Path:
    """A secret made once in ``path`` (readable by its owner only) and kept."""
    if not path.exists():
        path.write_text(secrets.token_hex(32) + "\n")
        path.chmod(0o600)
    return path


class DemoWallet:
    """The reference wallet and platform for ``folder``, on ``host``."""

    def __init__(self, folder: Path, host: str = "127.0.0.1") -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.folder, self.host = folder, host
        self.secret_file = _kept_secret(folder / "wallet.secret")
        self.jwt_secret_file = _kept_secret(folder / "jwt.secret")
        self.process: subprocess.Popen[str] | None = None
        self.url: str | None = None

    def start(self) -> str:
        """Start the reference wallet; its URL once it answers."""
        if not (ROOT / "reference" / "wallet" / "__main__.py").exists():
            raise WalletDemoError(
                f"--wallet-demo runs the reference wallet from the repository checkout, "
                f"and {ROOT / 'reference'} is not there: run it with scripts/serve"
            )
        command = [
            sys.executable, "-m", "reference.wallet",
            "--db", str(self.folder / "operator.sqlite"),
            "--secret-file", str(self.secret_file),
            "--host", self.host,
            "--auto-create", str(OPENING),
            "--platform-secret-file", str(self.jwt_secret_file),
            "--platform-players", ",".join(PLAYERS),
        ]  # fmt: skip
        self.process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        line = self.process.stdout.readline()  # {"port": P, "url": U} once it answers
        try:
            self.url = str(json.loads(line)["url"])
        except (ValueError, KeyError, TypeError):
            self.stop()
            raise WalletDemoError(
                f"the reference wallet did not start (it said {line!r})"
            ) from None
        return self.url

    def settings(self) -> ServerSettings:
        """The demo lobby's tables, with JWT players and the operator's wallet."""
        assert self.url is not None, "start the wallet first"
        tables = demo_config_text().partition("[[tables]]")
        jwt_secret = self.jwt_secret_file.read_text().strip()
        text = f"""
[auth]
mode = "jwt"
jwt_secret = "{jwt_secret}"

[wallet]
mode = "seamless"
url = "{self.url}"
secret_file = "{self.secret_file}"
currency = "USD"

{tables[1]}{tables[2]}"""
        return parse_config(text, "<built-in demo with the operator's wallet>")

    def announce(self, game_url: str) -> None:
        """Tell the platform where the game is served (its launch links point there)."""
        assert self.url is not None
        raw = json.dumps({"game_url": game_url}).encode()
        request = urllib.request.Request(
            f"{self.url}/_reference/platform",
            data=raw,
            headers={
                "Content-Type": "application/json",
                SIGNATURE_HEADER: sign(self.secret(), raw),
            },
        )
        with urllib.request.urlopen(request, timeout=START_SECONDS) as answer:
            answer.read()

    def secret(self) -> bytes:
        return self.secret_file.read_bytes().strip()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process is not None and self.process.stdout is not None:
            self.process.stdout.close()
