"""The dealer console: where the dealer and a supervisor decide what the table's devices could
not (docs/devices.md, "Messages" and "Faults").

The server prompts it with each hold's reason and options (``prompt``), and with why an
action was refused. The dealer alone calls ``no_more_bets``; every other action is signed by
the dealer and a supervisor, two different people: a hold decided (``confirm``, ``void``,
``continue``, ``dead``), a round voided outside a hold (a correction), a table closed for a
device reopened. What a decision does is the table's dealer's (``DeviceDealer.staff``); the
console answers no chance itself, and its own faults are only logged.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal

import msgspec

from server.devices.message_types import Message, Staff, Text
from server.devices.roles.base import DeviceRole, Log, RoleDealer, Send, TableAction
from server.journal import records as rec

__all__ = ["CONSOLE_ACTIONS", "ROLE", "ConsoleAction", "DealerConsole", "Prompt"]

CONSOLE_ACTIONS: Final = ("confirm", "void", "continue", "dead", "reopen")


# --- messages ------------------------------------------------------------------------------------


class ConsoleAction(Message, tag="console_action", frozen=True):
    """The dealer and a supervisor (two people) decide a held round or reopen a table:
    ``confirm`` the read (or enter the physical card or result: ``value``), ``void`` the round
    (held or not: a correction), ``continue`` or call the hands ``dead`` after a wrong
    hole-card lamp (685a.12(h)), ``reopen`` a table closed for a device (685a.12(i), a tilted
    wheel). The dealer alone calls ``no_more_bets`` (betting closes now)."""

    action: Literal["confirm", "void", "continue", "dead", "reopen", "no_more_bets"]
    table: Annotated[str, msgspec.Meta(min_length=1, max_length=40)]
    dealer: Staff
    supervisor: Staff = ""
    value: Annotated[str, msgspec.Meta(max_length=8)] = ""


class Prompt(Message, tag="prompt", frozen=True):
    """Server → console: what the table needs now (a hold's reason and its options), or why an
    action was refused."""

    table: str
    text: Text
    options: tuple[str, ...] = ()


# --- the dealer part ------------------------------------------------------------------------------


class DealerConsole(RoleDealer):
    """A table's dealer console: staff's actions in, the table's prompts out."""

    def prompt(self, text: str, options: tuple[str, ...]) -> list[Any]:
        return [Send(self.role, Prompt(table=self.table.table_id, text=text, options=options))]

    def receive(self, message: Any, now: float) -> list[Any]:
        if not isinstance(message, ConsoleAction):
            return super().receive(message, now)
        table = self.table
        if message.table != table.table_id:
            return table.prompt(f"refused: this console serves table {table.table_id}")
        dealer, supervisor = message.dealer.strip(), message.supervisor.strip()
        if message.action == "no_more_bets":  # the dealer's own call
            if not dealer:
                return table.prompt("refused: the dealer signs no more bets")
            staff = rec.StaffDecision(action="no_more_bets", dealer=dealer, supervisor=supervisor)
            return [Log("info", f"{self.device}: {dealer} called no more bets"), TableAction(staff)]  # fmt: skip  # noqa: E501
        if not dealer or not supervisor or dealer == supervisor:
            return table.prompt("refused: a dealer and a supervisor, two different people, both sign")  # fmt: skip  # noqa: E501
        return table.staff(self.device, message.action, message.value, dealer, supervisor)


ROLE = DeviceRole(
    name="dealer_console",
    short="console",
    sends=(ConsoleAction,),
    commands=(Prompt,),
    dealer=DealerConsole,
    simulator="server.devices.simulated.dealer_console:SimulatedConsole",
    suspends_table=False,  # its faults are logged: the table plays on
)
