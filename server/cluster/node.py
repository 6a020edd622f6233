"""One node of a cluster: which tables it runs, and moving them when nodes come and go.

Every ``tick`` (a sixth of the lease time) the node

- renews its own record and the lease of every table it runs; a lease it finds taken or
  gone is **lost**: the table stops at once, writing nothing more (its fence refuses any
  write already under way), and whoever takes the lease recovers its round;
- reads the live nodes and the leases, and gives each table its place by rendezvous
  hashing (the node with the highest hash of table and node id): every node computes the
  same placement from the same list, a node joining or leaving moves only its share;
- **takes** each table placed on it that nobody holds (a table free for longer than the
  lease, whatever its placement, is taken by whoever sees it first: a node that cannot
  take its own tables never strands them); taking raises the fence in PostgreSQL, then
  recovers the table's open round as crash recovery does and plays on;
- **hands over** a table it holds that is placed on another live node: the round in play
  finishes, no next round opens, the lease is released, and the other node takes it at its
  next tick.

When the owner dies its lease expires; the table's place moves to a live node, which takes
it within a lease time and a tick. If Redis cannot be reached, no lease is renewed: once
the lease time has passed since the last renewal the node stops its tables (another node
may hold them by then), and takes its place again when Redis answers.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import time
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import RedisError

from server.cluster.bus import EventBus, Group
from server.cluster.commands import Commands
from server.cluster.fencing import Fence, StaleToken, raise_fence
from server.cluster.identity import default_node_id
from server.cluster.leases import LeaseStore, Owner
from server.cluster.lobby import SharedLobby
from server.cluster.notices import SharedNotices
from server.cluster.rpc import Rpc
from server.cluster.stopping import cancel_and_wait
from server.cluster.tables import ClusterTable
from server.pg_storage import PgWriter
from server.stores import RedisUnreachable, StorageError, guarded
from server.tables.casino import Casino
from server.tables.lobby import Lobby
from server.tables.viewers import Fanout, deliver_each
from server.wallet.operator.seamless import SeamlessLedger

__all__ = [
    "ClusterNode",
    "ClusterStats",
    "RedisUnreachable",
    "check_redis",
    "default_node_id",
    "place",
]

log = logging.getLogger("croupier.cluster")

# Leaving (SIGTERM) waits this long for the tables' rounds to finish and be handed over,
# then stops what is left as a crash would (deploy/: a 30 s grace period covers it).
LEAVE_SECONDS = 20.0
BUS_STOP_SECONDS = 5.0  # and this long for the last events to reach Redis


def place(table_id: str, nodes: list[str]) -> str | None:
    """The node a table belongs on (rendezvous hashing): the same answer on every node that
    sees the same nodes; a node leaving moves only its own tables."""

    def weight(node: str) -> bytes:
        return hashlib.blake2b(f"{table_id}\0{node}".encode(), digest_size=8).digest()

    return max(nodes, key=weight, default=None)


@dataclass
class ClusterStats:
    """What ``/metrics`` shows of the node (``croupier_cluster_*``)."""

    lease_renewals: int = 0
    lease_renewal_failures: int = 0
    leases_lost: int = 0
    tables_taken: int = 0
    tables_handed_over: int = 0
    failover_seconds: list[float] = field(default_factory=list)


class ClusterNode:
    """The cluster side of one ``croupier serve``: its leases, its record, its tables."""

    def __init__(
        self,
        casino: Casino,
        lobby: Lobby,
        redis: Redis,
        database_url: str,
        node_id: str,
        *,
        lease_seconds: float = 3.0,
        address: str = "",
        prefix: str = "croupier:",
        fanout: Fanout | None = None,
    ) -> None:
        self.casino, self.redis, self.node_id = casino, redis, node_id
        self.prefix = prefix
        self.lease_seconds = lease_seconds
        self.tick = lease_seconds / 6
        self.leases = LeaseStore(redis, lease_ms=int(lease_seconds * 1000), prefix=prefix)
        self.fences = PgWriter(database_url, "cluster")
        self.address = address
        self.owned: dict[str, Owner] = {}
        self.stats = ClusterStats()
        self.redis_ok = False
        self.database_ok = True
        self._tables = [t.id for t in casino.settings.tables]
        self._busy: dict[str, asyncio.Task[None]] = {}  # tables being taken or handed over
        self._taken_at: dict[str, float] = {}
        self._free_since: dict[str, float] = {}
        self._renewed_at = 0.0
        # Until its first tick is done the node starts the tables it takes spread over a
        # round, as one server does (``Casino.start``): a cluster starting cold would
        # otherwise open, close and settle every table in the same instant, and their
        # writes would queue for the database together. A table taken later (a failover,
        # a hand-over) starts at once.
        self._cold = True
        self._started = time.time()
        self._task: asyncio.Task[None] | None = None
        self._probe: asyncio.Task[None] | None = None
        self._leaving = False
        # Every table as this node's players see it, wherever it runs; the events of the
        # tables run elsewhere, and the commands for them (docs/operations.md).
        self.doors = {t: ClusterTable(self, t, fanout or deliver_each) for t in self._tables}
        self.bus = EventBus(redis, node_id, self._from_bus, prefix=prefix)
        self.commands = Commands(self)
        self.rpc = Rpc(redis, node_id, self.commands.serve, prefix=prefix)
        self.owners: dict[str, Owner] = {}  # as last read from Redis
        self._reseating: set[asyncio.Task[None]] = set()
        self.lobby = SharedLobby(self, lobby)
        self.notices = SharedNotices(redis, prefix)

    # --- lifecycle -------------------------------------------------------------------------

    async def start(self, address: str | None = None) -> None:
        """Join the cluster: the node's record first (``address``: where its players
        connect, once it listens), then its share of the tables."""
        if address is not None:
            self.address = address
        await self.leases.heartbeat(self.node_id, self._record())
        await self.bus.start()
        await self.rpc.start()
        self.redis_ok = True
        self._renewed_at = asyncio.get_running_loop().time()
        self._task = asyncio.create_task(self._loop(), name=f"cluster:{self.node_id}")
        self._probe = asyncio.create_task(self._probe_database(), name="cluster:database")

    async def _probe_database(self) -> None:
        """Whether the shared database answers (``/readyz``): a trivial query each tick on
        the fences' own connection."""
        while not self._leaving:
            try:
                # asyncio.timeout, not wait_for: Python 3.11's wait_for swallows a cancellation
                # that comes as the query answers, and this loop then never ended (a node's
                # stop waited for it forever).
                async with asyncio.timeout(self.lease_seconds):
                    await self.fences.run(lambda conn: conn.execute("SELECT 1"))
                if not self.database_ok:
                    log.warning("cluster: the database answers again")
                self.database_ok = True
            except (StorageError, TimeoutError) as exc:
                if self.database_ok:
                    log.error("cluster: the database does not answer (%s)", exc)
                self.database_ok = False
            await asyncio.sleep(self.tick)

    async def leave(self) -> None:
        """Hand every table over and leave (SIGTERM): the node's record goes first, so the
        others place its tables on themselves; each table finishes its round in play, its
        lease renewed until it is given back (left to expire, another node took it mid-round
        and voided the round)."""
        self._leaving = True  # the tick and the probe stop at their next turn
        await cancel_and_wait(task for task in (self._task, self._probe) if task is not None)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + LEAVE_SECONDS
        renewing = asyncio.create_task(self._keep_renewing(), name="cluster:leaving")
        late: set[asyncio.Task[None]] = set()
        try:
            if self._busy:  # tables being taken or handed over: their ends first
                await asyncio.wait(list(self._busy.values()), timeout=LEAVE_SECONDS)
            try:
                await self.leases.leave(self.node_id)
            except RedisError:
                log.warning("cluster: Redis unreachable while leaving; the record expires alone")
            for table_id in list(self.owned):
                if table_id not in self._busy:
                    self._busy[table_id] = asyncio.create_task(self._hand_over(table_id))
            handing = list(self._busy.values())
            if handing:
                _, late = await asyncio.wait(handing, timeout=max(0.0, deadline - loop.time()))
        finally:
            await cancel_and_wait([renewing])  # before any table is stopped: left to expire
        if late:  # stop them as a crash would: the next owner recovers their rounds
            log.error(
                "cluster: %d table(s) did not finish their round within %g s of leaving; "
                "stopped, their leases left to expire",
                len(late),
                LEAVE_SECONDS,
            )
            await cancel_and_wait(late)
            for table_id in list(self.owned):
                await self.casino.abandon(table_id)
        try:
            await asyncio.wait_for(self.bus.stop(), BUS_STOP_SECONDS)
        except TimeoutError:
            log.error("cluster: the last table events were not published on leaving")
        await self.rpc.stop()
        self.fences.close()
        await self.redis.aclose()

    @property
    def ready(self) -> bool:
        """Ready for players: Redis and the database answer, and the node's tick runs."""
        running = self._task is not None and not self._task.done()
        return self.redis_ok and self.database_ok and running

    def _record(self) -> dict[str, Any]:
        return {
            "address": self.address,
            "pid": os.getpid(),
            "started": self._started,
            "tables": sorted(self.owned),
        }

    # --- the tick --------------------------------------------------------------------------

    async def _loop(self) -> None:
        loop = asyncio.get_running_loop()
        while not self._leaving:
            try:
                await self._step(loop.time())
                if not self.redis_ok:
                    log.warning("cluster: Redis answers again")
                self.redis_ok = True
            except (RedisError, OSError) as exc:
                if self.redis_ok:
                    log.error("cluster: Redis unreachable (%s); leases not renewed", exc)
                self.redis_ok = False
                self.stats.lease_renewal_failures += 1
                if self.owned and loop.time() - self._renewed_at > self.lease_seconds:
                    log.error("cluster: leases expired without Redis; stopping every table")
                    for table_id in list(self.owned):
                        await self._lost(table_id, "its lease expired while Redis was away")
            except Exception:
                log.exception("cluster: tick failed")
            await asyncio.sleep(self.tick)

    async def _step(self, now: float) -> None:
        await self.leases.heartbeat(self.node_id, self._record())
        await self._renew()
        self._renewed_at = now
        nodes = sorted(await self.leases.nodes())
        if self.node_id not in nodes:
            nodes.append(self.node_id)
        owners = await self.leases.owners()
        self._moved(owners)
        await self.lobby.share()
        for table_id in self._tables:
            if table_id in self._busy:
                continue
            home = place(table_id, nodes)
            if table_id in self.owned:
                settled = now - self._taken_at.get(table_id, now) > 2 * self.lease_seconds
                if home != self.node_id and settled:
                    self._busy[table_id] = asyncio.create_task(self._hand_over(table_id))
                continue
            if table_id in owners:
                self._free_since.pop(table_id, None)
                continue
            free_since = self._free_since.setdefault(table_id, now)
            if home == self.node_id or now - free_since > self.lease_seconds:
                start_after = self._spread(table_id) if self._cold else 0.0
                self._busy[table_id] = asyncio.create_task(self._take(table_id, start_after))
        self._cold = False

    async def _renew(self) -> None:
        """Renew the lease of every table the node holds, all in one round trip; stop a
        table whose lease another node holds now, and give back one that closed itself."""
        renewing: list[tuple[str, Owner]] = []
        for table_id, owner in list(self.owned.items()):
            table = self.casino.tables.get(table_id)
            closed = table is not None and (not table.available or table.finished)
            if closed and table_id not in self._busy:
                # The table closed itself (a write failed: the fence refused it, or the
                # database is away): give the lease back so its round is recovered.
                await self._release(table_id, owner, "the table closed")
                continue
            # A table being taken (recovering its rounds) or handed over (finishing its
            # round) is renewed as well: it is this node's until the hand-over gives it
            # back, and a lease left to expire meanwhile let another node take the table
            # and void the round still being dealt here.
            renewing.append((table_id, owner))
        kept = await self.leases.renew(renewing)
        for (table_id, owner), ok in zip(renewing, kept, strict=True):
            if ok:
                self.stats.lease_renewals += 1
            elif self.owned.get(table_id) == owner:  # not given back meanwhile
                await self._lost(table_id, "another node holds its lease now")

    async def _keep_renewing(self) -> None:
        """While the node leaves: its leases renewed every tick (its tick has stopped)."""
        while True:
            try:
                await self._renew()
            except (RedisError, OSError) as exc:
                log.error("cluster: leases not renewed while leaving (%s)", exc)
            await asyncio.sleep(self.tick)

    def _spread(self, table_id: str) -> float:
        """Where ``table_id``'s first round starts in a cold cluster: its place among every
        table of the configuration, over one round's betting and pause."""
        settings = self.casino.table_settings[table_id]
        cycle = settings.betting_seconds + settings.pause_seconds
        return cycle * self._tables.index(table_id) / len(self._tables)

    # --- the tables' doors, events and commands ---------------------------------------------

    def _from_bus(self, batch: list[Group]) -> None:
        for table_id, events in batch:
            door = self.doors.get(table_id)
            if door is not None and door.viewers and door.runtime() is None:
                for seq, audience, frame in events:
                    door.deliver(seq, audience, frame)

    def _moved(self, owners: dict[str, Owner]) -> None:
        """Seat this node's players again at each table that changed hands."""
        for table_id, owner in owners.items():
            before = self.owners.get(table_id)
            door = self.doors.get(table_id)
            if before != owner and owner.node_id != self.node_id and door and door.viewers:
                task = asyncio.create_task(door.reseat())
                self._reseating.add(task)
                task.add_done_callback(self._reseating.discard)
        self.owners = owners

    # --- taking, handing over, losing ------------------------------------------------------

    async def _take(self, table_id: str, start_after: float = 0.0) -> None:
        try:
            token = await self.leases.acquire(table_id, self.node_id)
            if token is None:
                return
            owner = Owner(self.node_id, token)
            free_since = self._free_since.pop(table_id, None)
            try:
                await self.fences.run(lambda c: raise_fence(c, table_id, token, self.node_id))
            except StaleToken as exc:  # Redis lost its counters: never go below the fence
                log.warning("cluster: %s; the counter is raised and the lease given back", exc)
                await self.leases.raise_counter(table_id, exc.fence)
                await self.leases.release(table_id, owner)
                return
            except StorageError as exc:
                log.error("cluster: cannot raise the fence of table %s: %s", table_id, exc)
                await self.leases.release(table_id, owner)
                return
            self.owned[table_id] = owner
            self._taken_at[table_id] = asyncio.get_running_loop().time()
            fence = Fence(table_id, token, self.node_id)
            ledger = guarded(self.casino.ledger, fence)
            wallet = ledger if isinstance(ledger, SeamlessLedger) else None
            try:
                if wallet is not None:  # the operator's wallet (docs/wallet.md): the debits
                    # the node that ran the table left unanswered are rolled back first
                    await wallet.recover(table_id)
                recovered = await self.casino.take(
                    table_id,
                    ledger,
                    guarded(self.casino.journal, fence),
                    # The table delivers to the node's viewers of it, and publishes its
                    # events to the other nodes'.
                    published=partial(self.bus.publish, table_id),
                    viewers=self.doors[table_id].viewers,
                    start_after=start_after,
                )
                if wallet is not None:  # and the rounds recovery completed, credited
                    await wallet.finish_settled(table_id)
                self.owners[table_id] = owner
                await self.doors[table_id].reseat()
            except Exception:
                log.exception("cluster: table %s could not be taken; lease given back", table_id)
                await self.casino.abandon(table_id)  # if it started, it stops here
                self.owned.pop(table_id, None)
                await self.leases.release(table_id, owner)
                return
            self.stats.tables_taken += 1
            await self.notices.share(recovered, self.casino.notices)
            if free_since is not None:
                self.stats.failover_seconds.append(asyncio.get_running_loop().time() - free_since)
            log.warning(
                "cluster: took table %s (token %d)",
                table_id,
                token,
                extra={"table": table_id, "token": token, "recovered": len(recovered)},
            )
        except (RedisError, OSError) as exc:
            log.error("cluster: taking table %s failed: %s", table_id, exc)
        finally:
            self._busy.pop(table_id, None)

    async def _hand_over(self, table_id: str) -> None:
        """Finish the round in play, then give the lease back."""
        try:
            await self.casino.drain(table_id)
            owner = self.owned.get(table_id)
            if owner is not None:
                await self._release(table_id, owner, "handed over")
                self.stats.tables_handed_over += 1
        except (RedisError, OSError) as exc:
            log.error("cluster: handing table %s over failed: %s", table_id, exc)
        finally:
            self._busy.pop(table_id, None)

    async def _release(self, table_id: str, owner: Owner, why: str) -> None:
        await self.casino.abandon(table_id)
        self.owned.pop(table_id, None)
        self._taken_at.pop(table_id, None)
        log.warning("cluster: gave table %s back (%s)", table_id, why)
        await self.leases.release(table_id, owner)

    async def _lost(self, table_id: str, why: str) -> None:
        self.stats.leases_lost += 1
        self.owned.pop(table_id, None)
        self._taken_at.pop(table_id, None)
        log.error("cluster: lost table %s: %s; stopped it, writing nothing more", table_id, why)
        await self.casino.abandon(table_id)


def check_redis(url: str) -> None:
    """Reach Redis at ``url`` once, at start: ``RedisUnreachable`` saying why it cannot be."""
    from redis import Redis as SyncRedis

    try:
        with SyncRedis.from_url(url, socket_timeout=5, socket_connect_timeout=5) as client:
            client.ping()
    except (RedisError, OSError, ValueError) as exc:
        raise RedisUnreachable(f"cannot reach Redis: {exc}") from None
