"""A device role, declared once, and the registry of roles by name (docs/devices.md; adding a
role: docs/architecture.md, "Adding a device role").

A role (``DeviceRole``) is what a device is configured as (``[[devices]] role``), says in its
hello and is named by in ``[tables.devices]``: the messages its devices send and the commands
they take, the kinds of chance request it answers, and two parts — its **dealer part**
(``RoleDealer``: at a table, how the role answers those requests from its device and what
it does with what the device says, sans-I/O) and its **simulator** (a ``SimulatedDevice``
subclass, named here and imported only when a simulator runs). The device dealer, the
table's devices, the message codec, the configuration and the simulators read the registry;
none of them names a role.

A role's dealer part works through its table's ``DeviceDealer``: it asks for a hold when it
cannot trust what its device gave (``hold``), answers the pending request (``answer``,
``resume``), prompts staff (``prompt``), finds the request a message is for (``awaiting``).
What is the same for every role — holds and their deadline, a device's fault suspending the
table, staff's decisions, the stop — is the dealer's, in ``server/devices/dealing.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from server.journal import records as rec

if TYPE_CHECKING:
    from server.devices.dealing import DeviceDealer
    from server.games.table import Capabilities, TableGame

__all__ = [
    "Answer",
    "DealerSettings",
    "DeviceRole",
    "Log",
    "Pending",
    "RoleDealer",
    "Send",
    "TableAction",
    "UnknownRole",
    "device_role",
    "register",
    "registered",
    "unregister",
]


# --- what a table's dealer says ----------------------------------------------------------------


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
class Pending:
    """The chance request the table waits for, and what its devices and staff made of it."""

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


# --- a role's part of the table's dealer ---------------------------------------------------------


class RoleDealer:
    """A role's dealer part at one table (``table``, its ``DeviceDealer``), sans-I/O:
    ``device`` is the table's device of the role (its id); ``options`` what the table's game
    says the role needs (``options``, below), each part taking its own. Every method returns
    what to do (``Send``, ``Answer``, ``Log``, ``TableAction``); the defaults do nothing."""

    def __init__(
        self, table: DeviceDealer, role: str, device: str, options: Mapping[str, Any]
    ) -> None:
        self.table, self.role, self.device = table, role, device

    @classmethod
    def options(cls, where: str, game: TableGame, capabilities: Capabilities) -> dict[str, Any]:
        """What the role needs from the table's game (a shoe's decks, a wheel's results) as
        keyword options of ``DeviceDealer``; ``ConfigError`` (naming ``where``) for a game
        that cannot use the role."""
        return {}

    def new_round(self, round_id: str, now: float) -> tuple[str, tuple[str, ...]] | None:
        """A round is about to open: forget the last round's state; a hold's reason and
        options when the round may not open before staff decide."""
        return None

    def request(self, pending: Pending, now: float) -> list[Any]:
        """Ask the device for what ``pending`` (a request of a kind the role answers) needs."""
        return []

    def receive(self, message: Any, now: float) -> list[Any]:
        """A message of the role from the device (a ``fault`` is the dealer's)."""
        return [Log("warning", f"{self.device}: {type(message).__name__} ignored")]

    def timeout(self, pending: Pending, now: float) -> list[Any]:
        """The device gave nothing for ``pending`` within ``answer_seconds``."""
        return []

    def decide(self, choice: str, value: str, pending: Pending) -> Any:
        """Staff chose ``choice`` (one of the hold's options; ``value`` what they entered) on
        a hold of the role's request: the request's answer, or ``ValueError`` for an entry
        that cannot answer it."""
        raise ValueError(f"{choice} cannot answer {type(pending.request).__name__}")

    def prompt(self, text: str, options: tuple[str, ...]) -> list[Any]:
        """Staff are told ``text`` (and may choose among ``options``): a console shows it."""
        return []


# --- the declaration, and the registry ---------------------------------------------------------


@dataclass(frozen=True)
class DeviceRole:
    """One role. ``name``: as configured and said in the hello; ``short``: ``croupier device
    simulate --role``; ``sends``: the messages its devices send (besides ``fault``);
    ``commands``: the server's messages to them; ``answers``: the chance request kinds its
    devices answer (``server.games.chance``; ``NewShoe`` for a physical shoe, which burns
    nothing virtually); ``dealer``: its dealer part (None: the role serves no table's
    chance, as a player station); ``simulator``: ``module:Class`` of its simulated device;
    ``serves_table``: named in ``[tables.devices]`` (a station names its tables itself);
    ``suspends_table``: its fault suspends the table (a console's is only logged)."""

    name: str
    short: str
    sends: tuple[type, ...]
    commands: tuple[type, ...] = ()
    answers: tuple[type, ...] = ()
    dealer: type[RoleDealer] | None = None
    simulator: str | None = None
    serves_table: bool = True
    suspends_table: bool = True


class UnknownRole(LookupError):
    """No role of that name is registered."""


_ROLES: dict[str, DeviceRole] = {}
_listeners: list[Callable[[], None]] = []


def register(role: DeviceRole) -> None:
    """Offer one more role from now on (a built-in's module, a test's toy role). Its name and
    its messages' ``type`` tags must be new."""
    if role.name in _ROLES:
        raise ValueError(f"a device role named {role.name!r} is registered already")
    short = {r.short: r.name for r in _ROLES.values()}
    if role.short in short or role.short in _ROLES:
        raise ValueError(f"{role.short!r} already names the device role {short.get(role.short, role.short)!r}")  # fmt: skip  # noqa: E501
    tags = {
        _tag(kind): (other.name, kind)
        for other in _ROLES.values()
        for kind in (*other.sends, *other.commands)
    }
    for kind in (*role.sends, *role.commands):
        taken = tags.get(_tag(kind))
        if taken is not None and taken[1] is not kind:
            raise ValueError(f"message type {_tag(kind)!r} of {role.name!r} is {taken[0]!r}'s already")  # fmt: skip  # noqa: E501
    _ROLES[role.name] = role
    _changed()


def unregister(name: str) -> None:
    """Withdraw a role ``register`` added (a test's)."""
    device_role(name)
    del _ROLES[name]
    _changed()


def device_role(name: str) -> DeviceRole:
    """The role registered as ``name`` (or as its ``short`` name); ``UnknownRole`` naming the
    registered ones otherwise."""
    role = _ROLES.get(name)
    if role is not None:
        return role
    for role in _ROLES.values():
        if role.short == name:
            return role
    raise UnknownRole(f"unknown device role {name!r} (one of {', '.join(_ROLES)})")


def registered() -> tuple[DeviceRole, ...]:
    """Every role, in the order registered (the built-ins first)."""
    return tuple(_ROLES.values())


def on_change(listener: Callable[[], None]) -> None:
    """Call ``listener`` whenever a role is registered or withdrawn (a codec's cache)."""
    _listeners.append(listener)


def _changed() -> None:
    for listener in _listeners:
        listener()


def _tag(kind: type) -> Any:
    """A message class's ``type`` (every message is a msgspec struct of ``Message``)."""
    return cast(Any, kind).__struct_config__.tag
