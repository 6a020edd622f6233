"""A table's devices answering its chance requests, sans-I/O (docs/devices.md, "Faults").

The table core asks for a card, a wheel result or the hole card's range (``Chance``); at a
table with devices, ``DeviceDealer`` answers from them: it says what to send to which device
(``Send``), and answers (``Answer``) once a device has given something it can trust. What it
cannot trust it does not guess: following the default policy "malfunction voids all pays
and plays" and each chapter's Irregularities section, it

- voids the round (``Irregular``) — a card drawn before no more bets ("game before time"),
  a wheel that gives no result after ``max_restarts`` restarts (617a.6), a hole-card reader
  that lights no lamp (685a.12(i));
- puts the table on hold (``Held``) until the dealer and a supervisor decide from the dealer
  console (``ConsoleAction``, two different people) — an impossible read (more of a card
  than the shoe holds, a card that is no card), a card missing (the shoe's count skipped, or
  none read in time), a wheel result out of range or a game number that jumped, a wrong
  hole-card lamp (685a.12(h)); a hold nobody decides within ``hold_seconds`` voids the round;
- closes the table to new rounds (a hold before the round opens, with ``reopen`` the only
  option) after a reader malfunction until it is repaired (685a.12(i)), and after a wheel
  failed its spins;
- suspends the table while one of its devices reports a fault (a door open, a tilt: "door
  open → cease play"): what the round waits for is held — staff may ``void`` it, or the round
  goes on once the device clears the fault, the device asked again — and no round opens.

A card found face up in the shoe is discarded (651a.11(a), 681a.9(a), 685a.12(a)); a card
the shoe counts twice (a double read) is dropped. Nothing here reads a clock or does I/O.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rng.cards import Card
from server.core.effects import VIRTUAL, Decided, Irregular, NewShoe
from server.devices.messages import (
    Arm,
    CardRead,
    ConsoleAction,
    DeviceFault,
    ExpectCards,
    HoleLamp,
    Prompt,
    Restart,
    ShoeState,
    StartSpin,
    WheelPhase,
    WheelResult,
    WheelWarning,
)
from server.games.chance import CardRequest, HoleRangeRequest, SpinRequest
from server.games.down_under_blackjack.rules import HoleRange
from server.journal import records as rec

__all__ = [
    "VIRTUAL",
    "Answer",
    "DealerSettings",
    "DeviceDealer",
    "Log",
    "Send",
    "TableAction",
]


@dataclass(frozen=True, slots=True)
class Send:
    """Send ``message`` to the table's device of ``role``."""

    role: str
    message: Any


@dataclass(frozen=True, slots=True)
class Answer:
    """The answer to the pending chance request: a journal record, ``Held``, ``Irregular``,
    ``Decided``, None (a new physical shoe: no burn record) or ``VIRTUAL``."""

    result: Any


@dataclass(frozen=True, slots=True)
class TableAction:
    """For the table itself, not a chance request: the console's ``no_more_bets`` or a
    ``void`` outside a hold (``staff``: the journal's ``StaffDecision``)."""

    staff: rec.StaffDecision


@dataclass(frozen=True, slots=True)
class Log:
    """Something for the server's log (the journal records holds and decisions itself)."""

    level: str
    message: str


@dataclass(frozen=True)
class DealerSettings:
    """``answer_seconds``: how long a card, lamp or result is awaited before the table holds
    (a wheel is restarted); ``hold_seconds``: a hold nobody decides is voided after this;
    ``max_restarts``: no-spins before the round is voided and the wheel closed."""

    answer_seconds: float = 10.0
    hold_seconds: float = 300.0
    max_restarts: int = 2


@dataclass
class _Pending:
    round_id: str
    request: Any
    hole: str | None
    deadline: float
    hold: rec.Held | None = None
    hold_deadline: float | None = None
    stashed: Any = None  # the read a hold is about (a count gap, an impossible card)
    needs_value: bool = False  # staff must enter the card or result to confirm
    restarts: int = 0
    answered: bool = False
    suspended: bool = False  # the hold is a device's fault: lifted when the fault clears


