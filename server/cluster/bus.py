"""Table events between the nodes of a cluster: published once by the table's owner, fanned
out by every node to its own viewers, and kept for resume (docs/operations.md, "Running a
cluster").

The owner frames each event once (the same bytes its own viewers get) and hands it to the
bus; whatever the event loop produced in one turn goes to Redis together, in one write: for
each table with events, one ``PUBLISH`` on the table's own channel (``<prefix>events:<table>``)
carrying its events of the turn, and one ``XADD`` of them to its capped history stream, whose
entry id is the last of their ``seq``s (``<seq>-1``: seqs only grow, across owners too,
since each run of a table numbers its events in a block of its own). A table's group is
encoded once and goes both into the message and into the history. One message per table and
turn instead of one per event is what lets a node take in far more events than Redis can
deliver messages, and lets the owner publish them at Redis's own pace. A busy owner
lingers: after a batch it sends the next no sooner than ``linger`` (1 ms) after the last
began, so what its tables emit meanwhile, over many turns, goes as one message per table
with one history entry. A batch's fixed costs (the write and read system calls, each
table's PUBLISH and XADD) then fall on hundreds of events instead of a few turns' worth; an
event published on a quiet bus goes at once.

A node subscribes to a table's channel while it has viewers of the table (``watch``, before
it asks the owner for the viewer's snapshot, so nothing published after the snapshot is
missed; ``unwatch`` when its last viewer leaves), and hands each message but its own to
``deliver``: a node receives the events of the tables its viewers watch, not every table's.
A node that joins a viewer to a table it does not run reads the events the viewer missed
from the table's stream (``since``).

Both directions run on connections of the bus's own, made by the Redis client's pool (so
the URL's address, credentials, database and TLS apply), then written and read directly: a
turn's commands are built here as one buffer of RESP and written at once, and the replies
and the channel's messages are parsed by hiredis. Going through redis-py's pipeline and
pub/sub objects instead cost about 20 µs of Python per event published and per message
received, and an XADD per event about 1 µs more (BENCHMARKS.md, "Cluster").
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import Any, cast

import hiredis
import msgspec
from redis.asyncio import Redis
from redis.exceptions import RedisError

from server.cluster.stopping import cancel_and_wait

__all__ = ["Event", "EventBus", "Group"]

log = logging.getLogger("croupier.cluster.bus")

# (seq or None for a player's balance frame, audience or None for everyone, frame)
Event = tuple[int | None, str | None, bytes]
# A turn's events of one table, in the order the table emitted them.
Group = tuple[str, list[Event]]

_encode = msgspec.msgpack.Encoder().encode
_decode = msgspec.msgpack.Decoder(tuple[str, list[Group]]).decode
_decode_kept = msgspec.msgpack.Decoder(list[Event]).decode
_MORE = object()  # hiredis: no whole reply buffered yet
_READ = 1 << 16
# What a link to Redis may fail with: the connection (OSError, redis-py's errors while it
# connects), a reply stream that is not RESP, or no answer in time.
_LINK_ERRORS = (RedisError, OSError, hiredis.HiredisError, TimeoutError)


def _bulk(value: bytes) -> bytes:
    return b"$%d\r\n%s\r\n" % (len(value), value)


def _array(length: int) -> bytes:
    """A msgpack array's header."""
    if length < 16:
        return bytes((0x90 | length,))
    if length < 1 << 16:
        return b"\xdc" + length.to_bytes(2, "big")
    return b"\xdd" + length.to_bytes(4, "big")


