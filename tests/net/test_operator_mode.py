"""Operator mode: players arrive with a JWT from the operator's platform (RFC 7519, verified
with PyJWT), are funded through `croupier wallet`, and play with real-money balances."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import jwt
import pytest
from websockets.asyncio.client import connect

from server.cli.main import main
from server.protocol.messages import (
    PROTOCOL_VERSION,
    BetAccepted,
    ErrorMessage,
    Hello,
    Join,
    Joined,
    PlaceBet,
    Welcome,
)
from tests.net.live import Client, advance, live_service

SECRET = "operator-shared-secret-for-tests-only-0123456789"
TABLES = f"""
[auth]
mode = "jwt"
jwt_secret = "{SECRET}"
jwt_audience = "croupier"
jwt_issuer = "platform"

[[tables]]
id = "rt"
name = "Roulette"
game = "roulette"
betting_seconds = 10
"""


def _token(sub: str = "p-42", secret: str = SECRET, **claims: object) -> str:
    payload: dict[str, object] = {
        "sub": sub,
        "name": "Pat",
        "aud": "croupier",
        "iss": "platform",
        "exp": int(time.time()) + 600,
    }
    payload.update(claims)
    return jwt.encode(payload, secret, "HS256")


async def _hello(port: int, **fields: object) -> object:
    async with connect(f"ws://127.0.0.1:{port}/ws") as ws:
        client = Client(ws)
        await client.send(Hello(version=PROTOCOL_VERSION, **fields))  # type: ignore[arg-type]
        return await client.next()


def test_tokens_are_verified_and_bad_ones_refused(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with live_service(tmp_path, TABLES) as service:
            welcome = await _hello(service.port, token=_token())
            assert isinstance(welcome, Welcome)
            assert (welcome.player_id, welcome.name, welcome.play_money) == ("p-42", "Pat", False)
            for fields, code in [
                ({"name": "anyone"}, "token_required"),
                ({"token": _token(secret="x" * 48)}, "bad_token"),
                ({"token": _token(exp=int(time.time()) - 5)}, "bad_token"),
                ({"token": _token(aud="elsewhere")}, "bad_token"),
                ({"token": _token(iss="someone")}, "bad_token"),
                ({"token": "not-a-jwt"}, "bad_token"),
            ]:
                reply = await _hello(service.port, **fields)
                assert isinstance(reply, ErrorMessage) and reply.code == code, (fields, reply)

    asyncio.run(scenario())


def test_an_operator_player_is_funded_by_the_wallet_command_and_plays(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = ["--data-dir", str(tmp_path)]
    assert main(["wallet", "credit", "p-7", "5000", "--reference", "dep-1", *data]) == 0
    assert main(["wallet", "credit", "p-7", "5000", "--reference", "dep-1", *data]) == 0  # retry
    assert "already done" in capsys.readouterr().out

    async def scenario() -> None:
        async with (
            live_service(tmp_path, TABLES) as service,
            connect(f"ws://127.0.0.1:{service.port}/ws") as ws,
        ):
            pat = Client(ws)
            await pat.send(Hello(version=PROTOCOL_VERSION, token=_token("p-7")))
            welcome = await pat.expect(Welcome)
            assert welcome.balance == 5_000 and not welcome.play_money
            await pat.send(Join(table="rt"))
            r = (await pat.expect(Joined)).snapshot.round
            await pat.send(PlaceBet(table="rt", round=r, bet_id="a", spot="red", amount=1_000))
            assert (await pat.expect(BetAccepted)).balance == 4_000
            await advance(service, 10)
            await pat.event("round_settled")

    asyncio.run(scenario())
    assert main(["wallet", "balance", "p-7", *data]) == 0
    out = capsys.readouterr().out
    assert "ledger reconciles" in out
    assert main(["wallet", "debit", "p-7", "999999", "--reference", "w-1", *data]) == 1
