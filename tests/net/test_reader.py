"""A connection takes each message as websockets parses it (``server/net/reader.py``): a
message sent in fragments is one message, messages sent back to back before the hello is
answered are taken after it in order, and an idle connection keeps no pending read."""

from __future__ import annotations

import asyncio
import gc
import types
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import connect
from websockets.asyncio.messages import MAX_FRAGMENTS
from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

from server.net.connection import ConnectionLimits
from server.net.reader import READ_BYTES
from server.protocol.codec import decode_server, encode
from server.protocol.messages import (
    PROTOCOL_VERSION,
    ErrorMessage,
    Hello,
    Joined,
    ListTables,
    Lobby,
    Ping,
    Pong,
    Welcome,
)
from server.protocol.messages import Join as JoinTable
from tests.net.live import Client, live_service


def test_a_message_sent_in_fragments_is_taken_as_one(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with live_service(tmp_path) as service, Client.connect(service) as c:
            frame = encode(ListTables(ref=7))
            await c.ws.send([frame[:3], frame[3:9], frame[9:]])  # three fragments
            assert (await c.expect(Lobby)).ref == 7

    asyncio.run(scenario())


def test_messages_sent_at_once_with_the_hello_are_answered_after_it_in_order(
    tmp_path: Path,
) -> None:
    """The hello is answered on a task of its own; what the client sent behind it waits for
    it, then is taken in the order sent (a join needs the hello's player)."""

    async def scenario() -> None:
        async with (
            live_service(tmp_path) as service,
            connect(f"ws://127.0.0.1:{service.port}/ws", compression=None) as ws,
        ):
            for message in (
                Hello(version=PROTOCOL_VERSION, name="ann"),
                JoinTable(table="rt", role="player", ref=1),
                Ping(nonce=1, ref=2),
                ListTables(ref=3),
            ):
                await ws.send(encode(message))
            kinds = [type(decode_server(await ws.recv())) for _ in range(4)]
            assert kinds[0] is Welcome
            assert set(kinds[1:]) == {Joined, Pong, Lobby}  # the join's lane answers apart
            assert kinds.index(Pong) < kinds.index(Lobby)

    asyncio.run(scenario())


def _on_port(recv: Any, port: int) -> bool:
    """Whether a pending ``Connection.recv`` reads a server connection on ``port``."""
    frame = recv.cr_frame
    if frame is None:
        return False
    connection = frame.f_locals.get("self")
    try:
        return isinstance(connection, ServerConnection) and connection.local_address[1] == port
    except ReferenceError:  # a weak proxy left by an earlier test
        return False


def test_an_idle_connection_keeps_no_pending_read(tmp_path: Path) -> None:
    """Between its client's messages a connection keeps no read under way: no coroutine of
    websockets' ``recv`` is alive while 20 players sit idle (before, each kept a chain of
    them, which the garbage collector's middle generation walked again and again)."""

    async def scenario() -> int:
        async with live_service(tmp_path) as service:
            clients = [Client.connect(service, f"p{i}") for i in range(20)]
            for client in clients:
                await client.__aenter__()
            await asyncio.sleep(0.1)
            # websockets' reads under way on this server's connections (a test run before
            # in the same process may have left its own)
            pending = [
                o
                for o in gc.get_objects()
                if type(o) is types.CoroutineType  # not isinstance: a dead weak proxy raises
                and o.__qualname__ == "Connection.recv"
                and _on_port(o, service.port)
            ]
            for client in clients:
                await client.__aexit__(None, None, None)
            return len(pending)

    assert asyncio.run(scenario()) == 0


def test_a_message_in_too_many_fragments_closes_the_connection_with_1009(tmp_path: Path) -> None:
    """Empty fragments add nothing to a message's size, so websockets' size limit does not
    stop them: past ``MAX_FRAGMENTS`` the connection is failed, as websockets' own reader
    does, instead of the fragments piling up in the server."""

    async def scenario() -> None:
        async with live_service(tmp_path) as service, Client.connect(service) as c:
            with pytest.raises(ConnectionClosed) as info:
                await c.ws.send([b"\x81"] + [b""] * (MAX_FRAGMENTS + 10))
                await asyncio.wait_for(c.ws.recv(), 5)
            assert info.value.rcvd is not None and info.value.rcvd.code == 1009

    asyncio.run(scenario())


def test_a_connection_is_read_64_kib_at_a_time_and_larger_messages_still_arrive_whole(
    tmp_path: Path,
) -> None:
    """The server reads a connection's socket ``READ_BYTES`` at a time, not asyncio's 256
    KiB (whose allocation per read cost 18–22 µs). Two messages of 40 KB sent back to back,
    more than one read holds, are each taken whole and answered in order."""

    async def scenario() -> None:
        async with live_service(tmp_path) as service, Client.connect(service) as c:
            (served,) = service.edge.server.connections
            assert served.transport.max_size == READ_BYTES < 256 * 1024
            big = ["x" * 40_000, "y" * 40_000]
            for ref, table in enumerate(big, 1):
                await c.send(JoinTable(table=table, role="player", ref=ref))
            await c.send(ListTables(ref=3))
            first, second = await c.expect(ErrorMessage), await c.expect(ErrorMessage)
            assert (first.ref, second.ref) == (1, 2)
            # Each decoded whole, down to the table id its length is refused for (a frame
            # cut short would not decode: ``malformed_frame``).
            for error in (first, second):
                assert error.code == "invalid_message" and "$.table" in error.message
            assert (await c.expect(Lobby)).ref == 3

    asyncio.run(scenario())


def test_a_failed_hello_may_be_followed_by_a_good_one_and_silence_is_still_timed(
    tmp_path: Path,
) -> None:
    """A hello that fails (a wrong version) leaves the connection open for another, timed
    again from that answer: a good hello within it logs in; none closes with 4001."""
    limits = ConnectionLimits(hello_timeout=0.3)

    async def scenario() -> None:
        async with live_service(tmp_path, limits=limits) as service:
            url = f"ws://127.0.0.1:{service.port}/ws"
            async with connect(url, compression=None) as ws:
                await ws.send(encode(Hello(version=PROTOCOL_VERSION + 99, name="ann")))
                assert isinstance(decode_server(await ws.recv()), ErrorMessage)
                await asyncio.sleep(0.2)  # less than a timeout after the answer
                await ws.send(encode(Hello(version=PROTOCOL_VERSION, name="ann")))
                assert isinstance(decode_server(await ws.recv()), Welcome)
                await asyncio.sleep(0.6)  # logged in: silence is allowed
                await ws.send(encode(Ping(nonce=3, ref=4)))
                assert isinstance(decode_server(await ws.recv()), Pong)
            async with connect(url, compression=None) as ws:
                await ws.send(encode(Hello(version=PROTOCOL_VERSION + 99, name="bob")))
                assert isinstance(decode_server(await ws.recv()), ErrorMessage)
                with pytest.raises(ConnectionClosed) as info:
                    await asyncio.wait_for(ws.recv(), 5)
                assert info.value.rcvd is not None and info.value.rcvd.code == 4001

    asyncio.run(scenario())


def test_a_bug_while_reading_a_message_closes_that_connection_with_1011(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An exception while a message is taken (our bug) closes that connection cleanly with
    1011; the server and its other connections go on."""
    import server.net.connection as connection

    decode = connection.decode_client

    def failing(frame: bytes | str) -> Any:
        message = decode(frame)
        if isinstance(message, Ping) and message.nonce == 666:
            raise RuntimeError("a bug")
        return message

    monkeypatch.setattr(connection, "decode_client", failing)

    async def scenario() -> None:
        async with (
            live_service(tmp_path) as service,
            Client.connect(service, "ann") as ann,
            Client.connect(service, "bob") as bob,
        ):
            await ann.send(Ping(nonce=666))
            with pytest.raises(ConnectionClosed) as info:
                await asyncio.wait_for(ann.ws.recv(), 5)
            assert info.value.rcvd is not None and info.value.rcvd.code == 1011
            await bob.send(Ping(nonce=1, ref=2))
            assert (await bob.expect(Pong)).ref == 2

    asyncio.run(scenario())
