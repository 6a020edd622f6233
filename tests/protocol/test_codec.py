"""The wire codec: every bad frame becomes a ProtocolError with a stable code and a message
that says what and where (docs/architecture.md, "Reliability and security")."""

import contextlib

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.protocol.codec import (
    INVALID_MESSAGE,
    MALFORMED_FRAME,
    TEXT_FRAME,
    ProtocolError,
    decode_client,
    decode_server,
    encode,
    readable_ref,
)
from server.protocol.messages import (
    CLIENT_MESSAGES,
    MAX_AMOUNT,
    SERVER_MESSAGES,
    ErrorMessage,
    PlaceBet,
    TableEvent,
)

BET = {"type": "place_bet", "table": "bac-1", "round": "r1", "bet_id": "b1", "spot": "banker"}


def _frame(**fields: object) -> bytes:
    return msgspec.msgpack.encode(fields)


def test_a_valid_bet_round_trips() -> None:
    bet = PlaceBet(table="bac-1", round="r1", bet_id="b1", spot="banker", amount=500, ref=7)
    assert decode_client(encode(bet)) == bet


@pytest.mark.parametrize(
    ("amount", "where"),
    [
        (0, "`int` >= 1"),
        (-500, "`int` >= 1"),
        (2.5, "got `float`"),
        (5.0, "got `float`"),
        ("500", "got `str`"),
        (MAX_AMOUNT + 1, f"`int` <= {MAX_AMOUNT}"),
        (2**64 - 1, f"`int` <= {MAX_AMOUNT}"),  # the largest MessagePack integer
        (None, "got `None`"),
        (True, "got `bool`"),
    ],
)
def test_bad_amounts_are_rejected_with_the_reason(amount: object, where: str) -> None:
    with pytest.raises(ProtocolError) as info:
        decode_client(_frame(**BET, amount=amount))
    assert info.value.code == INVALID_MESSAGE
    assert where in info.value.message and "$.amount" in info.value.message


@pytest.mark.parametrize(
    ("frame", "code", "text"),
    [
        (b"\xc1", MALFORMED_FRAME, "malformed"),
        (b"", MALFORMED_FRAME, ""),
        (msgspec.msgpack.encode([1, 2]), INVALID_MESSAGE, "Expected `object`"),
        (_frame(type="launch_missiles"), INVALID_MESSAGE, "$.type"),
        (_frame(table="bac-1"), INVALID_MESSAGE, "type"),
        (_frame(type="ping", nonce=1, extra=True), INVALID_MESSAGE, "unknown field `extra`"),
        (_frame(**{**BET, "table": "../etc"}), INVALID_MESSAGE, "$.table"),
        (_frame(**{**BET, "spot": "x" * 65}), INVALID_MESSAGE, "$.spot"),
        ("a text frame", TEXT_FRAME, "binary"),
    ],
)
def test_malformed_and_invalid_frames(frame: bytes | str, code: str, text: str) -> None:
    with pytest.raises(ProtocolError) as info:
        decode_client(frame)
    assert info.value.code == code and text in info.value.message


@given(st.binary(max_size=200))
def test_arbitrary_bytes_never_raise_anything_but_protocol_error(frame: bytes) -> None:
    with contextlib.suppress(ProtocolError):
        decode_client(frame)


@given(
    st.dictionaries(
        st.sampled_from(["type", "table", "round", "bet_id", "spot", "amount", "ref", "nonce"]),
        st.one_of(
            st.integers(-(2**63), 2**63 - 1),
            st.floats(),
            st.text(max_size=10),
            st.none(),
            st.booleans(),
        ),
    )
)
def test_arbitrary_maps_never_raise_anything_but_protocol_error(fields: dict[str, object]) -> None:
    with contextlib.suppress(ProtocolError):
        decode_client(msgspec.msgpack.encode(fields))


def test_server_messages_round_trip_and_tags_are_unique() -> None:
    event = TableEvent(table="t", seq=3, round="r", event="card_dealt", data={"card": "AS"})
    assert decode_server(encode(event)) == event
    error = ErrorMessage(code="betting_closed", message="no more bets", value=5, ref=2)
    assert decode_server(encode(error)) == error
    client_tags = [m.__struct_config__.tag for m in CLIENT_MESSAGES]
    server_tags = [m.__struct_config__.tag for m in SERVER_MESSAGES]
    assert len(set(client_tags)) == len(client_tags)
    assert len(set(server_tags)) == len(server_tags)


def test_defaults_are_omitted_on_the_wire() -> None:
    assert b"ref" not in encode(ErrorMessage(code="c", message="m"))


def _nested(depth: int) -> bytes:
    """A MessagePack value nested ``depth`` maps deep: {"a": {"a": ... 1}}."""
    return b"\x81\xa1a" * depth + b"\x01"


@pytest.mark.parametrize("depth", [1_000, 100_000])
@pytest.mark.parametrize("ref_first", [True, False])
def test_a_frame_nested_too_deep_is_an_invalid_message_with_its_ref(
    depth: int, ref_first: bool
) -> None:
    """Issue #14: such a frame closed the connection with 1011 (an uncaught RecursionError);
    it is an ``invalid_message`` whose reply echoes the frame's ``ref``, wherever it is."""
    ref = b"\xa3ref\xcd\x01\x2c"  # "ref": 300
    deep = b"\xa5extra" + _nested(depth)
    # Before the "type" tag, which the decoder must skip the deep value to find.
    frame = b"\x83" + (ref + deep if ref_first else deep + ref) + b"\xa4type\xa4ping"
    with pytest.raises(ProtocolError) as info:
        decode_client(frame)
    assert info.value.code == INVALID_MESSAGE and "nested too deeply" in info.value.message
    assert info.value.ref == 300


@pytest.mark.parametrize(
    ("frame", "ref"),
    [
        (_frame(type="launch", ref=7), 7),
        (_frame(**BET, amount=-5, ref=2**31), 2**31),
        (_frame(**BET, amount=12.5, ref=0), 0),
        (_frame(type="ping", nonce="x", ref=-1), None),  # not a valid ref: not echoed
        (_frame(type="ping", nonce="x", ref=2**31 + 1), None),
        (_frame(type="ping", nonce="x", ref="7"), None),
        (_frame(type="ping", nonce="x"), None),
        (msgspec.msgpack.encode([1, 2, 3]), None),
        (b"\x82\xa3ref\x05\xc1", 5),  # malformed after the ref: still readable
    ],
)
def test_error_replies_carry_the_ref_when_it_can_be_read(frame: bytes, ref: int | None) -> None:
    with pytest.raises(ProtocolError) as info:
        decode_client(frame)
    assert info.value.ref == ref


@given(
    st.dictionaries(
        st.text(max_size=5),
        st.recursive(
            st.none()
            | st.booleans()
            | st.integers(-(2**63), 2**64 - 1)
            | st.floats()
            | st.text(max_size=300)
            | st.binary(max_size=300),
            lambda inner: (
                st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4)
            ),
            max_leaves=20,
        ),
        max_size=6,
    ),
    st.integers(0, 2**31),
)
def test_readable_ref_finds_the_ref_of_any_map(fields: dict[str, object], ref: int) -> None:
    fields.pop("ref", None)
    fields["ref"] = ref
    assert readable_ref(msgspec.msgpack.encode(fields)) == ref


@given(st.binary(max_size=300))
def test_readable_ref_never_raises(frame: bytes) -> None:
    found = readable_ref(frame)
    assert found is None or 0 <= found <= 2**31
