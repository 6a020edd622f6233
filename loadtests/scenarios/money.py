"""The money check of a load-test run (``loadtests/scenarios/croupier.py``): each simulated
player's book of the money it saw move, checked against the server's balance and game recall
for that player when the run ends, and the whole ledger (``croupier wallet reconcile``)
where the run can reach the server's store; where the players' money is an operator's
(docs/wallet.md), each player's balance in the operator's wallet too. No Locust here: a test
calls it directly."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from loadtests.scenarios.wsclient import WsClient
from server.protocol.codec import decode_server, encode
from server.protocol.messages import (
    PROTOCOL_VERSION,
    ErrorMessage,
    GetRecall,
    Hello,
    Recall,
    Welcome,
)
from server.wallet.operator import contract as c

__all__ = ["Book", "OperatorWallet", "check_money", "reconcile"]


@dataclass
class Book:
    """One simulated player's money as the server told it to the player."""

    player_id: str
    token: str
    table: str
    opening: int
    balance: int
    wagered: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    returned: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    awarded: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    settled: set[str] = field(default_factory=set)  # rounds it saw end


@dataclass(frozen=True)
class OperatorWallet:
    """The operator's wallet the players' money is in: each player's balance read with a
    signed ``balance`` call (docs/wallet.md), as the operator's own books hold it."""

    url: str
    secret: bytes
    currency: str = "USD"

    def balance(self, player_id: str) -> int | str:
        """The player's balance, or why it could not be read."""
        raw = c.encode(c.balance_body(player_id, self.currency))
        request = urllib.request.Request(
            self.url.rstrip("/") + "/balance",
            data=raw,
            headers={
                "Content-Type": "application/json",
                c.SIGNATURE_HEADER: c.sign(self.secret, raw),
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:
                status, body = answer.status, answer.read()
                signature = answer.headers.get(c.SIGNATURE_HEADER)
        except OSError as exc:
            return f"the operator's wallet did not answer: {exc}"
        # Read as Croupier reads it: signed with the shared secret, ok, an integer balance.
        found = c.read_answer("balance", status, signature, body, self.secret)
        if isinstance(found, c.Ok):
            return found.balance
        return f"the operator's answer is not ok: {found}"


def check_money(
    url: str,
    books: list[Book],
    settle_seconds: float,
    sleep: Callable[[float], Any] = time.sleep,
    wallet: OperatorWallet | None = None,
    each: Callable[[Callable[[Book], str | None], list[Book]], Iterable[str | None]] = map,
) -> list[str]:
    """Every player's balance and recall against its book; the mismatches. A player whose
    round is still in play is asked again (``sleep``: gevent's under Locust) until
    ``settle_seconds`` have passed: the balance must be the opening balance plus everything
    returned less everything wagered (its own book, completed from the recall for the rounds
    it did not see end), and every recalled round it saw must say what it saw. With the
    operator's ``wallet``, the balance in its books must come to the same once the server's
    credits have reached it (asked again until then, within the same time). ``each(check,
    books)`` checks the books — one after the other by default; a pool's ``map`` checks
    many at once (Locust's gevent pool: each check waits on the server and the operator)."""
    deadline = time.monotonic() + settle_seconds

    def check(book: Book) -> str | None:
        while True:
            problem, expected = _check_one(url, book)
            if problem is None and wallet is not None:
                problem = _at_operator(wallet, book, expected)
            if problem is None or time.monotonic() > deadline:
                break
            sleep(1.0)  # a round still in play, or a credit on its way: let it end
        return None if problem is None else f"{book.player_id} at {book.table}: {problem}"

    return [problem for problem in each(check, books) if problem is not None]


def _at_operator(wallet: OperatorWallet, book: Book, expected: int) -> str | None:
    held = wallet.balance(book.player_id)
    if held == expected:
        return None
    if isinstance(held, str):
        return held
    return f"the operator's wallet holds {held}, expected {expected} (the player's book)"


def _check_one(url: str, book: Book) -> tuple[str | None, int]:
    """The mismatch of ``book`` with the server's balance and recall (None: none), and the
    balance the book expects."""
    ws = WsClient(url, timeout=30)
    try:
        ws.send(encode(Hello(version=PROTOCOL_VERSION, token=book.token)))
        welcome = _expect(ws, Welcome)
        ws.send(encode(GetRecall(table=book.table, ref=1)))
        recall = _expect(ws, Recall)
    finally:
        ws.close()
    recalled = {r.round: r for r in recall.rounds}
    unseen = {r for r in book.wagered if r not in book.settled}
    missing = unseen - set(recalled)
    if missing:
        return f"rounds still in play or not recalled: {sorted(missing)}", 0
    for round_id, r in recalled.items():
        if round_id not in book.settled:
            continue
        saw = (book.wagered[round_id], book.returned[round_id], book.awarded[round_id])
        if (r.wagered, r.returned, r.awarded) != saw:
            return (
                f"recall of {round_id} says wagered {r.wagered} returned {r.returned} "
                f"awarded {r.awarded}; the player saw {saw[0]}, {saw[1]} and {saw[2]}"
            ), 0
    seen = sum(book.returned[r] - book.wagered[r] + book.awarded[r] for r in book.settled)
    later = sum(recalled[r].returned - recalled[r].wagered + recalled[r].awarded for r in unseen)
    expected = book.opening + seen + later
    if welcome.balance != expected:
        return (
            f"balance {welcome.balance}, expected {expected} (opening {book.opening}, "
            f"rounds seen {seen:+}, rounds ended after the run {later:+}, awards included)"
        ), expected
    return None, expected


def _expect(ws: WsClient, kind: type) -> Any:
    while True:
        message = decode_server(ws.recv(30))
        if isinstance(message, kind):
            return message
        if isinstance(message, ErrorMessage) and message.ref is not None:
            raise RuntimeError(f"{message.code}: {message.message}")


def reconcile(options: Any) -> str | None:
    """``croupier wallet reconcile`` on the store the options name (None: it reconciles)."""
    where: list[str] = []
    if getattr(options, "croupier_data_dir", ""):
        where = ["--data-dir", options.croupier_data_dir]
    elif getattr(options, "croupier_database", ""):
        where = ["--database", options.croupier_database]
    if not where:
        return None
    croupier = os.path.join(os.path.dirname(sys.executable), "croupier")
    done = subprocess.run(
        [croupier, "wallet", "reconcile", *where], capture_output=True, text=True, check=False
    )
    return None if done.returncode == 0 else (done.stdout + done.stderr).strip()
