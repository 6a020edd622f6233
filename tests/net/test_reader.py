"""A connection takes each message as websockets parses it (``server/net/reader.py``): a
message sent in fragments is one message, messages sent back to back before the hello is
answered are taken after it in order, and an idle connection keeps no pending read."""

from __future__ import annotations

import asyncio
import gc
import types
from pathlib import Path
from typing import Any

from websockets.asyncio.client import connect
from websockets.asyncio.server import ServerConnection

from server.protocol.codec import decode_server, encode
from server.protocol.messages import (
    PROTOCOL_VERSION,
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
