"""Commands between nodes (``server.cluster.rpc``), on a real Redis: a node takes everything
queued for it in one read and runs it all at once, and every asker gets its own answer."""

from __future__ import annotations

import asyncio
from typing import Any

from redis.asyncio import Redis

from server.cluster.rpc import Rpc
from tests.redis_server import RedisServer

BETS = 40


def test_a_burst_of_commands_is_read_at_once_and_run_side_by_side(
    redis_server: RedisServer,
) -> None:
    async def go() -> None:
        asker_redis = Redis.from_url(redis_server.url)
        owner_redis = Redis.from_url(redis_server.url)
        running: list[str] = []
        release = asyncio.Event()

        async def handle(op: str, table_id: str, args: dict[str, Any]) -> Any:
            running.append(args["bet_id"])
            await release.wait()  # a durable write under way
            return {"bet_id": args["bet_id"], "table": table_id, "op": op}

        async def nothing(op: str, table_id: str, args: dict[str, Any]) -> Any:
            raise AssertionError("the asker runs no command")

        reads: list[int] = []  # items each of the owner's reads took
        real_blmpop = owner_redis.blmpop

        async def counted(*args: Any, **kwargs: Any) -> Any:
            popped = await real_blmpop(*args, **kwargs)
            if popped is not None and b"rpc:" in popped[0]:
                reads.append(len(popped[1]))
            return popped

        owner_redis.blmpop = counted  # type: ignore[method-assign]
        asker = Rpc(asker_redis, "node-a", nothing)
        owner = Rpc(owner_redis, "node-b", handle)
        await asker.start()
        try:
            calls = [
                asyncio.create_task(asker.call("node-b", "place", "bac-1", {"bet_id": f"b{n}"}))
                for n in range(BETS)
            ]
            # every command is queued before the owner starts reading: one read takes them
            while await asker_redis.llen("croupier:rpc:node-b") < BETS:
                await asyncio.sleep(0.005)
            await owner.start()
            while len(running) < BETS:  # all under way at once, none answered yet
                await asyncio.sleep(0.005)
            assert not any(call.done() for call in calls)
            assert reads == [BETS]
            release.set()
            answers = await asyncio.gather(*calls)
            assert [a["bet_id"] for a in answers] == [f"b{n}" for n in range(BETS)]
            assert {(a["table"], a["op"]) for a in answers} == {("bac-1", "place")}
            assert owner.served == BETS and asker.calls == BETS
        finally:
            await asker.stop()
            await owner.stop()
            await asker_redis.aclose()
            await owner_redis.aclose()

    asyncio.run(go())
