"""The wheel: an automated roulette or Big Six wheel answers a table's spin requests
(docs/devices.md, "Messages" and "Faults").

The server says ``start_spin`` with the game number it expects; the wheel reports its phase,
its result and its warnings. A spin with no result (617a.6), the clapper between two sections
(619a.2(d)) or no result in time is spun again, up to ``max_restarts`` times; then the round
is void and the table closed until a supervisor reopens it. A result the wheel does not have
(a tilted wheel) or a game number that jumped holds the table for staff.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, Literal

import msgspec

from rng.wheel_layouts import BIG_SIX_ORDER, wheel_pockets
from server.core.effects import Irregular
from server.devices.message_types import GameNumber, Message, RoundId, Text
from server.devices.roles.base import DeviceRole, Log, Pending, RoleDealer, Send
from server.games.chance import SpinRequest
from server.games.table import (
    BigSixWheelSpec,
    Capabilities,
    ConfigError,
    RouletteWheelSpec,
    TableGame,
)
from server.journal import records as rec

if TYPE_CHECKING:
    from server.devices.dealing import DeviceDealer

__all__ = ["ROLE", "Restart", "StartSpin", "Wheel", "WheelPhase", "WheelResult", "WheelWarning"]


# --- messages ------------------------------------------------------------------------------------


class WheelPhase(Message, tag="wheel_phase", frozen=True):
    """The wheel's phase in its game ``game`` (its own counter)."""

    phase: Literal["idle", "spinning", "ball_launched", "no_more_bets", "result", "closed"]
    game: GameNumber


class WheelResult(Message, tag="wheel_result", frozen=True):
    """The winning pocket (roulette: its label, ``0``, ``00``, ``17``) or section (Big Six: its
    index 0–53) of game ``game``, for ``round``."""

    round: RoundId
    game: GameNumber
    result: Annotated[str, msgspec.Meta(min_length=1, max_length=8)]


class WheelWarning(Message, tag="wheel_warning", frozen=True):
    """A spin that produced no result: ``no_spin`` (617a.6: the ball did not complete four
    revolutions, left the wheel, a foreign object), ``ball_not_sensed``, ``ball_removed``,
    ``between_sections`` (619a.2(d): the clapper stopped between two sections), or
    ``wheel_stopped``."""

    round: RoundId
    warning: Literal[
        "no_spin", "ball_not_sensed", "ball_removed", "between_sections", "wheel_stopped"
    ]
    detail: Text = ""


class StartSpin(Message, tag="start_spin", frozen=True):
    """Server → wheel: spin for ``round``; ``game`` is the game number the server expects."""

    round: RoundId
    game: GameNumber


class Restart(Message, tag="restart", frozen=True):
    """Server → wheel: no spin; spin ``round`` again."""

    round: RoundId
    reason: Text = ""


# --- the dealer part ------------------------------------------------------------------------------


class Wheel(RoleDealer):
    """An automated wheel at a table; option ``wheel_results``: each result the wheel may
    report -> the engine's answer (a pocket's label, a Big Six section's index)."""

    def __init__(
        self, table: DeviceDealer, role: str, device: str, options: Mapping[str, Any]
    ) -> None:
        super().__init__(table, role, device, options)
        self.results: dict[str, str | int] = dict(options.get("wheel_results") or {})
        self.game_number: int | None = None  # the wheel's last game number

    @classmethod
    def options(cls, where: str, game: TableGame, capabilities: Capabilities) -> dict[str, Any]:
        if not capabilities.asks(SpinRequest):
            raise ConfigError(f"{where}: a wheel spins; this game deals cards")
        spec = game.chance
        results: dict[str, str | int] = {}
        if isinstance(spec, RouletteWheelSpec):
            results = {p.label: p.label for p in wheel_pockets(spec.wheel_type)}
        elif isinstance(spec, BigSixWheelSpec):
            results = {str(n): n for n in range(len(BIG_SIX_ORDER))}
        return {"wheel_results": results}

    def request(self, pending: Pending, now: float) -> list[Any]:
        game = self.game_number + 1 if self.game_number is not None else 0
        return [Send(self.role, StartSpin(round=pending.round_id, game=game))]

    def receive(self, message: Any, now: float) -> list[Any]:
        if isinstance(message, WheelResult):
            return self._result(message, now)
        if isinstance(message, WheelWarning):
            return self._no_spin(message.round, message.warning, now)
        if isinstance(message, WheelPhase):
            return []
        return super().receive(message, now)

    def timeout(self, pending: Pending, now: float) -> list[Any]:
        return self._no_spin(pending.round_id, "no result", now)

    def decide(self, choice: str, value: str, pending: Pending) -> Any:
        stashed = pending.stashed
        if not value and isinstance(stashed, WheelResult) and not pending.needs_value:
            value = stashed.result
        if value not in self.results:
            raise ValueError(f"enter the winning result (value), not {value!r}")
        return self._record(value, stashed.game if isinstance(stashed, WheelResult) else None)

    def _result(self, result: WheelResult, now: float) -> list[Any]:
        table, device = self.table, self.device
        pending = table.awaiting(SpinRequest, result.round)
        if pending is None:
            return [Log("warning", f"{device}: result {result.result} for {result.round!r} ignored: no spin asked")]  # fmt: skip  # noqa: E501
        if pending.hold is not None:
            if pending.suspended:  # spun while faulty: never used, but the wheel counted it
                self.game_number = result.game
            return []
        expected = self.game_number
        self.game_number = result.game
        if result.result not in self.results:
            reason = (
                f"{device} reported {result.result!r}, not a result of this wheel: the wheel is "
                "tilted; verify the winning pocket and enter it"
            )
            return table.hold(reason, device, ("confirm", "void"), now, result, needs_value=True)
        if expected is not None and result.game != expected + 1:
            reason = (
                f"{device}'s game number jumped from {expected} to {result.game}: verify the "
                f"result {result.result}"
            )
            return table.hold(reason, device, ("confirm", "void"), now, result)
        return table.resume(self._record(result.result, result.game))

    def _record(self, value: str, game: int | None) -> rec.Spin:
        return rec.Spin(result=self.results[value], device=self.device, game=game)

    def _no_spin(self, round_id: str, why: str, now: float) -> list[Any]:
        """617a.6 (no spin), 619a.2(d) (the clapper between sections): spin again, up to
        ``max_restarts`` times; then the round is void and the table closed."""
        table, device = self.table, self.device
        pending = table.awaiting(SpinRequest, round_id)
        if pending is None or pending.hold is not None:
            return [Log("warning", f"{device}: {why} outside a spin")]
        if pending.restarts >= table.settings.max_restarts:
            table.out_of_service = (
                f"{device} gave no result in {pending.restarts + 1} spins: the wheel is out "
                "of order until a supervisor reopens the table"
            )
            reason = f"no spin ({why}) {pending.restarts + 1} times: round void (617a.6)"
            return [*table.prompt(table.out_of_service, ("reopen",)), *table.answer(Irregular(reason))]  # fmt: skip  # noqa: E501
        pending.restarts += 1
        pending.deadline = now + table.settings.answer_seconds
        rule = "619a.2(d)" if why == "between_sections" else "617a.6"
        return [
            Log("warning", f"{device}: {why}: spin again ({rule})"),
            Send(self.role, Restart(round=round_id, reason=why)),
        ]


ROLE = DeviceRole(
    name="wheel",
    short="wheel",
    sends=(WheelPhase, WheelResult, WheelWarning),
    commands=(StartSpin, Restart),
    answers=(SpinRequest,),
    dealer=Wheel,
    simulator="server.devices.simulated.wheel:SimulatedWheel",
)
