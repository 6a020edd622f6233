"""The cluster's event bus (server.cluster.bus) on a real Redis: what one node publishes
reaches another in order, an event published on a quiet bus goes out at once, what a busy
owner publishes within the linger after a batch travels in one message per table with what
follows, instead of one message per event-loop turn; and a node receives only the tables
it watches."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from redis.asyncio import Redis

from server.cluster.bus import _READ, EventBus, Group, _Link
from tests.redis_server import RedisServer

# Lingers to try, each twice the last: the test's own publishes must all come within the
# first batch's linger for the batching to be owed, which a loaded machine may not manage
# in the shortest; on the first linger they do, what the bus sent is checked exactly.
LINGERS = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0)
EARLY = 0.01  # a timer may fire this much before its time (asyncio: its clock resolution)


def _receiver() -> tuple[list[list[Group]], asyncio.Event, Callable[[list[Group]], None]]:
    """What a node's bus delivers: the batches, an event set at each, and the ``deliver``."""
    got: list[list[Group]] = []
    arrived = asyncio.Event()

    def deliver(batch: list[Group]) -> None:
        got.append(batch)
        arrived.set()

    return got, arrived, deliver


def test_a_busy_owner_sends_the_events_of_one_linger_together(redis_server: RedisServer) -> None:
    async def scenario(linger: float) -> tuple[list[list[Group]], bool]:
        """What the other node got; whether the later events were all published within
        the first batch's linger."""
        redis = Redis.from_url(redis_server.url)
        got, arrived, deliver = _receiver()
        owner = EventBus(redis, "owner", lambda batch: None, linger=linger)
        other = EventBus(redis, "other", deliver)
        await other.start()
        for table in ("t1", "t2", "t9"):  # the tables the other node has viewers of
            await other.watch(table)
        await owner.start()
        try:
            began = time.monotonic()  # the first batch's linger begins after this
            owner.publish("t1", 1, None, b"first")
            await asyncio.wait_for(arrived.wait(), 5)  # alone, at once: no linger before it
            # Within the linger of that batch: three turns, three tables' events.
            owner.publish("t1", 2, None, b"second")
            await asyncio.sleep(0)
            owner.publish("t2", 1, None, b"other table")
            owner.publish("t1", 3, None, b"third")
            await asyncio.sleep(0.05)
            owner.publish("t1", None, "ann", b"a balance")
            within = time.monotonic() < began + linger - EARLY
            if within:  # nothing of them sent yet: they go once the linger is over
                arrived.clear()
                await asyncio.wait_for(arrived.wait(), linger + 5)
            # Then one more, sent at once: the subscriber gets its channels' messages in
            # the order published, so once it has come, everything before it has too.
            await owner.flush()
            owner.publish("t9", 1, None, b"last")
            await owner.flush()
            while got[-1] != [("t9", [(1, None, b"last")])]:
                arrived.clear()
                await asyncio.wait_for(arrived.wait(), 5)
            return got[:-1], within
        finally:
            await owner.stop()
            await other.stop()
            await redis.aclose()

    for linger in LINGERS:
        got, within = asyncio.run(scenario(linger))
        assert got[0] == [("t1", [(1, None, b"first")])]
        if within:
            break
    else:
        raise AssertionError(f"four events were never published within {LINGERS[-1]} s")
    assert got[1:] == [  # one message per table, each on the table's channel
        [("t1", [(2, None, b"second"), (3, None, b"third"), (None, "ann", b"a balance")])],
        [("t2", [(1, None, b"other table")])],
    ]


