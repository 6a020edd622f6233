"""Table events between the nodes of a cluster: published once by the table's owner, fanned
out by every node to its own viewers, and kept for resume (docs/operations.md, "Running a
cluster").

The owner frames each event once (the same bytes its own viewers get) and hands it to the
bus; whatever the event loop produced in one turn goes to Redis together, in one pipeline:
one ``PUBLISH`` on the cluster's channel carrying the whole batch (every table's events of
that turn), and one ``XADD`` per event to the table's capped history stream, whose entry id
is the event's ``seq`` (``<seq>-1``: seqs only grow, across owners too, since each run of a
table numbers its events in a block of its own). One message per turn instead of one per
event is what lets a node take in far more events than Redis can deliver messages.

Every node subscribes to the channel and hands each batch but its own to ``deliver``. A node
that joins a viewer to a table it does not run reads the events the viewer missed from the
table's stream (``since``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import Any

import msgspec
from redis.asyncio import Redis
from redis.exceptions import RedisError

__all__ = ["Event", "EventBus"]

log = logging.getLogger("croupier.cluster.bus")

# (table, seq or None for a player's balance frame, audience or None for everyone, frame)
Event = tuple[str, int | None, str | None, bytes]

_encode = msgspec.msgpack.Encoder().encode
_decode = msgspec.msgpack.Decoder(tuple[str, list[Event]]).decode


class EventBus:
    def __init__(
        self,
        redis: Redis,
        node_id: str,
        deliver: Callable[[list[Event]], None],
        *,
        prefix: str = "croupier:",
        history: int = 1024,
    ) -> None:
        self.redis, self.node_id, self.deliver = redis, node_id, deliver
        self.channel = f"{prefix}events"
        self.prefix, self.history = prefix, history
        self._pending: list[Event] = []
        self._pending_since = 0.0
        self._wake = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._subscribed = asyncio.Event()
        self.published = 0  # events
        self.publish_failures = 0  # batches Redis did not take
        self.received = 0  # events from other nodes
        self.lag = 0.0  # seconds from an event's framing to Redis having it (last batch)

    async def start(self) -> None:
        self._tasks = [
            asyncio.create_task(self._flush_loop(), name="bus:publish"),
            asyncio.create_task(self._listen_loop(), name="bus:listen"),
        ]
        await asyncio.wait_for(self._subscribed.wait(), 10)

    async def stop(self) -> None:
        await self.flush()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    # --- out ---------------------------------------------------------------------------------

    def publish(self, table_id: str, seq: int | None, audience: str | None, frame: bytes) -> None:
        """Queue one event; it goes out with the rest of this turn's."""
        if not self._pending:
            self._pending_since = time.perf_counter()
            self._wake.set()
        self._pending.append((table_id, seq, audience, frame))

    async def flush(self) -> None:
        """Send what is queued now (the publishing task does it every turn)."""
        batch, self._pending = self._pending, []
        if not batch:
            return
        since = self._pending_since
        pipe = self.redis.pipeline(transaction=False)
        pipe.publish(self.channel, _encode((self.node_id, batch)))
        for table_id, seq, audience, frame in batch:
            if seq is not None:
                pipe.xadd(
                    f"{self.prefix}history:{table_id}",
                    {"a": audience or "", "f": frame},
                    id=f"{seq}-1",
                    maxlen=self.history,
                    approximate=True,
                )
        try:
            await pipe.execute(raise_on_error=False)
        except (RedisError, OSError) as exc:
            self.publish_failures += 1
            log.error("cluster: %d table events not published: %s", len(batch), exc)
            return
        self.published += len(batch)
        self.lag = time.perf_counter() - since

    async def _flush_loop(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            await asyncio.sleep(0)  # the rest of this turn's events join the batch
            await self.flush()

    # --- in ----------------------------------------------------------------------------------

    async def _listen_loop(self) -> None:
        while True:
            pubsub = self.redis.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.subscribe(self.channel)
                self._subscribed.set()
                while True:
                    message = await pubsub.get_message(timeout=1.0)
                    if message is None or message.get("type") != "message":
                        continue
                    node, batch = _decode(message["data"])
                    if node != self.node_id:
                        self.received += len(batch)
                        self.deliver(batch)
            except (RedisError, OSError) as exc:
                log.error("cluster: event subscription lost (%s); subscribing again", exc)
                await asyncio.sleep(0.5)
            finally:
                with contextlib.suppress(RedisError, OSError):
                    await pubsub.aclose()  # type: ignore[no-untyped-call]

    async def since(
        self, table_id: str, last_seq: int, player_id: str, upto: int
    ) -> list[bytes] | None:
        """The frames after ``last_seq`` up to ``upto`` that ``player_id`` may see, from the
        table's history; None when ``last_seq`` is no longer kept (or not this run's)."""
        key = f"{self.prefix}history:{table_id}"
        entries: Any = await self.redis.xrange(key, min=f"{last_seq}-1", max=f"{upto}-1")
        if not entries or _seq(entries[0][0]) != last_seq:
            return None
        frames = []
        for _, fields in entries[1:]:
            audience = fields.get(b"a") or b""
            if audience and audience.decode() != player_id:
                continue
            frames.append(fields[b"f"])
        return frames


def _seq(entry_id: bytes | str) -> int:
    text = entry_id.decode() if isinstance(entry_id, bytes) else entry_id
    return int(text.split("-", 1)[0])
