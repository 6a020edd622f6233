"""``/readyz`` and ``/metrics`` as a load balancer and an operator's monitoring see them
(docs/operations.md, "HTTP endpoints" and the disk failing): ready while every table runs;
a table whose settlement cannot be written closes itself, and the server says so — 503,
``croupier_tables_stopped`` — until it is restarted and recovery finishes the round."""

from __future__ import annotations

import asyncio
import re
import sqlite3
from pathlib import Path

from server.protocol.messages import BetAccepted, Join, Joined, PlaceBet
from tests.net.live import Client, advance, live_service
from tests.net.processes import http_get


def _stopped(metrics: str) -> float:
    found = re.search(r"^croupier_tables_stopped(?:\{[^}]*\})? (\S+)$", metrics, re.M)
    assert found, metrics
    return float(found.group(1))


def test_readyz_turns_503_when_a_table_cannot_write_its_settlement(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with live_service(tmp_path) as service, Client.connect(service, "ann") as ann:
            base = f"http://127.0.0.1:{service.port}"

            async def get(path: str) -> tuple[int, str]:
                return await asyncio.to_thread(http_get, base + path)

            assert await get("/readyz") == (200, "ready\n")
            assert _stopped((await get("/metrics"))[1]) == 0
            await ann.send(Join(table="rt"))
            r = (await ann.expect(Joined)).snapshot.round
            await ann.send(PlaceBet(table="rt", round=r, bet_id="a", spot="red", amount=500))
            await ann.expect(BetAccepted)
            # The disk "fails" for settlements (another connection's trigger: a real
            # SQLite error), then the round is dealt: the table closes itself.
            with sqlite3.connect(tmp_path / "ledger.sqlite") as db:
                db.execute(
                    "CREATE TRIGGER no_settling BEFORE INSERT ON transfers "
                    "WHEN NEW.kind != 'wager' BEGIN SELECT RAISE(ABORT, 'disk on fire'); END"
                )
            await advance(service, 10)
            assert await get("/readyz") == (503, "not ready\n")
            assert _stopped((await get("/metrics"))[1]) == 1
            assert (await get("/healthz"))[0] == 200  # alive all the same: live, not ready

    asyncio.run(scenario())
