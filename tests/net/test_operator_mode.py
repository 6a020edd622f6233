"""Operator mode: players arrive with a JWT from the operator's platform (RFC 7519, verified
with PyJWT), are funded through `croupier wallet`, and play with real-money balances."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import time
from pathlib import Path

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
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


def _claims(sub: object = "p-42", **claims: object) -> dict[str, object]:
    """The platform's claims, each of ``claims`` changed (None: left out)."""
    payload: dict[str, object] = {
        "sub": sub,
        "name": "Pat",
        "aud": "croupier",
        "iss": "platform",
        "exp": int(time.time()) + 600,
    }
    payload.update(claims)
    return {k: v for k, v in payload.items() if v is not None}


def _token(sub: object = "p-42", secret: str = SECRET, **claims: object) -> str:
    return jwt.encode(_claims(sub, **claims), secret, "HS256")


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unsigned() -> str:
    """A token with ``alg: none`` and no signature (RFC 7519 §6), claims otherwise good."""
    head = _b64(json.dumps({"alg": "none", "typ": "JWT"}).encode())
    return f"{head}.{_b64(json.dumps(_claims()).encode())}."


def _signed_hs256(claims: dict[str, object], secret: bytes) -> str:
    """HS256 by hand, with any secret (PyJWT refuses a public key as an HMAC secret, which
    is what the algorithm confusion attack does)."""
    head = _b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    signed = f"{head}.{_b64(json.dumps(claims).encode())}"
    mac = hmac.new(secret, signed.encode(), hashlib.sha256).digest()
    return f"{signed}.{_b64(mac)}"


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
                ({"token": _token(exp=None)}, "bad_token"),  # exp is required
                ({"token": _unsigned()}, "bad_token"),  # alg "none"
                ({"token": _token(sub="station:s1")}, "bad_token"),  # a station's identity
                ({"token": _token(sub="p" * 200)}, "bad_token"),
                ({"token": _token(sub=42)}, "bad_token"),
                ({"token": _token(sub=None)}, "bad_token"),
                ({"token": _token(nbf=int(time.time()) + 600)}, "bad_token"),  # not yet valid
            ]:
                reply = await _hello(service.port, **fields)
                assert isinstance(reply, ErrorMessage) and reply.code == code, (fields, reply)

    asyncio.run(scenario())


def _pem(public: rsa.RSAPublicKey | ec.EllipticCurvePublicKey) -> bytes:
    return public.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )


@pytest.mark.parametrize("algorithm", ["RS256", "ES256"])
def test_tokens_signed_with_the_platforms_private_key_are_verified_with_its_public_key(
    tmp_path: Path, algorithm: str
) -> None:
    """``jwt_public_key_file``: the platform signs with its private key (RS256 or ES256); a
    token signed by another key, or signed HS256 with the public key's text as the secret
    (the algorithm confusion attack), is refused."""
    if algorithm == "RS256":
        key: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey = rsa.generate_private_key(65537, 2048)  # fmt: skip  # noqa: E501
        other: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey = rsa.generate_private_key(65537, 2048)  # fmt: skip  # noqa: E501
    else:
        key, other = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())  # fmt: skip  # noqa: E501
    pem = tmp_path / "platform.pem"
    pem.write_bytes(_pem(key.public_key()))
    tables = TABLES.replace(
        f'jwt_secret = "{SECRET}"',
        f'jwt_public_key_file = "{pem}"\njwt_algorithms = ["{algorithm}"]',
    )

    async def scenario() -> None:
        async with live_service(tmp_path, tables) as service:
            welcome = await _hello(service.port, token=jwt.encode(_claims(), key, algorithm))
            assert isinstance(welcome, Welcome) and welcome.player_id == "p-42", welcome
            forged = jwt.encode(_claims(), other, algorithm)
            confused = _signed_hs256(_claims(), pem.read_bytes())
            for token in (forged, confused):
                reply = await _hello(service.port, token=token)
                assert isinstance(reply, ErrorMessage) and reply.code == "bad_token", reply

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
