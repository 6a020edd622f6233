"""Croupier's side of the operator's wallet contract, against the reference operator wallet
as a real process over real HTTP: each answer read as the contract says (ok, refused,
unknown), whatever the operator or the network does, and many calls in flight."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from server.wallet.operator import contract as c
from server.wallet.operator.client import OperatorWalletClient
from tests.operator_wallet import OperatorWallet, running

NS = "test"


@pytest.fixture
def wallet(tmp_path: Path) -> Iterator[OperatorWallet]:
    with running(tmp_path, "alice") as w:
        yield w


def debit(bet: str, amount: int = 500, player: str = "alice") -> dict[str, Any]:
    txid = c.debit_id(NS, "t1.1", player, bet)
    return c.debit_body(txid, player, "USD", amount, "t1.1", "t1", bet)


def run(wallet: OperatorWallet, *calls: tuple[str, dict[str, Any]], **options: Any) -> list[Any]:
    """Send ``calls`` all at once on one client: their answers, in order."""

    async def go() -> list[Any]:
        client = OperatorWalletClient(wallet.url, wallet.secret, **options)
        try:
            return list(await asyncio.gather(*(client.call(op, body) for op, body in calls)))
        finally:
            await client.close()

    return asyncio.run(go())


def test_ids_are_derived_and_distinct() -> None:
    assert c.debit_id(NS, "t1.1", "alice", "b1") == c.debit_id(NS, "t1.1", "alice", "b1")
    ids = {
        c.debit_id(NS, "t1.1", "alice", "b1"),
        c.debit_id(NS, "t1.1", "alice", "b2"),
        c.debit_id(NS, "t1.2", "alice", "b1"),
        c.debit_id("other", "t1.1", "alice", "b1"),
        # A separator inside a part cannot make two tuples collide.
        c.debit_id(NS, "t1.1", "alice:b", "1"),
        c.debit_id(NS, "t1.1", "alice", "b:1"),
        c.credit_id(NS, "t1.1", "alice"),
    }
    assert len(ids) == 7
    assert c.rollback_id(c.debit_id(NS, "t1.1", "alice", "b1")).startswith("rollback-")


def test_a_round_through_the_client(wallet: OperatorWallet) -> None:
    d1, d2 = debit("b1", 500), debit("b2", 300)
    credit = c.credit_body(
        c.credit_id(NS, "t1.1", "alice"),
        "alice",
        "USD",
        1_600,
        "t1.1",
        "t1",
        [d1["transaction_id"], d2["transaction_id"]],
    )
    # Each ``run`` sends its calls at once: these follow one another.
    assert run(wallet, ("balance", c.balance_body("alice", "USD"))) == [c.Ok(10_000)]
    assert run(wallet, ("debit", d1)) == [c.Ok(9_500)]
    assert run(wallet, ("debit", d2)) == [c.Ok(9_200)]
    assert run(wallet, ("credit", credit)) == [c.Ok(10_800)]
    assert wallet.state()["anomalies"] == [] and wallet.balance_of("alice") == 10_800


def test_refusals_are_read(wallet: OperatorWallet) -> None:
    [answer] = run(wallet, ("debit", debit("b1", 50_000)))
    assert isinstance(answer, c.Refused) and answer.code == "insufficient_funds"
    wallet.knobs(refuse={"alice": "limit_reached"})
    [answer] = run(wallet, ("debit", debit("b2")))
    assert answer == c.Refused("limit_reached", "refused by the operator (limit_reached)")


def test_every_other_answer_is_unknown(wallet: OperatorWallet) -> None:
    wallet.knobs(fail_before={"debit": 1})
    [answer] = run(wallet, ("debit", debit("b1")))
    assert answer == c.Unknown("HTTP 503")
    wallet.knobs(unsigned={"debit": 1})
    [answer] = run(wallet, ("debit", debit("b2")))
    assert isinstance(answer, c.Unknown) and "no X-Croupier-Signature" in answer.reason
    assert wallet.balance_of("alice") == 9_500  # the unsigned one was applied: unknown to us
    wallet.knobs(timeout_after={"debit": 1}, hang_ms=3_000)
    [answer] = run(wallet, ("debit", debit("b3")), timeout=0.5)
    assert answer == c.Unknown("no answer within 0.5 s")
    # Signed with another secret: the answer cannot be trusted.
    [answer] = asyncio.run(_with_secret(wallet, b"not-the-secret", ("debit", debit("b4"))))
    assert isinstance(answer, c.Unknown) and answer.reason == "HTTP 401"


async def _with_secret(wallet: OperatorWallet, secret: bytes, *calls: Any) -> list[Any]:
    client = OperatorWalletClient(wallet.url, secret)
    try:
        return [await client.call(op, body) for op, body in calls]
    finally:
        await client.close()


def test_no_operator_is_unknown(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens there once closed

    async def go() -> Any:
        client = OperatorWalletClient(f"http://127.0.0.1:{port}", b"s", timeout=2)
        try:
            return await client.call("balance", c.balance_body("alice", "USD"))
        finally:
            await client.close()

    answer = asyncio.run(go())
    assert isinstance(answer, c.Unknown) and "ConnectionRefusedError" in answer.reason


@pytest.mark.parametrize(
    "reply, expected",
    [
        (b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", "no X-Croupier-Signature"),
        (b"this is not HTTP\r\n\r\n", "not HTTP"),
        (b'HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n{"status"', "closed"),
        (b"", "closed"),
    ],
)
def test_whatever_comes_back_is_read_without_raising(reply: bytes, expected: str) -> None:
    """A peer that answers garbage, half an answer or nothing: ``Unknown``, saying what."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]

    def answer_once() -> None:
        conn, _ = server.accept()
        with conn:
            conn.recv(65536)
            conn.sendall(reply)

    thread = threading.Thread(target=answer_once)
    thread.start()

    async def go() -> Any:
        client = OperatorWalletClient(f"http://127.0.0.1:{port}", b"s", timeout=5)
        try:
            return await client.call("balance", c.balance_body("alice", "USD"))
        finally:
            await client.close()  # a connection kept after the answer, closed

    try:
        answer = asyncio.run(go())
    finally:
        thread.join()
        server.close()
    assert isinstance(answer, c.Unknown) and expected in answer.reason, answer


