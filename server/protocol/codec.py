"""Encode and decode wire frames, turning every bad frame into a ``ProtocolError`` with a
stable code — never an exception that could reach the table or desynchronise it."""

from __future__ import annotations

from typing import Final

import msgspec

from server.protocol.messages import ClientMessage, ServerMessage

__all__ = [
    "INVALID_MESSAGE",
    "MALFORMED_FRAME",
    "TEXT_FRAME",
    "ProtocolError",
    "decode_client",
    "decode_server",
    "encode",
    "readable_ref",
]

MALFORMED_FRAME: Final = "malformed_frame"  # not MessagePack at all
INVALID_MESSAGE: Final = "invalid_message"  # MessagePack, but not a valid message
TEXT_FRAME: Final = "text_frame"  # the protocol is binary frames only

_encoder = msgspec.msgpack.Encoder()
# Typed as what they decode: msgspec 0.23 infers it from the union, 0.22 does not (a cast
# at each call would be redundant under the one and needed under the other).
_client_decoder: msgspec.msgpack.Decoder[ClientMessage] = msgspec.msgpack.Decoder(ClientMessage)
_server_decoder: msgspec.msgpack.Decoder[ServerMessage] = msgspec.msgpack.Decoder(ServerMessage)


class ProtocolError(Exception):
    """A frame the server cannot accept; ``code`` goes to the client verbatim, and ``ref``
    is the frame's ``ref`` when it could be read (the reply echoes it, docs/protocol.md)."""

    def __init__(self, code: str, message: str, ref: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.ref = ref


def encode(message: ServerMessage | ClientMessage) -> bytes:
    return _encoder.encode(message)


def decode_client(frame: bytes | str) -> ClientMessage:
    """Decode one client frame, or raise ``ProtocolError`` saying what is wrong and where
    (e.g. "Expected `int` >= 1 - at `$.amount`")."""
    if isinstance(frame, str):
        raise ProtocolError(TEXT_FRAME, "send binary MessagePack frames, not text")
    try:
        return _client_decoder.decode(frame)
    except msgspec.ValidationError as exc:
        raise ProtocolError(INVALID_MESSAGE, str(exc), readable_ref(frame)) from None
    except msgspec.DecodeError as exc:
        message = f"not a MessagePack message: {exc}"
        raise ProtocolError(MALFORMED_FRAME, message, readable_ref(frame)) from None
    except RecursionError:
        # msgspec's decoder recurses, and CPython's recursion limit stops it well before the
        # C stack is at risk; no valid message nests more than a few levels.
        message = "nested too deeply: no message nests more than a few levels"
        raise ProtocolError(INVALID_MESSAGE, message, readable_ref(frame)) from None


_MAX_REF: Final = 2**31


def readable_ref(frame: bytes) -> int | None:
    """The top-level ``ref`` of a frame that is not a valid message, when it can be read.

    Walks the frame's outer map without recursion (a count of items still to skip), so a
    frame nested too deep for the decoder still yields its ``ref``; None for anything that
    is not a map holding an integer ``ref`` in 0 … 2^31."""
    data = bytes(frame)
    try:
        count, pos = _map_header(data, 0)
        for _ in range(count):
            key_start = pos
            pos = _skip(data, pos)
            if data[key_start:pos] == b"\xa3ref":
                ref, _ = _int_at(data, pos)
                return ref if ref is not None and 0 <= ref <= _MAX_REF else None
            pos = _skip(data, pos)
    except (IndexError, ValueError):
        return None
    return None


def _map_header(data: bytes, pos: int) -> tuple[int, int]:
    """(entries, position after the header) of the map at ``pos``."""
    b = data[pos]
    if 0x80 <= b <= 0x8F:
        return b & 0x0F, pos + 1
    if b in (0xDE, 0xDF):
        size = 2 if b == 0xDE else 4
        return int.from_bytes(data[pos + 1 : pos + 1 + size], "big"), pos + 1 + size
    raise ValueError("not a map")


def _int_at(data: bytes, pos: int) -> tuple[int | None, int]:
    b = data[pos]
    if b <= 0x7F:
        return b, pos + 1
    if b >= 0xE0:
        return b - 0x100, pos + 1
    if 0xCC <= b <= 0xD3:
        size = 1 << ((b - 0xCC) % 4)
        raw = data[pos + 1 : pos + 1 + size]
        if len(raw) != size:
            raise ValueError("truncated")
        return int.from_bytes(raw, "big", signed=b >= 0xD0), pos + 1 + size
    return None, pos


# Bytes after the marker that a fixed-size value occupies.
_FIXED = {
    0xC0: 0, 0xC2: 0, 0xC3: 0, 0xCA: 4, 0xCB: 8, 0xCC: 1, 0xCD: 2, 0xCE: 4, 0xCF: 8,
    0xD0: 1, 0xD1: 2, 0xD2: 4, 0xD3: 8, 0xD4: 2, 0xD5: 3, 0xD6: 5, 0xD7: 9, 0xD8: 17,
}  # fmt: skip
# Markers followed by a length of this many bytes, then that many bytes of payload
# (ext types: one more byte, the type).
_SIZED = {
    0xC4: (1, 0), 0xC5: (2, 0), 0xC6: (4, 0), 0xC7: (1, 1), 0xC8: (2, 1), 0xC9: (4, 1),
    0xD9: (1, 0), 0xDA: (2, 0), 0xDB: (4, 0),
}  # fmt: skip


def _skip(data: bytes, pos: int) -> int:
    """The position after the value at ``pos``, containers included, without recursion."""
    pending = 1
    while pending:
        pending -= 1
        b = data[pos]
        if b <= 0x7F or b >= 0xE0:
            pos += 1
        elif b <= 0x8F:
            pending += 2 * (b & 0x0F)
            pos += 1
        elif b <= 0x9F:
            pending += b & 0x0F
            pos += 1
        elif b <= 0xBF:
            pos += 1 + (b & 0x1F)
        elif b in _FIXED:
            pos += 1 + _FIXED[b]
        elif b in _SIZED:
            size, extra = _SIZED[b]
            length = int.from_bytes(data[pos + 1 : pos + 1 + size], "big")
            pos += 1 + size + extra + length
        elif b in (0xDC, 0xDD, 0xDE, 0xDF):
            size = 2 if b in (0xDC, 0xDE) else 4
            items = int.from_bytes(data[pos + 1 : pos + 1 + size], "big")
            pending += items * (2 if b >= 0xDE else 1)
            pos += 1 + size
        else:
            raise ValueError(f"not MessagePack: {b:#x}")
        if pos > len(data):
            raise ValueError("truncated")
    return pos


def decode_server(frame: bytes) -> ServerMessage:
    """Decode a server frame (the bot and the tests are clients too)."""
    return _server_decoder.decode(frame)
