"""A task whose first step runs now, in the caller's turn of the event loop — and whose
later steps run at once, too, when what it waits for is a ``Prompt``.

``asyncio.create_task`` runs a coroutine's first step on the loop's next turn. On a busy
node a turn is as long as everything ready in it, so each task a bet's route makes costs
the bet a turn's wait (docs/capacity.md, "Turns of the event loop"). Where the first step
only queues work — a bet's writes handed to the stores' writers, a command put in a
table's inbox — running it at once both saves that wait and keeps the work in the order
the caller made it. Python 3.12 has this as ``asyncio.eager_task_factory``; the project
runs on 3.11, so ``eager_task`` does the same for one coroutine: it runs the first step,
and only if the coroutine then waits does a task take over, resuming it where it stopped.

A task that awaits a future goes on a turn after the future is done. When the coroutine
waits on a ``server.prompt.Prompt`` instead (a bet's writes, a table's answer), no task
takes over: the coroutine is parked on the prompt and goes on in the call that sets it
(``_Driven``), so the turn that learns a bet's writes are durable also steps its table and
sends its acknowledgement. A task takes over the first time it waits on anything else.

Unlike 3.12's, these steps run while ``asyncio.current_task()`` is the task of whoever ran
them (the caller, or whoever set the prompt), or none at all where that is a callback: a
connection's message is taken as it is read (``server/net/reader.py``), the writers'
outcomes are handed over in a callback (``server.group_commit``). So such a step must not
use what binds itself to the current task — ``asyncio.timeout``, ``TaskGroup`` (and, from
3.12, ``asyncio.wait_for``): a timeout would cancel the wrong task, or fail for want of
one. The coroutines started here (a bet's lane, a bet's writes) use none of them.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Coroutine, Generator
from typing import Any, TypeVar

from server.prompt import Prompt

__all__ = ["eager_task"]

T = TypeVar("T")


def eager_task(coro: Coroutine[Any, Any, T]) -> asyncio.Future[T]:
    """Run ``coro`` up to its first wait now, then on a task — or, while it waits on
    prompts, in the calls that set them: what it returns or raises, as a future (already
    done when the coroutine never waited). It runs in a copy of the caller's context
    (contextvars), every step included, as a task's would."""
    loop = asyncio.get_running_loop()
    context = contextvars.copy_context()
    try:
        first = context.run(coro.send, None)
    except StopIteration as stop:
        done: asyncio.Future[T] = loop.create_future()
        done.set_result(stop.value)
        return done
    except Exception as exc:  # the caller has it through the future, as from a task
        failed: asyncio.Future[T] = loop.create_future()
        failed.set_exception(exc)
        return failed
    if isinstance(first, Prompt):
        driven: _Driven[T] = _Driven(coro, context, loop)
        driven.park(first)
        return driven
    return loop.create_task(_Resumed(coro, first), context=context)


