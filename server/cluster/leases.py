"""Table leases and the nodes' registry in Redis.

Each table has one lease key, ``<prefix>lease:<table>``, holding ``<node>|<token>``, set
only when absent and expiring ``lease_ms`` after its last renewal: while it exists one node
runs the table. The token comes from the table's counter, ``<prefix>token:<table>``, which
only grows: it is the fencing token the node's PostgreSQL writes carry
(``server.cluster.fencing``). Acquiring, renewing and releasing are each one Lua script, so
no other command comes between the check and the change.

Each node also keeps ``<prefix>node:<id>`` alive (same expiry) with what ``croupier cluster
status`` shows of it: its address, when it started, when it last renewed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from redis.asyncio import Redis

__all__ = ["LeaseStore", "Owner"]

_ACQUIRE = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local token = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], ARGV[1] .. '|' .. token, 'PX', ARGV[2])
return token
"""
_RENEW = """
local kept = {}
for i, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[i] then
    redis.call('PEXPIRE', key, ARGV[#ARGV])
    kept[i] = 1
  else
    kept[i] = 0
  end
end
return kept
"""
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""
_FLOOR = """
local now = tonumber(redis.call('GET', KEYS[1]) or '0')
if now < tonumber(ARGV[1]) then redis.call('SET', KEYS[1], ARGV[1]) end
return 1
"""


@dataclass(frozen=True, slots=True)
class Owner:
    node_id: str
    token: int


class LeaseStore:
    """The leases and node records of one cluster (all its keys begin with ``prefix``)."""

    def __init__(self, redis: Redis, *, lease_ms: int, prefix: str = "croupier:") -> None:
        self.redis, self.lease_ms, self.prefix = redis, lease_ms, prefix
        self._acquire = redis.register_script(_ACQUIRE)
        self._renew = redis.register_script(_RENEW)
        self._release = redis.register_script(_RELEASE)
        self._floor = redis.register_script(_FLOOR)

    def _lease(self, table_id: str) -> str:
        return f"{self.prefix}lease:{table_id}"

    async def acquire(self, table_id: str, node_id: str) -> int | None:
        """The lease of a table no node holds: its new token, or None if a node holds it."""
        keys = [self._lease(table_id), f"{self.prefix}token:{table_id}"]
        token = int(await self._acquire(keys=keys, args=[node_id, self.lease_ms]))
        return token or None

    async def renew(self, leases: list[tuple[str, Owner]]) -> list[bool]:
        """Extend each (table, owner) lease, all in one round trip (a node renews every
        table it runs each tick, and one trip per table would make a tick as long as the
        tables times Redis's latency): for each, False when it is not theirs any more."""
        if not leases:
            return []
        keys = [self._lease(table_id) for table_id, _ in leases]
        values = [f"{owner.node_id}|{owner.token}" for _, owner in leases]
        kept = await self._renew(keys=keys, args=[*values, self.lease_ms])
        return [bool(k) for k in kept]

    async def release(self, table_id: str, owner: Owner) -> bool:
        value = f"{owner.node_id}|{owner.token}"
        return bool(await self._release(keys=[self._lease(table_id)], args=[value]))

    async def raise_counter(self, table_id: str, floor: int) -> None:
        """Bring the table's token counter up to ``floor`` (the fence PostgreSQL holds, after
        Redis lost its data): the next token is above every one ever given."""
        await self._floor(keys=[f"{self.prefix}token:{table_id}"], args=[floor])

    async def owners(self) -> dict[str, Owner]:
        """Every table held now, with its owner."""
        found = await self._scan("lease:")
        return {
            table_id: Owner(node, int(token))
            for table_id, value in found.items()
            for node, _, token in [value.rpartition("|")]
        }

    async def heartbeat(self, node_id: str, info: dict[str, Any]) -> None:
        await self.redis.set(f"{self.prefix}node:{node_id}", json.dumps(info), px=self.lease_ms)

    async def leave(self, node_id: str) -> None:
        await self.redis.delete(f"{self.prefix}node:{node_id}")

    async def nodes(self) -> dict[str, dict[str, Any]]:
        """The nodes alive now (each renewed its record within the lease time)."""
        return {node: json.loads(value) for node, value in (await self._scan("node:")).items()}

    async def _scan(self, kind: str) -> dict[str, str]:
        start = f"{self.prefix}{kind}"
        keys = [key async for key in self.redis.scan_iter(match=start + "*", count=1000)]
        if not keys:
            return {}
        values = await self.redis.mget(keys)
        return {
            _text(key)[len(start) :]: _text(value)
            for key, value in zip(keys, values, strict=True)
            if value is not None  # expired between the scan and the read
        }


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