def test_answers_are_read_as_the_contract_says() -> None:
    secret = b"k"

    def read(operation: str, body: bytes, *, status: int = 200, signed: bool = True) -> c.Answer:
        return c.read_answer(
            operation, status, c.sign(secret, body) if signed else None, body, secret
        )

    assert read("debit", b'{"status":"ok","balance":7}') == c.Ok(7)
    assert read("debit", b'{"status":"refused","code":"player_blocked","message":"m"}') == (
        c.Refused("player_blocked", "m")
    )
    unknown = [
        read("credit", b'{"status":"refused","code":"player_blocked","message":"m"}'),
        read("debit", b'{"status":"refused","code":"broke","message":"m"}'),
        read("debit", b'{"status":"ok","balance":true}'),
        read("debit", b'{"status":"ok","balance":"7"}'),
        read("debit", b'{"status":"ok"}'),
        read("debit", b"[1]"),
        read("debit", b"\xff"),
        read("debit", b'{"status":"ok","balance":7}', status=500),
        read("debit", b'{"status":"ok","balance":7}', signed=False),
        c.read_answer("debit", 200, "sha256=00", b'{"status":"ok","balance":7}', secret),
    ]
    assert all(isinstance(a, c.Unknown) for a in unknown), unknown


def test_bodies_refuse_bad_amounts() -> None:
    for amount in (0, -1, True, 1.5):
        with pytest.raises(ValueError):
            c.debit_body("d", "p", "USD", amount, "r", "t", "b")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        c.credit_body("c", "p", "USD", -1, "r", "t", [])
    assert c.credit_body("c", "p", "USD", 0, "r", "t", [])["amount"] == 0


def test_many_calls_in_flight_share_a_bounded_pool(wallet: OperatorWallet) -> None:
    """80 debits sent at once, with the operator taking 200 ms a call and a pool of 16
    connections: every one applied once, and no more than 16 connections opened — kept
    alive and used again (a call each would have opened 80)."""
    wallet.knobs(latency_ms=200)
    calls = [("debit", debit(f"b{i}", 100)) for i in range(80)]
    before = _connections_accepted(wallet)
    answers = run(wallet, *calls, connections=16)
    assert all(isinstance(a, c.Ok) for a in answers), answers
    assert sorted(a.balance for a in answers) == list(range(2_000, 10_000, 100))
    assert wallet.balance_of("alice") == 2_000
    # Each of the test's own requests to the service is a connection too: the state read
    # for ``before`` counted itself, and two more came after the calls.
    assert _connections_accepted(wallet) - before - 2 == 16


def _connections_accepted(wallet: OperatorWallet) -> int:
    count: int = wallet.state()["connections"]
    return count


def test_a_connection_the_operator_closed_is_not_an_unknown_answer(
    wallet: OperatorWallet,
) -> None:
    """The operator closes an idle kept-alive connection (as a server's keep-alive timeout
    does): the next call goes out on a new connection instead of failing."""

    async def go() -> list[Any]:
        client = OperatorWalletClient(wallet.url, wallet.secret)
        try:
            first = await client.call("debit", debit("b1"))
            wallet.knobs(drop_idle=True)  # the service closes its idle connections
            await asyncio.sleep(0.3)
            second = await client.call("debit", debit("b2"))
            return [first, second]
        finally:
            await client.close()

    assert asyncio.run(go()) == [c.Ok(9_500), c.Ok(9_000)]


@pytest.mark.parametrize(
    "url",
    [
        "ftp://wallet.example/api",
        "http:///api",
        "http://wallet.example/a b",
        "http://wallet.example/api\r\nX-Evil: 1",
        "http://wallet.example/api?x=1",
    ],
)
def test_a_url_that_is_not_a_plain_http_base_is_refused(url: str) -> None:
    with pytest.raises(ValueError, match="url"):
        OperatorWalletClient(url, b"s")


def test_the_request_line_carries_the_url_s_path() -> None:
    """The operations sit under the URL's path, as docs/wallet.md says (``{url}/debit``)."""
    client = OperatorWalletClient("https://wallet.example:8443/croupier/v1/", b"s")
    assert client._heads["debit"].startswith(
        b"POST /croupier/v1/debit HTTP/1.1\r\nHost: wallet.example:8443\r\n"
    )
