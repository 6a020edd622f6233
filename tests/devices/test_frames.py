"""The device frame codec (docs/devices.md, "Frames"): round trips, resynchronisation after
garbage and corruption, and a fuzzed decoder that never raises and never buffers more than
one frame's worth of bytes."""

from __future__ import annotations

import itertools
import struct
import zlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.devices.frames import (
    ACK_ONLY,
    CONTROL,
    HEADER,
    MAC,
    MAC_SIZE,
    MAGIC,
    MAX_BODY,
    MAX_FRAME,
    Corrupt,
    Frame,
    FrameDecoder,
    encode_frame,
    frame_mac,
)

KEY = b"k" * 32


def frames_of(items: list[Frame | Corrupt]) -> list[Frame]:
    return [i for i in items if isinstance(i, Frame)]


def test_layout_is_as_documented() -> None:
    data = encode_frame(7, 3, b"\x81\xa1a\x01")
    assert data[:2] == MAGIC and data[2] == 1 and data[3] == 0
    assert struct.unpack(">III", data[4:16]) == (4, 7, 3)
    assert struct.unpack(">I", data[16:20])[0] == zlib.crc32(data[:16])
    assert data[20:24] == b"\x81\xa1a\x01"
    assert struct.unpack(">I", data[24:28])[0] == zlib.crc32(data[:24])
    assert len(data) == HEADER + 4 + 4


def test_a_control_frame_is_outside_the_sequence() -> None:
    (frame,) = frames_of(FrameDecoder().feed(encode_frame(0, 4, b"hello", control=True, key=KEY)))
    assert frame.control and not frame.ack_only and (frame.seq, frame.ack) == (0, 4)
    assert frame.flags == CONTROL | MAC


def test_round_trip_with_and_without_mac() -> None:
    plain, signed, ack = encode_frame(1, 0, b"body"), encode_frame(2, 1, b"x", key=KEY), encode_frame(0, 5)  # fmt: skip  # noqa: E501
    (a, b, c) = frames_of(FrameDecoder().feed(plain + signed + ack))
    assert (a.seq, a.ack, a.body, a.flags, a.mac) == (1, 0, b"body", 0, b"")
    assert (b.seq, b.flags & MAC, len(b.mac)) == (2, MAC, MAC_SIZE)
    assert b.mac == frame_mac(KEY, b.signed)
    assert c.ack_only and (c.seq, c.ack, c.body) == (0, 5, b"") and c.flags == ACK_ONLY


def test_byte_by_byte_delivery_gives_the_same_frames() -> None:
    data = encode_frame(1, 0, b"one") + encode_frame(2, 0, b"two", key=KEY)
    decoder = FrameDecoder()
    out = [f for i in range(len(data)) for f in decoder.feed(data[i : i + 1])]
    assert [f.body for f in frames_of(out)] == [b"one", b"two"]
    assert not [i for i in out if isinstance(i, Corrupt)]


def test_garbage_before_and_between_frames_is_skipped_and_reported() -> None:
    data = b"noise" + encode_frame(1, 0, b"a") + b"\x00\xffC" + encode_frame(2, 0, b"b")
    out = FrameDecoder().feed(data)
    assert [f.body for f in frames_of(out)] == [b"a", b"b"]
    skipped = [i for i in out if isinstance(i, Corrupt)]
    assert sum(i.skipped for i in skipped) == len(b"noise") + 3


def test_a_corrupted_frame_is_dropped_and_the_next_one_read() -> None:
    bad = bytearray(encode_frame(1, 0, b"hello"))
    bad[21] ^= 0x01  # a body byte
    out = FrameDecoder().feed(bytes(bad) + encode_frame(2, 0, b"next"))
    assert [f.body for f in frames_of(out)] == [b"next"]
    assert any(i.reason == "CRC mismatch" for i in out if isinstance(i, Corrupt))


def test_a_corrupted_length_does_not_swallow_the_frames_after_it() -> None:
    bad = bytearray(encode_frame(1, 0, b"hello"))
    bad[4:8] = struct.pack(">I", 900)  # claims 900 bytes: more than follow
    # The header's own CRC catches it at once: the decoder does not wait for 900 bytes that
    # belong to the frames after it.
    out = FrameDecoder().feed(bytes(bad) + encode_frame(2, 0, b"next"))
    assert [f.body for f in frames_of(out)] == [b"next"]
    assert any(i.reason == "header CRC mismatch" for i in out if isinstance(i, Corrupt))


def test_a_header_announcing_a_body_above_the_limit_is_refused_at_once() -> None:
    fields = struct.pack(">2sBBIII", MAGIC, 1, 0, MAX_BODY + 1, 1, 0)
    header = fields + struct.pack(">I", zlib.crc32(fields))
    decoder = FrameDecoder()
    out = decoder.feed(header)
    assert any("exceeds" in i.reason for i in out if isinstance(i, Corrupt))
    assert decoder.buffered < HEADER


