"""The hole-card reader: Down Under Blackjack's Masque Card Reader answers the request for the
range of the dealer's face-down card (685a.7(h); docs/devices.md, "Messages" and "Faults").

The server arms the reader for the round's hole card (``arm``); the reader lights the lamp of
the card's range (``hole_lamp``), each colour mapped to a range by the table's game. A reader
that lights no lamp, or a colour it has no range for, voids the round (no decision is ever
offered without the range) and closes the table until it is repaired (685a.12(i)); a wrong
range holds the table: the hands go on with the true range (``continue``) or are called dead
(685a.12(h)), and the table is closed after it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any

import msgspec

from rng.cards import Card
from server.core.effects import Irregular
from server.devices.message_types import Message, RoundId
from server.devices.roles.base import DeviceRole, Log, Pending, RoleDealer, Send
from server.games.chance import HoleRangeRequest
from server.games.down_under_blackjack.rules import HoleRange
from server.games.table import Capabilities, ConfigError, TableGame
from server.journal import records as rec

if TYPE_CHECKING:
    from server.devices.dealing import DeviceDealer

__all__ = ["ROLE", "Arm", "HoleCardReader", "HoleLamp"]


# --- messages ------------------------------------------------------------------------------------


class HoleLamp(Message, tag="hole_lamp", frozen=True):
    """The lamp the reader lit for the dealer's hole card (``lamp``: its colour, mapped to a
    range by the table's ``lights``), or ``none`` when it lit none."""

    round: RoundId
    lamp: Annotated[str, msgspec.Meta(min_length=1, max_length=20)]


class Arm(Message, tag="arm", frozen=True):
    """Server → reader: read the hole card of ``round``. ``card`` is the card the server dealt
    face down when it deals from its virtual shoe (a simulated reader's input; a physical
    reader reads the card itself and ignores it)."""

    round: RoundId
    card: str = ""


# --- the dealer part ------------------------------------------------------------------------------


class HoleCardReader(RoleDealer):
    """A hole-card reader at a table; option ``lights``: lamp colour -> the range it shows."""

    def __init__(
        self, table: DeviceDealer, role: str, device: str, options: Mapping[str, Any]
    ) -> None:
        super().__init__(table, role, device, options)
        self.lights: dict[str, str] = dict(options.get("lights") or {})

    @classmethod
    def options(cls, where: str, game: TableGame, capabilities: Capabilities) -> dict[str, Any]:
        lights = dict(game.hole_card_lamps())
        if not capabilities.asks(HoleRangeRequest) or not lights:
            raise ConfigError(f"{where}: a hole_card_reader serves Down Under Blackjack only")
        return {"lights": lights}

    def request(self, pending: Pending, now: float) -> list[Any]:
        return [Send(self.role, Arm(round=pending.round_id, card=pending.hole or ""))]

    def receive(self, message: Any, now: float) -> list[Any]:
        if isinstance(message, HoleLamp):
            return self._lamp(message, now)
        return super().receive(message, now)

    def timeout(self, pending: Pending, now: float) -> list[Any]:
        return self._lamp(HoleLamp(round=pending.round_id, lamp="none"), now)

    def decide(self, choice: str, value: str, pending: Pending) -> Any:
        hold = pending.hold
        assert hold is not None
        if choice == "dead":
            what = "hands called dead, every Bet Wager returned (685a.12(h))"
            return Irregular(f"{hold.reason} — {what} by the dealer and supervisor")
        # 685a.12(h) "continue": the hands play on; the range is the card's own.
        assert pending.hole is not None
        actual = HoleRange.of(Card.parse(pending.hole))
        lamp = pending.stashed.lamp if isinstance(pending.stashed, HoleLamp) else None
        return rec.HoleRangeRead(range=actual.value, device=self.device, lamp=lamp)

    def _lamp(self, lamp: HoleLamp, now: float) -> list[Any]:
        table, device = self.table, self.device
        pending = table.awaiting(HoleRangeRequest, lamp.round)
        if pending is None or pending.hole is None:
            return [Log("warning", f"{device}: lamp {lamp.lamp} for {lamp.round!r} ignored")]
        if pending.hold is not None:
            return []
        actual = HoleRange.of(Card.parse(pending.hole))
        shown = self.lights.get(lamp.lamp)
        if shown is None:  # no lamp, or a colour the reader has no range for
            table.out_of_service = (
                f"the card reader {device} is out of order; Down Under Blackjack may not be "
                "dealt until it is repaired (685a.12(i))"
            )
            reason = f"the card reader {device} lit {lamp.lamp!r}: malfunction, round void (685a.12(i))"  # fmt: skip  # noqa: E501
            return [*table.prompt(table.out_of_service, ("reopen",)), *table.answer(Irregular(reason))]  # fmt: skip  # noqa: E501
        if shown != actual.value:
            table.out_of_service = (
                f"the card reader {device} showed a wrong range; Down Under Blackjack may not "
                "be dealt until it is repaired (685a.12(i))"
            )
            reason = (
                f"the card reader {device} lit {lamp.lamp} ({shown}) for a {actual.value} hole "
                "card (685a.12(h)): continue the hands, or call them dead and return the Bet "
                "Wagers"
            )
            return table.hold(reason, device, ("continue", "dead"), now, lamp)
        return table.resume(rec.HoleRangeRead(range=actual.value, device=device, lamp=lamp.lamp))


ROLE = DeviceRole(
    name="hole_card_reader",
    short="reader",
    sends=(HoleLamp,),
    commands=(Arm,),
    answers=(HoleRangeRequest,),
    dealer=HoleCardReader,
    simulator="server.devices.simulated.hole_card_reader:SimulatedReader",
)
