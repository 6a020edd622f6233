"""A future whose outcome reaches what is parked on it in the call that sets it.

An asyncio future hands its outcome to each task awaiting it through ``loop.call_soon``:
the task goes on in the loop's next turn, and on a busy node a turn is as long as
everything ready in it (docs/capacity.md, "Turns of the event loop"). A bet's route
crossed two such hand-overs after its writes were durable — the writers' outcome to the
table, the table's answer to the player's connection — each a turn's wait for the
acknowledgement. A ``Prompt`` is an asyncio future (a task awaits it as any other, a turn
later) that also keeps *listeners*, called in the very call that sets its outcome.
``server.tables.eager`` parks the coroutines it drives on a prompt as a listener, so such a
coroutine goes on at once: the bet's writes are answered, its table's core stepped and its
acknowledgement sent in the turn that learnt the writes were durable.

A listener must not raise (the setter's own work would be cut short): the one in
``server.tables.eager`` keeps what its coroutine raises for whoever awaits it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["Listener", "Prompt"]

T = TypeVar("T")

Listener = Callable[["Prompt[Any]"], None]


class Prompt(asyncio.Future[T]):
    """An ``asyncio.Future`` that calls its listeners (``listen``) as its outcome is set."""

    def __init__(self, *, loop: asyncio.AbstractEventLoop | None = None) -> None:
        super().__init__(loop=loop)
        self._listeners: list[Listener] = []

    def listen(self, listener: Listener) -> None:
        """Call ``listener(self)`` when the outcome is set (now, if it is)."""
        if self.done():
            listener(self)
        else:
            self._listeners.append(listener)

    def unlisten(self, listener: Listener) -> None:
        """Forget ``listener`` (a coroutine parked here that is cancelled instead)."""
        if listener in self._listeners:
            self._listeners.remove(listener)

    def set_result(self, result: T) -> None:
        super().set_result(result)
        self._tell()

    def set_exception(self, exception: type | BaseException) -> None:
        super().set_exception(exception)
        self._tell()

    def cancel(self, msg: Any | None = None) -> bool:
        if not super().cancel(msg):
            return False
        self._tell()
        return True

    def _tell(self) -> None:
        listeners, self._listeners = self._listeners, []
        failed: BaseException | None = None
        for listener in listeners:
            try:
                listener(self)
            except BaseException as exc:  # (a KeyboardInterrupt): the others still hear it
                failed = failed or exc
        if failed is not None:
            raise failed
