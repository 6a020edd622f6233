"""The wire messages, version 1: typed MessagePack maps tagged by their ``type`` field.

Every message is a msgspec ``Struct``, so decoding validates types and constraints in one
pass: a negative, zero, fractional or huge amount, an unknown field or an unknown ``type``
never reaches the table — the decoder rejects it with a clear message (see ``codec``).
docs/protocol.md documents every message; the client mirrors these definitions.

Client messages may carry ``ref``, a number the client chooses; every reply to that message
(``bet_accepted``, ``error`` …) echoes it.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal

import msgspec

__all__ = [
    "CLIENT_MESSAGES",
    "MAX_AMOUNT",
    "PROTOCOL_VERSION",
    "SERVER_MESSAGES",
    "AttendantAction",
    "BalanceChanged",
    "BetAccepted",
    "BetCancelled",
    "CallAttendant",
    "CancelBet",
    "CashOut",
    "CashedOut",
    "ClientMessage",
    "Decide",
    "ErrorMessage",
    "GetRecall",
    "GetRules",
    "Hello",
    "Join",
    "Joined",
    "Leave",
    "Left",
    "ListTables",
    "Lobby",
    "Notice",
    "Ping",
    "PlaceBet",
    "Pong",
    "Recall",
    "RecalledRound",
    "RepeatBets",
    "Resume",
    "Rules",
    "ServerMessage",
    "StationLock",
    "StationStatus",
    "TableEvent",
    "TableSnapshot",
    "TableSummary",
    "Welcome",
    "Winners",
]

PROTOCOL_VERSION: Final = 1
# Whole minor units: at most a trillion (ten billion dollars) in one wager or balance message.
MAX_AMOUNT: Final = 10**12

Amount = Annotated[int, msgspec.Meta(gt=0, le=MAX_AMOUNT)]
Ident = Annotated[str, msgspec.Meta(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.:\-]+$")]
Spot = Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
Name = Annotated[str, msgspec.Meta(min_length=1, max_length=32)]
Ref = Annotated[int, msgspec.Meta(ge=0, le=2**31)] | None


class _Message(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True, tag_field="type"):
    """Base of every message. (Not frozen: mypy cannot see msgspec's inherited ``frozen``.)"""


# --- client → server ------------------------------------------------------------------------


class Hello(_Message, tag="hello"):
    """First message of a connection. Demo mode: ``name`` (play money). Operator mode:
    ``token``, a JWT issued by the operator's platform (docs/protocol.md, "Players")."""

    version: int
    name: Name | None = None
    token: Annotated[str, msgspec.Meta(max_length=4096)] | None = None
    ref: Ref = None


class ListTables(_Message, tag="list_tables"):
    ref: Ref = None


class Join(_Message, tag="join"):
    """Sit at ``table`` as a player, or watch it as a spectator."""

    table: Ident
    role: Literal["player", "spectator"] = "player"
    ref: Ref = None


class Resume(_Message, tag="resume"):
    """Rejoin after a dropped connection: events after ``last_seq`` are replayed, or a
    snapshot is sent when they are no longer kept."""

    table: Ident
    last_seq: Annotated[int, msgspec.Meta(ge=0)]
    role: Literal["player", "spectator"] = "player"
    ref: Ref = None


class Leave(_Message, tag="leave"):
    table: Ident
    ref: Ref = None


class PlaceBet(_Message, tag="place_bet"):
    """``bet_id`` is chosen by the client and unique per round: a retried ``place_bet`` with
    the same id is acknowledged again and never charged twice."""

    table: Ident
    round: Ident
    bet_id: Ident
    spot: Spot
    amount: Amount
    ref: Ref = None


class CancelBet(_Message, tag="cancel_bet"):
    table: Ident
    round: Ident
    bet_id: Ident
    ref: Ref = None


class RepeatBets(_Message, tag="repeat_bets"):
    """Place again every wager this player had in the table's previous round; the new
    bets get ids ``<prefix>-1``, ``<prefix>-2`` … so a retry is idempotent too."""

    table: Ident
    round: Ident
    bet_id_prefix: Ident
    ref: Ref = None


class Decide(_Message, tag="decide"):
    """A player decision the table asked for (e.g. "war"/"surrender", "hit"/"stand")."""

    table: Ident
    round: Ident
    spot: Spot
    decision: Annotated[str, msgspec.Meta(min_length=1, max_length=32)]
    ref: Ref = None


class GetRecall(_Message, tag="get_recall"):
    """The player's last 10 rounds, card by card (58 Pa. Code 810a.11)."""

    table: Ident | None = None
    ref: Ref = None


class GetRules(_Message, tag="get_rules"):
    table: Ident
    ref: Ref = None


class Ping(_Message, tag="ping"):
    nonce: Annotated[int, msgspec.Meta(ge=0, le=2**53)]
    ref: Ref = None


# --- a player station's touchscreen (docs/electronic-tables.md) ---------------------------------


class CashOut(_Message, tag="cash_out"):
    """Cash out every credit on the station: a ticket is printed (``cashed_out``), or an
    attendant pays it by hand above the ticket limit (the station shows the handpay)."""

    ref: Ref = None


class CallAttendant(_Message, tag="call_attendant"):
    """The attendant call button: light the station's tower light (``on``) or put it out."""

    on: bool = True
    ref: Ref = None


class AttendantAction(_Message, tag="attendant_action"):
    """From the attendant menu, while the attendant key is turned: ``clear`` the station's
    locks whose cause is gone, or ``handpay``: the pending handpay was paid by hand."""

    action: Literal["clear", "handpay"]
    ref: Ref = None


ClientMessage = (
    Hello
    | ListTables
    | Join
    | Resume
    | Leave
    | PlaceBet
    | CancelBet
    | RepeatBets
    | Decide
    | GetRecall
    | GetRules
    | Ping
    | CashOut
    | CallAttendant
    | AttendantAction
)
CLIENT_MESSAGES: Final = ClientMessage.__args__


# --- server → client ------------------------------------------------------------------------


class Welcome(_Message, tag="welcome"):
    """``token`` lets the same player come back (``hello`` with it) after a reconnect."""

    version: int
    player_id: str
    name: str
    balance: int
    currency: str
    play_money: bool
    token: str
    station: str | None = None  # a player station's touchscreen: the station's id
    ref: Ref = None


class Notice(_Message, tag="notice"):
    """Something the player must be told, e.g. a round of theirs voided after a restart."""

    code: str
    message: str
    table: str | None = None
    round: str | None = None


class TableSummary(msgspec.Struct, frozen=True):
    """One lobby line, kept live."""

    table: str
    name: str
    game: str
    variant: str
    minimum: int
    maximum: int
    seats: int
    seated: int
    phase: str
    closes_in_ms: int | None
    last_results: list[str]
    automated: bool = False
    boxed: bool = False  # each seat is a betting box: ``seats`` boxes, one per player
    # Its player stations only play it (docs/electronic-tables.md): anyone else may watch.
    stations_only: bool = False


class Lobby(_Message, tag="lobby"):
    tables: list[TableSummary]
    ref: Ref = None


class TableEvent(_Message, tag="event"):
    """Something happened at a table. ``seq`` increases by one per table and never repeats;
    ``event`` names it (``card_dealt``, ``wager_settled`` …) and ``data`` holds its fields."""

    table: str
    seq: int
    round: str
    event: str
    data: dict[str, Any]


class TableSnapshot(msgspec.Struct, frozen=True):
    """Everything a viewer needs to draw the table now, as of ``seq``."""

    table: str
    seq: int
    round: str | None
    phase: str
    closes_in_ms: int | None
    cards: dict[str, list[str]]
    my_bets: list[dict[str, Any]]
    pending_decision: dict[str, Any] | None
    meters: dict[str, int]
    last_results: list[str]
    seat: int | None = None  # the player's seat: their betting box where the game has boxes
    held: dict[str, Any] | None = None  # a device hold the table waits on: {reason, options}


class Joined(_Message, tag="joined"):
    """``resumed``: the events after the client's ``last_seq`` were sent just before this
    message; otherwise the snapshot is the whole state."""

    table: str
    role: str
    snapshot: TableSnapshot
    resumed: bool = False
    ref: Ref = None


class Left(_Message, tag="left"):
    table: str
    ref: Ref = None


class BetAccepted(_Message, tag="bet_accepted"):
    table: str
    round: str
    bet_id: str
    spot: str
    amount: int
    balance: int
    ref: Ref = None


class BetCancelled(_Message, tag="bet_cancelled"):
    table: str
    round: str
    bet_id: str
    balance: int
    ref: Ref = None


class BalanceChanged(_Message, tag="balance"):
    balance: int
    reason: str


class RecalledRound(msgspec.Struct, frozen=True):
    table: str
    round: str
    game: str
    result: str
    cards: dict[str, list[str]]
    wagers: list[dict[str, Any]]
    wagered: int
    returned: int
    balance_after: int | None
    awarded: int = 0  # progressive awards paid to the player in the round (the ledger's)


class Recall(_Message, tag="recall"):
    rounds: list[RecalledRound]
    ref: Ref = None


class Rules(_Message, tag="rules"):
    table: str
    game: str
    variant: str
    summary: str
    paytables: dict[str, Any]
    limits: dict[str, int]
    spots: list[str]
    main_spots: list[str] = []  # one of these is required before any other wager (631a.8(a))
    spot_limits: dict[str, dict[str, int]] = {}  # where a spot's limits differ from the table's
    boxed: bool = False  # each seat is a betting box; a player bets in their own box only
    seats: int = 0  # the table's seats (boxes, where ``boxed``)
    ref: Ref = None


class Pong(_Message, tag="pong"):
    nonce: int
    ref: Ref = None


class ErrorMessage(_Message, tag="error"):
    """``code`` is stable (docs/protocol.md lists them); ``message`` is for people."""

    code: str
    message: str
    value: Any = None
    ref: Ref = None


class StationLock(msgspec.Struct, frozen=True):
    """Why a station is locked: ``cause`` (``door_open``, ``tilt``, ``connection`` …), since
    when (ISO 8601, UTC), and whether the cause is ``present`` still (an attendant clears
    a lock only once it is gone)."""

    cause: str
    since: str
    detail: str = ""
    present: bool = False


class StationStatus(_Message, tag="station"):
    """A player station's state, sent to its touchscreen on login and whenever it changes.

    ``credits`` in minor units; ``enabled``: it takes bets now (no lock, connected, its
    self-test passed, no handpay pending); ``handpay`` ``{amount, kind, round}`` waiting for
    an attendant (``jackpot`` or ``cancelled_credits``); ``attendant`` the id of the
    attendant whose key is turned (the attendant menu is open), with ``meters``; ``called``
    the attendant call light; ``player_card`` the card in the reader."""

    station: str
    seat: int
    tables: list[str]
    credits: int
    enabled: bool
    locks: list[StationLock] = []
    handpay: dict[str, Any] | None = None
    attendant: str | None = None
    meters: dict[str, Any] | None = None
    called: bool = False
    player_card: str | None = None
    last_ticket: dict[str, Any] | None = None
    ref: Ref = None


class CashedOut(_Message, tag="cashed_out"):
    """A cash-out ticket was issued: its ``validation`` number, ``amount`` and ``expires_at``
    (ISO 8601, UTC); the printer prints it."""

    validation: str
    amount: int
    expires_at: str
    ref: Ref = None


class Winners(_Message, tag="winners"):
    """To every viewer of a table with stations after each round: what each station seat
    won (``wins``: ``{seat, amount}``, the net win — paid back less staked — largest
    first; a seat that broke even or lost is not a winner) — seats, never players."""

    table: str
    round: str
    wins: list[dict[str, int]]


ServerMessage = (
    Welcome
    | Notice
    | Lobby
    | TableEvent
    | Joined
    | Left
    | BetAccepted
    | BetCancelled
    | BalanceChanged
    | Recall
    | Rules
    | Pong
    | ErrorMessage
    | StationStatus
    | CashedOut
    | Winners
)
SERVER_MESSAGES: Final = ServerMessage.__args__
