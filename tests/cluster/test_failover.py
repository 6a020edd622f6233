"""Cluster nodes in one process, on a real Redis and PostgreSQL (docs/operations.md,
"Running a cluster"): tables shared out by placement, handed over when a node joins or
leaves, taken over with their round recovered when a node dies, and a node that lost a
table's lease refused on its next write (fencing token)."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from server.cli.main import main
from server.cluster.node import place
from server.core import commands as cmd
from server.journal.journal import RoundStatus
from server.journal.pg_journal import PgJournal
from server.pg_storage import connect
from tests.cluster.local import (
    CONFIG,
    PATIENCE,
    TABLE_IDS,
    Seat,
    check_books,
    die,
    node,
    stop_node,
    stop_ticking,
    until,
)
from tests.redis_server import RedisServer


def test_tables_are_shared_out_handed_over_and_taken_over(
    tmp_path: Path,
    redis_server: RedisServer,
    postgres_url: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    async def go() -> None:
        a = node(tmp_path, "node-a", redis_server, postgres_url)
        await a.start()
        b = None
        try:
            assert a.cluster is not None
            await until(lambda: len(a.cluster.owned) == 5, what="node-a, alone, took every table")
            b = node(tmp_path, "node-b", redis_server, postgres_url)
            await b.start()
            assert b.cluster is not None
            # b joined: the tables placed on b are handed over, each after its round
            mine = {t for t in TABLE_IDS if place(t, ["node-a", "node-b"]) == "node-b"}
            assert mine, "placement gives node-b some of the five tables"
            await until(lambda: set(b.cluster.owned) == mine, what="node-b took its tables")
            # What follows holds of a node that kept its leases: one whose event loop a
            # starved machine held up past the lease lost them, and its tables failed over.
            assert a.cluster.stats.leases_lost == 0, "node-a's leases expired under it"
            assert not set(a.cluster.owned) & mine  # a holds none of them any more
            assert a.cluster.stats.tables_handed_over == len(mine)
            for table_id in mine:  # handed over between rounds: nothing to recover
                assert table_id not in {r.table_id for r in b.casino.recovered}
            await die(a)  # without a word: its renewals stop, its tables stop writing
            dead = set(a.cluster.owned)
            await until(lambda: set(b.cluster.owned) == mine | dead, what="node-b took a's tables")
            # Each table node-b took (from the lease on; its recovery done after) counts a
            # failover: the seconds from seeing the table free to running it.
            failovers = b.cluster.stats.failover_seconds
            await until(
                lambda: len(failovers) == len(TABLE_IDS), what="node-b counted its failovers"
            )
            assert b.cluster.stats.tables_taken == len(TABLE_IDS)
            assert all(0 < seconds < PATIENCE for seconds in failovers), failovers
            recovered = {r.table_id for r in b.casino.recovered}
            assert recovered <= dead
            with connect(postgres_url) as conn:
                fences = dict(conn.execute("SELECT table_id, node_id FROM table_fences"))
            assert fences == {t: "node-b" for t in mine | dead}
        finally:
            if b is not None:
                await stop_node(b)
            a.cluster._task = None  # type: ignore[union-attr]
            await stop_node(a)

    asyncio.run(go())
    check_books(postgres_url)
    # Any round of any node is replayed from the shared journal and ledger.
    journal = PgJournal(postgres_url)
    try:
        recovered = journal.last_round("bac-1")
    finally:
        journal.close()
    config = tmp_path / "croupier.toml"
    config.write_text(CONFIG)
    assert recovered is not None
    first = recovered.rsplit(".", 1)[0] + ".1"
    assert main(["replay", first, "--database", postgres_url, "--config", str(config)]) == 0
    out = capsys.readouterr().out
    assert f"round {first} at table bac-1 (baccarat" in out and "journal:" in out
    assert main(["replay", "bac-1.999999", "--database", postgres_url]) == 2
    assert "no round 'bac-1.999999' in the database" in capsys.readouterr().err


def test_a_node_that_lost_its_lease_cannot_write_for_the_table(
    tmp_path: Path, redis_server: RedisServer, postgres_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """58 Pa. Code-independent safety: a paused or partitioned owner whose lease another node
    took is refused by the fence on its next write, and says so; the player's stake stays."""

    async def go() -> None:
        a = node(tmp_path, "node-a", redis_server, postgres_url)
        await a.start()
        b = None
        try:
            assert a.cluster is not None and a.cluster._task is not None
            await until(lambda: len(a.casino.tables) == 5, what="node-a runs every table")
            player = a.players.login("Alice", None)
            before = a.players.balance(player.player_id)
            table = a.casino.tables["rou-1"]
            table.add_viewer(Seat(player.player_id), "player")
            await stop_ticking(a)  # a "pauses": its leases are not renewed, its tables play on
            b = node(tmp_path, "node-b", redis_server, postgres_url)
            await b.start()
            assert b.cluster is not None
            await until(lambda: len(b.cluster.owned) == 5, what="node-b took every table")
            await until(
                lambda: table.phase == "betting" or not table.available,
                what="node-a's table opened its betting or closed",
            )
            reply = await table.submit(
                cmd.Place(player.player_id, round_id=table.round_id, bet_id="b1",
                spot="red", amount=500)
            )  # fmt: skip
            # refused by the fence (or by the table the fence already closed)
            assert reply.refusal is not None
            assert reply.refusal.code in ("storage_failed", "table_unavailable")
            await until(lambda: not table.available, what="node-a's table closed")
            assert a.players.balance(player.player_id) == before  # nothing was debited
        finally:
            if b is not None:
                await stop_node(b)
            if a.cluster is not None:
                a.cluster._task = None
            await stop_node(a)

    with caplog.at_level(logging.ERROR):
        asyncio.run(go())
    assert "fencing token refused: node node-a no longer owns table" in caplog.text
    check_books(postgres_url)
    journal = PgJournal(postgres_url)
    try:
        for _, round_id in journal.open_rounds():
            assert journal.status(round_id) is RoundStatus.OPEN
    finally:
        journal.close()