class _Driven(asyncio.Future[T]):
    """A coroutine driven by the prompts it waits on (``eager_task``), and its outcome. Each
    step runs in the call that set the prompt it waited on; the first time it waits on
    anything else a task takes over, and this future follows that task. Cancelling it
    throws ``CancelledError`` into the coroutine at its next step, as for a task."""

    def __init__(
        self,
        coro: Coroutine[Any, Any, T],
        context: contextvars.Context,
        loop: asyncio.AbstractEventLoop,
    ) -> None:
        super().__init__(loop=loop)
        self._coro, self._context = coro, context
        self._parked: Prompt[Any] | None = None
        self._task: asyncio.Task[Any] | None = None
        self._cancel: asyncio.CancelledError | None = None  # asked, not yet thrown in

    def park(self, prompt: Prompt[Any]) -> None:
        prompt._asyncio_future_blocking = False  # taken, as a task takes what it awaits
        self._parked = prompt
        prompt.listen(self._wake)

    def _wake(self, prompt: Prompt[Any]) -> None:
        self._parked = None
        try:
            value = prompt.result()
        except BaseException as exc:  # the prompt's exception, or its cancellation
            self._step(None, exc)
        else:
            self._step(value, None)

    def _step(self, value: Any, exc: BaseException | None) -> None:
        coro = self._coro
        try:
            if exc is None:
                waiting = self._context.run(coro.send, value)
            else:
                waiting = self._context.run(coro.throw, exc)
        except StopIteration as stop:
            if self._cancel is not None:  # asked during its last step: cancelled, as a task
                super().cancel(*self._cancel.args[:1])
            else:
                self.set_result(stop.value)
            return
        except asyncio.CancelledError as cancelled:
            super().cancel(*cancelled.args[:1])
            return
        except (KeyboardInterrupt, SystemExit) as error:
            self.set_exception(error)
            raise
        except BaseException as error:
            self.set_exception(error)
            return
        if self._cancel is not None:  # asked during this step: thrown in at the next
            self.get_loop().call_soon(self._thrown)
        elif isinstance(waiting, Prompt):
            self.park(waiting)
        else:
            resumed: _Resumed[Any] = _Resumed(coro, waiting, self)
            self._task = self.get_loop().create_task(resumed, context=self._context)

    def _ended(self, outcome: BaseException | None, value: Any = None) -> None:
        """The task driving the coroutine saw it end (``_Resumed``)."""
        if self.done():
            return
        if outcome is None:
            self.set_result(value)
        elif isinstance(outcome, asyncio.CancelledError):
            super().cancel(*outcome.args[:1])
        else:
            self.set_exception(outcome)

    def cancel(self, msg: Any | None = None) -> bool:
        if self.done():
            return False
        if self._task is not None:
            return self._task.cancel(msg)
        if self._cancel is None:
            self._cancel = asyncio.CancelledError() if msg is None else asyncio.CancelledError(msg)
            if self._parked is not None:
                # At the coroutine's next step, in a turn of its own, as for a task: not
                # inside the canceller's call.
                self._parked.unlisten(self._wake)
                self._parked = None
                self.get_loop().call_soon(self._thrown)
        return True

    def _thrown(self) -> None:
        exc, self._cancel = self._cancel, None
        if exc is not None and not self.done():
            self._step(None, exc)


class _Resumed(Coroutine[Any, Any, T]):
    """``coro``, which has yielded ``waiting`` (a future, or None for a bare yield) to
    whatever drove it, for a task to drive on: the task's first step yields ``waiting``, each
    later one goes to ``coro``. A cancellation before that first step reaches ``coro`` at
    its wait, as if a task had driven it all along (a generator not yet started could not
    pass it on). Where it drives a ``_Driven``'s coroutine, the outcome is that future's,
    in the step that ends it; the task itself then ends with None, or cancelled."""

    def __init__(
        self, coro: Coroutine[Any, Any, T], waiting: Any, driven: _Driven[T] | None = None
    ) -> None:
        self._coro, self._waiting, self._driven = coro, waiting, driven
        self._started = False

    def send(self, value: Any) -> Any:
        if not self._started:
            self._started = True
            return self._waiting
        return self._on(self._coro.send, value)

    def throw(self, exc: Any, *rest: Any) -> Any:
        self._started = True
        return self._on(self._coro.throw, exc, *rest)

    def close(self) -> None:
        self._coro.close()

    def __await__(self) -> Generator[Any, None, T]:  # pragma: no cover - a task drives it
        raise TypeError("driven by a task, not awaited")

    def _on(self, step: Any, *args: Any) -> Any:
        driven = self._driven
        if driven is None:
            return step(*args)
        try:
            return step(*args)
        except StopIteration as stop:
            driven._ended(None, stop.value)
            raise StopIteration from None
        except asyncio.CancelledError as cancelled:
            driven._ended(cancelled)
            raise
        except (KeyboardInterrupt, SystemExit) as error:
            driven._ended(error)
            raise
        except BaseException as error:
            driven._ended(error)  # the caller has it through the future
            raise StopIteration from None
