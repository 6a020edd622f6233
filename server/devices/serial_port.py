"""Serial lines on asyncio: a pyserial port as a ``StreamReader``/``StreamWriter`` pair, so the
hub and the simulators run the same code over a serial line as over TCP (docs/devices.md,
"Transports").

A port is a device path (``/dev/ttyUSB0``, a pty) or ``socket://HOST:PORT`` (a terminal
server, or a test). Opening it may block (pyserial's ``socket://`` connects with a 5-second
timeout; a USB adapter's driver may take a moment), so it is opened on a worker thread, once
per (re)connection, and closed on one too (a serial driver's close waits for its output to
drain; pyserial's ``socket://`` close sleeps 0.3 s). Reading and writing never block and use
no thread: the port is put in pyserial's non-blocking mode (``timeout=0``,
``write_timeout=0``) and the event loop watches its file descriptor
(``loop.add_reader``/``add_writer``), the way asyncio's own pipe and socket transports
work. That needs a descriptor the selector can watch, which a POSIX serial port and a socket
have; the server runs on Linux (README), and the URL handlers with no descriptor of their
own (``loop://``, ``rfc2217://``, which reads on a thread of its own) are refused by the
configuration.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, Final

import serial

__all__ = ["SUPPORTED_URL_SCHEMES", "SerialTransport", "check_port_name", "open_serial_connection"]

SUPPORTED_URL_SCHEMES: Final = ("socket",)
_READ_SIZE = 65536
_HIGH_WATER = 64 * 1024  # bytes waiting to be written before the writer's drain() waits


def check_port_name(port: str) -> str | None:
    """Why ``port`` cannot be a device's serial line, or None: a device path, or a URL of a
    handler that gives the event loop a file descriptor to watch."""
    if not port.strip():
        return "the serial port is empty"
    scheme, sep, _ = port.partition("://")
    supported = ", ".join(f"{s}://HOST:PORT" for s in SUPPORTED_URL_SCHEMES)
    if sep and scheme not in SUPPORTED_URL_SCHEMES:
        return f"{scheme}:// is not supported (a device path, or {supported})"
    if not sep and not port.startswith("/"):
        # Relative to what? Not the working directory the server happens to start in.
        return f"a device path must be absolute, such as /dev/ttyUSB0 (or {supported})"
    return None


class SerialTransport(asyncio.Transport):
    """An asyncio transport over an open, non-blocking pyserial port.

    Bytes are read when the loop says the descriptor is readable and written when it says it
    is writable: pyserial's ``write`` with ``write_timeout=0`` returns what the kernel took,
    and retries (spins) on EAGAIN, so it is only called once the loop has seen the
    descriptor writable. A read or write that fails (a USB adapter unplugged, the other end
    of a pty closed, a terminal server hanging up) ends the line like a peer closing a TCP
    connection: the reader gets what arrived, then end of file; ``get_extra_info("error")``
    says why.
    """

    def __init__(
        self, loop: asyncio.AbstractEventLoop, protocol: asyncio.Protocol, port: Any
    ) -> None:
        self._info: dict[str, Any] = {"serial": port, "peername": port.portstr}
        super().__init__(extra=self._info)
        self._loop, self._protocol, self._port = loop, protocol, port
        self._fd: int = port.fileno()
        self._buffer = bytearray()
        self._closing = False
        self._closed = False
        self._reading = False
        self._writing = False
        self._protocol_paused = False
        loop.call_soon(protocol.connection_made, self)
        loop.call_soon(self.resume_reading)

    # --- reading ------------------------------------------------------------------------------

    def is_reading(self) -> bool:
        return self._reading

    def pause_reading(self) -> None:
        if self._reading:
            self._loop.remove_reader(self._fd)
            self._reading = False

    def resume_reading(self) -> None:
        if not self._reading and not self._closing:
            self._loop.add_reader(self._fd, self._read_ready)
            self._reading = True

    def _read_ready(self) -> None:
        try:
            data = self._port.read(_READ_SIZE)
        except (serial.SerialException, OSError) as exc:
            self._fail(exc)
            return
        if data:
            self._protocol.data_received(data)

    # --- writing ------------------------------------------------------------------------------

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if self._closing or not data:
            return
        self._buffer += data
        if not self._writing:
            self._loop.add_writer(self._fd, self._write_ready)
            self._writing = True
        if not self._protocol_paused and len(self._buffer) > _HIGH_WATER:
            self._protocol_paused = True
            self._protocol.pause_writing()

    def _write_ready(self) -> None:
        try:
            sent = self._port.write(bytes(self._buffer))
        except (serial.SerialException, OSError) as exc:
            self._fail(exc)
            return
        del self._buffer[: sent or 0]
        if self._protocol_paused and len(self._buffer) <= _HIGH_WATER // 4:
            self._protocol_paused = False
            self._protocol.resume_writing()
        if not self._buffer:
            self._loop.remove_writer(self._fd)
            self._writing = False
            if self._closing:
                self._finish(None)

    def get_write_buffer_size(self) -> int:
        return len(self._buffer)

    def can_write_eof(self) -> bool:
        return False

    # --- closing ------------------------------------------------------------------------------

    def is_closing(self) -> bool:
        return self._closing

    def close(self) -> None:
        """Close once what was written has gone out."""
        if self._closing:
            return
        self._closing = True
        self.pause_reading()
        if not self._buffer:
            self._loop.call_soon(self._finish, None)

    def abort(self) -> None:
        self._closing = True
        self._buffer.clear()
        self.pause_reading()
        self._finish(None)

    def _fail(self, exc: Exception) -> None:
        self._info["error"] = f"serial line {self._port.portstr}: {exc}"
        self._closing = True
        self._buffer.clear()
        self.pause_reading()
        self._finish(None)

    def _finish(self, exc: Exception | None) -> None:
        if self._closed:
            return
        self._closed = True
        if self._writing:
            self._loop.remove_writer(self._fd)
            self._writing = False
        # The protocol learns the line is closed once the port is (so a reopen finds it free).
        closing = self._loop.run_in_executor(None, self._close_port)
        closing.add_done_callback(lambda _: self._protocol.connection_lost(exc))

    def _close_port(self) -> None:
        with contextlib.suppress(Exception):
            self._port.close()


def _open(port: str, baudrate: int) -> Any:
    # exclusive: a POSIX port is locked (flock) so that a second process cannot read half of
    # the device's bytes; pyserial ignores it for socket://.
    return serial.serial_for_url(
        port, baudrate=baudrate, timeout=0, write_timeout=0, exclusive=True
    )


async def open_serial_connection(
    port: str, baudrate: int = 9600
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Open ``port`` (a device path or ``socket://HOST:PORT``) at ``baudrate``, 8N1, and
    return its reader and writer. ``serial.SerialException`` (an ``OSError``) if it cannot
    be opened."""
    problem = check_port_name(port)
    if problem is not None:
        raise ValueError(problem)
    opened = await asyncio.to_thread(_open, port, baudrate)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(loop=loop)
    protocol = asyncio.StreamReaderProtocol(reader, loop=loop)
    try:
        transport = SerialTransport(loop, protocol, opened)
    except Exception:
        opened.close()
        raise
    writer = asyncio.StreamWriter(transport, protocol, reader, loop)
    return reader, writer
