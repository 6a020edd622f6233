"""``eager_task``: a coroutine's first step runs in the caller's turn of the event loop, the
rest on a task — its result, exception and cancellation as a task's would be."""

from __future__ import annotations

import asyncio
import contextvars

import pytest

from server.tables.eager import eager_task

SEEN: contextvars.ContextVar[str] = contextvars.ContextVar("seen", default="")


def test_the_first_step_runs_now_and_the_rest_on_a_task() -> None:
    async def go() -> None:
        steps: list[str] = []
        gate = asyncio.get_running_loop().create_future()

        async def work() -> int:
            steps.append("first")
            value = await gate
            steps.append("second")
            await asyncio.sleep(0)  # a bare yield: the task goes on next turn
            steps.append("third")
            return value * 2

        future = eager_task(work())
        assert steps == ["first"]  # before the caller's turn ended
        assert not future.done()
        gate.set_result(21)
        assert await future == 42
        assert steps == ["first", "second", "third"]

    asyncio.run(go())


def test_a_coroutine_that_never_waits_is_done_at_once() -> None:
    async def go() -> None:
        async def quick() -> str:
            return "done"

        async def fails() -> None:
            raise ValueError("refused")

        done = eager_task(quick())
        assert done.done() and done.result() == "done"
        failed = eager_task(fails())
        assert failed.done()
        with pytest.raises(ValueError, match="refused"):
            failed.result()

    asyncio.run(go())


def test_exceptions_and_cancellation_reach_the_coroutine_as_in_a_task() -> None:
    async def go() -> None:
        loop = asyncio.get_running_loop()
        gate, never = loop.create_future(), loop.create_future()
        cleaned: list[str] = []

        async def raises_later() -> None:
            await gate

        async def cancelled() -> None:
            try:
                await never
            finally:
                cleaned.append("finally ran")

        failing = eager_task(raises_later())
        gate.set_exception(KeyError("gone"))
        with pytest.raises(KeyError):
            await failing

        waiting = eager_task(cancelled())
        await asyncio.sleep(0)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        assert cleaned == ["finally ran"]

    asyncio.run(go())


def test_it_runs_in_a_copy_of_the_callers_context() -> None:
    async def go() -> None:
        SEEN.set("caller")
        gate = asyncio.get_running_loop().create_future()
        read: list[str] = []

        async def work() -> None:
            read.append(SEEN.get())
            SEEN.set("task")  # its own copy: the caller's value stays
            await gate
            read.append(SEEN.get())

        future = eager_task(work())
        assert SEEN.get() == "caller"
        gate.set_result(None)
        await future
        assert read == ["caller", "task"] and SEEN.get() == "caller"

    asyncio.run(go())


def test_the_first_step_still_sees_the_callers_task_as_current() -> None:
    """What eager_task's docstring warns of: until the coroutine first waits,
    ``asyncio.current_task()`` is the caller's, so nothing bound to the current task (a
    timeout) may start in the first step."""

    async def go() -> None:
        caller = asyncio.current_task()
        seen: list[asyncio.Task[object] | None] = []
        gate = asyncio.get_running_loop().create_future()

        async def work() -> None:
            seen.append(asyncio.current_task())
            await gate
            seen.append(asyncio.current_task())

        future = eager_task(work())
        gate.set_result(None)
        await future
        assert seen == [caller, future]

    asyncio.run(go())
