"""The server frames a message once for every viewer (server.net.fanout): the bytes must be
exactly the unmasked binary frame RFC 6455 5.2 defines, at every length encoding."""

import pytest
from websockets.frames import Frame, Opcode
from websockets.streams import StreamReader

from server.net.fanout import fanout, ws_binary_frame


@pytest.mark.parametrize("size", [0, 1, 125, 126, 127, 65_535, 65_536, 200_000])
def test_frames_parse_back_with_websockets_own_parser(size: int) -> None:
    payload = bytes(range(256)) * (size // 256) + bytes(size % 256)
    reader = StreamReader()
    reader.feed_data(ws_binary_frame(payload))
    parser = Frame.parse(reader.read_exact, mask=False)
    try:
        next(parser)
    except StopIteration as done:
        frame = done.value
    assert frame.opcode is Opcode.BINARY and frame.fin and frame.data == payload


class _Target:
    def __init__(self, accepts: bool) -> None:
        self.accepts = accepts
        self.wires: list[bytes] = []

    def write_wire(self, wire: bytes) -> bool:
        if self.accepts:
            self.wires.append(wire)
        return self.accepts


def test_fanout_frames_once_and_counts_who_took_it() -> None:
    targets = [_Target(True), _Target(False), _Target(True)]
    assert fanout(targets, b"hello") == 2
    assert targets[0].wires == targets[2].wires == [ws_binary_frame(b"hello")]
    assert targets[0].wires[0] is targets[2].wires[0]  # the very same bytes