class _Link:
    """One connection to Redis, made by the client's pool, then written and read raw."""

    def __init__(self, connection: Any) -> None:
        self.connection = connection
        self.reader: asyncio.StreamReader = connection._reader
        self.writer: asyncio.StreamWriter = connection._writer
        transport = self.writer.transport
        if hasattr(transport, "max_size"):  # asyncio's socket transport (TLS's reads its own)
            # Read _READ at a time, as ``feed`` asks, not asyncio's 256 KiB: CPython
            # allocates a read's whole size and hands nearly all of it back (18–22 µs a read
            # here, against 2–4 µs at 64 KiB; ``server.net.reader.READ_BYTES``).
            transport.max_size = _READ
        self.parser = hiredis.Reader(notEnoughData=_MORE)
        self.waiting_since: float | None = None  # (monotonic) replies awaited since
        self.timed_out = False

    @classmethod
    async def open(cls, redis: Redis) -> _Link:
        connection = redis.connection_pool.make_connection()  # type: ignore[no-untyped-call]
        await connection.connect()  # the URL's handshake: AUTH, SELECT, protocol, TLS
        return cls(connection)

    def write(self, data: bytes) -> None:
        self.writer.write(data)

    async def feed(self) -> None:
        """Hand hiredis what has come in (waiting for something when nothing has)."""
        data = await self.reader.read(_READ)
        if not data:
            if self.timed_out:
                raise TimeoutError("Redis did not answer in time")
            raise ConnectionError("Redis closed the connection")
        self.parser.feed(data)

    async def skip(self, count: int) -> None:
        """Read ``count`` replies (an error reply counts as one, as redis-py's pipeline
        with ``raise_on_error=False`` took them)."""
        gets = self.parser.gets
        while True:
            while count and gets() is not _MORE:
                count -= 1
            if not count:
                return
            await self.feed()

    def abort(self) -> None:
        """Give up waiting: whoever reads gets ``TimeoutError``."""
        self.timed_out = True
        self.writer.transport.abort()

    async def close(self) -> None:
        with contextlib.suppress(*_LINK_ERRORS):
            await self.connection.disconnect(nowait=True)