@dataclass
class _Shoe:
    """What the server knows of the physical shoe."""

    count: int | None = None  # the shoe's count of its last card read
    seen: Counter[str] = field(default_factory=Counter)  # cards read since it was filled
    armed: str | None = None  # the round its cards are for (after no more bets)
    reads: deque[CardRead] = field(default_factory=deque)  # read, not yet dealt
    early: str | None = None  # a card read before no more bets: the round to void


class DeviceDealer:
    def __init__(
        self,
        table_id: str,
        devices: Mapping[str, str],
        *,
        decks: int | None = None,
        wheel_results: Mapping[str, str | int] | None = None,
        lights: Mapping[str, str] | None = None,
        settings: DealerSettings | None = None,
    ) -> None:
        """``devices``: role -> device id; ``decks``: the shoe's decks (for impossible reads);
        ``wheel_results``: each result a wheel may report -> the engine's answer (a pocket's
        label, a Big Six section's index); ``lights``: lamp colour -> hole range."""
        self.table_id = table_id
        self.devices = dict(devices)
        self.decks = decks
        self.wheel_results = dict(wheel_results or {})
        self.lights = dict(lights or {})
        self.settings = settings or DealerSettings()
        self.pending: _Pending | None = None
        self.out_of_service: str | None = None  # why no round may open (685a.12(i), a wheel)
        self.game_number: int | None = None  # the wheel's last game number
        self.shoe = _Shoe()
        self.faults: dict[str, set[str]] = {}  # device id -> its open faults (table suspended)
        self.reopened: rec.StaffDecision | None = None  # a reopen between rounds, to journal
        self.stopped = False  # the table is stopping: nothing more is asked of a device

    # --- which requests the devices answer ----------------------------------------------------

    def answers(self, request: Any) -> bool:
        """Whether this table's devices answer ``request`` (the others go to the virtual
        shoe or wheel, and a Mystery Bonus hit value always does)."""
        if isinstance(request, NewShoe):
            return True  # a closed table holds before its round; a physical shoe burns nothing
        if isinstance(request, CardRequest):
            return "card_source" in self.devices
        if isinstance(request, SpinRequest):
            return "wheel" in self.devices
        if isinstance(request, HoleRangeRequest):
            return "hole_card_reader" in self.devices
        return False

    # --- inputs --------------------------------------------------------------------------------

    def ask(self, round_id: str, request: Any, hole: str | None, now: float) -> list[Any]:
        """The table core asks (again, after a hold: the same request goes on waiting)."""
        pending = self.pending
        if (
            pending is not None
            and not pending.answered
            and (pending.request, pending.round_id) == (request, round_id)
        ):
            return []  # asked again after a hold: still waiting for staff
        self.pending = _Pending(round_id, request, hole, now + self.settings.answer_seconds)
        if self.stopped:  # asked after the stop (the core was between two requests)
            return self.stop()
        if self.faults:
            return self._suspend(now)
        return self._request(now)

    def _request(self, now: float) -> list[Any]:
        """Ask the device for what the pending request needs."""
        pending = self.pending
        assert pending is not None
        round_id, request = pending.round_id, pending.request
        if isinstance(request, NewShoe):
            return self._new_round(round_id, now)
        if isinstance(request, CardRequest):
            return self._want_card(round_id, now)
        if isinstance(request, SpinRequest):
            return [Send("wheel", StartSpin(round=round_id, game=self._next_game()))]
        return [Send("hole_card_reader", Arm(round=round_id, card=pending.hole or ""))]

    def receive(self, role: str, message: Any, now: float) -> list[Any]:
        """A message from the table's device of ``role`` (already validated for the role)."""
        device = self.devices.get(role, role)
        if isinstance(message, DeviceFault):
            return self._fault(device, message, now)
        if isinstance(message, CardRead):
            return self._card_read(device, message, now)
        if isinstance(message, ShoeState):
            if message.state == "inserted":
                self.shoe.count, self.shoe.seen = None, Counter()
            return [Log("info", f"{device}: shoe {message.state}")]
        if isinstance(message, WheelResult):
            return self._wheel_result(device, message, now)
        if isinstance(message, WheelWarning):
            return self._no_spin(device, message.round, message.warning, now)
        if isinstance(message, WheelPhase):
            return []
        if isinstance(message, HoleLamp):
            return self._lamp(device, message, now)
        if isinstance(message, ConsoleAction):
            return self._console(message, now)
        return [Log("warning", f"{device}: {type(message).__name__} ignored")]

    def tick(self, now: float) -> list[Any]:
        """Time passed: a device that did not answer in time, a hold nobody decided."""
        pending = self.pending
        if pending is None or pending.answered:
            return []
        if pending.hold is not None:
            # A table closed before its round (NewShoe) stays closed until staff reopen it.
            if isinstance(pending.request, NewShoe):
                return []
            if pending.hold_deadline is not None and now >= pending.hold_deadline:
                return self._answer(
                    Irregular(
                        f"malfunction voids all pays and plays: {pending.hold.reason}; "
                        f"not decided within {self.settings.hold_seconds:g} s"
                    )
                )
            return []
        if now < pending.deadline:
            return []
        seconds = f"{self.settings.answer_seconds:g} s"
        request = pending.request
        if isinstance(request, CardRequest):
            device = self.devices["card_source"]
            reason = f"no card was read from {device} for {request.target} within {seconds}"
            return self._hold(reason, device, ("confirm", "void"), now)
        if isinstance(request, SpinRequest):
            return self._no_spin(self.devices["wheel"], pending.round_id, "no result", now)
        if isinstance(request, HoleRangeRequest):
            lamp = HoleLamp(round=pending.round_id, lamp="none")
            return self._lamp(self.devices["hole_card_reader"], lamp, now)
        return []

    def next_deadline(self) -> float | None:
        pending = self.pending
        if pending is None or pending.answered:
            return None
        if pending.hold is not None:
            return None if isinstance(pending.request, NewShoe) else pending.hold_deadline
        return pending.deadline

    def stop(self) -> list[Any]:
        """The table stops: a request still waiting is answered — its round voided; before a
        round, the round opens to be voided at once (the core is stopping). A request after
        the stop is answered the same way at once: its devices may be gone already."""
        self.stopped = True
        pending = self.pending
        if pending is None or pending.answered:
            return []
        if isinstance(pending.request, NewShoe):
            return self._answer(self._new_shoe())
        return self._answer(Irregular("the table was stopped"))

    def _new_shoe(self) -> Any:
        """A new round's shoe: a physical shoe burns nothing virtually (None); a table whose
        cards come from the virtual shoe asks it (``VIRTUAL``)."""
        return None if "card_source" in self.devices else VIRTUAL

    # --- answering -----------------------------------------------------------------------------

    def _answer(self, result: Any) -> list[Any]:
        assert self.pending is not None
        self.pending.answered = True
        return [Answer(result)]

    def _hold(
        self,
        reason: str,
        device: str,
        options: tuple[str, ...],
        now: float,
        stashed: Any = None,
        *,
        needs_value: bool = False,
    ) -> list[Any]:
        pending = self.pending
        assert pending is not None
        hold = rec.Held(reason=reason, device=device, options=options)
        pending.hold, pending.stashed, pending.needs_value = hold, stashed, needs_value
        pending.hold_deadline = now + self.settings.hold_seconds
        out: list[Any] = [Log("warning", f"table {self.table_id} on hold: {reason}")]
        out += self._prompt(f"on hold: {reason}", options)
        return [*out, Answer(hold)]

    def _prompt(self, text: str, options: tuple[str, ...] = ()) -> list[Any]:
        if "dealer_console" not in self.devices:
            return []
        return [Send("dealer_console", Prompt(table=self.table_id, text=text, options=options))]

    def _resume(self, answer: Any) -> list[Any]:
        """Answer a request that may have been held: a device gave what was missing."""
        pending = self.pending
        assert pending is not None
        if pending.hold is not None:
            pending.hold = None
            return [*self._prompt("resumed"), *self._answer(answer)]
        return self._answer(answer)

    # --- cards ---------------------------------------------------------------------------------

    def _new_round(self, round_id: str, now: float) -> list[Any]:
        shoe = self.shoe
        leftover = list(shoe.reads)
        shoe.reads.clear()
        shoe.armed, shoe.early = None, None
        if self.out_of_service is not None:
            return self._hold(self.out_of_service, "", ("reopen",), now)
        if leftover:
            cards = ", ".join(r.card for r in leftover)
            reason = (
                f"card(s) {cards} read after the previous hand was complete: they go to the "
                "discard rack (681a.9(b), 685a.12(d)); confirm"
            )
            return self._hold(reason, self.devices.get("card_source", ""), ("confirm",), now)
        if self.reopened is not None:
            staff, self.reopened = self.reopened, None
            return self._answer(Decided(staff, self._new_shoe()))
        return self._answer(self._new_shoe())

    def _want_card(self, round_id: str, now: float) -> list[Any]:
        shoe = self.shoe
        assert self.pending is not None
        target = self.pending.request.target
        if shoe.armed != round_id:
            shoe.armed = round_id
            if shoe.early is not None:
                reason = shoe.early
                shoe.reads.clear()
                return self._answer(Irregular(reason))
        if shoe.reads:
            # Already out of the shoe (read while the table was held): asking for another
            # would have the dealer draw one card too many.
            return self._deal_read(shoe.reads.popleft(), now)
        return [Send("card_source", ExpectCards(round=round_id, target=target))]

    def _card_read(self, device: str, read: CardRead, now: float) -> list[Any]:
        shoe = self.shoe
        if shoe.count is not None and read.count <= shoe.count:
            return [Log("warning", f"{device}: card {read.card} counted {read.count} again: a double read, dropped")]  # fmt: skip  # noqa: E501
        if read.face_up:  # 651a.11(a), 681a.9(a), 685a.12(a): never used
            shoe.count = read.count
            shoe.seen[read.card.upper()] += 1
            return [Log("warning", f"{device}: card {read.card} found face up in the shoe: discarded")]  # fmt: skip  # noqa: E501
        pending = self.pending
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
        shoe, pending = self.shoe, self.pending
        assert pending is not None
        device = self.devices["card_source"]
        previous = shoe.count
        shoe.count = read.count
        code = read.card.upper()
        shoe.seen[code] += 1
        try:
            card = Card.parse(code)
        except ValueError:
            reason = f"{device} read {read.card!r}, which is no card: enter the physical card"
            return self._hold(reason, device, ("confirm", "void"), now, read, needs_value=True)
        if self.decks is not None and shoe.seen[card.code] > self.decks:
            reason = (
                f"impossible read: {device} read {card.code} a {_nth(shoe.seen[card.code])} "
                f"time from a {self.decks}-deck shoe: verify the physical card and enter it"
            )
            return self._hold(reason, device, ("confirm", "void"), now, read, needs_value=True)
        if previous is not None and read.count > previous + 1:
            missed = read.count - previous - 1
            reason = (
                f"{missed} card(s) left the shoe unread (its count went from {previous} to "
                f"{read.count}): confirm {card.code} as the next card, or enter it"
            )
            return self._hold(reason, device, ("confirm", "void"), now, read)
        return self._resume(self._card_record(card.code, read))

    def _card_record(self, code: str, read: CardRead | None) -> rec.CardDrawn:
        assert self.pending is not None
        request: CardRequest = self.pending.request
        return rec.CardDrawn(
            card=code,
            target=request.target,
            device=self.devices["card_source"],
            count=read.count if read is not None else None,
        )

    # --- wheels ----------------------------------------------------------------------------------

    def _next_game(self) -> int:
        return self.game_number + 1 if self.game_number is not None else 0

    def _awaiting(self, kind: type, round_id: str) -> _Pending | None:
        """The pending request if it is a ``kind`` request of ``round_id`` not yet answered:
        a device's message for anything else is stale or out of turn, and only logged."""
        pending = self.pending
        if (
            pending is None
            or pending.answered
            or not isinstance(pending.request, kind)
            or round_id != pending.round_id
        ):
            return None
        return pending

    def _wheel_result(self, device: str, result: WheelResult, now: float) -> list[Any]:
        pending = self._awaiting(SpinRequest, result.round)
        if pending is None:
            return [Log("warning", f"{device}: result {result.result} for {result.round!r} ignored: no spin asked")]  # fmt: skip  # noqa: E501
        if pending.hold is not None:
            if pending.suspended:  # spun while faulty: never used, but the wheel counted it
                self.game_number = result.game
            return []
        expected = self.game_number
        self.game_number = result.game
        if result.result not in self.wheel_results:
            reason = (
                f"{device} reported {result.result!r}, not a result of this wheel: the wheel is "
                "tilted; verify the winning pocket and enter it"
            )
            return self._hold(reason, device, ("confirm", "void"), now, result, needs_value=True)
        if expected is not None and result.game != expected + 1:
            reason = (
                f"{device}'s game number jumped from {expected} to {result.game}: verify the "
                f"result {result.result}"
            )
            return self._hold(reason, device, ("confirm", "void"), now, result)
        return self._resume(self._spin_record(result.result, result.game))

    def _spin_record(self, value: str, game: int | None) -> rec.Spin:
        return rec.Spin(result=self.wheel_results[value], device=self.devices["wheel"], game=game)

    def _no_spin(self, device: str, round_id: str, why: str, now: float) -> list[Any]:
        """617a.6 (no spin), 619a.2(d) (the clapper between sections): spin again, up to
        ``max_restarts`` times; then the round is void and the table closed."""
        pending = self._awaiting(SpinRequest, round_id)
        if pending is None or pending.hold is not None:
            return [Log("warning", f"{device}: {why} outside a spin")]
        if pending.restarts >= self.settings.max_restarts:
            self.out_of_service = (
                f"{device} gave no result in {pending.restarts + 1} spins: the wheel is out "
                "of order until a supervisor reopens the table"
            )
            reason = f"no spin ({why}) {pending.restarts + 1} times: round void (617a.6)"
            return [*self._prompt(self.out_of_service, ("reopen",)), *self._answer(Irregular(reason))]  # fmt: skip  # noqa: E501
        pending.restarts += 1
        pending.deadline = now + self.settings.answer_seconds
        rule = "619a.2(d)" if why == "between_sections" else "617a.6"
        return [
            Log("warning", f"{device}: {why}: spin again ({rule})"),
            Send("wheel", Restart(round=round_id, reason=why)),
        ]

    # --- the hole-card reader --------------------------------------------------------------------

    def _lamp(self, device: str, lamp: HoleLamp, now: float) -> list[Any]:
        pending = self._awaiting(HoleRangeRequest, lamp.round)
        if pending is None or pending.hole is None:
            return [Log("warning", f"{device}: lamp {lamp.lamp} for {lamp.round!r} ignored")]
        if pending.hold is not None:
            return []
        actual = HoleRange.of(Card.parse(pending.hole))
        shown = self.lights.get(lamp.lamp)
        if shown is None:  # no lamp, or a colour the reader has no range for
            self.out_of_service = (
                f"the card reader {device} is out of order; Down Under Blackjack may not be "
                "dealt until it is repaired (685a.12(i))"
            )
            reason = f"the card reader {device} lit {lamp.lamp!r}: malfunction, round void (685a.12(i))"  # fmt: skip  # noqa: E501
            return [*self._prompt(self.out_of_service, ("reopen",)), *self._answer(Irregular(reason))]  # fmt: skip  # noqa: E501
        if shown != actual.value:
            self.out_of_service = (
                f"the card reader {device} showed a wrong range; Down Under Blackjack may not "
                "be dealt until it is repaired (685a.12(i))"
            )
            reason = (
                f"the card reader {device} lit {lamp.lamp} ({shown}) for a {actual.value} hole "
                "card (685a.12(h)): continue the hands, or call them dead and return the Bet "
                "Wagers"
            )
            return self._hold(reason, device, ("continue", "dead"), now, lamp)
        return self._resume(rec.HoleRangeRead(range=actual.value, device=device, lamp=lamp.lamp))

    # --- the dealer console ------------------------------------------------------------------

    def _console(self, action: ConsoleAction, now: float) -> list[Any]:
        console = self.devices.get("dealer_console", "console")
        if action.table != self.table_id:
            return self._prompt(f"refused: this console serves table {self.table_id}")
        dealer, supervisor = action.dealer.strip(), action.supervisor.strip()
        if action.action == "no_more_bets":  # the dealer's own call
            if not dealer:
                return self._prompt("refused: the dealer signs no more bets")
            staff = rec.StaffDecision(action="no_more_bets", dealer=dealer, supervisor=supervisor)
            return [Log("info", f"{console}: {dealer} called no more bets"), TableAction(staff)]
        if not dealer or not supervisor or dealer == supervisor:
            return self._prompt("refused: a dealer and a supervisor, two different people, both sign")  # fmt: skip  # noqa: E501
        pending = self.pending
        held = pending is not None and not pending.answered and pending.hold is not None
        if action.action == "void" and not held:  # a correction: void the round in play
            reason = "voided from the dealer console (a correction)"
            staff = rec.StaffDecision(action="void", dealer=dealer, supervisor=supervisor, reason=reason)  # fmt: skip  # noqa: E501
            log = Log("warning", f"{console}: {dealer} and {supervisor} voided the round at table {self.table_id}")  # fmt: skip  # noqa: E501
            if pending is not None and not pending.answered and not isinstance(pending.request, NewShoe):  # fmt: skip  # noqa: E501
                # The round waits on a device: the void answers what it waits for.
                return [log, *self._answer(Decided(staff, Irregular.by_console(staff)))]
            return [log, TableAction(staff)]  # betting or decisions: the table voids it
        if not held or pending is None or pending.hold is None:
            if action.action == "reopen" and self.out_of_service is not None:
                # Reopened between rounds: the next round opens, and journals who reopened.
                why = self.out_of_service
                self.reopened = rec.StaffDecision(
                    action="reopen", dealer=dealer, supervisor=supervisor, reason=why
                )
                self.out_of_service = None
                return [Log("warning", f"{console}: {dealer} and {supervisor} reopened table {self.table_id}")]  # fmt: skip  # noqa: E501
            return self._prompt(f"refused: nothing to {action.action} at table {self.table_id}")
        hold = pending.hold
        if action.action not in hold.options:
            options = ", ".join(hold.options)
            return self._prompt(f"refused: {action.action} is not an option now ({options})", hold.options)  # fmt: skip  # noqa: E501
        try:
            answer = self._decide(action, pending)
        except ValueError as exc:
            return self._prompt(f"refused: {exc}", hold.options)
        staff = rec.StaffDecision(
            action=action.action,
            dealer=dealer,
            supervisor=supervisor,
            value=action.value,
            reason=hold.reason,
        )
        pending.hold = None
        log = Log("warning", f"{console}: {dealer} and {supervisor} chose {action.action} at table {self.table_id}")  # fmt: skip  # noqa: E501
        return [log, *self._prompt("resumed"), *self._answer(Decided(staff, answer))]

    def _decide(self, action: ConsoleAction, pending: _Pending) -> Any:
        """The chance request's answer after staff's ``action``; ``ValueError`` for an entry
        that cannot answer it."""
        hold = pending.hold
        assert hold is not None
        if action.action in ("void", "dead"):
            what = "hands called dead, every Bet Wager returned (685a.12(h))" if action.action == "dead" else "voided"  # fmt: skip  # noqa: E501
            return Irregular(f"{hold.reason} — {what} by the dealer and supervisor")
        if action.action == "reopen":
            self.out_of_service = None
            return self._new_shoe()
        request = pending.request
        if isinstance(request, NewShoe):  # leftover cards confirmed discarded
            return self._new_shoe()
        if isinstance(request, CardRequest):
            stashed = pending.stashed
            if action.value:
                code = Card.parse(action.value).code  # ValueError names the entry
            elif isinstance(stashed, CardRead) and not pending.needs_value:
                code = Card.parse(stashed.card).code
            else:
                raise ValueError("enter the physical card (value)")
            return self._card_record(code, stashed if isinstance(stashed, CardRead) else None)
        if isinstance(request, SpinRequest):
            stashed = pending.stashed
            value = action.value
            if not value and isinstance(stashed, WheelResult) and not pending.needs_value:
                value = stashed.result
            if value not in self.wheel_results:
                raise ValueError(f"enter the winning result (value), not {value!r}")
            return self._spin_record(value, stashed.game if isinstance(stashed, WheelResult) else None)  # fmt: skip  # noqa: E501
        # 685a.12(h) "continue": the hands play on; the range is the card's own.
        assert pending.hole is not None
        actual = HoleRange.of(Card.parse(pending.hole))
        lamp = pending.stashed.lamp if isinstance(pending.stashed, HoleLamp) else None
        return rec.HoleRangeRead(range=actual.value, device=self.devices["hole_card_reader"], lamp=lamp)  # fmt: skip  # noqa: E501

    def _fault(self, device: str, fault: DeviceFault, now: float) -> list[Any]:
        """A table device's fault suspends the table until it clears (the notes' "door open
        → cease play"); a dealer console's is only logged. The hub keeps each device's open
        faults for ``croupier devices``."""
        if device == self.devices.get("dealer_console"):
            return [Log("warning", f"{device}: fault {fault.code} {fault.detail}".rstrip())]
        if fault.cleared:
            self.faults.get(device, set()).discard(fault.code)
            if not self.faults.get(device):
                self.faults.pop(device, None)
            out: list[Any] = [Log("info", f"{device}: {fault.code} cleared")]
            pending = self.pending
            if self.faults or pending is None or pending.answered or not pending.suspended:
                return out
            # The fault cleared: the round goes on; the device is asked again (a wheel spins
            # again, a reader reads again: nothing it gave while faulty was used).
            pending.hold, pending.suspended = None, False
            pending.deadline = now + self.settings.answer_seconds
            return [*out, *self._prompt(f"{device} {fault.code} cleared: resumed"), *self._request(now)]  # fmt: skip  # noqa: E501
        self.faults.setdefault(device, set()).add(fault.code)
        out = [Log("warning", f"{device}: fault {fault.code} {fault.detail}".rstrip())]
        pending = self.pending
        if pending is None or pending.answered or pending.hold is not None:
            return out  # the next request is held; a hold already there stays for staff
        return [*out, *self._suspend(now)]

    def _suspend(self, now: float) -> list[Any]:
        """Hold the pending request while a device has a fault open: before a round, until it
        clears (no round opens); in a round, until it clears or staff void the round."""
        pending = self.pending
        assert pending is not None
        faults = "; ".join(f"{device} reports {', '.join(sorted(codes))}" for device, codes in sorted(self.faults.items()))  # fmt: skip  # noqa: E501
        device = sorted(self.faults)[0]
        if isinstance(pending.request, NewShoe):
            reason = f"{faults}: no round opens until the fault is cleared"
            out = self._hold(reason, device, (), now)
        else:
            reason = f"{faults}: play suspended until the fault is cleared, or void the round"
            out = self._hold(reason, device, ("void",), now)
        pending.suspended = True
        return out


def _nth(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"
