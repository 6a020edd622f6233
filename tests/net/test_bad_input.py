"""Bad input and abuse over real connections: each gets a clear error code or a 4xxx close,
and the server and every other player carry on (docs/architecture.md, "Reliability and
security")."""

from __future__ import annotations

import asyncio
from pathlib import Path

import msgspec
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from server.net.connection import ConnectionLimits
from server.protocol.codec import encode
from server.protocol.messages import (
    PROTOCOL_VERSION,
    BetAccepted,
    Decide,
    ErrorMessage,
    Hello,
    Join,
    Joined,
    ListTables,
    Lobby,
    PlaceBet,
)
from tests.net.live import Client, advance, live_service

BET = {"type": "place_bet", "table": "rt", "bet_id": "x", "spot": "red"}


def _raw(**fields: object) -> bytes:
    return msgspec.msgpack.encode(fields)


@pytest.mark.parametrize(
    ("frame", "code"),
    [
        (b"\xc1\xc1", "malformed_frame"),
        ("hello there", "text_frame"),
        (_raw(type="launch"), "invalid_message"),
        (_raw(**BET, round="rt.1", amount=-100), "invalid_message"),
        (_raw(**BET, round="rt.1", amount=0), "invalid_message"),
        (_raw(**BET, round="rt.1", amount=12.5), "invalid_message"),
        (_raw(**BET, round="rt.1", amount=10**13), "invalid_message"),
        (_raw(**BET, round="rt.1", amount="100"), "invalid_message"),
        (
            encode(PlaceBet(table="nope", round="rt.1", bet_id="x", spot="red", amount=100)),
            "unknown_table",
        ),
        (
            encode(PlaceBet(table="rt", round="rt.1", bet_id="x", spot="purple", amount=100)),
            "unknown_wager",
        ),
        (
            encode(PlaceBet(table="rt", round="rt.1", bet_id="x", spot="red", amount=10**11)),
            "above_maximum",
        ),
        (
            encode(PlaceBet(table="rt", round="rt.1", bet_id="x", spot="red", amount=99_000)),
            "insufficient_funds",
        ),
        (
            encode(PlaceBet(table="rt", round="rt.7", bet_id="x", spot="red", amount=100)),
            "round_not_open",
        ),
        (
            encode(Decide(table="rt", round="rt.1", spot="red", decision="hit")),
            "no_decision_pending",
        ),
        (encode(Hello(version=PROTOCOL_VERSION, name="again")), "already_welcomed"),
        (
            encode(PlaceBet(table="b6", round="b6.1", bet_id="x", spot="one", amount=100)),
            "not_seated",
        ),
    ],
)
def test_each_bad_request_gets_its_error_code(
    tmp_path: Path, frame: bytes | str, code: str
) -> None:
    config = (
        __import__("tests.net.live", fromlist=["TABLES"])
        .TABLES.replace("maximum = 100000", "maximum = 10000000")
        .replace("starting_balance = 100000", "starting_balance = 50000")
    )

    async def scenario() -> None:
        async with live_service(tmp_path, config) as service, Client.connect(service) as c:
            await c.send(Join(table="rt"))
            await c.expect(Joined)
            await c.ws.send(frame)
            error = await c.expect(ErrorMessage)
            assert error.code == code, error
            await c.send(ListTables())  # the connection is still fine
            await c.expect(__import__("server.protocol.messages", fromlist=["Lobby"]).Lobby)

    asyncio.run(scenario())


