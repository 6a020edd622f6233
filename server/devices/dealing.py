"""A table's devices answering its chance requests, sans-I/O (docs/devices.md, "Faults").

The table core asks for a card, a wheel result or the hole card's range (``Chance``); at a
table with devices, ``DeviceDealer`` answers from them: it says what to send to which device
(``Send``), and answers (``Answer``) once a device has given something it can trust. Each
role's own rules — what to ask its device, what its messages mean, what cannot be trusted —
are its dealer part (``server/devices/roles/``: the card source, the wheel, the hole-card
reader, the dealer console), found through the registry by the role's name. What it cannot
trust it does not guess: following the default policy "malfunction voids all pays and
plays" and each chapter's Irregularities section, the policy common to every role is here:

- a role may void the round (``Irregular``) or put the table on hold (``Held``) until the
  dealer and a supervisor decide from the dealer console (``staff``: two different people);
  a hold nobody decides within ``hold_seconds`` voids the round;
- a table closed to new rounds (``out_of_service``: a reader malfunction, 685a.12(i), a wheel
  that failed its spins) holds before its next round, with ``reopen`` the only option;
- a table is suspended while one of its devices reports a fault (a door open, a tilt: "door
  open → cease play"): what the round waits for is held — staff may ``void`` it, or the round
  goes on once the device clears the fault, the device asked again — and no round opens;
- a device that gives nothing in ``answer_seconds`` is its role's to handle (a hold, a
  restart, a void), and a stopping table voids what still waits.

Nothing here reads a clock or does I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from server.core.effects import VIRTUAL, Decided, Irregular, NewShoe
from server.devices.message_types import DeviceFault
from server.devices.roles import device_role
from server.devices.roles.base import (
    Answer,
    DealerSettings,
    Log,
    Pending,
    RoleDealer,
    Send,
    TableAction,
)
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


class DeviceDealer:
    def __init__(
        self,
        table_id: str,
        devices: Mapping[str, str],
        *,
        settings: DealerSettings | None = None,
        **options: Any,
    ) -> None:
        """``devices``: role -> device id; ``options``: what the roles need from the table's
        game, each role's part taking its own (``decks``: the shoe's decks, for impossible
        reads; ``wheel_results``: each result a wheel may report -> the engine's answer, a
        pocket's label or a Big Six section's index; ``lights``: lamp colour -> hole range).
        ``UnknownRole`` for a role nobody registered."""
        self.table_id = table_id
        self.devices = dict(devices)
        self.settings = settings or DealerSettings()
        self.pending: Pending | None = None
        self.out_of_service: str | None = None  # why no round may open (685a.12(i), a wheel)
        self.faults: dict[str, set[str]] = {}  # device id -> its open faults (table suspended)
        self.reopened: rec.StaffDecision | None = None  # a reopen between rounds, to journal
        self.stopped = False  # the table is stopping: nothing more is asked of a device
        self.roles = {name: device_role(name) for name in self.devices}
        self.parts: dict[str, RoleDealer] = {
            name: role.dealer(self, name, self.devices[name], options)
            for name, role in self.roles.items()
            if role.dealer is not None
        }

    @property
    def shoe(self) -> Any:
        """What the server knows of the table's card-reading shoe (its card source's)."""
        return cast(Any, self.parts["card_source"]).shoe

    # --- which requests the devices answer ----------------------------------------------------

    def answers(self, request: Any) -> bool:
        """Whether this table's devices answer ``request`` (the others go to the virtual
        shoe or wheel, and a Mystery Bonus hit value always does)."""
        if isinstance(request, NewShoe):
            return True  # a closed table holds before its round; a physical shoe burns nothing
        return self._part_for(request) is not None

    def _part_for(self, request: Any) -> RoleDealer | None:
        """The part of the role that answers ``request``, if the table has one."""
        for name, part in self.parts.items():
            if isinstance(request, self.roles[name].answers):
                return part
        return None

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
        self.pending = Pending(round_id, request, hole, now + self.settings.answer_seconds)
        if self.stopped:  # asked after the stop (the core was between two requests)
            return self.stop()
        if self.faults:
            return self._suspend(now)
        return self._request(now)

    def _request(self, now: float) -> list[Any]:
        """Ask the device for what the pending request needs."""
        pending = self.pending
        assert pending is not None
        if isinstance(pending.request, NewShoe):
            return self._new_round(pending.round_id, now)
        part = self._part_for(pending.request)
        return part.request(pending, now) if part is not None else []

    def receive(self, role: str, message: Any, now: float) -> list[Any]:
        """A message from the table's device of ``role`` (already validated for the role)."""
        device = self.devices.get(role, role)
        if isinstance(message, DeviceFault):
            return self._fault(role, device, message, now)
        part = self.parts.get(role)
        if part is None:
            return [Log("warning", f"{device}: {type(message).__name__} ignored")]
        return part.receive(message, now)

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
                return self.answer(
                    Irregular(
                        f"malfunction voids all pays and plays: {pending.hold.reason}; "
                        f"not decided within {self.settings.hold_seconds:g} s"
                    )
                )
            return []
        if now < pending.deadline:
            return []
        part = self._part_for(pending.request)
        return part.timeout(pending, now) if part is not None else []

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
            return self.answer(self._new_shoe())
        return self.answer(Irregular("the table was stopped"))

    def _new_shoe(self) -> Any:
        """A new round's shoe: a physical shoe burns nothing virtually (None); a table whose
        cards come from the virtual shoe asks it (``VIRTUAL``)."""
        physical = any(NewShoe in role.answers for role in self.roles.values())
        return None if physical else VIRTUAL

    # --- answering (for the roles' parts too) ---------------------------------------------------

    def awaiting(self, kind: type, round_id: str) -> Pending | None:
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

    def answer(self, result: Any) -> list[Any]:
        assert self.pending is not None
        self.pending.answered = True
        return [Answer(result)]

    def hold(
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
        out += self.prompt(f"on hold: {reason}", options)
        return [*out, Answer(hold)]

    def prompt(self, text: str, options: tuple[str, ...] = ()) -> list[Any]:
        return [out for part in self.parts.values() for out in part.prompt(text, options)]

    def resume(self, answer: Any) -> list[Any]:
        """Answer a request that may have been held: a device gave what was missing."""
        pending = self.pending
        assert pending is not None
        if pending.hold is not None:
            pending.hold = None
            return [*self.prompt("resumed"), *self.answer(answer)]
        return self.answer(answer)

    def _new_round(self, round_id: str, now: float) -> list[Any]:
        held = [(part, hold) for part in self.parts.values() if (hold := part.new_round(round_id, now))]  # fmt: skip  # noqa: E501
        if self.out_of_service is not None:
            return self.hold(self.out_of_service, "", ("reopen",), now)
        if held:
            part, (reason, options) = held[0]
            return self.hold(reason, part.device, options, now)
        if self.reopened is not None:
            staff, self.reopened = self.reopened, None
            return self.answer(Decided(staff, self._new_shoe()))
        return self.answer(self._new_shoe())

    # --- staff's decisions (from the dealer console) ----------------------------------------------

    def staff(self, console: str, choice: str, value: str, dealer: str, supervisor: str) -> list[Any]:  # fmt: skip  # noqa: E501
        """The dealer and a supervisor (two people, both signed) chose ``choice`` at
        ``console``: a hold decided (``value``: the card or result they entered), a round
        voided outside a hold (a correction), a table closed for a device reopened."""
        pending = self.pending
        held = pending is not None and not pending.answered and pending.hold is not None
        if choice == "void" and not held:  # a correction: void the round in play
            reason = "voided from the dealer console (a correction)"
            staff = rec.StaffDecision(action="void", dealer=dealer, supervisor=supervisor, reason=reason)  # fmt: skip  # noqa: E501
            log = Log("warning", f"{console}: {dealer} and {supervisor} voided the round at table {self.table_id}")  # fmt: skip  # noqa: E501
            if pending is not None and not pending.answered and not isinstance(pending.request, NewShoe):  # fmt: skip  # noqa: E501
                # The round waits on a device: the void answers what it waits for.
                return [log, *self.answer(Decided(staff, Irregular.by_console(staff)))]
            return [log, TableAction(staff)]  # betting or decisions: the table voids it
        if not held or pending is None or pending.hold is None:
            if choice == "reopen" and self.out_of_service is not None:
                # Reopened between rounds: the next round opens, and journals who reopened.
                why = self.out_of_service
                self.reopened = rec.StaffDecision(
                    action="reopen", dealer=dealer, supervisor=supervisor, reason=why
                )
                self.out_of_service = None
                return [Log("warning", f"{console}: {dealer} and {supervisor} reopened table {self.table_id}")]  # fmt: skip  # noqa: E501
            return self.prompt(f"refused: nothing to {choice} at table {self.table_id}")
        hold = pending.hold
        if choice not in hold.options:
            options = ", ".join(hold.options)
            return self.prompt(f"refused: {choice} is not an option now ({options})", hold.options)  # fmt: skip  # noqa: E501
        try:
            answer = self._decide(choice, value, pending)
        except ValueError as exc:
            return self.prompt(f"refused: {exc}", hold.options)
        staff = rec.StaffDecision(
            action=choice, dealer=dealer, supervisor=supervisor, value=value, reason=hold.reason
        )
        pending.hold = None
        log = Log("warning", f"{console}: {dealer} and {supervisor} chose {choice} at table {self.table_id}")  # fmt: skip  # noqa: E501
        return [log, *self.prompt("resumed"), *self.answer(Decided(staff, answer))]

    def _decide(self, choice: str, value: str, pending: Pending) -> Any:
        """The chance request's answer after staff's ``choice``; ``ValueError`` for an entry
        that cannot answer it."""
        hold = pending.hold
        assert hold is not None
        if choice == "void":
            return Irregular(f"{hold.reason} — voided by the dealer and supervisor")
        if choice == "reopen":
            self.out_of_service = None
            return self._new_shoe()
        if isinstance(pending.request, NewShoe):  # leftover cards confirmed discarded
            return self._new_shoe()
        part = self._part_for(pending.request)
        if part is None:
            raise ValueError(f"no device of this table answers {type(pending.request).__name__}")
        return part.decide(choice, value, pending)

    # --- faults -----------------------------------------------------------------------------------

    def _fault(self, role: str, device: str, fault: DeviceFault, now: float) -> list[Any]:
        """A table device's fault suspends the table until it clears (the notes' "door open
        → cease play"); one of a role that does not suspend (a dealer console) is only
        logged. The hub keeps each device's open faults for ``croupier devices``."""
        declared = self.roles.get(role)
        if declared is not None and not declared.suspends_table:
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
            return [*out, *self.prompt(f"{device} {fault.code} cleared: resumed"), *self._request(now)]  # fmt: skip  # noqa: E501
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
            out = self.hold(reason, device, (), now)
        else:
            reason = f"{faults}: play suspended until the fault is cleared, or void the round"
            out = self.hold(reason, device, ("void",), now)
        pending.suspended = True
        return out
