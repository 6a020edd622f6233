"""The reference operator wallet, as a real process over real HTTP: the contract of
docs/wallet.md (signed calls and answers, idempotent transaction ids, refusals, rollbacks of
debits seen and unseen) and each knob a later test leans on (errors before a call is
applied, timeouts after it was, unsigned answers, replays, restarts that keep the books)."""

from __future__ import annotations

import http.client
import socket
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jwt
import pytest

from tests.operator_wallet import OperatorWallet, running


@pytest.fixture
def wallet(tmp_path: Path) -> Iterator[OperatorWallet]:
    with running(tmp_path, "alice") as w:
        yield w


def debit(txid: str, amount: int = 500, player: str = "alice", **extra: Any) -> dict[str, Any]:
    return {
        "transaction_id": txid,
        "player_id": player,
        "currency": "USD",
        "amount": amount,
        "round_id": "r1",
        "table": "t1",
        "bet_id": txid,
        **extra,
    }


def credit(txid: str, amount: int, debits: list[str], player: str = "alice") -> dict[str, Any]:
    return {
        "transaction_id": txid,
        "player_id": player,
        "currency": "USD",
        "amount": amount,
        "round_id": "r1",
        "table": "t1",
        "debits": debits,
    }


def rollback(txid: str, of: str, amount: int = 500, player: str = "alice") -> dict[str, Any]:
    return {
        "transaction_id": txid,
        "rollback_of": of,
        "player_id": player,
        "currency": "USD",
        "amount": amount,
        "round_id": "r1",
        "table": "t1",
    }


def test_a_round_debit_then_credit(wallet: OperatorWallet) -> None:
    answer = wallet.call("balance", player_id="alice", currency="USD")
    assert (answer.status, answer.body, answer.signed) == (
        200,
        {"status": "ok", "balance": 10_000},
        True,
    )
    assert wallet.post("/debit", debit("d1", 500)).body == {"status": "ok", "balance": 9_500}
    assert wallet.post("/debit", debit("d2", 300)).body == {"status": "ok", "balance": 9_200}
    answer = wallet.post("/credit", credit("c1", 1_600, ["d1", "d2"]))
    assert answer.body == {"status": "ok", "balance": 10_800} and answer.signed
    state = wallet.state()
    assert state["players"]["alice"]["balance"] == 10_800
    assert state["debits"] == {"settled": 2} and state["open_debits"] == []
    assert state["anomalies"] == []
    assert [(r["transaction_id"], r["operation"], r["amount"]) for r in wallet.statement()] == [
        ("d1", "debit", 500),
        ("d2", "debit", 300),
        ("c1", "credit", 1_600),
    ]


def test_a_repeated_transaction_id_gets_its_first_answer_and_moves_nothing(
    wallet: OperatorWallet,
) -> None:
    first = wallet.post("/debit", debit("d1", 500)).body
    assert first == {"status": "ok", "balance": 9_500}
    assert wallet.post("/debit", debit("d2", 100)).body["balance"] == 9_400
    assert wallet.post("/debit", debit("d1", 500)).body == first  # the first answer, again
    assert wallet.post("/credit", credit("c1", 0, ["d1", "d2"])).body["balance"] == 9_400
    assert wallet.post("/credit", credit("c1", 0, ["d1", "d2"])).body["balance"] == 9_400
    assert wallet.balance_of("alice") == 9_400
    # An id is one transaction: another operation under it is not answered ok.
    reused = wallet.post("/rollback", rollback("d1", "d2"))
    assert (reused.status, reused.body["code"]) == (409, "reused_id")
    assert wallet.state()["anomalies"] == []


def test_refusals(wallet: OperatorWallet) -> None:
    poor = wallet.post("/debit", debit("d1", 20_000))
    assert poor.body["status"] == "refused" and poor.body["code"] == "insufficient_funds"
    wallet.player("bob", 1_000, blocked=True)
    blocked = wallet.post("/debit", debit("d2", 100, player="bob"))
    assert blocked.body["code"] == "player_blocked"
    wallet.knobs(refuse={"alice": "limit_reached"})
    assert wallet.post("/debit", debit("d3", 100)).body["code"] == "limit_reached"
    wallet.knobs(refuse={})
    assert wallet.post("/debit", debit("d4", 100)).body == {"status": "ok", "balance": 9_900}
    # A refused debit is answered the same when sent again, and a rollback of it returns
    # nothing (nothing was taken).
    assert wallet.post("/debit", debit("d1", 20_000)).body == poor.body
    assert wallet.post("/rollback", rollback("r1", "d1", 20_000)).body["balance"] == 9_900
    assert wallet.balance_of("alice") == 9_900 and wallet.balance_of("bob") == 1_000


