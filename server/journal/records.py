"""The round journal's records: one typed schema for the writer, replay, recovery and recall.

Each record is one input of a round, in the order it happened; ``kind`` names it (the tag,
and the ``kind`` column of the embedded journal), the fields are its payload. The table core
builds them (``server.core``), the journal stores them, and replay — game recall,
``croupier replay`` and crash recovery — feeds them back through the same table core.

``SCHEMA_VERSION`` is the version of this schema; a journal written with a newer one is
refused rather than misread. Version 1 is the payload format journals have always had:
every field here is the JSON key it was stored under.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

import msgspec

if TYPE_CHECKING:
    from server.games.chance import ChanceRequest

__all__ = [
    "RECORD_TYPES",
    "SCHEMA_VERSION",
    "Bet",
    "BetRefused",
    "Cancel",
    "CardDrawn",
    "ChanceAnswered",
    "Closed",
    "Decision",
    "Held",
    "HoleRangeRead",
    "MysteryHit",
    "Opened",
    "Record",
    "Settled",
    "Spin",
    "StaffDecision",
    "Timeout",
    "Voided",
    "answered",
    "payload_of",
    "record_from",
]

SCHEMA_VERSION: Final = 1


class Record(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, tag_field="kind"):
    """One journal record (see the subclasses; ``kind`` is the tag)."""

    @property
    def kind(self) -> str:
        return str(type(self).__struct_config__.tag)


class Opened(Record, frozen=True, kw_only=True, tag="opened"):
    """A round begins: its game and variant, and the new shoe's burn when one started
    (its exposed card is public, the burned cards are journaled for replay)."""

    game: str
    variant: str
    shoe: dict[str, Any] | None = None


class Bet(Record, frozen=True, kw_only=True, tag="bet"):
    """A wager placed (its spot in the engine's canonical form). It stands once its debit is
    in the ledger; it was acknowledged only once this record was durable too."""

    player: str
    bet_id: str
    spot: str
    amount: int


class BetRefused(Record, frozen=True, kw_only=True, tag="bet_refused"):
    """The bet just before, with the same player and id, never stood: its debit was refused."""

    player: str
    bet_id: str


class Cancel(Record, frozen=True, kw_only=True, tag="cancel"):
    player: str
    bet_id: str


class Closed(Record, frozen=True, kw_only=True, tag="closed"):
    """No more bets."""


class CardDrawn(Record, frozen=True, kw_only=True, tag="card"):
    """A card for ``target``, journaled before anyone sees it, with the random draw that chose
    it (the shoe's draw number, the range drawn from and the value drawn)."""

    card: str
    target: str
    seq: int | None = None
    bound: int | None = None
    value: int | None = None
    device: str | None = None  # the card-reading shoe that read it (else the virtual shoe)
    count: int | None = None  # the shoe's own count of the card


class Spin(Record, frozen=True, kw_only=True, tag="spin"):
    """A wheel result: a roulette pocket's label or a Big Six section's index (with its
    symbol), and the draw that chose it."""

    result: str | int
    symbol: str | None = None
    bound: int | None = None
    value: int | None = None
    device: str | None = None  # the automated wheel that reported it
    game: int | None = None  # the wheel's game number


class HoleRangeRead(Record, frozen=True, kw_only=True, tag="hole_range"):
    """The Masque Card Reader's range for Down Under's hole card (685a.7(h))."""

    range: str
    device: str | None = None  # the reader that lit it (else the virtual reader)
    lamp: str | None = None  # the lamp it lit


class ChanceAnswered(Record, frozen=True, kw_only=True, tag="chance"):
    """The answer to a kind of chance a game declares (``server.games.chance.ChanceRequest``:
    every kind but a card, a wheel result, the hole card's range and a Mystery hit, which have
    records of their own): the kind's name (``chance``), the answer as the kind writes it
    (``answer``), and the virtual device's draw that chose it (``bound``, ``value``) or the
    device that gave it. Journaled before the engine — or anyone — sees it."""

    chance: str
    answer: Any
    bound: int | None = None
    value: int | None = None
    device: str | None = None


def answered(
    request: ChanceRequest,
    answer: Any,
    *,
    device: str | None = None,
    bound: int | None = None,
    value: int | None = None,
) -> ChanceAnswered:
    """The journal record of ``answer`` to ``request`` (a device's, or the virtual draw's)."""
    return ChanceAnswered(
        chance=request.kind, answer=request.write(answer), bound=bound, value=value, device=device
    )


class Held(Record, frozen=True, kw_only=True, tag="held"):
    """The table stopped for a device: an impossible or missing read, a wheel that gives no
    result, a wrong hole-card lamp; ``options``: what the dealer and supervisor may decide."""

    reason: str
    device: str = ""
    options: tuple[str, ...] = ()


class StaffDecision(Record, frozen=True, kw_only=True, tag="staff"):
    """Two people decided a hold or reopened a table from the dealer console: the dealer and
    the supervisor, the action (``confirm``, ``void``, ``continue``, ``dead``, ``reopen``), the
    card or result they entered (``value``), and what it answered (``reason``)."""

    action: str
    dealer: str
    supervisor: str
    value: str = ""
    reason: str = ""


class MysteryHit(Record, frozen=True, kw_only=True, tag="mystery_hit"):
    """A Must-Hit-By Mystery Bonus hit value (631b.6(c)(3)), drawn from ``low`` to ``high``:
    journaled like a card, never sent to any client."""

    value: int
    low: int
    high: int


class Decision(Record, frozen=True, kw_only=True, tag="decision"):
    player: str
    spot: str
    decision: str


class Timeout(Record, frozen=True, kw_only=True, tag="timeout"):
    """The player let the decision's deadline pass: the option that places no more money."""

    player: str


class Settled(Record, frozen=True, kw_only=True, tag="settled"):
    result: str = ""
    recovered: bool = False


class Voided(Record, frozen=True, kw_only=True, tag="voided"):
    reason: str = "voided"
    recovered: bool = False


RECORD_TYPES: Final[Mapping[str, type[Record]]] = {
    str(t.__struct_config__.tag): t
    for t in (
        Opened,
        Bet,
        BetRefused,
        Cancel,
        Closed,
        CardDrawn,
        Spin,
        HoleRangeRead,
        MysteryHit,
        ChanceAnswered,
        Held,
        StaffDecision,
        Decision,
        Timeout,
        Settled,
        Voided,
    )
}


def payload_of(record: Record) -> dict[str, Any]:
    """The record's fields as the journal stores them (JSON-compatible, no ``kind``); fields at
    their default are left out, as journals have always been written."""
    data: dict[str, Any] = msgspec.to_builtins(record)
    data.pop("kind", None)
    return data


def record_from(kind: str, payload: Mapping[str, Any]) -> Record:
    """The typed record for a stored ``kind`` and payload; ``ValueError`` for an unknown kind
    or a payload that does not fit it (a journal this version cannot read)."""
    cls = RECORD_TYPES.get(kind)
    if cls is None:
        raise ValueError(f"unknown journal record kind {kind!r}")
    try:
        return msgspec.convert(dict(payload), cls)
    except msgspec.ValidationError as exc:
        raise ValueError(f"journal record {kind!r} does not fit its schema: {exc}") from None