def test_before_hello_and_wrong_versions_and_bad_tokens(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with (
            live_service(tmp_path) as service,
            connect(f"ws://127.0.0.1:{service.port}/ws") as ws,
        ):
            c = Client(ws)
            await c.send(ListTables())
            assert (await c.expect(ErrorMessage)).code == "hello_first"
            await c.send(Hello(version=99, name="x"))
            assert (await c.expect(ErrorMessage)).code == "unsupported_version"
            await c.send(Hello(version=PROTOCOL_VERSION, token="not.a.jwt"))
            assert (await c.expect(ErrorMessage)).code == "bad_token"

    asyncio.run(scenario())


def test_a_frame_over_the_size_limit_closes_with_1009(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with live_service(tmp_path) as service, Client.connect(service) as c:
            await c.ws.send(b"\x00" * (65 * 1024))
            with pytest.raises(ConnectionClosed) as info:
                await c.next()
            assert info.value.rcvd is not None and info.value.rcvd.code == 1009

    asyncio.run(scenario())


def test_a_flood_is_refused_then_closed_with_4008_and_others_play_on(tmp_path: Path) -> None:
    limits = ConnectionLimits(rate=20, burst=20, flood_factor=2)

    async def scenario() -> None:
        async with (
            live_service(tmp_path, limits=limits) as service,
            Client.connect(service, "calm") as calm,
            Client.connect(service, "noisy") as noisy,
        ):
            await calm.send(Join(table="rt"))
            joined = await calm.expect(Joined)
            for _ in range(200):
                try:
                    await noisy.send(ListTables())
                except ConnectionClosed:
                    break
            codes = []
            with pytest.raises(ConnectionClosed) as info:
                while True:
                    message = await noisy.next()
                    if isinstance(message, ErrorMessage):
                        codes.append(message.code)
            assert "rate_limited" in codes
            assert info.value.rcvd is not None and info.value.rcvd.code == 4008
            # Meanwhile the calm player's round goes on undisturbed.
            r = joined.snapshot.round
            await calm.send(PlaceBet(table="rt", round=r, bet_id="ok", spot="even", amount=100))
            await calm.expect(BetAccepted)
            await advance(service, 10)
            await calm.event("round_settled")

    asyncio.run(scenario())


def test_a_bet_after_no_more_bets_is_refused(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with live_service(tmp_path) as service, Client.connect(service) as c:
            await c.send(Join(table="rt"))
            r = (await c.expect(Joined)).snapshot.round
            await advance(service, 10)  # no more bets; the round is dealt and settled
            await c.send(PlaceBet(table="rt", round=r, bet_id="late", spot="red", amount=100))
            error = await c.expect(ErrorMessage)
            assert error.code in ("betting_closed", "round_not_open", "not_in_phase")
            assert service.ledger.balance("wagers:open") == 0

    asyncio.run(scenario())


def test_silence_after_connecting_is_closed_with_4001(tmp_path: Path) -> None:
    limits = ConnectionLimits(hello_timeout=0.2)

    async def scenario() -> None:
        async with (
            live_service(tmp_path, limits=limits) as service,
            connect(f"ws://127.0.0.1:{service.port}/ws") as ws,
        ):
            with pytest.raises(ConnectionClosed) as info:
                await asyncio.wait_for(ws.recv(), 5)
            assert info.value.rcvd is not None and info.value.rcvd.code == 4001

    asyncio.run(scenario())


def test_a_player_who_said_hello_may_then_stay_silent(tmp_path: Path) -> None:
    """The hello timeout is for a connection that has not said hello: a player who has,
    and then only watches, stays connected. (Until 2026-11-28 the read after the hello was
    still timed, and a player silent that long after saying hello was closed with 4001.)"""
    limits = ConnectionLimits(hello_timeout=0.2)

    async def scenario() -> None:
        async with live_service(tmp_path, limits=limits) as service, Client.connect(service) as c:
            await asyncio.sleep(0.6)  # three hello timeouts, silent
            await c.send(ListTables(ref=5))
            assert (await c.expect(Lobby)).ref == 5

    asyncio.run(scenario())


@pytest.mark.parametrize(
    ("frame", "code"),
    [
        # Nested deeper than the decoder goes, before the "type" tag it must skip to: this
        # closed the connection with 1011 (issue #14).
        (b"\x82\xa3ref\x2a\xa5extra" + b"\x81\xa1a" * 10_000 + b"\x01", "invalid_message"),
        (_raw(ref=42, type="launch"), "invalid_message"),
        (_raw(**BET, round="rt.1", amount=-100, ref=42), "invalid_message"),
        (b"\x83\xa3ref\x2a\xa4type\xa4ping\xa5nonce", "malformed_frame"),  # truncated
    ],
)
def test_an_unreadable_message_gets_an_error_with_its_ref_and_the_connection_carries_on(
    tmp_path: Path, frame: bytes, code: str
) -> None:
    async def scenario() -> None:
        async with live_service(tmp_path) as service, Client.connect(service) as c:
            await c.ws.send(frame)
            error = await c.expect(ErrorMessage)
            assert (error.code, error.ref) == (code, 42), error
            await c.send(ListTables())
            await c.expect(__import__("server.protocol.messages", fromlist=["Lobby"]).Lobby)

    asyncio.run(scenario())


def test_every_client_message_has_its_handler() -> None:
    """A message added to the protocol without a handler would fail at the first one sent:
    each of the protocol's client messages (``hello`` aside, answered before any) has one."""
    from typing import get_args

    from server.net.connection import _HANDLERS
    from server.protocol.messages import ClientMessage

    assert set(get_args(ClientMessage)) - {Hello} == set(_HANDLERS)
