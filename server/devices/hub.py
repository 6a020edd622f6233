"""Devices on asyncio TCP: the server's listening side of the device link (docs/devices.md).

One ``DeviceHub`` per server listens on ``[device_link]`` ``host:port``. Each connection
starts with the device's hello (``DeviceSessions``): a refused one is answered, logged and
closed. An accepted one becomes the device's ``Channel`` connection, replacing an older
one; the channel's ``Link`` outlives connections, so what either side had not acknowledged
is sent again after a reconnect. Delivered bodies are validated for the device's role and
handed to the table that uses the device (``Listener``); the session and the last seq
received are kept in the journal so a restarted server neither accepts an older session nor
applies a message twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from server.devices.frames import Frame, FrameDecoder
from server.devices.handshake import Accepted, DeviceSessions, KnownDevice
from server.devices.link import Delivered, Dropped, Link, LinkDown
from server.devices.messages import (
    DeviceFault,
    DeviceMessageError,
    decode_from_device,
    encode_message,
)
from server.journal.journal import Journal

__all__ = ["Channel", "DeviceHub", "Listener"]

log = logging.getLogger("croupier.devices")
HELLO_SECONDS = 5.0  # a connection that sends no hello in this time is closed
STATE_KEY = "link"


def _state_owner(device_id: str) -> str:
    return f"device:{device_id}"


class Listener(Protocol):
    """The table a device serves (``TableDevices``)."""

    def device_message(self, role: str, message: Any) -> None: ...


@dataclass
class Channel:
    """One configured device: its link (across connections) and what ``croupier devices``
    shows of it."""

    device: KnownDevice
    table: str = ""
    listener: Listener | None = None
    link: Link | None = None
    session: int | None = None
    writer: asyncio.StreamWriter | None = None
    last_heard: float | None = None  # wall-clock time of the last valid frame
    connections: int = 0
    dropped: dict[str, int] = field(default_factory=dict)
    backlog: list[bytes] = field(default_factory=list)  # sent before the device ever connected
    faults: list[str] = field(default_factory=list)

    @property
    def up(self) -> bool:
        return self.writer is not None and self.link is not None and self.link.up

    def status(self) -> dict[str, Any]:
        return {
            "id": self.device.id,
            "role": self.device.role,
            "table": self.table,
            "link": "up" if self.up else "down",
            "session": self.session,
            "last_heard": self.last_heard,
            "connections": self.connections,
            "unacked": self.link.unacked if self.link is not None else len(self.backlog),
            "dropped": dict(self.dropped),
            "faults": list(self.faults),
        }


class DeviceHub:
    def __init__(
        self,
        devices: Iterable[KnownDevice],
        journal: Journal | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 8100,
        retransmit_after: float = 0.25,
        heartbeat_every: float = 1.0,
        silence_limit: float = 3.0,
    ) -> None:
        devices = list(devices)
        self.host, self.port = host, port
        self.journal = journal
        self.sessions = DeviceSessions(
            devices,
            retransmit_after=retransmit_after,
            heartbeat_every=heartbeat_every,
            silence_limit=silence_limit,
        )
        self.channels = {d.id: Channel(d) for d in devices}
        self.refused: dict[str, int] = {}  # refusal code -> count
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        if journal is not None:
            for device in devices:
                saved = journal.load_state(_state_owner(device.id), STATE_KEY)
                if saved is not None:
                    self.sessions.restore(
                        device.id, int(saved["session"]), int(saved["received"]), time.monotonic()
                    )
                    self.channels[device.id].session = int(saved["session"])

    def attach(self, device_id: str, table: str, listener: Listener) -> None:
        channel = self.channels[device_id]
        channel.table, channel.listener = table, listener

    def status(self) -> list[dict[str, Any]]:
        return [c.status() for c in self.channels.values()]

    # --- sending ----------------------------------------------------------------------------

    def send(self, device_id: str, message: Any) -> None:
        """Queue ``message`` for the device; it goes now if the device is connected, else
        when it reconnects (nothing unacknowledged is dropped)."""
        channel = self.channels[device_id]
        body = encode_message(message)
        if channel.link is None:
            channel.backlog.append(body)
            return
        channel.link.send(body, time.monotonic())
        self._flush(channel)

    def _flush(self, channel: Channel) -> None:
        if channel.link is None:
            return
        data = channel.link.data_to_send()
        if data and channel.writer is not None and not channel.writer.is_closing():
            channel.writer.write(data)

    # --- serving ------------------------------------------------------------------------------

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._connection, self.host, self.port)
        sockets = self._server.sockets
        if sockets:
            self.port = sockets[0].getsockname()[1]
        log.info("devices listening", extra={"host": self.host, "port": self.port})

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for channel in self.channels.values():
            if channel.writer is not None:
                channel.writer.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._server is not None:
            with contextlib.suppress(Exception):
                await self._server.wait_closed()

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        peer = writer.get_extra_info("peername")
        try:
            hello = await asyncio.wait_for(self._first_frame(reader), HELLO_SECONDS)
            if hello is None:
                return
            accepted = self.sessions.hello(hello, time.monotonic())
            if not isinstance(accepted, Accepted):
                self.refused[accepted.code] = self.refused.get(accepted.code, 0) + 1
                log.warning(
                    "device refused",
                    extra={"code": accepted.code, "device": accepted.device, "peer": str(peer),
                           "reason": accepted.message},
                )  # fmt: skip
                writer.write(accepted.reply())
                await writer.drain()
                return
            await self._serve(self._attach(accepted, writer), reader, writer)
        except (TimeoutError, ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            if task is not None:
                self._tasks.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _first_frame(self, reader: asyncio.StreamReader) -> Frame | None:
        """The connection's first frame (the device sends nothing else before the welcome)."""
        decoder = FrameDecoder()
        while True:
            data = await reader.read(4096)
            if not data:
                return None
            for item in decoder.feed(data):
                if isinstance(item, Frame):
                    return item

    def _attach(self, accepted: Accepted, writer: asyncio.StreamWriter) -> Channel:
        channel = self.channels[accepted.device.id]
        old_writer, old_link = channel.writer, channel.link
        if old_writer is not None and old_writer is not writer:
            old_writer.close()  # a newer connection of the same device replaces it
        carried: list[bytes] = list(channel.backlog)
        if not accepted.resumed and old_link is not None and old_link is not accepted.link:
            carried = old_link.unacked_bodies() + carried  # commands the old session left
        channel.backlog.clear()
        channel.link, channel.writer = accepted.link, writer
        channel.session = accepted.session
        channel.connections += 1
        channel.last_heard = time.time()
        now = time.monotonic()
        for body in carried:
            accepted.link.send(body, now)
        self._flush(channel)
        self._save(channel)
        log.info(
            "device connected",
            extra={"device": channel.device.id, "session": accepted.session,
                   "resumed": accepted.resumed},
        )  # fmt: skip
        return channel

    async def _serve(
        self, channel: Channel, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        link = channel.link
        assert link is not None
        ticker = asyncio.create_task(self._tick(channel, link, writer))
        try:
            while channel.writer is writer:
                data = await reader.read(65536)
                if not data:
                    break
                self._received(channel, link, data)
        finally:
            ticker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await ticker
            if channel.writer is writer:
                channel.writer = None
                log.warning("device disconnected", extra={"device": channel.device.id})

    def _received(self, channel: Channel, link: Link, data: bytes) -> None:
        delivered = False
        for event in link.receive_data(data, time.monotonic()):
            if isinstance(event, Delivered):
                delivered = True
                self._deliver(channel, event.body)
            elif isinstance(event, Dropped):
                channel.dropped[event.reason] = channel.dropped.get(event.reason, 0) + 1
        channel.last_heard = time.time()
        if delivered:
            self._save(channel)
        self._flush(channel)

    def _deliver(self, channel: Channel, body: bytes) -> None:
        role = channel.device.role
        try:
            message = decode_from_device(role, body)
        except DeviceMessageError as exc:
            channel.dropped["invalid"] = channel.dropped.get("invalid", 0) + 1
            log.warning("device message refused", extra={"device": channel.device.id,
                                                         "reason": str(exc)[:200]})  # fmt: skip
            return
        if isinstance(message, DeviceFault):
            code = message.code
            if message.cleared:
                channel.faults = [f for f in channel.faults if f != code]
            elif code not in channel.faults:
                channel.faults.append(code)
        if channel.listener is not None:
            channel.listener.device_message(role, message)

    async def _tick(self, channel: Channel, link: Link, writer: asyncio.StreamWriter) -> None:
        while True:
            delay = max(0.0, link.next_deadline() - time.monotonic())
            await asyncio.sleep(delay)
            down = link.tick(time.monotonic())
            self._flush(channel)
            if isinstance(down, LinkDown):
                log.warning(
                    "device link down",
                    extra={"device": channel.device.id, "silent_for": round(down.silent_for, 3)},
                )
                writer.close()
                return

    def _save(self, channel: Channel) -> None:
        """Keep the session and the last seq received (on the journal's writer thread; the
        message was handled already — a repeat after a crash is dropped by its round)."""
        if self.journal is None or channel.link is None or channel.session is None:
            return
        state = {"session": channel.session, "received": channel.link.received}
        task = asyncio.ensure_future(
            self.journal.asave_state(_state_owner(channel.device.id), STATE_KEY, state)
        )
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