def test_rollback_returns_a_debit_once(wallet: OperatorWallet) -> None:
    wallet.post("/debit", debit("d1", 500))
    assert wallet.post("/rollback", rollback("r1", "d1")).body == {
        "status": "ok",
        "balance": 10_000,
    }
    assert wallet.post("/rollback", rollback("r1", "d1")).body["balance"] == 10_000
    # A second rollback (another id) of the same debit returns nothing more.
    assert wallet.post("/rollback", rollback("r2", "d1")).body["balance"] == 10_000
    assert wallet.state()["debits"] == {"rolled_back": 1}


def test_a_debit_rolled_back_before_it_arrives_is_never_applied(wallet: OperatorWallet) -> None:
    answer = wallet.post("/rollback", rollback("r1", "d1"))
    assert answer.body == {"status": "ok", "balance": 10_000}  # never seen: ok all the same
    late = wallet.post("/debit", debit("d1", 500))
    assert late.body["status"] == "refused"
    assert wallet.balance_of("alice") == 10_000


def test_anomalies_are_recorded(wallet: OperatorWallet) -> None:
    """What a correct caller never does is seen (the check the later tests rely on can
    fail): a credit settling a debit that was rolled back, a rollback of a settled debit."""
    wallet.post("/debit", debit("d1", 500))
    wallet.post("/rollback", rollback("r1", "d1"))
    wallet.post("/credit", credit("c1", 1_000, ["d1"]))
    wallet.post("/debit", debit("d2", 500))
    wallet.post("/credit", credit("c2", 0, ["d2"]))
    wallet.post("/rollback", rollback("r2", "d2"))
    anomalies = wallet.state()["anomalies"]
    assert len(anomalies) == 2
    assert "settles debit d1: rolled_back" in anomalies[0]
    assert "the debit was settled" in anomalies[1]


def test_signatures(wallet: OperatorWallet) -> None:
    unsigned = wallet.post("/debit", debit("d1"), signed=False)
    assert (unsigned.status, unsigned.body["code"]) == (401, "bad_signature")
    tampered = wallet.post("/debit", debit("d1"), raw=b'{"amount": 1}')  # signed other bytes
    assert tampered.status == 400  # signed ({"amount": 1} is what was signed) but incomplete
    assert wallet.balance_of("alice") == 10_000
    wallet.knobs(unsigned={"debit": 1})
    answer = wallet.post("/debit", debit("d2"))
    assert answer.status == 200 and not answer.signed  # applied, answer unsigned
    assert wallet.post("/debit", debit("d2")).signed  # the knob used up: the same, signed
    assert wallet.balance_of("alice") == 9_500


@pytest.mark.parametrize(
    "body, code",
    [
        ({**debit("d1"), "amount": True}, "bad_field"),
        ({**debit("d1"), "amount": -5}, "bad_field"),
        ({**debit("d1"), "amount": "500"}, "bad_field"),
        ({k: v for k, v in debit("d1").items() if k != "bet_id"}, "bad_field"),
        ({**debit("d1"), "currency": "EUR"}, "bad_currency"),
        ({**debit("d1"), "player_id": "nobody"}, "unknown_player"),
        ([1, 2], "bad_body"),
    ],
)
def test_bad_calls_get_a_clear_error_and_apply_nothing(
    wallet: OperatorWallet, body: Any, code: str
) -> None:
    answer = wallet.post("/debit", body)
    assert answer.status in (400, 404) and answer.body["status"] == "error"
    assert answer.body["code"] == code
    assert wallet.balance_of("alice") == 10_000
    assert wallet.statement() == []


def test_fail_before_applies_nothing(wallet: OperatorWallet) -> None:
    wallet.knobs(fail_before={"debit": 2})
    assert wallet.post("/debit", debit("d1")).status == 503
    assert wallet.post("/debit", debit("d1")).status == 503
    assert wallet.balance_of("alice") == 10_000
    assert wallet.post("/debit", debit("d1")).body == {"status": "ok", "balance": 9_500}
    wallet.knobs(down=True)
    assert wallet.post("/credit", credit("c1", 1_000, ["d1"])).status == 503
    wallet.knobs(down=False)
    assert wallet.post("/credit", credit("c1", 1_000, ["d1"])).body["balance"] == 10_500


