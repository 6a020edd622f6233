"""The server frames a message once for every viewer (server.net.fanout): the bytes must be
exactly the unmasked binary frame RFC 6455 5.2 defines, at every length encoding; and a
connection's frames of one event-loop turn go out in one write (server.net.connection)."""

import asyncio

import pytest
from websockets.frames import Frame, Opcode
from websockets.protocol import State
from websockets.streams import StreamReader

from server.net.connection import ConnectionLimits, _Session
from server.net.fanout import fanout, ws_binary_frame
from server.net.metrics import Metrics


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


class _Transport:
    def __init__(self, log: list[object]) -> None:
        self.log = log

    def write(self, data: bytes) -> None:
        self.log.append(data)

    def get_write_buffer_size(self) -> int:
        return 0


class _Ws:
    """What a session touches of a websockets ``ServerConnection``."""

    def __init__(self) -> None:
        self.log: list[object] = []
        self.transport = _Transport(self.log)
        self.protocol = self  # (websockets keeps the state on its protocol object)
        self.state = State.OPEN

    async def close(self, code: int, reason: str) -> None:
        self.log.append(("close", code))
        self.state = State.CLOSING


def test_a_connections_frames_of_one_turn_go_out_in_one_write_and_before_a_close() -> None:
    """Events dealt in one step (a baccarat hand's cards) reach a connection in one
    ``transport.write`` at the end of the event loop's turn; frames taken before the
    connection is closed still go out ahead of the close frame, none after it; and the
    frames waiting count toward the slow-viewer limit; a reply goes at once."""

    async def scenario() -> None:
        ws = _Ws()
        session = _Session(ws, None, Metrics(), ConnectionLimits(max_backlog=100))  # type: ignore[arg-type]
        frames = [ws_binary_frame(bytes([n]) * 30) for n in range(3)]
        for frame in frames:
            assert session.write_wire(frame)
        assert ws.log == []  # not yet: at the end of the turn
        await asyncio.sleep(0)
        assert ws.log == [b"".join(frames)]
        assert session.write_wire(frames[0])
        session._close(4008, "flood")
        assert not session.write_wire(frames[1])  # closing: refused
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        assert ws.log[1:] == [frames[0], ("close", 4008)]
        # A message to the connection alone (a reply) goes at once, after what waits.
        direct = _Session(_Ws(), None, Metrics(), ConnectionLimits())  # type: ignore[arg-type]
        assert direct.write_wire(frames[0])
        direct.send_frame(b"reply")
        assert direct.ws.log == [frames[0] + ws_binary_frame(b"reply")]
        slow = _Session(_Ws(), None, Metrics(), ConnectionLimits(max_backlog=100))  # type: ignore[arg-type]
        for frame in (*frames, frames[0]):  # 128 bytes waiting, past the limit of 100
            assert slow.write_wire(frame)
        assert not slow.write_wire(frames[1]) and slow.close_code == 4009

    asyncio.run(scenario())
