"""Commands from one node to the node that runs a table, and their answers, through Redis.

A player connected to a node that does not run the table joins, bets and decides all the
same: the node sends the command to the table's owner and hands the player the owner's
answer. Each node takes its commands from its own list, ``<prefix>rpc:<node>``, runs each
as the table's own player command would run (all at once: a bet's durable write does not
hold up the next command), and pushes the answer to the asking node's list,
``<prefix>reply:<node>``. Both lists are read by a blocking ``BLMPOP`` on a connection of
its own, which takes *everything* queued (up to ``BATCH``) in one round trip: a burst of
bets forwarded to one owner is read in one or two round trips, not one each — read one at
a time, a node took at most one command per round trip to Redis, and with several nodes
sharing a core each of those round trips waits for the node's turn on the CPU.

Why through Redis rather than node to node: every node already reaches Redis, nothing more
has to be open between the nodes (no second port, no mesh of connections to keep), and a
command meant for a node that died waits in a list no one reads and times out — the asking
node then finds the table's new owner from its lease. The price is two Redis hops each way
(about 0.1 ms each on a local network), small beside a bet's durable write.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
from redis.asyncio import Redis
from redis.exceptions import RedisError

from server.cluster.stopping import cancel_and_wait

__all__ = ["NotOwner", "Rpc", "RpcTimeout"]

log = logging.getLogger("croupier.cluster.rpc")

_encode = msgspec.msgpack.Encoder().encode
_decode = msgspec.msgpack.decode
_EXPIRE = 30  # seconds a list lives unread (a dead node's commands and answers go away)
BATCH = 256  # the most items one read takes from a list (Redis 7's BLMPOP ... COUNT)


class NotOwner(Exception):
    """The node asked does not run the table (any more)."""


class RpcTimeout(Exception):
    """No answer in time: the node asked is gone, or Redis is."""


Handler = Callable[[str, str, dict[str, Any]], Awaitable[Any]]


class Rpc:
    def __init__(
        self, redis: Redis, node_id: str, handle: Handler, *, prefix: str = "croupier:"
    ) -> None:
        self.redis, self.node_id, self.handle, self.prefix = redis, node_id, handle, prefix
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future[Any]] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._serving: set[asyncio.Task[None]] = set()
        self.calls = 0
        self.latency_total = 0.0  # seconds, over ``calls``
        self.served = 0

    async def start(self) -> None:
        self._tasks = [
            asyncio.create_task(self._serve_loop(), name="rpc:serve"),
            asyncio.create_task(self._answers_loop(), name="rpc:answers"),
        ]

    async def stop(self) -> None:
        await cancel_and_wait(self._tasks)
        for future in self._waiting.values():
            if not future.done():
                future.set_exception(RpcTimeout("the node is stopping"))

    async def call(
        self, node: str, op: str, table_id: str, args: dict[str, Any], timeout: float = 5.0
    ) -> Any:
        """Run ``op`` on ``node`` for ``table_id``; its answer, or ``NotOwner``/
        ``RpcTimeout``."""
        cid = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[cid] = future
        started = time.perf_counter()
        key = f"{self.prefix}rpc:{node}"
        try:
            pipe = self.redis.pipeline(transaction=False)
            pipe.rpush(key, _encode([cid, self.node_id, op, table_id, args]))
            pipe.expire(key, _EXPIRE)
            await pipe.execute()
            ok, answer = await asyncio.wait_for(future, timeout)
        except (TimeoutError, RedisError, OSError) as exc:
            raise RpcTimeout(f"no answer from node {node}: {exc or 'timed out'}") from None
        finally:
            self._waiting.pop(cid, None)
        self.calls += 1
        self.latency_total += time.perf_counter() - started
        if not ok:
            raise NotOwner(answer)
        return answer

    async def _take(self, key: str, what: str) -> list[bytes]:
        """Everything queued on ``key`` (up to ``BATCH``), in order, waiting up to a second
        for the first; nothing when Redis failed (logged, after a pause)."""
        try:
            popped: Any = await self.redis.blmpop(1, 1, key, direction="LEFT", count=BATCH)
        except (RedisError, OSError) as exc:
            log.error("cluster: reading %s failed (%s)", what, exc)
            await asyncio.sleep(0.5)
            return []
        return [] if popped is None else list(popped[1])

    async def _answers_loop(self) -> None:
        key = f"{self.prefix}reply:{self.node_id}"
        while True:
            for item in await self._take(key, "answers"):
                cid, ok, answer = _decode(item)
                future = self._waiting.get(cid)
                if future is not None and not future.done():
                    future.set_result((ok, answer))

    async def _serve_loop(self) -> None:
        key = f"{self.prefix}rpc:{self.node_id}"
        while True:
            for item in await self._take(key, "commands"):
                cid, sender, op, table_id, args = _decode(item)
                task = asyncio.create_task(self._serve(cid, sender, op, table_id, args))
                self._serving.add(task)  # held until done (the loop keeps weak references)
                task.add_done_callback(self._serving.discard)

    async def _serve(self, cid: int, sender: str, op: str, table_id: str, args: Any) -> None:
        try:
            answer = [cid, True, await self.handle(op, table_id, args)]
        except NotOwner as exc:
            answer = [cid, False, str(exc)]
        except Exception:  # our bug: the asking node times out, the table carries on
            log.exception("cluster: command %s for table %s failed", op, table_id)
            return
        self.served += 1
        key = f"{self.prefix}reply:{sender}"
        with contextlib.suppress(RedisError, OSError):
            pipe = self.redis.pipeline(transaction=False)
            pipe.rpush(key, _encode(answer))
            pipe.expire(key, _EXPIRE)
            await pipe.execute()
