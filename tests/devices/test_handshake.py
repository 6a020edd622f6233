"""A device's hello (docs/devices.md, "Hello"): only a configured device, in its role, with its
key and a session no older than the last, is welcomed; a reconnect in the same session loses
nothing and repeats nothing."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from server.devices.frames import Frame, FrameDecoder, encode_frame
from server.devices.handshake import (
    INVALID_HELLO,
    NOT_A_HELLO,
    STALE_SESSION,
    UNAUTHENTICATED,
    UNKNOWN_DEVICE,
    WRONG_ROLE,
    Accepted,
    DeviceSessions,
    KnownDevice,
    Refusal,
)
from server.devices.link import Control, Delivered, Link
from server.devices.messages import (
    Hello,
    Refused,
    Welcome,
    decode_welcome_or_refused,
    encode_message,
)

SHOE = KnownDevice("shoe-7", "card_source", b"shoe-7 key, 32 bytes of secret!!")
READER = KnownDevice("reader-1", "hole_card_reader", b"reader-1 key")


def frame(data: bytes) -> Frame:
    (only,) = FrameDecoder().feed(data)
    assert isinstance(only, Frame)
    return only


def hello(session: int = 1, last_acked: int = 0, *, device: KnownDevice = SHOE, role: str | None = None, key: bytes | None = None) -> Frame:  # fmt: skip  # noqa: E501
    body = encode_message(Hello(device.id, role or device.role, session, last_acked))  # type: ignore[arg-type]
    return frame(encode_frame(0, 0, body, key=device.key if key is None else key, control=True))


def welcome_of(accepted: Accepted | Refusal) -> tuple[Welcome, list[Frame]]:
    assert isinstance(accepted, Accepted), accepted
    frames = [f for f in FrameDecoder().feed(accepted.link.data_to_send()) if isinstance(f, Frame)]
    assert frames[0].control
    answer = decode_welcome_or_refused(frames[0].body)
    assert isinstance(answer, Welcome)
    return answer, frames[1:]


def test_a_known_device_is_welcomed_and_its_link_authenticated() -> None:
    sessions = DeviceSessions([SHOE, READER], heartbeat_every=1.0, silence_limit=3.0)
    accepted = sessions.hello(hello(), 0.0)
    welcome, rest = welcome_of(accepted)
    assert welcome == Welcome(session=1, last_acked=0, heartbeat_ms=1000, silence_ms=3000)
    assert rest == []
    assert isinstance(accepted, Accepted) and not accepted.resumed
    link = accepted.link
    # The welcome itself carries the device's MAC; so must everything after it.
    device = Link(0.0, key=SHOE.key)
    assert device.receive_data(encode_frame(0, 0, b"x", key=SHOE.key, control=True), 0.0) == [Control(b"x")]  # fmt: skip  # noqa: E501
    assert link.receive_data(encode_frame(1, 0, b"card", key=SHOE.key), 0.1) == [Delivered(1, b"card")]  # fmt: skip  # noqa: E501
    assert link.receive_data(encode_frame(2, 0, b"forged", key=READER.key), 0.1)[0].reason == "unauthenticated"  # type: ignore[union-attr]  # fmt: skip  # noqa: E501


UNSIGNED_HELLO = encode_message(Hello("shoe-7", "card_source", 1, 0))
MISSING_FIELDS = b"\x81\xa4type\xa5hello"  # {"type": "hello"}
REFUSED: dict[str, tuple[Callable[[], Frame], str]] = {
    "data-frame": (lambda: frame(encode_frame(1, 0, b"data", key=SHOE.key)), NOT_A_HELLO),
    "missing-fields": (
        lambda: frame(encode_frame(0, 0, MISSING_FIELDS, key=SHOE.key, control=True)),
        INVALID_HELLO,
    ),
    "not-msgpack": (
        lambda: frame(encode_frame(0, 0, b"\xff\xfe", key=SHOE.key, control=True)),
        INVALID_HELLO,
    ),
    "unknown": (lambda: hello(device=KnownDevice("shoe-9", "card_source", b"k")), UNKNOWN_DEVICE),
    "wrong-key": (lambda: hello(key=b"a guessed key"), UNAUTHENTICATED),
    "no-mac": (lambda: frame(encode_frame(0, 0, UNSIGNED_HELLO, control=True)), UNAUTHENTICATED),
    "wrong-role": (lambda: hello(role="wheel"), WRONG_ROLE),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused_hellos_say_why(case: str) -> None:
    make, code = REFUSED[case]
    sessions = DeviceSessions([SHOE])
    refusal = sessions.hello(make(), 0.0)
    assert isinstance(refusal, Refusal) and refusal.code == code
    answer = decode_welcome_or_refused(frame(refusal.reply()).body)
    assert isinstance(answer, Refused) and answer.code == code and answer.message
    assert sessions.session_of("shoe-7") is None  # nothing was accepted


def test_a_reconnect_in_the_same_session_resumes_where_the_device_stands() -> None:
    sessions = DeviceSessions([SHOE])
    first = sessions.hello(hello(session=5), 0.0)
    assert isinstance(first, Accepted)
    link = first.link
    link.data_to_send()
    link.receive_data(encode_frame(1, 0, b"card 1", key=SHOE.key), 0.1)
    link.receive_data(encode_frame(2, 0, b"card 2", key=SHOE.key), 0.1)
    for command in (b"expect 1", b"expect 2", b"expect 3"):
        link.send(command, 0.2)
    link.data_to_send()  # lost: the connection dropped
    # The device had received the server's first command; it says so in its new hello.
    again = sessions.hello(hello(session=5, last_acked=1), 1.0)
    welcome, rest = welcome_of(again)
    assert isinstance(again, Accepted) and again.resumed and again.link is link
    assert welcome.last_acked == 2  # the device sends again from its seq 3
    assert [(f.seq, f.body) for f in rest] == [(2, b"expect 2"), (3, b"expect 3")]
    # A repeated card 2 (the device could not know it arrived) is not applied twice.
    assert link.receive_data(encode_frame(2, 0, b"card 2", key=SHOE.key), 1.1)[0].reason == "duplicate"  # type: ignore[union-attr]  # fmt: skip  # noqa: E501


def test_a_new_session_starts_afresh_and_an_older_one_is_refused() -> None:
    sessions = DeviceSessions([SHOE])
    first = sessions.hello(hello(session=5), 0.0)
    assert isinstance(first, Accepted)
    first.link.receive_data(encode_frame(1, 0, b"card", key=SHOE.key), 0.1)
    later = sessions.hello(hello(session=6), 1.0)
    welcome, _ = welcome_of(later)
    assert isinstance(later, Accepted) and not later.resumed and later.link is not first.link
    assert welcome.last_acked == 0 and sessions.session_of("shoe-7") == 6
    # A hello recorded during session 5 and replayed now is refused: it would reopen it.
    replayed = sessions.hello(hello(session=5), 2.0)
    assert isinstance(replayed, Refusal) and replayed.code == STALE_SESSION
    assert sessions.session_of("shoe-7") == 6
