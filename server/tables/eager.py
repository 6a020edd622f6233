"""A task whose first step runs now, in the caller's turn of the event loop.

``asyncio.create_task`` runs a coroutine's first step on the loop's next turn. On a busy
node a turn is as long as everything ready in it, so each task a bet's route makes costs
the bet a turn's wait (docs/capacity.md, "Turns of the event loop"). Where the first step
only queues work — a bet's writes handed to the stores' writers, a command put in a
table's inbox — running it at once both saves that wait and keeps the work in the order
the caller made it. Python 3.12 has this as ``asyncio.eager_task_factory``; the project
runs on 3.11, so ``eager_task`` does the same for one coroutine: it runs the first step,
and only if the coroutine then waits does a task take over, resuming it where it stopped.

Unlike 3.12's, the first step runs while ``asyncio.current_task()`` is still the caller's
task (the task that will run the rest does not exist yet), or none at all where the caller
is a callback: a connection's message is taken as it is read (``server/net/reader.py``). So
a first step must not use what binds itself to the current task — ``asyncio.timeout``,
``TaskGroup`` (and, from 3.12, ``asyncio.wait_for``): a timeout would cancel the caller, or
fail for want of a task. The coroutines started here (a bet's lane, a bet's writes) reach
their first wait before any such thing: a table door's command is queued first.
"""

from __future__ import annotations

import asyncio
import contextvars
import types
from collections.abc import Coroutine, Generator
from typing import Any, TypeVar

__all__ = ["eager_task"]

T = TypeVar("T")


def eager_task(coro: Coroutine[Any, Any, T]) -> asyncio.Future[T]:
    """Run ``coro`` up to its first wait now, then on a task: what it returns or raises,
    as a future (already done when the coroutine never waited). It runs in a copy of the
    caller's context (contextvars), first step included, as a task's would."""
    context = contextvars.copy_context()
    try:
        first = context.run(coro.send, None)
    except StopIteration as stop:
        done: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        done.set_result(stop.value)
        return done
    except Exception as exc:  # the caller has it through the future, as from a task
        failed: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        failed.set_exception(exc)
        return failed
    return asyncio.get_running_loop().create_task(_resumed(coro, first), context=context)


@types.coroutine
def _resumed(coro: Coroutine[Any, Any, T], waiting: Any) -> Generator[Any, Any, T]:
    """Go on with ``coro``, which has yielded ``waiting`` (a future, or None for a bare
    yield) to whatever drives it: the task driving this passes each outcome on."""
    while True:
        try:
            outcome = yield waiting
        except BaseException as exc:  # a cancellation, or the awaited future's exception
            try:
                waiting = coro.throw(exc)
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]
        else:
            try:
                waiting = coro.send(outcome)
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]
