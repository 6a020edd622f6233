"""A simulated Cammegh-style automated roulette wheel on a serial line (``croupier device
simulate --role wheel --protocol cammegh --serial PATH``, docs/devices.md "Simulators").

It speaks the ASCII format the server's adapter reads (``server.devices.adapters.cammegh``,
which says where the format comes from: it is unverified against the vendor's manual), in
its "user game start" mode: it waits in state 1 until ``*u 1``, then spins one game —
states 2, 3 and 4 for ``phase_seconds`` each, then 5 with the winning number, then 1 again —
and sends a status line at every change of state and every ``status_every`` seconds.
``*R`` (answered ``*R ok``) spins the game under way again under the same number, or starts
the next game when the last one has its result. Seeded or scripted like the framed
simulators, with their wheel faults: ``jam`` (no result), ``not_sensed`` (warning flag 1 and
no result), ``out_of_range`` (winning number 99), ``game_jump`` (the game number skips).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import re
from collections import deque
from collections.abc import Callable

from rng.wheel_layouts import WheelType, wheel_pockets
from server.devices.serial_port import open_serial_connection
from server.devices.simulator import Faults, received_until

__all__ = ["CammeghSimulator"]

_TERMINATOR = re.compile(rb"[\r\n]")


class CammeghSimulator:
    def __init__(
        self,
        serial: str,
        *,
        baudrate: int = 9600,
        seed: int = 0,
        script: list[str] | None = None,
        faults: Faults | None = None,
        wheel: str = "single_zero",
        status_every: float = 0.5,
        phase_seconds: float = 1.0,
        separator: str = ";",
        out: Callable[[str], None] = lambda line: None,
    ) -> None:
        self.serial, self.baudrate = serial, baudrate
        self.random = random.Random(seed)
        self.script: deque[str] = deque(script or [])
        self.faults = faults or Faults()
        self.pockets = [p.label for p in wheel_pockets(WheelType(wheel))]
        self.status_every, self.phase_seconds = status_every, phase_seconds
        self.separator, self.out = separator, out
        self.state, self.game, self.last, self.flags = 1, 0, "0", 0
        self.decided = True  # the game shown has its result (or none was played yet)
        self.commands: list[str] = []  # every command received, as sent
        self.connected = asyncio.Event()
        self._writer: asyncio.StreamWriter | None = None
        self._spin: asyncio.Task[None] | None = None

    # --- the line ---------------------------------------------------------------------------

    async def run(self, stop: asyncio.Event | None = None) -> None:
        """Open the line, and open it again after every loss, until ``stop`` is set."""
        stop = stop or asyncio.Event()
        while not stop.is_set():
            with contextlib.suppress(OSError):  # serial.SerialException is an OSError
                await self._line(stop)
            self.connected.clear()
            if not stop.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), 0.2)
        if self._spin is not None:
            self._spin.cancel()

    async def _line(self, stop: asyncio.Event) -> None:
        reader, writer = await open_serial_connection(self.serial, self.baudrate)
        self._writer = writer
        self.connected.set()
        self.out(f"cammegh wheel on {self.serial}")
        status = asyncio.create_task(self._status_every())
        stopper = asyncio.create_task(stop.wait())
        partial = b""
        try:
            async for data in received_until(reader, stopper, 1024):
                *lines, partial = _TERMINATOR.split(partial + data)
                for line in lines:
                    if line.strip():
                        self._command(line.decode("ascii", "replace").strip())
        finally:
            status.cancel()
            stopper.cancel()
            self._writer = None
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    def _write(self, text: str) -> None:
        if self._writer is not None and not self._writer.is_closing():
            self._writer.write(text.encode("ascii") + b"\r\n")

    def status_line(self) -> str:
        sep = self.separator
        speed = self.random.randrange(20, 40) if self.state in (2, 3, 4) else 0
        direction = self.game % 2
        fields = ["*X", str(self.state), f"{self.game:03d}", self.last, f"{self.flags:X}"]
        return sep.join([*fields, f"{speed:03d}", str(direction)])

    def _show(self) -> None:
        self._write(self.status_line())

    async def _status_every(self) -> None:
        while True:
            self._show()
            await asyncio.sleep(self.status_every)

    # --- commands and games ------------------------------------------------------------------

    def _command(self, command: str) -> None:
        self.commands.append(command)
        self.out(f"cammegh wheel: {command}")
        if command.replace(" ", "") == "*u1":
            if self._spin is None or self._spin.done():
                self._start(new=True)
        elif command.upper() == "*R":
            self._write("*R ok")
            if self._spin is not None:
                self._spin.cancel()
            self._start(new=self.decided)

    def _start(self, *, new: bool) -> None:
        self._spin = asyncio.create_task(self._game(new=new))

    async def _game(self, *, new: bool) -> None:
        faults, rnd = self.faults, self.random
        if new:
            self.game += 7 if faults.game_jump and rnd.random() < faults.game_jump else 1
        self.decided, self.flags = False, 0
        for state in (2, 3, 4):
            self._set(state)
            await asyncio.sleep(self.phase_seconds)
        if faults.jam and rnd.random() < faults.jam:
            return  # the ball never settles: no result; the server restarts the game
        if faults.not_sensed and rnd.random() < faults.not_sensed:
            self.flags |= 1  # ball removed or not sensed
            self._show()
            return
        result = self.script.popleft() if self.script else rnd.choice(self.pockets)
        if faults.out_of_range and rnd.random() < faults.out_of_range:
            result = "99"
        self.last, self.decided = result, True
        self._set(5)
        await asyncio.sleep(self.phase_seconds)
        self._set(1)

    def _set(self, state: int) -> None:
        self.state = state
        self._show()
