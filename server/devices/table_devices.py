"""One table's devices on the event loop: the ``DeviceDealer`` (sans-I/O) driven by the hub's
messages, the table's chance requests and the table's clock.

``TableStores`` hands it the chance requests its devices answer (``answers``); ``answer``
resolves once the dealer answers — a record, a ``Hold`` (the core asks again), ``Irregular``
— or with the virtual shoe's or wheel's answer when the dealer says ``VIRTUAL``.
``table_dealer`` makes a table's dealer from its settings, its game's declared capabilities
(``server.games.registry``) and the registered roles.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable
from typing import Any

from server.core import effects as fx
from server.core.clock import Clock
from server.devices.dealing import Answer, DealerSettings, DeviceDealer, Log, Send, TableAction
from server.devices.hub import DeviceHub
from server.devices.roles import UnknownRole, device_role
from server.games.registry import capabilities
from server.games.table import ConfigError, TableGame, TableSettings

__all__ = ["TableDevices", "table_dealer"]

log = logging.getLogger("croupier.devices")
_LEVELS = {"info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}


class TableDevices:
    def __init__(self, dealer: DeviceDealer, hub: DeviceHub, clock: Clock) -> None:
        self.dealer, self.hub, self.clock = dealer, hub, clock
        self.table_id = dealer.table_id
        for device_id in dealer.devices.values():
            hub.attach(device_id, dealer.table_id, self)
        self._answers: deque[Any] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self._changed = asyncio.Event()
        self._timer: asyncio.Task[None] | None = None
        self._console: Callable[[Any], None] = lambda staff: None

    def on_console(self, deliver: Callable[[Any], None]) -> None:
        self._console = deliver

    def answers(self, request: Any) -> bool:
        return self.dealer.answers(request)

    async def answer(self, chance: fx.Chance) -> Any:
        """The answer to the core's ``chance`` (``effects.VIRTUAL``: the caller asks the
        virtual shoe or wheel)."""
        self._ensure_timer()
        if not self._answers:  # else: staff decided a hold before the core asked again
            now = self.clock.now()
            self._perform(self.dealer.ask(chance.round_id, chance.request, chance.hole, now))
        while not self._answers:
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        return self._answers.popleft()

    def device_message(self, role: str, message: Any) -> None:
        self._perform(self.dealer.receive(role, message, self.clock.now()))

    def stop(self) -> None:
        self._perform(self.dealer.stop())
        if self._timer is not None:
            self._timer.cancel()

    def _perform(self, out: list[Any]) -> None:
        for item in out:
            if isinstance(item, Send):
                device_id = self.dealer.devices.get(item.role)
                if device_id is not None:
                    self.hub.send(device_id, item.message)
            elif isinstance(item, Answer):
                self._answers.append(item.result)
                if self._waiter is not None and not self._waiter.done():
                    self._waiter.set_result(None)
            elif isinstance(item, TableAction):
                self._console(item.staff)
            elif isinstance(item, Log):
                log.log(_LEVELS.get(item.level, logging.WARNING), "table %s: %s", self.table_id, item.message)  # fmt: skip  # noqa: E501
        self._changed.set()

    def _ensure_timer(self) -> None:
        if self._timer is None or self._timer.done():
            self._timer = asyncio.create_task(self._ticks(), name=f"devices:{self.table_id}")

    async def _ticks(self) -> None:
        """Tick the dealer at its deadlines (a device that does not answer, a hold)."""
        while True:
            self._changed.clear()
            deadline = self.dealer.next_deadline()
            if deadline is None:
                await self._changed.wait()
                continue
            sleep = asyncio.ensure_future(self.clock.sleep_until(deadline))
            changed = asyncio.ensure_future(self._changed.wait())
            await asyncio.wait({sleep, changed}, return_when=asyncio.FIRST_COMPLETED)
            for task in (sleep, changed):
                task.cancel()
            # not suppress(CancelledError) around each: that swallowed this task's own cancel
            await asyncio.wait({sleep, changed})
            if self.clock.now() >= deadline:
                self._perform(self.dealer.tick(self.clock.now()))


def table_dealer(settings: TableSettings, game: TableGame, dealer_settings: DealerSettings) -> DeviceDealer:  # fmt: skip  # noqa: E501
    """The ``DeviceDealer`` of a table with devices; ``ConfigError`` for a role nobody
    registered or a device its game cannot use (each role reads what the game declares it
    asks: a card source needs cards, a wheel a spin, a hole-card reader the hole card's
    range), and for devices that answer none of its chance (a dealer console alone)."""
    where = f"table {settings.id} ({settings.game}): devices"
    asked = capabilities(settings.game)
    options: dict[str, Any] = {}
    roles = []
    for name in settings.devices:
        try:
            role = device_role(name)
        except UnknownRole as exc:
            raise ConfigError(f"{where}: {exc}") from None
        if role.dealer is None or not role.serves_table:
            raise ConfigError(f"{where}: a {name} serves no table's chance (it names its tables itself)")  # fmt: skip  # noqa: E501
        options.update(role.dealer.options(where, game, asked))
        roles.append(role)
    if roles and not any(role.answers for role in roles):
        raise ConfigError(f"{where}: a {roles[0].name} serves a table with another device")
    return DeviceDealer(settings.id, settings.devices, settings=dealer_settings, **options)