def test_timeout_after_applies_and_never_answers(wallet: OperatorWallet) -> None:
    wallet.knobs(timeout_after={"debit": 1}, hang_ms=2_000)
    with pytest.raises((TimeoutError, socket.timeout, http.client.RemoteDisconnected)):
        wallet.post("/debit", debit("d1"), timeout=0.5)
    assert wallet.balance_of("alice") == 9_500  # applied all the same
    assert wallet.post("/debit", debit("d1")).body == {"status": "ok", "balance": 9_500}
    assert wallet.balance_of("alice") == 9_500


def test_a_replaying_proxy_changes_nothing(wallet: OperatorWallet) -> None:
    wallet.knobs(repeat=True)
    wallet.post("/debit", debit("d1"))
    wallet.post("/credit", credit("c1", 1_000, ["d1"]))
    assert wallet.balance_of("alice") == 10_500
    assert wallet.state()["calls"] == {"credit": 1, "debit": 1}


def test_latency_is_waited_out(wallet: OperatorWallet) -> None:
    wallet.knobs(latency_ms=300)
    began = time.monotonic()
    assert wallet.call("balance", player_id="alice", currency="USD").status == 200
    assert time.monotonic() - began >= 0.3  # a lower bound: never flaky


def test_a_restart_keeps_the_books(wallet: OperatorWallet) -> None:
    first = wallet.post("/debit", debit("d1", 700)).body
    wallet.post("/rollback", rollback("r1", "d9"))
    wallet.kill()  # kill -9: what was answered is kept
    wallet.start()
    assert wallet.post("/debit", debit("d1", 700)).body == first
    assert wallet.balance_of("alice") == 9_300
    assert wallet.post("/debit", debit("d9", 100)).body["status"] == "refused"  # still rolled back


def test_knobs_refuse_bad_values(wallet: OperatorWallet) -> None:
    for knobs in (
        {"latency": 5},
        {"latency_ms": -1},
        {"down": "yes"},
        {"fail_before": {"deposit": 1}},
        {"refuse": {"alice": "broke"}},
    ):
        answer = wallet.post("/_reference/knobs", knobs)
        assert (answer.status, answer.body["code"]) == (400, "bad_field"), knobs


def test_auto_create_opens_unknown_players(tmp_path: Path) -> None:
    w = OperatorWallet(tmp_path, auto_create=2_000)
    w.start()
    try:
        assert w.call("balance", player_id="zoe", currency="EUR").body["balance"] == 2_000
        assert w.post("/debit", debit("d1", 500, player="zoe", currency="EUR")).body == {
            "status": "ok",
            "balance": 1_500,
        }
    finally:
        w.stop()


def test_the_demo_platform_launches_its_players_into_the_game(tmp_path: Path) -> None:
    """``--platform-secret-file``: the page lists the players with their balances; a launch
    is 503 until the game's URL is known, then a redirect to the game with a token signed
    under the game's JWT secret; the players' money stays across a restart."""
    jwt_secret = tmp_path / "jwt.secret"
    jwt_secret.write_text("platform-jwt-secret-0123456789abcdef\n")
    options = ("--platform-secret-file", str(jwt_secret), "--platform-players", "ann,bo")
    wallet = OperatorWallet(tmp_path, options=options)
    wallet.start()
    try:
        page = wallet.get("/")
        assert page.status == 200 and b"1,000.00 USD" in page.raw and b"/launch/bo" in page.raw
        assert wallet.get("/launch/ann").status == 503  # the game is not served yet
        assert wallet.post("/_reference/platform", {"game_url": "ftp://x"}).status == 400
        assert wallet.post("/_reference/platform", {"game_url": "http://127.0.0.1:9"}).status == 200
        assert wallet.get("/launch/zed").status == 404
        conn = http.client.HTTPConnection("127.0.0.1", wallet.port, timeout=10)
        conn.request("GET", "/launch/ann")
        answer = conn.getresponse()
        answer.read()
        conn.close()
        assert answer.status == 303
        game, _, token = (answer.getheader("Location") or "").partition("/#token=")
        assert game == "http://127.0.0.1:9"
        claims = jwt.decode(
            urllib.parse.unquote(token), "platform-jwt-secret-0123456789abcdef", ["HS256"]
        )
        assert (claims["sub"], claims["name"], claims["currency"]) == ("ann", "Ann", "USD")
        assert claims["exp"] > time.time() + 7 * 3600
        wallet.player("ann", 5)  # the books change; a restart keeps them
        wallet.stop()
        wallet.start()
        assert b"0.05 USD" in wallet.get("/").raw
    finally:
        wallet.stop()
