"""The device link (docs/devices.md, "Link"): every message delivered once and in order over a
channel that drops, duplicates, reorders and corrupts frames; MACs; heartbeats, silence and
resuming after a reconnect. Deterministic: time is passed in."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.devices.frames import FrameDecoder, encode_frame
from server.devices.link import Control, Delivered, Dropped, Link, LinkDown, LinkError

KEY = b"device-key-0123456789abcdef"


def split_frames(data: bytes) -> list[bytes]:
    """The frames in ``data``, each as its own bytes (the decoder finds the boundaries)."""
    out, decoder = [], FrameDecoder()
    for frame in decoder.feed(data):
        assert not hasattr(frame, "reason")
        out.append(frame.signed + frame.mac)  # type: ignore[union-attr]
    return out


class Channel:
    """Frames from one link to the other with the faults the seed chooses."""

    def __init__(self, rng: random.Random, loss: float, dup: float, reorder: float, corrupt: float) -> None:  # fmt: skip  # noqa: E501
        self.rng, self.loss, self.dup, self.reorder, self.corrupt = rng, loss, dup, reorder, corrupt
        self.in_flight: list[bytes] = []

    def put(self, data: bytes) -> None:
        for frame in split_frames(data):
            if self.rng.random() < self.loss:
                continue
            if self.rng.random() < self.corrupt:
                b = bytearray(frame)
                b[self.rng.randrange(len(b))] ^= 1 << self.rng.randrange(8)
                frame = bytes(b)
            copies = 2 if self.rng.random() < self.dup else 1
            for _ in range(copies):
                at = len(self.in_flight)
                if self.rng.random() < self.reorder and self.in_flight:
                    at = self.rng.randrange(len(self.in_flight))
                self.in_flight.insert(at, frame)

    def take(self) -> bytes:
        data, self.in_flight = b"".join(self.in_flight), []
        return data


def run_pair(seed: int, messages: int, loss: float, dup: float, reorder: float, corrupt: float, key: bytes | None = None) -> tuple[list[bytes], list[bytes], list[Dropped]]:  # fmt: skip  # noqa: E501
    rng = random.Random(seed)
    now = 0.0
    device = Link(now, key=key, silence_limit=1e9)
    server = Link(now, key=key, silence_limit=1e9)
    to_server = Channel(rng, loss, dup, reorder, corrupt)
    to_device = Channel(rng, loss, dup, reorder, corrupt)
    got_server: list[bytes] = []
    got_device: list[bytes] = []
    dropped: list[Dropped] = []
    sent = 0
    for _ in range(20_000):
        if sent < messages and rng.random() < 0.5:
            device.send(f"d{sent}".encode(), now)
            server.send(f"s{sent}".encode(), now)
            sent += 1
        now += 0.05
        for link in (device, server):
            assert link.tick(now) is None
        to_server.put(device.data_to_send())
        to_device.put(server.data_to_send())
        for event in server.receive_data(to_server.take(), now):
            (got_server.append(event.body) if isinstance(event, Delivered) else dropped.append(event))  # fmt: skip  # noqa: E501
        for event in device.receive_data(to_device.take(), now):
            (got_device.append(event.body) if isinstance(event, Delivered) else dropped.append(event))  # fmt: skip  # noqa: E501
        if sent == messages and not device.unacked and not server.unacked:
            break
    return got_server, got_device, dropped


@settings(max_examples=60)
@given(
    st.integers(0, 2**32),
    st.integers(1, 60),
    st.sampled_from([0.0, 0.1, 0.3]),
    st.sampled_from([0.0, 0.2]),
    st.sampled_from([0.0, 0.3]),
    st.sampled_from([0.0, 0.1]),
)
def test_every_message_arrives_once_in_order(seed: int, n: int, loss: float, dup: float, reorder: float, corrupt: float) -> None:  # fmt: skip  # noqa: E501
    got_server, got_device, _ = run_pair(seed, n, loss, dup, reorder, corrupt)
    assert got_server == [f"d{i}".encode() for i in range(n)]
    assert got_device == [f"s{i}".encode() for i in range(n)]


def test_a_bad_channel_is_survived_and_its_faults_reported() -> None:
    got_server, got_device, dropped = run_pair(7, 200, 0.2, 0.2, 0.3, 0.1, key=KEY)
    assert got_server == [f"d{i}".encode() for i in range(200)]
    assert got_device == [f"s{i}".encode() for i in range(200)]
    reasons = {d.reason for d in dropped}
    assert {"duplicate", "ahead"} <= reasons
    assert reasons & {"CRC mismatch", "header CRC mismatch", "unauthenticated"}


def test_frames_without_the_right_mac_are_not_delivered() -> None:
    server = Link(0.0, key=KEY)
    forged = encode_frame(1, 0, b"open the door", key=b"another key")
    plain = encode_frame(1, 0, b"open the door")
    assert server.receive_data(forged + plain, 0.1) == [
        Dropped("unauthenticated", 1),
        Dropped("unauthenticated", 1),
    ]
    assert server.received == 0
    assert server.receive_data(encode_frame(1, 0, b"hi", key=KEY), 0.2) == [Delivered(1, b"hi")]


def test_an_unauthenticated_frame_does_not_count_as_heard() -> None:
    server = Link(0.0, key=KEY, silence_limit=3.0)
    server.receive_data(encode_frame(0, 0), 2.0)  # no MAC
    assert server.tick(3.0) == LinkDown(3.0)


def test_heartbeats_when_idle_and_link_down_after_silence() -> None:
    link = Link(0.0, heartbeat_every=1.0, silence_limit=3.0)
    assert link.next_deadline() == 1.0
    assert link.tick(1.0) is None
    beat = FrameDecoder().feed(link.data_to_send())
    assert len(beat) == 1 and beat[0].ack_only  # type: ignore[union-attr]
    link.receive_data(encode_frame(0, 0), 2.5)  # the other side's heartbeat
    assert link.tick(5.0) is None  # heard 2.5 s ago
    assert link.tick(5.5) == LinkDown(3.0)
    assert link.tick(6.0) is None  # reported once
    assert not link.up


def test_unacked_messages_are_sent_again_until_acked() -> None:
    link = Link(0.0, retransmit_after=0.25)
    link.send(b"a", 0.0)
    link.send(b"b", 0.1)
    link.data_to_send()
    assert link.next_deadline() == 0.25
    link.tick(0.25)
    again = [f.body for f in FrameDecoder().feed(link.data_to_send())]  # type: ignore[union-attr]
    assert again == [b"a", b"b"]
    link.receive_data(encode_frame(0, 1), 0.3)  # "a" acknowledged
    assert link.unacked == 1
    link.receive_data(encode_frame(0, 2), 0.3)
    assert link.unacked == 0 and link.retransmits == 1


def test_a_reconnect_resumes_where_the_other_side_stands() -> None:
    device = Link(0.0)
    for body in (b"card 1", b"card 2", b"card 3"):
        device.send(body, 0.0)
    device.data_to_send()  # lost with the connection
    # The server had received the first one; the device's hello says so, and the device sends
    # the rest under the same numbers (the server would drop a repeated "card 1").
    device.resume(1, 5.0)
    frames = FrameDecoder().feed(device.data_to_send())
    assert [(f.seq, f.body) for f in frames] == [(2, b"card 2"), (3, b"card 3")]  # type: ignore[union-attr]
    assert device.up and device.unacked == 2


def test_control_bodies_pass_outside_the_sequence() -> None:
    device, server = Link(0.0, key=KEY), Link(0.0, key=KEY)
    device.send(b"first", 0.0)
    device.send_control(b"hello", 0.0)
    events = server.receive_data(device.data_to_send(), 0.1)
    assert events == [Delivered(1, b"first"), Control(b"hello")]
    assert server.received == 1  # the control body took no sequence number


def test_a_new_session_numbers_from_one() -> None:
    link = Link(0.0)
    link.send(b"x", 0.0)
    link.receive_data(encode_frame(1, 0, b"y"), 0.0)
    link.reset(1.0)
    assert (link.sent_seq, link.received, link.unacked) == (0, 0, 0)
    assert link.send(b"z", 1.0) == 1


def test_an_ack_for_what_was_never_sent_is_ignored() -> None:
    link = Link(0.0)
    link.send(b"a", 0.0)
    link.receive_data(encode_frame(0, 99), 0.1)
    assert link.unacked == 1 and link.peer_acked == 0


def test_the_queue_is_bounded() -> None:
    link = Link(0.0, max_unacked=2)
    link.send(b"a", 0.0)
    link.send(b"b", 0.0)
    with pytest.raises(LinkError, match="waiting for an ack"):
        link.send(b"c", 0.0)
