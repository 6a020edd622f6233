"""A simulated dealer console: it shows each prompt (``out``) and decides a hold by the first
of its ``decide`` actions the hold offers, signed by its two ``staff``; after a refusal, by
the next one."""

from __future__ import annotations

from typing import Any

from server.devices.roles.dealer_console import ConsoleAction, Prompt
from server.devices.simulator import SimulatedDevice

__all__ = ["SimulatedConsole"]


class SimulatedConsole(SimulatedDevice):
    simulates = "dealer_console"

    def _start(self) -> None:
        self._tried: set[str] = set()

    def _answer(self, command: Any) -> None:
        if isinstance(command, Prompt):
            self.prompts.append(command)
            self.out(f"{self.id}: {command.text}")
            self._console(command)

    def _console(self, prompt: Prompt) -> None:
        """Decide a hold by the first of ``decide`` it offers (two people sign); after a
        refusal, by the next one."""
        if not prompt.text.startswith("refused"):
            self._tried = set()
        for action in self.decide:
            if action in prompt.options and action not in self._tried:
                self._tried.add(action)
                dealer, supervisor = self.staff
                self.send(
                    ConsoleAction(
                        action=action,  # type: ignore[arg-type]
                        table=self.table or prompt.table,
                        dealer=dealer,
                        supervisor=supervisor,
                    )
                )
                return
