"""``eager_task``: a coroutine's first step runs in the caller's turn of the event loop, the
rest on a task — its result, exception and cancellation as a task's would be — or, while
it waits on ``Prompt``s, in the calls that set them (``server.prompt``)."""

from __future__ import annotations

import asyncio
import contextvars

import pytest

from server.prompt import Prompt
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


# --- prompts: a coroutine parked on one goes on in the call that sets it ----------------------


def test_a_coroutine_waiting_on_a_prompt_goes_on_in_the_call_that_sets_it() -> None:
    """Where a task would go on a turn of the event loop after the prompt is set, the
    coroutine driven by ``eager_task`` goes on inside ``set_result``: a bet's writes,
    durable, step its table and answer its player in the turn that learnt it."""

    async def go() -> None:
        loop = asyncio.get_running_loop()
        steps: list[str] = []
        first, second = Prompt[int](loop=loop), Prompt[int](loop=loop)

        async def work() -> int:
            steps.append("first")
            a = await first
            steps.append(f"got {a}")
            b = await second
            steps.append(f"got {b}")
            return a + b

        driven = eager_task(work())
        assert steps == ["first"] and not driven.done()
        first.set_result(20)
        assert steps == ["first", "got 20"]  # no turn of the loop in between
        second.set_result(22)
        assert steps == ["first", "got 20", "got 22"]
        assert driven.done() and driven.result() == 42

        # A task awaiting a prompt still goes on a turn later, as with any future.
        third = Prompt[str](loop=loop)
        seen: list[str] = []

        async def awaits() -> None:
            seen.append(await third)

        task = asyncio.ensure_future(awaits())
        await asyncio.sleep(0)
        third.set_result("later")
        assert seen == []
        await task
        assert seen == ["later"]

    asyncio.run(go())


def test_a_prompts_exception_and_cancellation_reach_the_parked_coroutine() -> None:
    async def go() -> None:
        loop = asyncio.get_running_loop()
        failing, cancelled = Prompt[None](loop=loop), Prompt[None](loop=loop)
        caught: list[str] = []

        async def catches() -> str:
            try:
                await failing
            except KeyError:
                caught.append("KeyError")
            try:
                await cancelled
            except asyncio.CancelledError:
                caught.append("CancelledError")
                raise
            return "not reached"

        driven = eager_task(catches())
        failing.set_exception(KeyError("gone"))
        assert caught == ["KeyError"]
        cancelled.cancel()
        assert caught == ["KeyError", "CancelledError"]
        assert driven.cancelled()

    asyncio.run(go())


def test_cancelling_a_parked_coroutine_throws_in_at_its_next_step_and_forgets_the_prompt() -> None:
    async def go() -> None:
        loop = asyncio.get_running_loop()
        prompt = Prompt[int](loop=loop)
        cleaned: list[str] = []

        async def parked() -> int:
            try:
                return await prompt
            finally:
                cleaned.append("finally ran")

        driven = eager_task(parked())
        assert driven.cancel() and driven.cancel()  # asked twice, thrown in once
        assert cleaned == []  # not inside the canceller's call
        with pytest.raises(asyncio.CancelledError):
            await driven
        assert cleaned == ["finally ran"]
        prompt.set_result(1)  # nothing is parked on it any more
        assert cleaned == ["finally ran"] and driven.cancelled()

    asyncio.run(go())


def test_a_task_takes_over_when_it_waits_on_anything_but_a_prompt() -> None:
    """After a prompt, a plain future: a task drives the rest, in the coroutine's own
    context, and the future ``eager_task`` returned follows it (result and cancellation)."""

    async def go() -> None:
        loop = asyncio.get_running_loop()
        SEEN.set("caller")
        prompt, plain = Prompt[int](loop=loop), loop.create_future()
        read: list[str] = []

        async def work() -> int:
            SEEN.set("driven")
            a = await prompt
            b = await plain
            await asyncio.sleep(0)
            read.append(SEEN.get())
            return int(a + b)

        driven = eager_task(work())
        prompt.set_result(40)
        assert not driven.done()
        plain.set_result(2)
        assert await driven == 42
        assert read == ["driven"] and SEEN.get() == "caller"

        prompt2, never = Prompt[None](loop=loop), loop.create_future()

        async def waits_for_ever() -> None:
            await prompt2
            await never

        driven = eager_task(waits_for_ever())
        prompt2.set_result(None)
        driven.cancel()
        with pytest.raises(asyncio.CancelledError):
            await driven
        assert driven.cancelled()

    asyncio.run(go())


def test_a_cancellation_keeps_its_message_and_wins_over_a_return_in_the_same_step() -> None:
    """As for a task: the message given to ``cancel`` reaches whoever awaits the future, and
    a cancellation asked while the coroutine takes its last step leaves it cancelled."""

    async def go() -> None:
        loop = asyncio.get_running_loop()
        prompt = Prompt[None](loop=loop)

        async def parked() -> None:
            await prompt

        driven = eager_task(parked())
        driven.cancel("the table stopped")
        with pytest.raises(asyncio.CancelledError, match="the table stopped"):
            await driven

        last = Prompt[None](loop=loop)
        handle: list[asyncio.Future[str]] = []

        async def cancels_itself_then_returns() -> str:
            await last
            handle[0].cancel("asked in its last step")
            return "returned"

        handle.append(eager_task(cancels_itself_then_returns()))
        last.set_result(None)
        assert handle[0].cancelled()
        with pytest.raises(asyncio.CancelledError, match="asked in its last step"):
            await handle[0]

    asyncio.run(go())
