"""Cross-node events and resume (issue #18 item 5): a viewer on a node that does not run the
table gets its events in order, through Redis; after a disconnect it resumes on any node
from its last ``seq`` — the missed events come from the table's history stream in Redis —
and an unknown ``seq`` gets a snapshot, never a gap."""

from __future__ import annotations

import asyncio
from pathlib import Path

from redis.exceptions import RedisError
from websockets.asyncio.client import connect

from server.app.service import Service
from server.protocol.codec import decode_server, encode
from server.protocol.messages import (
    PROTOCOL_VERSION,
    BetAccepted,
    ErrorMessage,
    Hello,
    Join,
    Joined,
    Notice,
    Ping,
    PlaceBet,
    Pong,
    Resume,
    TableEvent,
    Welcome,
)
from tests.cluster.local import PATIENCE, die, home_and_other, node, stop_node, until
from tests.net.live import Client
from tests.redis_server import RedisServer


def test_a_viewer_on_another_node_resumes_from_the_tables_history(
    tmp_path: Path, redis_server: RedisServer, postgres_url: str
) -> None:
    async def go() -> None:
        async with home_and_other(tmp_path, redis_server, postgres_url, "bac-1") as (owner, other):
            a, b = owner.cluster, other.cluster
            assert a is not None and b is not None
            await until(lambda: len(a.owned) + len(b.owned) == 5, what="every table taken")
            await until(lambda: bool(a.owned) and bool(b.owned), what="each node runs a table")
            # The table at its home node for good (until then a node may still hand it over,
            # and its events go on in the new owner's block of seqs).
            door = a.doors["bac-1"]
            await until(lambda: door.runtime() is not None, what="bac-1 runs at its home")
            last = await watch(other, 8)
            await until(  # the table plays on while the viewer is away
                lambda: (table := door.runtime()) is not None and table.seq > last + 5,
                what="bac-1 emitted more events after the viewer left",
            )
            for there in (other, owner):  # resume on either node: the same history
                async with Client.connect(there, "viewer") as client:
                    await client.send(Resume(table="bac-1", last_seq=last))
                    missed: list[int] = []
                    while not isinstance(message := await client.next(PATIENCE), Joined):
                        if isinstance(message, TableEvent):
                            missed.append(message.seq)
                    assert message.resumed, "the missed events were still kept"
                    assert missed and missed == list(range(last + 1, last + 1 + len(missed)))
                    assert message.snapshot.seq == missed[-1]
            assert owner.cluster.bus.publish_failures == 0  # type: ignore[union-attr]
            async with Client.connect(other, "stranger") as client:  # a seq of no run
                await client.send(Resume(table="bac-1", last_seq=10**15))
                joined = await client.expect(Joined, PATIENCE)
                assert not joined.resumed and joined.snapshot.table == "bac-1"

    asyncio.run(go())


def test_a_resume_whose_history_cannot_be_read_gets_a_snapshot_and_the_events_after(
    tmp_path: Path, redis_server: RedisServer, postgres_url: str
) -> None:
    """Redis fails the history read of a resume on a node that does not run the table: the
    viewer gets the snapshot (``resumed`` false, as for a seq no longer kept) and every
    event after it — never an error, never a viewer whose events wait for ever."""

    async def go() -> None:
        async with home_and_other(tmp_path, redis_server, postgres_url, "bac-1") as (owner, other):
            a, b = owner.cluster, other.cluster
            assert a is not None and b is not None
            door = a.doors["bac-1"]
            await until(lambda: door.runtime() is not None, what="bac-1 runs at its home")
            last = await watch(other, 3)

            async def unreadable(*args: object) -> None:
                raise RedisError("Connection closed by server.")

            b.bus.since = unreadable  # type: ignore[method-assign,assignment]
            async with Client.connect(other, "viewer") as client:
                await client.send(Resume(table="bac-1", last_seq=last))
                joined = await client.expect(Joined, PATIENCE)
                assert not joined.resumed and joined.snapshot.table == "bac-1"
                seqs = [joined.snapshot.seq]
                while len(seqs) < 4:
                    if isinstance(message := await client.next(PATIENCE), TableEvent):
                        seqs.append(message.seq)
                assert seqs == list(range(seqs[0], seqs[0] + 4)), "in order, none missing"
                assert not b.doors["bac-1"]._held  # nobody's events wait for an entered()

    asyncio.run(go())


