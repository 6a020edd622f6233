"""The card source: a card-reading shoe answers a table's card requests (docs/devices.md,
"Messages" and "Faults").

The server says ``expect_cards`` once betting is closed and for each card the round needs;
the shoe reports each card as it leaves (``card_read``, with its own count) and its state.
What cannot be trusted is never guessed: a card drawn before no more bets voids the round
("game before time"); a read that is no card, more of a card than the shoe's decks hold, a
card missing (the count skipped) or none read in time holds the table for staff; cards read
after the hand was complete hold the next round until staff confirm they were discarded
(681a.9(b), 685a.12(d)). A card found face up in the shoe is discarded (651a.11(a),
681a.9(a), 685a.12(a)); a card the shoe counts twice (a double read) is dropped.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, Literal

import msgspec

from rng.cards import Card
from server.core.effects import Irregular, NewShoe
from server.devices.message_types import CardCode, Count, Message, RoundId, Text
from server.devices.roles.base import DeviceRole, Log, Pending, RoleDealer, Send
from server.games.chance import CardRequest
from server.games.table import Capabilities, ConfigError, ShoeSpec, TableGame
from server.journal import records as rec

if TYPE_CHECKING:
    from server.devices.dealing import DeviceDealer

__all__ = ["ROLE", "CardRead", "CardSource", "ExpectCards", "ShoeState"]


# --- messages ------------------------------------------------------------------------------------


class CardRead(Message, tag="card_read", frozen=True):
    """A card as it left the shoe: ``card`` its code (``AS``, ``10H``), ``count`` the shoe's own
    count of cards drawn since it was filled (1, 2, …: a gap is a card not read, a repeat a
    card read twice), ``round`` the round the server's ``expect_cards`` named (empty when
    none was armed), ``face_up`` a card found face up in the shoe (651a.11(a), 685a.12(a)),
    ``raw`` the reader's own reading, for the audit log."""

    card: CardCode
    count: Count
    round: RoundId = ""
    face_up: bool = False
    raw: Text = ""


class ShoeState(Message, tag="shoe_state", frozen=True):
    """The shoe was ``inserted`` (filled: its count starts again), ``removed``, reached its
    ``cut_card``, or is ``empty``."""

    state: Literal["inserted", "removed", "cut_card", "empty"]


class ExpectCards(Message, tag="expect_cards", frozen=True):
    """Server → shoe (and the dealer's display): no more bets in ``round``; draw its next card,
    for ``target`` (``player``, ``banker``, ``dealer``, a box). Cards read from now on are
    the round's."""

    round: RoundId
    target: Annotated[str, msgspec.Meta(max_length=40)] = ""


# --- the dealer part ------------------------------------------------------------------------------


@dataclass
class _Shoe:
    """What the server knows of the physical shoe."""

    count: int | None = None  # the shoe's count of its last card read
    seen: Counter[str] = field(default_factory=Counter)  # cards read since it was filled
    armed: str | None = None  # the round its cards are for (after no more bets)
    reads: deque[CardRead] = field(default_factory=deque)  # read, not yet dealt
    early: str | None = None  # a card read before no more bets: the round to void


