"""Event sequence numbers never repeat for a table, across restarts too (docs/protocol.md,
"Table events"): each run of a table numbers its events from its own block (its epoch ×
2^32), so a client resuming with a seq from before a restart gets a snapshot, never a
silent gap or events it did not miss (issue #14)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from server.protocol.messages import Joined, Resume
from server.tables.runtime import SEQ_BLOCK
from tests.net.live import Client, advance, live_service


async def _watch_a_round(service: object, table: str = "rt") -> tuple[list[int], Joined]:
    async with Client.connect(service) as c:  # type: ignore[arg-type]
        await c.send(Resume(table=table, last_seq=0, role="spectator"))
        joined = await c.expect(Joined)
        await advance(service, 11)  # betting closes, the wheel spins, the round settles
        await c.drain()
        return [e.seq for e in c.events()], joined


def test_sequence_numbers_continue_in_a_new_block_after_a_restart(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with live_service(tmp_path) as service:
            first, _ = await _watch_a_round(service)
            assert first and first[0] >= 1 and first == sorted(first)
            last_seen = first[-1]
            assert service.casino.tables["rt"].epoch == 0
        for run in (1, 2):
            async with live_service(tmp_path) as service:
                table = service.casino.tables["rt"]
                assert table.epoch == run
                async with Client.connect(service) as c:
                    # Resuming with the last seq of the previous run: ambiguous unless seqs
                    # never repeat. The server knows it is not this run's, and sends a
                    # snapshot (resumed: false) instead of replaying or skipping events.
                    await c.send(Resume(table="rt", last_seq=last_seen, role="spectator"))
                    joined = await c.expect(Joined)
                    assert joined.resumed is False
                    assert joined.snapshot.seq >= run * SEQ_BLOCK > last_seen
                seqs, _ = await _watch_a_round(service)
                assert min(seqs) > last_seen and min(seqs) > run * SEQ_BLOCK
                assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))  # +1 within a run
                last_seen = seqs[-1]

    asyncio.run(scenario())


def test_a_resume_within_the_same_run_still_replays_what_was_missed(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with live_service(tmp_path) as service:
            await _watch_a_round(service)
        async with live_service(tmp_path) as service:
            seqs, _ = await _watch_a_round(service)
            async with Client.connect(service) as c:
                await c.send(Resume(table="rt", last_seq=seqs[0], role="spectator"))
                await c.expect(Joined)
                replayed = [e.seq for e in c.events()]
                assert replayed == seqs[1:]

    asyncio.run(scenario())