@pytest.mark.parametrize(
    ("version", "flags", "length", "seq", "reason"),
    [
        (2, 0, 1, 1, "version 2"),
        (1, 0x80, 1, 1, "unknown flags"),
        (1, ACK_ONLY, 1, 0, "ack-only"),
        (1, ACK_ONLY, 0, 3, "ack-only"),
        (1, 0, 0, 1, "ack-only"),
        (1, 4, 1, 2, "control frame has seq 0"),
        (1, 0, 1, 0, "seq from 1"),
        (1, 5, 0, 0, "ack-only"),
    ],
)
def test_bad_headers_are_named(version: int, flags: int, length: int, seq: int, reason: str) -> None:  # fmt: skip  # noqa: E501
    fields = struct.pack(">2sBBIII", MAGIC, version, flags, length, seq, 0)
    head = fields + struct.pack(">I", zlib.crc32(fields)) + b"x" * length
    data = head + struct.pack(">I", zlib.crc32(head))
    out = FrameDecoder().feed(data)
    assert not frames_of(out)
    assert any(reason in i.reason for i in out if isinstance(i, Corrupt))


def test_encoder_refuses_what_the_decoder_would() -> None:
    with pytest.raises(ValueError, match="exceeds"):
        encode_frame(1, 0, b"x" * (MAX_BODY + 1))
    with pytest.raises(ValueError, match="seq 0"):
        encode_frame(3, 0)
    with pytest.raises(ValueError, match="seq 0"):
        encode_frame(3, 0, b"hello", control=True)
    with pytest.raises(ValueError, match="has a body"):
        encode_frame(0, 0, control=True)


# --- fuzzing -------------------------------------------------------------------------------


def _check_decoder(chunks: list[bytes]) -> list[Frame | Corrupt]:
    decoder = FrameDecoder()
    out: list[Frame | Corrupt] = []
    for chunk in chunks:
        out += decoder.feed(chunk)  # anything but a list is a failure: it must never raise
        # At most one incomplete frame is ever kept: never more than a frame's worth.
        assert decoder.buffered <= MAX_FRAME
        if decoder.buffered >= HEADER:
            (length,) = struct.unpack(">I", bytes(decoder._buffer[4:8]))
            assert length <= MAX_BODY
    for item in out:
        if isinstance(item, Frame):
            assert zlib.crc32(item.signed[:-4]) == struct.unpack(">I", item.signed[-4:])[0]
        else:
            assert item.skipped >= 1
    return out


@given(st.lists(st.binary(max_size=300), max_size=20))
def test_random_bytes_never_raise(chunks: list[bytes]) -> None:
    _check_decoder(chunks)


@given(st.lists(st.binary(max_size=300), max_size=20))
def test_random_bytes_after_a_magic_never_raise(chunks: list[bytes]) -> None:
    _check_decoder([MAGIC + b"\x01" + c for c in chunks])


one_frame = st.tuples(
    st.integers(1, 2**32 - 1),
    st.integers(0, 2**32 - 1),
    st.binary(min_size=1, max_size=64),
    st.booleans(),
)
valid_frames = st.lists(one_frame, min_size=1, max_size=8)


@given(valid_frames, st.data())
def test_mutated_frames_never_raise_and_untouched_frames_survive(frames: list[tuple[int, int, bytes, bool]], data: st.DataObject) -> None:  # fmt: skip  # noqa: E501
    encoded = [encode_frame(s, a, b, key=KEY if m else None) for s, a, b, m in frames]
    stream = bytearray(b"".join(encoded))
    flips = data.draw(st.lists(st.integers(0, len(stream) - 1), max_size=4))
    for at in flips:
        stream[at] ^= data.draw(st.integers(1, 255))
    cut = data.draw(st.lists(st.integers(0, len(stream)), max_size=6).map(sorted))
    chunks = [bytes(stream[a:b]) for a, b in zip([0, *cut], [*cut, len(stream)], strict=True)]
    out = _check_decoder(chunks)
    # Every frame none of whose bytes was touched is decoded (a flipped byte elsewhere never
    # costs another frame once the bytes after it have arrived).
    offsets = [0]
    for e in encoded:
        offsets.append(offsets[-1] + len(e))
    touched = {i for i, (lo, hi) in enumerate(itertools.pairwise(offsets)) for at in flips if lo <= at < hi}  # fmt: skip  # noqa: E501
    got = [(f.seq, f.body) for f in frames_of(out)]
    for i, (seq, _, body, _) in enumerate(frames):
        if i not in touched:
            assert (seq, body) in got
