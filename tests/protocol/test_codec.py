"""The wire codec: every bad frame becomes a ProtocolError with a stable code and a message
that says what and where (DESIGN.md "Bad input")."""

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