class EventBus:
    def __init__(
        self,
        redis: Redis,
        node_id: str,
        deliver: Callable[[list[Group]], None],
        *,
        prefix: str = "croupier:",
        history: int = 1024,
        linger: float = 0.001,
    ) -> None:
        self.redis, self.node_id, self.deliver = redis, node_id, deliver
        # The cluster's channel (subscribed from the start: the listening connection is up
        # once Redis confirms it); each table's events go on a channel of the table's own.
        self.channel = f"{prefix}events"
        self._watched: set[str] = set()  # tables whose channel this node wants
        self._confirmed: dict[bytes, asyncio.Future[None]] = {}  # subscriptions asked
        self._in: _Link | None = None  # the listening connection, while up
        self.prefix, self.history, self.linger = prefix, history, linger
        # This turn's events, by table; the tables among them with a balance frame (which
        # the history does not keep); how many events.
        self._pending: dict[str, list[Event]] = {}
        self._unkept: set[str] = set()
        self.queued = 0
        self._pending_since = 0.0
        self._wake = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._subscribed = asyncio.Event()
        self._out: _Link | None = None  # the publishing connection
        self._sending = asyncio.Lock()
        timeout = redis.connection_pool.connection_kwargs.get("socket_timeout")
        self._timeout = float(timeout) if timeout else 5.0
        # What every command but the events themselves is made of, made once.
        self._xadd = _bulk(b"MAXLEN") + _bulk(b"~") + _bulk(str(history).encode())
        # Each table's XADD up to the entry id, its PUBLISH up to the message, and its
        # message's head (this node's id, one group, the table's id).
        self._heads: dict[str, tuple[bytes, bytes, bytes]] = {}
        # A batch of this node's own begins with these bytes (msgpack: a 2-array, the id).
        self._own = _encode((node_id, []))[:-1]
        self.published = 0  # events
        self.publish_failures = 0  # batches Redis did not take
        self.received = 0  # events from other nodes
        self.lag = 0.0  # seconds from an event's framing to Redis having it (last batch)

    async def start(self) -> None:
        self._tasks = [
            asyncio.create_task(self._flush_loop(), name="bus:publish"),
            asyncio.create_task(self._listen_loop(), name="bus:listen"),
            asyncio.create_task(self._watch(), name="bus:watch"),
        ]
        await asyncio.wait_for(self._subscribed.wait(), 10)

    async def stop(self) -> None:
        await self.flush()
        await cancel_and_wait(self._tasks)
        if self._out is not None:
            await self._out.close()
            self._out = None

    # --- out ---------------------------------------------------------------------------------

    def publish(self, table_id: str, seq: int | None, audience: str | None, frame: bytes) -> None:
        """Queue one event; it goes out with the rest of this turn's."""
        pending = self._pending
        if not pending:
            self._pending_since = time.perf_counter()
            self._wake.set()
        group = pending.get(table_id)
        if group is None:
            pending[table_id] = [(seq, audience, frame)]
        else:
            group.append((seq, audience, frame))
        if seq is None:
            self._unkept.add(table_id)
        self.queued += 1

    async def flush(self) -> None:
        """Send what is queued now (the publishing task does it every turn), after the
        batch on its way, if any: once this returns, Redis has every event queued before."""
        async with self._sending:  # one batch at a time; what comes meanwhile joins the next
            batch, unkept, events = self._pending, self._unkept, self.queued
            if not batch:
                return
            self._pending, self._unkept, self.queued = {}, set(), 0
            since = self._pending_since
            command, replies = self._commands(batch, unkept)
            try:
                if self._out is None:
                    self._out = await _Link.open(self.redis)  # its own connect timeouts
                link = self._out
                link.waiting_since = time.monotonic()  # (``_watch`` keeps the time)
                link.write(command)
                await link.skip(replies)
                link.waiting_since = None
            except _LINK_ERRORS as exc:
                await self._drop()
                self.publish_failures += 1
                log.error("cluster: %d table events not published: %s", events, exc)
                return
            except BaseException:  # cancelled halfway: its replies would answer the next
                await self._drop()
                raise
        self.published += events
        self.lag = time.perf_counter() - since

    def _commands(self, batch: dict[str, list[Event]], unkept: set[str]) -> tuple[bytes, int]:
        """Each table's PUBLISH and XADD of its events in the batch, as one buffer; and how
        many replies they get. A table's events are encoded once, for its history entry
        and, behind its head, as its message (``[node, [[table, events]]]``, put together
        here)."""
        heads = self._heads
        commands: list[bytes] = []
        replies = 0
        for table_id, events in batch.items():
            head = heads.get(table_id)
            if head is None:
                key = f"{self.prefix}history:{table_id}".encode()
                channel = self._table_channel(table_id)
                head = heads[table_id] = (
                    b"*8\r\n$4\r\nXADD\r\n" + _bulk(key) + self._xadd,
                    b"*3\r\n$7\r\nPUBLISH\r\n" + _bulk(channel),
                    self._own + _array(1) + b"\x92" + _encode(table_id),
                )
            data = _encode(events)
            payload = head[2] + data
            commands += (head[1], b"$%d\r\n" % len(payload), payload, b"\r\n")
            replies += 1
            if table_id in unkept:  # a balance frame is not kept: it has no seq
                kept = [event for event in events if event[0] is not None]
                if not kept:
                    continue
                data = _encode(kept)
            else:
                kept = events
            entry = b"%d-1" % cast(int, kept[-1][0])
            commands += (
                b"%s$%d\r\n%s\r\n$1\r\ne\r\n$%d\r\n" % (head[0], len(entry), entry, len(data)),
                data,
                b"\r\n",
            )
            replies += 1
        return b"".join(commands), replies

    # --- which tables' events this node receives ---------------------------------------------

    def _table_channel(self, table_id: str) -> bytes:
        """The channel ``table_id``'s events go on."""
        return f"{self.prefix}events:{table_id}".encode()

    async def watch(self, table_id: str) -> None:
        """Receive ``table_id``'s events from now on: returns once Redis has confirmed the
        subscription (at once when it already had). Raises when Redis cannot be reached."""
        channel = self._table_channel(table_id)
        self._watched.add(table_id)
        confirmed = self._confirmed.get(channel)
        if confirmed is None:
            confirmed = self._confirmed[channel] = asyncio.get_running_loop().create_future()
            link = self._in
            if link is not None:  # else the listening loop subscribes it as it connects
                link.write(_command(b"SUBSCRIBE", channel))
        await asyncio.wait_for(asyncio.shield(confirmed), self._timeout)

    def unwatch(self, table_id: str) -> None:
        """No more of ``table_id``'s events (the node's last viewer of it left)."""
        channel = self._table_channel(table_id)
        confirmed = self._confirmed.get(channel)
        if confirmed is not None and not confirmed.done():
            return  # someone is joining a viewer right now: the subscription stays
        self._watched.discard(table_id)
        self._confirmed.pop(channel, None)
        link = self._in
        if link is not None:
            link.write(_command(b"UNSUBSCRIBE", channel))

    @property
    def watched(self) -> frozenset[str]:
        return frozenset(self._watched)

    async def _drop(self) -> None:
        link, self._out = self._out, None
        if link is not None:
            await link.close()

    async def _watch(self) -> None:
        """Abort the publishing connection when Redis has not answered a batch within the
        client's socket timeout (one timer for the bus: one per batch cost more than the
        rest of the batch's own work)."""
        while True:
            await asyncio.sleep(self._timeout / 4)
            link = self._out
            since = link.waiting_since if link is not None else None
            if link is not None and since is not None and time.monotonic() - since > self._timeout:
                link.abort()

    async def _flush_loop(self) -> None:
        linger = self.linger
        while True:
            await self._wake.wait()
            self._wake.clear()
            await asyncio.sleep(0)  # the rest of this turn's events join the batch
            started = time.monotonic()
            await self.flush()
            rest = linger - (time.monotonic() - started)
            if rest > 0:  # busy: what comes in the rest of the linger joins the next batch
                await asyncio.sleep(rest)

    # --- in ----------------------------------------------------------------------------------

    async def _listen_loop(self) -> None:
        while True:
            link = None
            try:
                link = await _Link.open(self.redis)
                # The cluster's channel and every table's this node watches, at once.
                channels = [self.channel.encode()]
                channels += [self._table_channel(t) for t in sorted(self._watched)]
                link.write(_command(b"SUBSCRIBE", *channels))
                self._in = link
                await self._listen(link)
            except _LINK_ERRORS as exc:
                self._link_lost()
                log.error("cluster: event subscription lost (%s); subscribing again", exc)
                await asyncio.sleep(0.5)
            finally:
                self._link_lost()
                if link is not None:
                    await link.close()

    def _link_lost(self) -> None:
        """The listening connection is gone: every subscription is asked again on the next
        one, and ``watch`` waits for that one's confirmation."""
        self._in = None
        for channel, confirmed in list(self._confirmed.items()):
            if confirmed.done():
                self._confirmed[channel] = asyncio.get_running_loop().create_future()

    async def _listen(self, link: _Link) -> None:
        """Hand every batch from another node to ``deliver``, as it comes (a push of RESP3
        or an array of RESP2: ``[b"message", channel, batch]``)."""
        gets, own, deliver = link.parser.gets, self._own, self.deliver
        while True:
            await link.feed()
            while (message := gets()) is not _MORE:
                kind = message[0]
                if kind == b"message":
                    data = message[2]
                    if data.startswith(own):
                        continue
                    try:
                        _, batch = _decode(data)
                    except msgspec.DecodeError as exc:  # not a batch of ours: skip it
                        log.error("cluster: a message on %s is no batch: %s", self.channel, exc)
                        continue
                    self.received += sum(len(events) for _, events in batch)
                    deliver(batch)
                elif kind == b"subscribe":
                    channel = message[1]
                    if channel == self.channel.encode():
                        self._subscribed.set()
                    confirmed = self._confirmed.get(channel)
                    if confirmed is not None and not confirmed.done():
                        confirmed.set_result(None)

    async def since(
        self, table_id: str, last_seq: int, player_id: str, upto: int
    ) -> list[bytes] | None:
        """The frames after ``last_seq`` up to ``upto`` that ``player_id`` may see, from the
        table's history; None when ``last_seq`` is no longer kept (or not this run's)."""
        key = f"{self.prefix}history:{table_id}"
        # An entry's id is its last event's seq: the first entry from ``last_seq`` on holds
        # that event if it is still kept, and the first from ``upto`` on holds that one.
        entries: Any = await self.redis.xrange(key, min=f"{last_seq}-1", max=f"{upto}-1")
        if not entries or _seq(entries[-1][0]) < upto:
            after: Any = await self.redis.xrange(key, min=f"{upto}-2", count=1)
            entries = [*entries, *after]
        events = [e for _, fields in entries for e in _decode_kept(fields[b"e"])]
        if not events or all(seq != last_seq for seq, _, _ in events):
            return None
        return [
            frame
            for seq, audience, frame in events
            if seq is not None and last_seq < seq <= upto and audience in (None, player_id)
        ]


def _command(*words: bytes) -> bytes:
    """One command in RESP."""
    return b"*%d\r\n" % len(words) + b"".join(_bulk(word) for word in words)


def _seq(entry_id: bytes | str) -> int:
    text = entry_id.decode() if isinstance(entry_id, bytes) else entry_id
    return int(text.split("-", 1)[0])
