"""Simulated devices: a card-reading shoe, a Masque hole-card reader, an automated wheel and a
dealer console that talk to ``croupier serve`` over real TCP (with TLS and a client
certificate when given a context) or a serial line, as the hardware would (``croupier device
simulate``, docs/devices.md "Simulators" and "Transports").

Each is seeded (the same seed, the same cards and results) or scripted (a file of cards or
results to produce), keeps its link in "non-volatile memory" (``state``: a JSON file, or
memory only) so that a power loss resumes its session, and injects the faults of
``Faults``: on the bytes (drop, duplicate, reorder, corrupt, delay, disconnect) and in what
the device reports (misread, double read, missing card, a card drawn before no more bets,
wheel jam, ball not sensed, result out of range, game number jump, wrong or no lamp, power
loss, door open, tilt); on demand, ``disconnect`` and ``go_silent`` (frozen, the connection
kept open: the server's silence limit) until ``wake``.

What a device of each role does is its role's simulator, a subclass named by the role's
registration (``DeviceRole.simulator``: ``server/devices/simulated/``): ``SimulatedDevice(id,
role, …)`` makes one of it. A subclass adds a role through ``_start`` (its state),
``remembered`` (what of it the non-volatile memory keeps), ``_answer`` (the server's
commands), ``_welcomed``, ``_memory`` and ``_restore``; ``server.devices.station_simulator``
is a station's, with a constructor of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import random
import ssl
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from server.devices.frames import Frame, FrameDecoder
from server.devices.link import Delivered, Link
from server.devices.messages import (
    DeviceFault,
    Hello,
    Refused,
    decode_to_device,
    decode_welcome_or_refused,
    encode_message,
)
from server.devices.roles import UnknownRole, device_role, registered
from server.devices.serial_port import open_serial_connection

__all__ = ["ROLE_NAMES", "DeviceRefused", "Faults", "SimulatedDevice"]

# ``--role`` as the command line spells it -> the protocol's role (the built-in roles; any
# registered role's short name is taken too).
ROLE_NAMES = {role.short: role.name for role in registered()}


def _simulator_of(role: str) -> type[SimulatedDevice]:
    """The simulator class of ``role`` (its name or short name): the one its registration
    names, or the bare device for a role without one or nobody registered (a test of what
    the server refuses)."""
    try:
        declared = device_role(role)
    except UnknownRole:
        return SimulatedDevice
    if declared.simulator is None:
        return SimulatedDevice
    module, _, name = declared.simulator.partition(":")
    simulator: type[SimulatedDevice] = getattr(importlib.import_module(module), name)
    return simulator


_MIXED: dict[tuple[type, type], type] = {}


def _with_role(cls: type[SimulatedDevice], role: str) -> type[SimulatedDevice]:
    """``cls`` (``SimulatedDevice``, or a subclass that takes its role as an argument, as a
    test's recording device) with the simulator of ``role``: the simulator itself, or a
    class of both (``cls`` first, so what it overrides wraps the role's behaviour)."""
    simulator = _simulator_of(role)
    if issubclass(cls, simulator):
        return cls
    if cls is SimulatedDevice:
        return simulator
    mixed = _MIXED.get((cls, simulator))
    if mixed is None:
        body = {"__module__": cls.__module__, "__qualname__": cls.__qualname__}
        mixed = _MIXED[(cls, simulator)] = type(cls.__name__, (cls, simulator), body)
    return mixed


async def received_until(
    reader: asyncio.StreamReader, stopper: asyncio.Task[Any], size: int
) -> AsyncIterator[bytes]:
    """What ``reader`` receives, read by read, until the peer closes or ``stopper`` is done
    (a simulator's stop)."""
    while True:
        read = asyncio.ensure_future(reader.read(size))
        await asyncio.wait({read, stopper}, return_when=asyncio.FIRST_COMPLETED)
        if not read.done():
            read.cancel()
            return
        data = read.result()
        if not data:
            return
        yield data


async def _first_of(*waits: Coroutine[Any, Any, Any]) -> None:
    """Wait until one of ``waits`` is done; cancel the others."""
    tasks = [asyncio.ensure_future(w) for w in waits]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()


class DeviceRefused(Exception):
    """The server refused the hello (``code``, docs/devices.md)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code


@dataclass
class Faults:
    """Fault knobs: probabilities per frame or per reading, or a step at which to act."""

    drop: float = 0.0  # a chunk of frames is not sent
    duplicate: float = 0.0  # … sent twice
    reorder: float = 0.0  # … held back and sent after the next one
    corrupt: float = 0.0  # one byte of it flipped
    delay: float = 0.0  # seconds before each answer
    disconnect_at: int | None = None  # close the connection after this many messages (once)
    power_loss_at: int | None = None  # lose power after this many messages (once): restart
    misread: float = 0.0  # a card read as something that is no card
    double_read: float = 0.0  # a card reported twice (the shoe's count repeats)
    missing: float = 0.0  # a card leaves the shoe unread (the count skips)
    early: float = 0.0  # per round: a card drawn before no more bets of the next round
    early_after: float = 1.0  # … this many seconds after the round's last card
    jam: float = 0.0  # the wheel gives no result
    not_sensed: float = 0.0  # the wheel warns: ball not sensed
    out_of_range: float = 0.0  # the wheel reports a result it does not have
    game_jump: float = 0.0  # the wheel's game number skips
    wrong_lamp: float = 0.0  # the reader lights another range's lamp
    no_lamp: float = 0.0  # the reader lights none
    door_open_at: int | None = None  # report the door open after this many messages
    tilt_at: int | None = None  # report a tilt after this many messages
    clear_after: float | None = None  # … and report it cleared this many seconds later


class SimulatedDevice:
    """One simulated device: its link, its transport, its byte-level faults and its
    non-volatile memory. ``SimulatedDevice(id, role, …)`` is the simulator of ``role``;
    ``decks``, ``wheel``, ``table``, ``decide`` and ``staff`` are what a role's simulator
    reads (a shoe's decks, a wheel's type, a console's table and decisions)."""

    # The role a subclass simulates (each role's simulator, a station's); None: the class
    # takes its role as its second argument, and is made that role's simulator.
    simulates: ClassVar[str | None] = None
    # The role's own attributes kept in non-volatile memory (a shoe's count, a wheel's game).
    remembered: ClassVar[tuple[str, ...]] = ()

    def __new__(cls, *args: Any, **kwargs: Any) -> SimulatedDevice:
        if cls.simulates is not None:
            return super().__new__(cls)
        return super().__new__(_with_role(cls, args[1] if len(args) > 1 else kwargs["role"]))

    def __init__(
        self,
        device_id: str,
        role: str,
        key: bytes,
        host: str,
        port: int,
        *,
        seed: int = 0,
        script: list[str] | None = None,
        faults: Faults | None = None,
        state: Path | None = None,
        decks: int = 8,
        wheel: str = "single_zero",
        table: str = "",
        decide: tuple[str, ...] = ("void",),
        staff: tuple[str, str] = ("dealer-sim", "supervisor-sim"),
        out: Callable[[str], None] = lambda line: None,
        serial: str | None = None,
        baudrate: int = 9600,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.id, self.key = device_id, key
        try:
            self.role = device_role(role).name
        except UnknownRole:
            self.role = role  # the server refuses its hello
        self.host, self.port = host, port
        # The transport: a serial line (a device path or socket://HOST:PORT) instead of TCP to
        # host:port, or TLS on that TCP connection.
        self.serial, self.baudrate, self.tls = serial, baudrate, tls
        self.random = random.Random(seed)
        self.script: deque[str] = deque(script or [])
        self.faults = faults or Faults()
        self.state_file = state
        self.decks, self.wheel, self.table = decks, wheel, table
        self.decide, self.staff, self.out = decide, staff, out
        self.session = time.time_ns() // 1000  # higher than any earlier one of this device
        self.link = Link(time.monotonic(), key=key)
        self.steps = 0  # messages sent
        self.prompts: list[Any] = []  # what the server told staff (a console's)
        self.commands: list[Any] = []
        self.connected = asyncio.Event()
        self._writer: asyncio.StreamWriter | None = None
        self._held_back: bytes | None = None
        self._fired: set[str] = set()
        # ``go_silent``: the device freezes (sends nothing, reads nothing, keeps its
        # connection) until ``wake``.
        self.silent = False
        self._awake = asyncio.Event()
        self._awake.set()
        self._start()
        self._load()

    def _start(self) -> None:
        """The role's own state, before the non-volatile memory is read (a subclass's)."""

    # --- non-volatile memory -------------------------------------------------------------------

    def _load(self) -> None:
        if self.state_file is None or not self.state_file.exists():
            return
        self._restore(json.loads(self.state_file.read_text()))

    def _restore(self, saved: dict[str, Any]) -> None:
        """Take back what ``_memory`` kept (a subclass adds its own)."""
        self.session = saved["session"]
        for name in self.remembered:
            setattr(self, name, saved.get(name, getattr(self, name)))
        self.steps = saved.get("steps", 0)
        self._fired = set(saved.get("fired", []))
        self.link.restore_memory(saved["link"])

    def _memory(self) -> dict[str, Any]:
        """What the device keeps in non-volatile memory (JSON; a subclass adds its own)."""
        return {
            **{name: getattr(self, name) for name in self.remembered},
            "session": self.session,
            "steps": self.steps,
            "fired": sorted(self._fired),
            "link": self.link.memory(),
        }

    def _save(self) -> None:
        if self.state_file is None:
            return
        data = self._memory()
        tmp = self.state_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(data))
        tmp.replace(self.state_file)

    def power_loss(self) -> None:
        """Lose power: the connection drops and only the non-volatile memory survives (with no
        state file, nothing does: the device starts a new session)."""
        if self._writer is not None:
            self._writer.close()
        if self.state_file is not None and self.state_file.exists():
            self.link = Link(time.monotonic(), key=self.key)
            self._load()
        else:
            self.session = time.time_ns() // 1000
            self.link = Link(time.monotonic(), key=self.key)

    # --- running -------------------------------------------------------------------------------

    async def run(self, stop: asyncio.Event | None = None) -> None:
        """Connect, and reconnect after every loss, until ``stop`` is set (a silent device
        reconnects once it wakes)."""
        stop = stop or asyncio.Event()
        while not stop.is_set():
            if self.silent:
                await _first_of(self._awake.wait(), stop.wait())
                continue
            with contextlib.suppress(ConnectionError, OSError, TimeoutError):
                await self._connection(stop)
            self.connected.clear()
            if not stop.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), 0.2)

    async def _open(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        if self.serial is not None:
            return await open_serial_connection(self.serial, self.baudrate)
        if self.tls is not None:
            return await asyncio.open_connection(
                self.host, self.port, ssl=self.tls, server_hostname=self.host
            )
        return await asyncio.open_connection(self.host, self.port)

    async def _connection(self, stop: asyncio.Event) -> None:
        reader, writer = await self._open()
        self._writer = writer
        try:
            hello = Hello(
                device=self.id,
                role=self.role,
                session=self.session,
                last_acked=self.link.received,
                vendor="croupier simulator",
            )
            self.link.send_control(encode_message(hello), time.monotonic())
            hello_bytes = self.link.data_to_send()
            writer.write(hello_bytes)
            await self._welcome(reader, writer, hello_bytes)
            self.connected.set()
            self._welcomed()
            self._out_now()
            ticker = asyncio.create_task(self._tick())
            stopper = asyncio.create_task(stop.wait())
            try:
                async for data in received_until(reader, stopper, 65536):
                    await self._received(data)
            finally:
                ticker.cancel()
                stopper.cancel()
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()
            if self._writer is writer:
                self._writer = None

    async def _welcome(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, hello: bytes
    ) -> None:
        decoder = FrameDecoder()
        # A serial line has no connection to fail: a hello lost to noise, or sent before the
        # server opened its port, is sent again each second.
        wait, tries = (1.0, 5) if self.serial is not None else (5.0, 1)
        while True:
            try:
                data = await asyncio.wait_for(reader.read(4096), wait)
            except TimeoutError:
                tries -= 1
                if not tries:
                    raise
                writer.write(hello)
                continue
            if not data:
                raise ConnectionError("closed before the welcome")
            for item in decoder.feed(data):
                if isinstance(item, Frame) and item.control:
                    answer = decode_welcome_or_refused(item.body)
                    if isinstance(answer, Refused):
                        raise DeviceRefused(answer.code, answer.message)
                    # The link's timing is the server's (a heartbeat well within its
                    # silence limit).
                    if answer.heartbeat_ms > 0 and answer.silence_ms > 0:
                        self.link.heartbeat_every = answer.heartbeat_ms / 1000
                        self.link.silence_limit = answer.silence_ms / 1000
                    self.link.resume(answer.last_acked, time.monotonic())
                    self.out(f"{self.id}: connected, session {answer.session}")
                    return

    def _welcomed(self) -> None:
        """The server welcomed the device (every connection): a subclass's first messages."""

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(max(0.0, self.link.next_deadline() - time.monotonic()))
            if self.silent:  # frozen: no heartbeat, no retransmission, no silence detected
                await self._awake.wait()
                continue
            if self.link.tick(time.monotonic()) is not None and self._writer is not None:
                self._writer.close()  # the server went silent: reconnect
                return
            self._out_now()

    async def _received(self, data: bytes) -> None:
        if self.silent:
            return  # frozen: what arrives is never read (the server sends it again)
        for event in self.link.receive_data(data, time.monotonic()):
            if isinstance(event, Delivered):
                command = decode_to_device(event.body)
                self.commands.append(command)
                self._save()
                if self.faults.delay:
                    await asyncio.sleep(self.faults.delay)
                self._answer(command)
        self._out_now()

    # --- sending, with the byte-level faults ---------------------------------------------------

    def send(self, message: Any) -> None:
        self.link.send(encode_message(message), time.monotonic())
        self.steps += 1
        self._save()
        self._out_now()
        faults, steps = self.faults, self.steps
        if faults.door_open_at == steps and self._once("door"):
            self._fault("door_open")
        if faults.tilt_at == steps and self._once("tilt"):
            self._fault("tilt")
        if faults.disconnect_at == steps and self._once("disconnect") and self._writer:
            self._writer.close()
        if faults.power_loss_at == steps and self._once("power"):
            self.power_loss()

    # --- connection faults on demand ------------------------------------------------------------

    def disconnect(self) -> None:
        """Close the connection now (the device connects again and resumes its session)."""
        if self._writer is not None:
            self._writer.close()

    def go_silent(self) -> None:
        """Freeze: send nothing (no message, ack or heartbeat) and read nothing, but keep the
        connection open, so that the server's silence limit finds it. What the device is
        asked to send meanwhile waits in its link."""
        self.silent = True
        self._awake.clear()

    def wake(self) -> None:
        """End ``go_silent``: on a connection still open the link picks up where it stood and
        sends again what is unacknowledged; one the server closed is opened again."""
        if not self.silent:
            return
        self.silent = False
        self._awake.set()
        if self._writer is not None and not self._writer.is_closing():
            self.link.resume(self.link.peer_acked, time.monotonic())
            self._out_now()

    def _fault(self, code: str) -> None:
        self.send(DeviceFault(code=code))
        if self.faults.clear_after is not None:
            clear = DeviceFault(code=code, cleared=True)
            asyncio.get_running_loop().call_later(self.faults.clear_after, self.send, clear)

    def _once(self, name: str) -> bool:
        if name in self._fired:
            return False
        self._fired.add(name)
        self._save()
        return True

    def _out_now(self) -> None:
        data = self.link.data_to_send()
        writer = self._writer
        if not data or writer is None or writer.is_closing() or self.silent:
            return
        faults, rnd = self.faults, self.random
        if faults.drop and rnd.random() < faults.drop:
            return
        if faults.corrupt and rnd.random() < faults.corrupt:
            flipped = bytearray(data)
            flipped[rnd.randrange(len(flipped))] ^= 1 << rnd.randrange(8)
            data = bytes(flipped)
        if faults.reorder and self._held_back is None and rnd.random() < faults.reorder:
            self._held_back = data
            return
        writer.write(data)
        if faults.duplicate and rnd.random() < faults.duplicate:
            writer.write(data)
        if self._held_back is not None:
            writer.write(self._held_back)
            self._held_back = None

    # --- what the role does -------------------------------------------------------------------

    def _answer(self, command: Any) -> None:
        """A command from the server: the role's simulator acts on it (the bare device
        only keeps it, in ``commands``)."""