async def watch(service: Service, events: int) -> int:
    """Join ``bac-1`` on ``service`` as a spectator, see ``events`` events in order, leave
    without a word (the connection drops); the last ``seq`` seen."""
    async with Client.connect(service, "viewer") as client:
        await client.send(Join(table="bac-1", role="spectator"))
        joined = await client.expect(Joined, PATIENCE)
        seqs = [joined.snapshot.seq]
        while len(seqs) <= events:
            message = await client.next(PATIENCE)
            if isinstance(message, TableEvent):
                seqs.append(message.seq)
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), "in order, none missing"
        return seqs[-1]


def test_a_player_whose_round_another_node_recovered_is_told_on_any_node(
    tmp_path: Path, redis_server: RedisServer, postgres_url: str
) -> None:
    """The node running the table dies with the player's bet in an open round; the node that
    takes the table over voids the round and returns the bet, and the player hears of it at
    their next hello, whichever node the load balancer sends them to."""

    async def go() -> None:
        a = node(tmp_path, "node-a", redis_server, postgres_url)
        await a.start()
        b = c = None
        try:
            assert a.cluster is not None
            door = a.cluster.doors["bac-1"]
            # Owned from the lease on; running once its recovery is done and it has started.
            await until(lambda: door.runtime() is not None, what="node-a runs bac-1")
            async with Client.connect(a, "ann") as ann:
                token, ann_id = ann.welcome.token, ann.welcome.player_id
                await ann.send(Join(table="bac-1"))
                await ann.expect(Joined, PATIENCE)
                for _ in range(10):  # bet as a round opens (its window is 0.4 s)
                    round_id = (await ann.event("betting_opened", PATIENCE)).round
                    bet = PlaceBet(table="bac-1", round=round_id, bet_id=f"x-{round_id}", spot="banker", amount=100)  # fmt: skip  # noqa: E501
                    await ann.send(bet)
                    answer = await ann.expect(BetAccepted | ErrorMessage, PATIENCE)
                    if isinstance(answer, BetAccepted):
                        break
                assert isinstance(answer, BetAccepted), answer
                await die(a)  # node a dies without a word
            b = node(tmp_path, "node-b", redis_server, postgres_url)
            await b.start()
            assert b.cluster is not None
            recovered = lambda: {r.round_id: r for r in b.casino.recovered}  # noqa: E731
            await until(lambda: round_id in recovered(), what="node-b recovered ann's round")
            assert recovered()[round_id].outcome == "voided"
            assert recovered()[round_id].players == (ann_id,)
            c = node(tmp_path, "node-c", redis_server, postgres_url)  # another node entirely
            await c.start()
            async with connect(f"ws://127.0.0.1:{c.port}/ws", compression=None) as ws:
                await ws.send(encode(Hello(version=PROTOCOL_VERSION, token=token)))
                welcome = decode_server(await asyncio.wait_for(ws.recv(), PATIENCE))
                assert isinstance(welcome, Welcome) and welcome.balance == 100_000
                notice = decode_server(await asyncio.wait_for(ws.recv(), PATIENCE))
                assert isinstance(notice, Notice)
                assert (notice.code, notice.table, notice.round) == ("round_voided", "bac-1", round_id)  # fmt: skip  # noqa: E501
            async with connect(f"ws://127.0.0.1:{b.port}/ws", compression=None) as ws:
                await ws.send(encode(Hello(version=PROTOCOL_VERSION, token=token)))
                welcome = decode_server(await asyncio.wait_for(ws.recv(), PATIENCE))
                assert isinstance(welcome, Welcome)
                # Told once: a hello's notices come before the answer to what follows it.
                await ws.send(encode(Ping(nonce=7)))
                assert decode_server(await asyncio.wait_for(ws.recv(), PATIENCE)) == Pong(nonce=7)
        finally:
            for service in (c, b):
                if service is not None:
                    await stop_node(service)
            a.cluster._task = None  # type: ignore[union-attr]
            await stop_node(a)

    asyncio.run(go())
