"""Encode and decode wire frames, turning every bad frame into a ``ProtocolError`` with a
stable code — never an exception that could reach the table or desynchronise it."""

from __future__ import annotations

from typing import Final, cast

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
]

MALFORMED_FRAME: Final = "malformed_frame"  # not MessagePack at all
INVALID_MESSAGE: Final = "invalid_message"  # MessagePack, but not a valid message
TEXT_FRAME: Final = "text_frame"  # the protocol is binary frames only

_encoder = msgspec.msgpack.Encoder()
_client_decoder = msgspec.msgpack.Decoder(ClientMessage)
_server_decoder = msgspec.msgpack.Decoder(ServerMessage)


class ProtocolError(Exception):
    """A frame the server cannot accept; ``code`` goes to the client verbatim."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def encode(message: ServerMessage | ClientMessage) -> bytes:
    return _encoder.encode(message)


def decode_client(frame: bytes | str) -> ClientMessage:
    """Decode one client frame, or raise ``ProtocolError`` saying what is wrong and where
    (e.g. "Expected `int` >= 1 - at `$.amount`")."""
    if isinstance(frame, str):
        raise ProtocolError(TEXT_FRAME, "send binary MessagePack frames, not text")
    try:
        return cast(ClientMessage, _client_decoder.decode(frame))
    except msgspec.ValidationError as exc:
        raise ProtocolError(INVALID_MESSAGE, str(exc)) from None
    except msgspec.DecodeError as exc:
        raise ProtocolError(MALFORMED_FRAME, f"not a MessagePack message: {exc}") from None


def decode_server(frame: bytes) -> ServerMessage:
    """Decode a server frame (the bot and the tests are clients too)."""
    return cast(ServerMessage, _server_decoder.decode(frame))
