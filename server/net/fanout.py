"""Fan-out: one table event to many connections, as cheaply as the kernel allows.

A table event is encoded once (MessagePack) and framed once: a server's WebSocket frames
are not masked (RFC 6455 5.1), so the same bytes — a binary frame header and the payload —
go to every viewer. ``fanout`` writes them straight to each open connection's transport in
one pass, checking per connection only what must be checked: the connection is open, not
closing, and its outgoing buffer is not backed up (a viewer that fell too far behind is
closed with 4009 and may resume). This replaces websockets' per-connection frame building,
which is safe here because compression is off and the server never sends fragmented
messages; the ordering with websockets' own writes holds because both write synchronously.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from typing import Protocol

__all__ = ["Target", "fanout", "ws_binary_frame"]


def ws_binary_frame(payload: bytes) -> bytes:
    """A final, unmasked binary frame (opcode 2) carrying ``payload`` (RFC 6455 5.2)."""
    n = len(payload)
    if n < 126:
        header = bytes((0x82, n))
    elif n < 1 << 16:
        header = struct.pack("!BBH", 0x82, 126, n)
    else:
        header = struct.pack("!BBQ", 0x82, 127, n)
    return header + payload


class Target(Protocol):
    def write_wire(self, wire: bytes) -> bool:
        """Write a framed message if the connection can take it; False if it could not."""


def fanout(targets: Iterable[Target], payload: bytes) -> int:
    """Frame ``payload`` once and write it to every target; returns how many took it."""
    wire = ws_binary_frame(payload)
    return sum(1 for target in targets if target.write_wire(wire))