def test_each_table_keeps_its_history_in_order_across_batches(
    redis_server: RedisServer,
) -> None:
    """Events of one table sent in several batches come back from its history in order;
    a player's balance frame is not kept there (it has no seq: a resumed player gets its
    balance afresh), and a seq before what the history holds gets None (a snapshot)."""

    async def scenario() -> tuple[list[bytes] | None, list[bytes] | None, list[bytes] | None]:
        redis = Redis.from_url(redis_server.url)
        owner = EventBus(redis, "owner", lambda batch: None)
        await owner.start()
        try:
            for seq in range(1, 6):
                owner.publish("t1", seq, None, b"e%d" % seq)
                if seq == 3:
                    owner.publish("t1", None, "ann", b"ann's balance")
                await owner.flush()
            return (
                await owner.since("t1", 2, "ann", 5),
                await owner.since("t1", 1, "bob", 3),
                await owner.since("t1", 0, "bob", 5),  # before the first event: not kept
            )
        finally:
            await owner.stop()
            await redis.aclose()

    to_ann, to_bob, too_old = asyncio.run(scenario())
    assert to_ann == [b"e3", b"e4", b"e5"]
    assert to_bob == [b"e2", b"e3"]
    assert too_old is None


def test_a_node_receives_only_the_tables_it_watches(redis_server: RedisServer) -> None:
    """Each table's events go on a channel of its own: a node gets a table's events while
    it watches it (subscribed once ``watch`` returns), none once it stops, and again after
    its connection to Redis is lost and made again."""

    async def scenario() -> list[list[Group]]:
        redis = Redis.from_url(redis_server.url)
        got, arrived, deliver = _receiver()
        owner = EventBus(redis, "owner", lambda batch: None)
        other = EventBus(redis, "other", deliver)
        await owner.start()
        await other.start()

        async def publish(table: str, seq: int) -> None:
            owner.publish(table, seq, None, b"%s/%d" % (table.encode(), seq))
            await owner.flush()

        async def until(table: str, seq: int) -> None:
            while not got or got[-1] != [(table, [(seq, None, b"%s/%d" % (table.encode(), seq))])]:
                arrived.clear()
                await asyncio.wait_for(arrived.wait(), 5)

        try:
            await other.watch("a")
            await publish("b", 1)  # nobody here watches b
            await publish("a", 1)
            await until("a", 1)
            other.unwatch("a")
            await other.watch("c")
            await publish("a", 2)  # no longer watched
            await publish("c", 1)
            await until("c", 1)
            assert other.watched == {"c"}
            lost = other._in
            assert lost is not None
            lost.abort()  # the connection to Redis is lost; the bus subscribes again
            while other._in is None or other._in is lost:
                await asyncio.sleep(0.05)
            await other.watch("c")  # returns once the new connection has it again
            await publish("c", 2)
            await until("c", 2)
            return got
        finally:
            await owner.stop()
            await other.stop()
            await redis.aclose()

    got = asyncio.run(scenario())
    assert [group for batch in got for group in batch] == [
        ("a", [(1, None, b"a/1")]),
        ("c", [(1, None, b"c/1")]),
        ("c", [(2, None, b"c/2")]),
    ]


def test_a_link_reads_64_kib_at_a_time_and_a_larger_event_still_arrives_whole(
    redis_server: RedisServer,
) -> None:
    """A link's socket is read ``_READ`` bytes at a time, not asyncio's 256 KiB (whose
    allocation per read cost 18–22 µs): an event of 200 KB, several reads long, reaches the
    other node whole."""

    async def scenario() -> list[list[Group]]:
        redis = Redis.from_url(redis_server.url)
        link = await _Link.open(redis)
        got, arrived, deliver = _receiver()
        owner = EventBus(redis, "owner", lambda batch: None)
        other = EventBus(redis, "other", deliver)
        try:
            assert link.writer.transport.max_size == _READ < 256 * 1024
            await other.start()
            await other.watch("t1")
            await owner.start()
            owner.publish("t1", 1, None, bytes(range(256)) * 800)
            await owner.flush()
            await asyncio.wait_for(arrived.wait(), 5)
            return got
        finally:
            await link.close()
            await owner.stop()
            await other.stop()
            await redis.aclose()

    assert asyncio.run(scenario()) == [[("t1", [(1, None, bytes(range(256)) * 800)])]]
