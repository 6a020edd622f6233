"""A simulated automated wheel (roulette, or Big Six with ``wheel = "big_six"``): it spins on
each ``start_spin`` or ``restart``, counting its games, and injects the wheel's faults of
``Faults``: a jam (no result), a ball not sensed, a result out of range, a game number that
jumps."""

from __future__ import annotations

from typing import Any

from rng.wheel_layouts import BIG_SIX_ORDER, WheelType, wheel_pockets
from server.devices.roles.wheel import Restart, StartSpin, WheelResult, WheelWarning
from server.devices.simulator import SimulatedDevice

__all__ = ["SimulatedWheel"]


class SimulatedWheel(SimulatedDevice):
    """``game``: the wheel's game number (kept in its non-volatile memory)."""

    simulates = "wheel"
    remembered = ("game",)

    def _start(self) -> None:
        self.game = 0

    def _answer(self, command: Any) -> None:
        if isinstance(command, StartSpin | Restart):
            self._spin(command.round)

    def _results(self) -> list[str]:
        if self.wheel == "big_six":
            return [str(n) for n in range(len(BIG_SIX_ORDER))]
        return [p.label for p in wheel_pockets(WheelType(self.wheel))]

    def _spin(self, round_id: str) -> None:
        faults, rnd = self.faults, self.random
        if faults.jam and rnd.random() < faults.jam:
            return  # the ball never drops: no result
        if faults.not_sensed and rnd.random() < faults.not_sensed:
            self.send(WheelWarning(round=round_id, warning="ball_not_sensed"))
            return
        self.game += 7 if faults.game_jump and rnd.random() < faults.game_jump else 1
        result = self.script.popleft() if self.script else rnd.choice(self._results())
        if faults.out_of_range and rnd.random() < faults.out_of_range:
            result = "99"
        self.send(WheelResult(round=round_id, game=self.game, result=result))
