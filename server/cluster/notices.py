"""What recovery tells players, wherever they log in next: a recovered round's notices
(``round_completed``/``round_voided``) wait in Redis for each player's next ``hello`` on any
node, for a week."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import cast

from redis.asyncio import Redis
from redis.exceptions import RedisError

from server.protocol.codec import decode_server, encode
from server.protocol.messages import Notice
from server.tables.recovery import Recovered

__all__ = ["NOTICE_SECONDS", "SharedNotices"]

log = logging.getLogger("croupier.cluster")

NOTICE_SECONDS = 7 * 24 * 3600  # a recovered round's notice waits this long for its player


class SharedNotices:
    def __init__(self, redis: Redis, prefix: str) -> None:
        self.redis, self.prefix = redis, prefix

    async def share(self, recovered: Iterable[Recovered], notices: dict[str, list[Notice]]) -> None:
        """Move the recovered rounds' players' ``notices`` (this process's) to Redis."""
        for player in {p for item in recovered for p in item.players}:
            waiting = notices.pop(player, [])
            if waiting:
                key = f"{self.prefix}notices:{player}"
                async with self.redis.pipeline(transaction=True) as pipe:
                    pipe.rpush(key, *(encode(n) for n in waiting))
                    pipe.expire(key, NOTICE_SECONDS)
                    await pipe.execute()

    async def take(self, player_id: str) -> list[Notice]:
        """The player's waiting notices, taken (each is delivered once)."""
        key = f"{self.prefix}notices:{player_id}"
        try:
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.lrange(key, 0, -1)
                pipe.delete(key)
                frames, _ = await pipe.execute()
        except (RedisError, OSError) as exc:
            log.error("cluster: notices for %s not read: %s", player_id, exc)
            return []
        return [cast(Notice, decode_server(frame)) for frame in frames]
