"""The device link's frames: bytes in, frames out, sans-I/O (like h11), the same bytes on a TCP
connection and on a serial line (docs/devices.md, "Frames").

    offset  size  field
    0       2     magic b"CD"
    2       1     version (1)
    3       1     flags: 1 = ACK_ONLY (no body, seq 0), 2 = MAC (a 16-byte MAC follows the
                  CRC), 4 = CONTROL (a body outside the sequence, seq 0: the hello and its
                  answer, which say where the sequences resume)
    4       4     body length, at most MAX_BODY
    8       4     seq: this direction's sequence number of the body (0 in an ack-only frame)
    12      4     ack: the highest sequence number received in order from the other side
    16      4     CRC-32 of the 16 bytes before it (the header's own check)
    20      len   body: one MessagePack message (``server.devices.messages``)
    20+len  4     CRC-32 of every byte before it
    24+len  16    MAC (flag 2): HMAC-SHA256 of every byte before it under the device's key,
                  truncated to 16 bytes

All integers are big-endian. A serial line has no message boundaries and may deliver garbage
(line noise, a device rebooting mid-frame): the decoder resynchronises on the magic, and a
frame whose CRC fails is reported and skipped byte by byte. The header has a CRC of its own, so
a corrupted length is caught at once instead of making the decoder wait for bytes that belong
to the frames after it. It never raises and never buffers more than ``MAX_FRAME`` bytes of an
incomplete frame: a header announcing a larger body is refused at once.
"""

from __future__ import annotations

import hashlib
import hmac
import struct
import zlib
from dataclasses import dataclass
from typing import Final

__all__ = [
    "ACK_ONLY",
    "CONTROL",
    "HEADER",
    "MAC",
    "MAC_SIZE",
    "MAGIC",
    "MAX_BODY",
    "MAX_FRAME",
    "VERSION",
    "Corrupt",
    "Frame",
    "FrameDecoder",
    "encode_frame",
    "frame_mac",
]

MAGIC: Final = b"CD"
VERSION: Final = 1
ACK_ONLY: Final = 1
MAC: Final = 2
CONTROL: Final = 4
MAC_SIZE: Final = 16
MAX_BODY: Final = 16 * 1024  # a device message is a few dozen bytes; a status dump, a few KiB
_FIELDS = struct.Struct(">2sBBIII")
_CRC = struct.Struct(">I")
HEADER: Final = _FIELDS.size + _CRC.size  # 20
MAX_FRAME: Final = HEADER + MAX_BODY + _CRC.size + MAC_SIZE
_KNOWN_FLAGS = ACK_ONLY | MAC | CONTROL


@dataclass(frozen=True, slots=True)
class Frame:
    """One frame whose CRC is right. ``signed`` is every byte the MAC covers (the header, the
    body and the CRC) and ``mac`` the MAC it carries (empty without flag 2): the link checks
    it once it knows the device's key."""

    flags: int
    seq: int
    ack: int
    signed: bytes
    mac: bytes

    @property
    def body(self) -> bytes:
        return self.signed[HEADER : -_CRC.size]

    @property
    def ack_only(self) -> bool:
        return bool(self.flags & ACK_ONLY)

    @property
    def control(self) -> bool:
        return bool(self.flags & CONTROL)


@dataclass(frozen=True, slots=True)
class Corrupt:
    """Bytes the decoder skipped: ``reason`` says why (garbage before a magic, a bad CRC, a bad
    version, flags or length), ``skipped`` how many bytes were dropped."""

    reason: str
    skipped: int


def frame_mac(key: bytes, signed: bytes) -> bytes:
    return hmac.new(key, signed, hashlib.sha256).digest()[:MAC_SIZE]


def encode_frame(
    seq: int, ack: int, body: bytes = b"", *, key: bytes | None = None, control: bool = False
) -> bytes:
    """One frame; ``body`` empty makes an ack-only frame, ``control`` a control frame (both
    with ``seq`` 0); ``key`` adds the MAC."""
    if len(body) > MAX_BODY:
        raise ValueError(f"a body of {len(body)} bytes exceeds {MAX_BODY}")
    if control and not body:
        raise ValueError("a control frame has a body")
    if (control or not body) and seq:
        raise ValueError("an ack-only or control frame has seq 0")
    if body and not control and not seq:
        raise ValueError("a sequenced frame has a seq from 1")  # else every receiver drops it
    flags = (CONTROL if control else 0 if body else ACK_ONLY) | (MAC if key is not None else 0)
    fields = _FIELDS.pack(MAGIC, VERSION, flags, len(body), seq, ack)
    head = fields + _CRC.pack(zlib.crc32(fields)) + body
    framed = head + _CRC.pack(zlib.crc32(head))
    return framed + frame_mac(key, framed) if key is not None else framed


class FrameDecoder:
    """Feed it bytes as they arrive; it returns the frames (and skipped stretches) complete so
    far, in order, and keeps at most one incomplete frame."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    @property
    def buffered(self) -> int:
        return len(self._buffer)

    def feed(self, data: bytes) -> list[Frame | Corrupt]:
        buffer = self._buffer
        buffer += data
        out: list[Frame | Corrupt] = []
        while buffer:
            start = buffer.find(MAGIC)
            if start < 0:
                # No magic: keep a last byte that may be the first half of one.
                keep = 1 if buffer[-1:] == MAGIC[:1] else 0
                if len(buffer) > keep:
                    out.append(Corrupt("no frame start (magic)", len(buffer) - keep))
                    del buffer[: len(buffer) - keep]
                break
            if start:
                out.append(Corrupt("bytes before a frame start (magic)", start))
                del buffer[:start]
            if len(buffer) < HEADER:
                break
            _, version, flags, length, seq, ack = _FIELDS.unpack_from(buffer)
            (header_crc,) = _CRC.unpack_from(buffer, _FIELDS.size)
            if zlib.crc32(memoryview(buffer)[: _FIELDS.size]) != header_crc:
                reason: str | None = "header CRC mismatch"
            else:
                reason = _bad_header(version, flags, length, seq)
            if reason is not None:
                out.append(Corrupt(reason, 1))
                del buffer[:1]  # resynchronise on the next magic
                continue
            size = HEADER + length + _CRC.size + (MAC_SIZE if flags & MAC else 0)
            if len(buffer) < size:
                break
            end = HEADER + length
            (crc,) = _CRC.unpack_from(buffer, end)
            if zlib.crc32(memoryview(buffer)[:end]) != crc:
                out.append(Corrupt("CRC mismatch", 1))
                del buffer[:1]
                continue
            signed_end = end + _CRC.size
            out.append(
                Frame(flags, seq, ack, bytes(buffer[:signed_end]), bytes(buffer[signed_end:size]))
            )
            del buffer[:size]
        return out


def _bad_header(version: int, flags: int, length: int, seq: int) -> str | None:
    if version != VERSION:
        return f"version {version}, not {VERSION}"
    if flags & ~_KNOWN_FLAGS:
        return f"unknown flags {flags:#04x}"
    if length > MAX_BODY:
        return f"a body of {length} bytes exceeds {MAX_BODY}"
    if bool(flags & ACK_ONLY) != (length == 0) or (flags & ACK_ONLY and flags & CONTROL):
        return "an ack-only frame, and only it, has no body"
    if flags & (ACK_ONLY | CONTROL) and seq:
        return "an ack-only or control frame has seq 0"
    if not flags & (ACK_ONLY | CONTROL) and not seq:
        return "a sequenced frame has a seq from 1"
    return None
