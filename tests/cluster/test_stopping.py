"""A node's background tasks stop for certain, even when a cancellation is lost
(server/cluster/stopping.py): the cause of a node that would not stop on SIGTERM."""

from __future__ import annotations

import asyncio

from server.cluster.stopping import cancel_and_wait


def test_a_task_that_loses_cancellations_is_cancelled_again_until_it_ends() -> None:
    async def scenario() -> None:
        lost = 0

        async def reader() -> None:  # a BLPOP loop whose wait_for dropped the cancellation
            nonlocal lost
            while True:
                try:
                    await asyncio.sleep(10)
                except asyncio.CancelledError:
                    if lost < 2:
                        lost += 1
                        continue
                    raise

        task = asyncio.create_task(reader())
        await asyncio.sleep(0)
        await asyncio.wait_for(cancel_and_wait([task], every=0.01), 5)
        assert task.cancelled() and lost == 2

    asyncio.run(scenario())


def test_what_the_tasks_raised_is_taken_and_the_rest_still_stopped() -> None:
    async def scenario() -> None:
        async def fails() -> None:
            raise RuntimeError("a loop that died earlier")

        failed = asyncio.create_task(fails())
        running = asyncio.create_task(asyncio.sleep(10))
        await asyncio.sleep(0)
        assert failed.done()
        await cancel_and_wait([failed, running])  # raises nothing
        assert running.cancelled()
        assert isinstance(failed.exception(), RuntimeError)

    asyncio.run(scenario())
