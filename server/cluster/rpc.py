"""Commands from one node to the node that runs a table, and their answers, through Redis.

A player connected to a node that does not run the table joins, bets and decides all the
same: the node sends the command to the table's owner and hands the player the owner's
answer. Each node takes its commands from its own list, ``<prefix>rpc:<node>`` (a blocking
``BLPOP`` on a connection of its own), runs each as the table's own player command would
run, and pushes the answer to the asking node's list, ``<prefix>reply:<node>``.

Commands and answers are batched like the table events: what a node sends in one turn of
its event loop goes to each node's list in one ``RPUSH`` of them all, and a node that wakes
to a command takes everything waiting behind it at once (``BLPOP``, then ``LPOP`` with a
count): a burst of 80 remote bets costs a few Redis round trips, not 80 each way.

Why through Redis rather than node to node: every node already reaches Redis, nothing more
has to be open between the nodes (no second port, no mesh of connections to keep), and a
command meant for a node that died waits in a list no one reads and times out — the asking
node then finds the table's new owner from its lease. The price is two Redis hops each way
(about 0.1 ms each on a local network), small beside a bet's durable write.
"""

from __future__ import annotations

import asyncio
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
_TAKE = 256  # at most this many waiting items taken with the one that woke the reader


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
        # What this turn sends, by list: commands (to ``rpc:<node>``) and answers (to
        # ``reply:<node>``), each with the future that hears whether it went (None: an
        # answer, whose failure to go only the asker's time-out notices).
        self._out: dict[str, list[tuple[bytes, asyncio.Future[Any] | None]]] = {}
        self._flushing: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self._tasks = [
            asyncio.create_task(self._serve_loop(), name="rpc:serve"),
            asyncio.create_task(self._answers_loop(), name="rpc:answers"),
        ]

    async def stop(self) -> None:
        await cancel_and_wait(self._tasks + ([self._flushing] if self._flushing else []))
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
            sent: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
            self._send(key, _encode([cid, self.node_id, op, table_id, args]), sent)
            await sent  # in Redis (with the rest of this turn's): now the answer
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

    # --- sending, a turn at a time -------------------------------------------------------------

    def _send(self, key: str, item: bytes, sent: asyncio.Future[Any] | None) -> None:
        """Queue ``item`` for list ``key``; it goes with the rest of this turn's."""
        self._out.setdefault(key, []).append((item, sent))
        if self._flushing is None or self._flushing.done():
            self._flushing = asyncio.create_task(self._flush(), name="rpc:send")

    async def _flush(self) -> None:
        """Everything queued, each list's items in one ``RPUSH``, all in one round trip;
        what is queued meanwhile goes next, once this is done."""
        out: dict[str, list[tuple[bytes, asyncio.Future[Any] | None]]] = {}
        try:
            await asyncio.sleep(0)  # the rest of this turn's commands and answers join
            while self._out:
                out, self._out = self._out, {}
                pipe = self.redis.pipeline(transaction=False)
                for key, items in out.items():
                    pipe.rpush(key, *(item for item, _ in items))
                    pipe.expire(key, _EXPIRE)
                try:
                    await pipe.execute()
                except (RedisError, OSError) as exc:
                    log.error("cluster: commands or answers not sent: %s", exc)
                    _tell(out, exc)
                else:
                    _tell(out, None)
                out = {}
        except BaseException:  # cancelled (the node stops): nobody waits for ever
            _tell(out, RpcTimeout("the node is stopping"))
            _tell(self._out, RpcTimeout("the node is stopping"))
            self._out = {}
            raise

    # --- receiving, all that waits at once ----------------------------------------------------

    async def _taken(self, key: str, what: str) -> list[bytes]:
        """The next item of list ``key`` (waiting up to a second for one) and every item
        waiting behind it; [] when none came or Redis failed (logged, after a pause)."""
        try:
            item: Any = await self.redis.blpop([key], timeout=1)
            if item is None:
                return []
            more: Any = await self.redis.lpop(key, _TAKE)
        except (RedisError, OSError) as exc:
            log.error("cluster: reading %s failed (%s)", what, exc)
            await asyncio.sleep(0.5)
            return []
        return [item[1], *(more or ())]

    async def _answers_loop(self) -> None:
        key = f"{self.prefix}reply:{self.node_id}"
        while True:
            for raw in await self._taken(key, "answers"):
                cid, ok, answer = _decode(raw)
                future = self._waiting.get(cid)
                if future is not None and not future.done():
                    future.set_result((ok, answer))

    async def _serve_loop(self) -> None:
        key = f"{self.prefix}rpc:{self.node_id}"
        while True:
            for raw in await self._taken(key, "commands"):
                cid, sender, op, table_id, args = _decode(raw)
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
        self._send(f"{self.prefix}reply:{sender}", _encode(answer), None)


def _tell(
    out: dict[str, list[tuple[bytes, asyncio.Future[Any] | None]]], error: Exception | None
) -> None:
    """Whether the queued items went (None) or not (``error``), to whoever waits."""
    for items in out.values():
        for _, sent in items:
            if sent is not None and not sent.done():
                if error is None:
                    sent.set_result(None)
                else:
                    sent.set_exception(error)