class CardSource(RoleDealer):
    """A card-reading shoe at a table; option ``decks``: the shoe's decks (for impossible
    reads)."""

    def __init__(
        self, table: DeviceDealer, role: str, device: str, options: Mapping[str, Any]
    ) -> None:
        super().__init__(table, role, device, options)
        self.decks: int | None = options.get("decks")
        self.shoe = _Shoe()

    @classmethod
    def options(cls, where: str, game: TableGame, capabilities: Capabilities) -> dict[str, Any]:
        if not capabilities.asks(CardRequest):
            raise ConfigError(f"{where}: a card_source deals cards; this game spins a wheel")
        spec = game.chance
        return {"decks": spec.decks if isinstance(spec, ShoeSpec) else None}

    def new_round(self, round_id: str, now: float) -> tuple[str, tuple[str, ...]] | None:
        shoe = self.shoe
        leftover = list(shoe.reads)
        shoe.reads.clear()
        shoe.armed, shoe.early = None, None
        if not leftover:
            return None
        cards = ", ".join(r.card for r in leftover)
        reason = (
            f"card(s) {cards} read after the previous hand was complete: they go to the "
            "discard rack (681a.9(b), 685a.12(d)); confirm"
        )
        return reason, ("confirm",)

    def request(self, pending: Pending, now: float) -> list[Any]:
        shoe, round_id = self.shoe, pending.round_id
        if shoe.armed != round_id:
            shoe.armed = round_id
            if shoe.early is not None:
                reason = shoe.early
                shoe.reads.clear()
                return self.table.answer(Irregular(reason))
        if shoe.reads:
            # Already out of the shoe (read while the table was held): asking for another
            # would have the dealer draw one card too many.
            return self._deal_read(shoe.reads.popleft(), now)
        return [Send(self.role, ExpectCards(round=round_id, target=pending.request.target))]

    def receive(self, message: Any, now: float) -> list[Any]:
        if isinstance(message, CardRead):
            return self._card_read(message, now)
        if isinstance(message, ShoeState):
            if message.state == "inserted":
                self.shoe.count, self.shoe.seen = None, Counter()
            return [Log("info", f"{self.device}: shoe {message.state}")]
        return super().receive(message, now)

    def timeout(self, pending: Pending, now: float) -> list[Any]:
        seconds = f"{self.table.settings.answer_seconds:g} s"
        target = pending.request.target
        reason = f"no card was read from {self.device} for {target} within {seconds}"
        return self.table.hold(reason, self.device, ("confirm", "void"), now)

    def decide(self, choice: str, value: str, pending: Pending) -> Any:
        stashed = pending.stashed
        if value:
            code = Card.parse(value).code  # ValueError names the entry
        elif isinstance(stashed, CardRead) and not pending.needs_value:
            code = Card.parse(stashed.card).code
        else:
            raise ValueError("enter the physical card (value)")
        return self._card_record(code, stashed if isinstance(stashed, CardRead) else None)

    def _card_read(self, read: CardRead, now: float) -> list[Any]:
        shoe, device = self.shoe, self.device
        if shoe.count is not None and read.count <= shoe.count:
            return [Log("warning", f"{device}: card {read.card} counted {read.count} again: a double read, dropped")]  # fmt: skip  # noqa: E501
        if read.face_up:  # 651a.11(a), 681a.9(a), 685a.12(a): never used
            shoe.count = read.count
            shoe.seen[read.card.upper()] += 1
            return [Log("warning", f"{device}: card {read.card} found face up in the shoe: discarded")]  # fmt: skip  # noqa: E501
        pending = self.table.pending
        dealing = (
            pending is not None
            and shoe.armed is not None
            and shoe.armed == pending.round_id
            and not isinstance(pending.request, NewShoe)
        )
        if not dealing:
            if pending is not None and isinstance(pending.request, NewShoe | CardRequest):
                # Betting is open (no expect_cards yet): "game before time".
                round_id = pending.round_id
                shoe.early = (
                    f"card {read.card} was drawn before no more bets in round {round_id} "
                    "(game before time): round void, the cards burned"
                )
            shoe.count = read.count
            shoe.seen[read.card.upper()] += 1
            return [Log("warning", f"{device}: card {read.card} read before no more bets")]
        shoe.reads.append(read)
        if (
            pending is not None
            and not pending.answered
            and isinstance(pending.request, CardRequest)
            and (pending.hold is None or pending.stashed is None)  # none, or no card in time
            and not pending.suspended  # dealt once the fault clears
        ):
            return self._deal_read(shoe.reads.popleft(), now)
        return []

    def _deal_read(self, read: CardRead, now: float) -> list[Any]:
        """Deal ``read`` for the pending card request, unless it is not to be trusted."""
        shoe, table, device = self.shoe, self.table, self.device
        previous = shoe.count
        shoe.count = read.count
        code = read.card.upper()
        shoe.seen[code] += 1
        try:
            card = Card.parse(code)
        except ValueError:
            reason = f"{device} read {read.card!r}, which is no card: enter the physical card"
            return table.hold(reason, device, ("confirm", "void"), now, read, needs_value=True)
        if self.decks is not None and shoe.seen[card.code] > self.decks:
            reason = (
                f"impossible read: {device} read {card.code} a {_nth(shoe.seen[card.code])} "
                f"time from a {self.decks}-deck shoe: verify the physical card and enter it"
            )
            return table.hold(reason, device, ("confirm", "void"), now, read, needs_value=True)
        if previous is not None and read.count > previous + 1:
            missed = read.count - previous - 1
            reason = (
                f"{missed} card(s) left the shoe unread (its count went from {previous} to "
                f"{read.count}): confirm {card.code} as the next card, or enter it"
            )
            return table.hold(reason, device, ("confirm", "void"), now, read)
        return table.resume(self._card_record(card.code, read))

    def _card_record(self, code: str, read: CardRead | None) -> rec.CardDrawn:
        pending = self.table.pending
        assert pending is not None
        request: CardRequest = pending.request
        return rec.CardDrawn(
            card=code,
            target=request.target,
            device=self.device,
            count=read.count if read is not None else None,
        )


def _nth(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


ROLE = DeviceRole(
    name="card_source",
    short="shoe",
    sends=(CardRead, ShoeState),
    commands=(ExpectCards,),
    answers=(CardRequest, NewShoe),  # a physical shoe: a new round burns nothing virtually
    dealer=CardSource,
    simulator="server.devices.simulated.card_source:SimulatedShoe",
)
