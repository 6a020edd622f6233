"""Serial lines for the tests, with no hardware: two pseudo-terminals wired back to back (a
null modem, what ``socat pty,raw pty,raw`` makes), so the server and a simulated device each
open a real serial port by its path with pyserial."""

from __future__ import annotations

import asyncio
import contextlib
import os
import tty
from collections.abc import AsyncIterator
from dataclasses import dataclass


@dataclass
class NullModem:
    """``server`` and ``device``: the two ports' paths. ``connected`` False: the cable is
    pulled (bytes either way are lost)."""

    server: str
    device: str
    connected: bool = True


@contextlib.asynccontextmanager
async def null_modem() -> AsyncIterator[NullModem]:
    loop = asyncio.get_running_loop()
    server_master, server_slave = os.openpty()
    device_master, device_slave = os.openpty()
    for slave in (server_slave, device_slave):
        tty.setraw(slave)  # no echo, no line editing, before either side opens its port
    for master in (server_master, device_master):
        os.set_blocking(master, False)
    modem = NullModem(os.ttyname(server_slave), os.ttyname(device_slave))

    def relay(source: int, target: int) -> None:
        try:
            data = os.read(source, 65536)
        except BlockingIOError:
            return
        except OSError:
            return  # nobody has the port open on that side: nothing to relay
        if modem.connected and data:
            with contextlib.suppress(BlockingIOError):  # a full line loses bytes, as a UART does
                os.write(target, data)

    loop.add_reader(server_master, relay, server_master, device_master)
    loop.add_reader(device_master, relay, device_master, server_master)
    try:
        yield modem
    finally:
        for master in (server_master, device_master):
            loop.remove_reader(master)
        # The slaves stay open until the end (so a master never reads EIO while a side
        # reopens its port), then everything is closed.
        for fd in (server_master, device_master, server_slave, device_slave):
            os.close(fd)
