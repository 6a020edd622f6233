"""Devices on asyncio: the server's side of the device link (docs/devices.md).

One ``DeviceHub`` per server listens on ``[device_link]`` ``host:port`` (with TLS and
client certificates when configured) and opens every device's serial line (re-opening it
after it fails, with a back-off). Each TCP connection starts with the device's hello
(``DeviceSessions``): a refused one is answered, logged and closed. An accepted one becomes
the device's ``Channel`` connection, replacing an older one; the channel's ``Link`` outlives
connections, so what either side had not acknowledged is sent again after a reconnect. A
serial line runs the same link, its hello accepted whenever the device sends one (a line has
no connections: a device that restarts says hello on the same open port). Delivered bodies
are validated for the device's role and handed to the table that uses the device
(``Listener``); the session and the last seq received are kept in the journal so a restarted
server neither accepts an older session nor applies a message twice. A device of a vendor's
protocol (``protocol = "cammegh"``) is served through its adapter instead of the link
(``server.devices.adapters``): its lines become the same role messages. What the hub keeps
of each device (its ``Channel``, its line) is ``server.devices.channels``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
import time
from collections.abc import Iterable
from typing import Any, Final

from server.devices.adapters import ADAPTERS, FRAMED, Received
from server.devices.channels import Channel, Listener, SerialLine, VendorLine
from server.devices.frames import Corrupt, Frame, FrameDecoder
from server.devices.handshake import (
    NOT_A_HELLO,
    UNAUTHENTICATED,
    Accepted,
    DeviceSessions,
    KnownDevice,
    Refusal,
)
from server.devices.link import Control, Delivered, Dropped, Link, LinkDown
from server.devices.messages import (
    DeviceFault,
    DeviceMessageError,
    decode_from_device,
    decode_hello,
    encode_message,
)
from server.devices.serial_port import open_serial_connection
from server.devices.tls import common_name
from server.journal.journal import Journal

__all__ = ["WRONG_TRANSPORT", "Channel", "DeviceHub", "Listener", "SerialLine", "VendorLine"]

log = logging.getLogger("croupier.devices")
HELLO_SECONDS = 5.0  # a connection that sends no hello (or TLS handshake) in this time is closed
GARBAGE_BEFORE_HELLO = 1024  # bytes a TCP peer may send that are no frame, before hello
STATE_KEY = "link"
# A device configured on a serial line said hello over TCP, or another device's hello came
# on a serial line.
WRONG_TRANSPORT: Final = "wrong_transport"
REOPEN_FIRST = 0.5  # seconds before a failed serial line is opened again; doubled each time
REOPEN_MOST = 30.0


class _Garbage(Exception):
    """More bytes that are no frame than a peer may send before its hello."""

    def __init__(self, skipped: int) -> None:
        super().__init__(skipped)
        self.skipped = skipped


def _state_owner(device_id: str) -> str:
    return f"device:{device_id}"


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
        lines: Iterable[SerialLine] = (),
        tls: ssl.SSLContext | None = None,
    ) -> None:
        devices = list(devices)
        self.host, self.port = host, port
        self.silence_limit = silence_limit
        self.journal = journal
        self.sessions = DeviceSessions(
            devices,
            retransmit_after=retransmit_after,
            heartbeat_every=heartbeat_every,
            silence_limit=silence_limit,
        )
        self.channels = {d.id: Channel(d) for d in devices}
        self.refused: dict[str, int] = {}  # refusal code -> count
        self.lines: dict[str, SerialLine] = {}  # device id -> its serial line
        self.tls: ssl.SSLContext | None = None
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._stopping = False
        self.use_transports(lines, tls)
        if journal is not None:
            for device in devices:
                saved = journal.load_state(_state_owner(device.id), STATE_KEY)
                if saved is not None:
                    self.sessions.restore(
                        device.id, int(saved["session"]), int(saved["received"]), time.monotonic()
                    )
                    self.channels[device.id].session = int(saved["session"])

    def use_transports(self, lines: Iterable[SerialLine], tls: ssl.SSLContext | None) -> None:
        """The devices on serial lines, and TLS on the listener (before ``start``)."""
        self.tls = tls
        self.lines = {line.device: line for line in lines}
        for channel in self.channels.values():
            line = self.lines.get(channel.device.id)
            channel.transport = "tls" if tls is not None else "tcp"
            channel.vendor = None
            if line is not None:
                channel.transport = f"serial:{line.port}"
                if line.protocol != FRAMED:
                    channel.vendor = VendorLine(ADAPTERS[line.protocol](), self.silence_limit)

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
        if channel.vendor is not None:
            # The adapter notes what the command means (a round to tag results with) even when
            # the line is down; a vendor's line has no queue: the table's timeouts ask again.
            data = channel.vendor.adapter.command(message)
            writer = channel.vendor.writer
            if data and writer is not None and not writer.is_closing():
                writer.write(data)
            return
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
        self._server = await asyncio.start_server(self._tcp, self.host, self.port)
        sockets = self._server.sockets
        if sockets:
            self.port = sockets[0].getsockname()[1]
        log.info(
            "devices listening",
            extra={"host": self.host, "port": self.port, "tls": self.tls is not None},
        )
        for line in self.lines.values():
            task = asyncio.create_task(self._serial_line(line), name=f"serial:{line.device}")
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def stop(self) -> None:
        # The server going away is not a device losing its link: nothing is reported.
        self._stopping = True
        if self._server is not None:
            self._server.close()
        for channel in self.channels.values():
            for writer in (channel.writer, channel.vendor.writer if channel.vendor else None):
                if writer is not None:
                    writer.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._server is not None:
            with contextlib.suppress(Exception):
                await self._server.wait_closed()

    def _refuse(self, refusal: Refusal, writer: asyncio.StreamWriter | None, peer: Any) -> None:
        """Count, log and answer a refused hello (``writer`` None: nothing can be answered)."""
        self.refused[refusal.code] = self.refused.get(refusal.code, 0) + 1
        log.warning(
            "device refused",
            extra={"code": refusal.code, "device": refusal.device, "peer": str(peer),
                   "reason": refusal.message},
        )  # fmt: skip
        if writer is not None and not writer.is_closing():
            writer.write(refusal.reply())

    # --- TCP (and TLS) ------------------------------------------------------------------------

    async def _tcp(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """One TCP connection: TLS first when configured, then the hello, then the link."""
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        peer = writer.get_extra_info("peername")
        try:
            certified: str | None = None
            if self.tls is not None:
                # The handshake runs here rather than in start_server so that a failed one is
                # counted and logged as a refusal like any other.
                try:
                    await writer.start_tls(self.tls, ssl_handshake_timeout=HELLO_SECONDS)
                except (ssl.SSLError, OSError, TimeoutError) as exc:
                    message = f"TLS handshake failed: {exc}"[:200]
                    self._refuse(Refusal(UNAUTHENTICATED, message), None, peer)
                    return
                certified = common_name(writer.get_extra_info("peercert"))
            try:
                hello = await asyncio.wait_for(
                    self._first_frame(reader, garbage_limit=GARBAGE_BEFORE_HELLO), HELLO_SECONDS
                )
            except _Garbage as exc:
                message = f"{exc.skipped} bytes that are no frame before a hello"
                self._refuse(Refusal(NOT_A_HELLO, message), None, peer)
                return
            if hello is None:
                return
            channel = self._hello(hello, writer, peer, certified=certified)
            if channel is None:
                await writer.drain()
                return
            await self._serve(channel, reader, writer)
        except (TimeoutError, ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            if task is not None:
                self._tasks.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _first_frame(
        self,
        reader: asyncio.StreamReader,
        *,
        control_only: bool = False,
        garbage_limit: int | None = None,
    ) -> Frame | None:
        """The connection's first frame (the device sends nothing else before the welcome);
        on a serial line (``control_only``), the first control frame: what the line carried
        before the device's hello (a session the server no longer serves, noise) is skipped.
        More than ``garbage_limit`` bytes that are no frame raise ``_Garbage`` (over TCP: a
        peer that has not said who it is gets little more of the event loop than a hello
        takes to decode)."""
        decoder = FrameDecoder()
        skipped = 0
        while True:
            data = await reader.read(4096)
            if not data:
                return None
            for item in decoder.feed(data):
                if isinstance(item, Frame) and (item.control or not control_only):
                    return item
                if isinstance(item, Corrupt) and garbage_limit is not None:
                    skipped += item.skipped
                    if skipped > garbage_limit:
                        raise _Garbage(skipped)

    def _hello(
        self,
        frame: Frame,
        writer: asyncio.StreamWriter,
        peer: Any,
        *,
        line: SerialLine | None = None,
        certified: str | None = None,
    ) -> Channel | None:
        """Accept a hello (the device's channel, its welcome queued) or refuse it (None)."""
        outcome = self._transport_refusal(frame, line, certified) or self.sessions.hello(
            frame, time.monotonic()
        )
        if isinstance(outcome, Refusal):
            self._refuse(outcome, writer, peer)
            return None
        return self._attach(outcome, writer)

    def _transport_refusal(
        self, frame: Frame, line: SerialLine | None, certified: str | None
    ) -> Refusal | None:
        """A hello that came the wrong way: over TLS without a client certificate naming the
        device, over TCP for a device on a serial line, or on another device's serial line.
        (A hello that cannot be read is left to ``DeviceSessions``, which says why.)"""
        try:
            claimed = decode_hello(frame.body).device
        except DeviceMessageError:
            return None
        known = self.sessions.devices.get(claimed)
        if known is not None and not known.key:
            # A vendor protocol's device has no key: a MAC under an empty key proves nothing.
            message = f"{claimed} speaks its vendor's protocol on a serial line, not this link"
            return Refusal(WRONG_TRANSPORT, message, claimed)
        if line is None and self.tls is not None and certified != claimed:
            if certified is None:
                message = "no client certificate (one with the device id as its common name)"
            else:
                message = f"the client certificate is {certified!r}'s, not {claimed!r}'s"
            return Refusal(UNAUTHENTICATED, message, claimed)
        if line is None and claimed in self.lines:
            message = f"{claimed} is configured on serial line {self.lines[claimed].port}"
            return Refusal(WRONG_TRANSPORT, message, claimed)
        if line is not None and claimed != line.device:
            message = f"serial line {line.port} is {line.device}'s, not {claimed}'s"
            return Refusal(WRONG_TRANSPORT, message, claimed)
        return None

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
        self._link_changed(channel, True, "")
        log.info(
            "device connected",
            extra={"device": channel.device.id, "session": accepted.session,
                   "resumed": accepted.resumed, "transport": channel.transport},
        )  # fmt: skip
        return channel

    async def _serve(
        self,
        channel: Channel,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        serial: bool = False,
    ) -> Frame | None:
        """Run the device's link until the connection ends; on a serial line, until the
        device says hello again (a restart): that hello's frame is returned."""
        link = channel.link
        assert link is not None
        ticker = asyncio.create_task(self._tick(channel, link, writer, close=not serial))
        hello: Frame | None = None
        try:
            while channel.writer is writer and hello is None:
                data = await reader.read(65536)
                if not data:
                    break
                hellos = self._received(channel, link, data)
                if serial and hellos:
                    hello = hellos[-1]
        finally:
            ticker.cancel()
            await asyncio.wait([ticker])  # not suppress(): this task's own cancel goes on
            if channel.writer is writer and hello is None:
                channel.writer = None
                log.warning("device disconnected", extra={"device": channel.device.id})
                self._link_changed(channel, False, "connection")
        return hello

    def _link_changed(self, channel: Channel, up: bool, cause: str) -> None:
        """Tell the device's listener that its link came up or went down (once each way)."""
        if self._stopping or (channel.reported_up == up and not up):
            return
        channel.reported_up = up
        notify = getattr(channel.listener, "device_link", None)
        if notify is not None:
            notify(up, cause, channel.session)

    def _received(self, channel: Channel, link: Link, data: bytes) -> list[Frame]:
        """Bytes from the device; the control frames among them (a hello)."""
        delivered = False
        hellos: list[Frame] = []
        for event in link.receive_data(data, time.monotonic()):
            if isinstance(event, Delivered):
                delivered = True
                self._deliver(channel, event.body)
            elif isinstance(event, Dropped):
                channel.count(event.reason)
            elif isinstance(event, Control) and event.frame is not None:
                hellos.append(event.frame)
        channel.last_heard = time.time()
        if delivered:
            self._save(channel)
        self._flush(channel)
        return hellos

    def _deliver(self, channel: Channel, body: bytes) -> None:
        role = channel.device.role
        try:
            message = decode_from_device(role, body)
        except DeviceMessageError as exc:
            channel.count("invalid")
            log.warning("device message refused", extra={"device": channel.device.id,
                                                         "reason": str(exc)[:200]})  # fmt: skip
            return
        self._dispatch(channel, message)

    def _dispatch(self, channel: Channel, message: Any) -> None:
        """A role message, from the link or an adapter, to the device's table."""
        if isinstance(message, DeviceFault):
            code = message.code
            if message.cleared:
                channel.faults = [f for f in channel.faults if f != code]
            elif code not in channel.faults:
                channel.faults.append(code)
        if channel.listener is not None:
            channel.listener.device_message(channel.device.role, message)

    async def _tick(
        self, channel: Channel, link: Link, writer: asyncio.StreamWriter, *, close: bool
    ) -> None:
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
                self._link_changed(channel, False, "heartbeat")
                if close:
                    writer.close()  # TCP: the device connects again
                # A serial line stays open: the device says hello on it again.
                return

    # --- serial lines -------------------------------------------------------------------------

    async def _serial_line(self, line: SerialLine) -> None:
        """Keep the device's serial line open: open it, serve it until it fails, open it
        again — after REOPEN_FIRST seconds, doubled after each attempt that heard nothing
        valid, up to REOPEN_MOST."""
        channel = self.channels[line.device]
        delay = REOPEN_FIRST
        while True:
            heard = channel.last_heard
            try:
                reader, writer = await open_serial_connection(line.port, line.baudrate)
            except (OSError, ValueError) as exc:  # serial.SerialException is an OSError
                log.warning(
                    "serial line cannot be opened",
                    extra={"device": line.device, "port": line.port, "error": str(exc)[:200],
                           "retry_in": delay},
                )  # fmt: skip
            else:
                log.info("serial line open", extra={"device": line.device, "port": line.port})
                try:
                    if channel.vendor is not None:
                        await self._vendor_line(channel, channel.vendor, reader, writer)
                    else:
                        await self._framed_line(line, reader, writer)
                    error = writer.get_extra_info("error") or "closed"
                except (ConnectionError, OSError) as exc:
                    error = str(exc)
                finally:
                    writer.close()
                    with contextlib.suppress(Exception):
                        await writer.wait_closed()
                log.warning(
                    "serial line lost",
                    extra={"device": line.device, "port": line.port, "error": error[:200],
                           "retry_in": delay},
                )  # fmt: skip
            if channel.last_heard != heard:
                delay = REOPEN_FIRST  # the line worked: a new failure starts the back-off again
            await asyncio.sleep(delay)
            delay = min(delay * 2, REOPEN_MOST)

    async def _framed_line(
        self, line: SerialLine, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        """The framed link on an open serial line: a hello whenever the device sends one."""
        hello = await self._first_frame(reader, control_only=True)
        while hello is not None:
            channel = self._hello(hello, writer, line.port, line=line)
            if channel is None:  # refused: the device may say hello again on the same line
                hello = await self._first_frame(reader, control_only=True)
                continue
            hello = await self._serve(channel, reader, writer, serial=True)

    async def _vendor_line(
        self,
        channel: Channel,
        vendor: VendorLine,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        """A vendor's device on an open serial line: its bytes through the adapter."""
        vendor.writer = writer
        vendor.adapter.line_opened()
        channel.connections += 1
        try:
            while True:
                now = time.monotonic()
                wait = None
                if vendor.up(now) and vendor.heard_at is not None:
                    wait = max(0.01, vendor.heard_at + vendor.silence_limit - now)
                try:
                    data = await asyncio.wait_for(reader.read(4096), wait)
                except TimeoutError:
                    log.warning(
                        "device link down",
                        extra={"device": channel.device.id, "silent_for": vendor.silence_limit},
                    )
                    continue
                if not data:
                    return
                self._vendor_received(channel, vendor, vendor.adapter.receive(data))
        finally:
            vendor.writer = None

    def _vendor_received(self, channel: Channel, vendor: VendorLine, received: Received) -> None:
        for issue in received.issues:
            if issue.dropped:
                channel.count(issue.reason)
            log.warning(
                "device line irregular",
                extra={"device": channel.device.id, "reason": issue.reason,
                       "line": issue.line, "dropped": issue.dropped},
            )  # fmt: skip
        if received.heard:
            now = time.monotonic()
            if not vendor.up(now):
                log.info("device connected", extra={"device": channel.device.id,
                                                    "transport": channel.transport})  # fmt: skip
            vendor.heard_at = now
            channel.last_heard = time.time()
        for message in received.messages:
            self._dispatch(channel, message)

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
