"""Every device role, registered by name (docs/devices.md; adding one: docs/architecture.md,
"Adding a device role").

One module per role declares its messages, its dealer part and its simulator's name
(``DeviceRole``, ``server/devices/roles/base.py``); the built-in roles are registered here,
in this order. ``ROLES`` is the registry's names, read live: a role registered later (a
test's) is configurable and decodable like a built-in one.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import overload

from server.devices.roles import card_source, dealer_console, hole_card_reader, station, wheel
from server.devices.roles.base import (
    DeviceRole,
    RoleDealer,
    UnknownRole,
    device_role,
    register,
    registered,
    unregister,
)

__all__ = [
    "ROLES",
    "DeviceRole",
    "RoleDealer",
    "UnknownRole",
    "device_role",
    "register",
    "registered",
    "unregister",
]

_BUILT_IN = (card_source.ROLE, hole_card_reader.ROLE, wheel.ROLE, dealer_console.ROLE, station.ROLE)


class _Names(Sequence[str]):
    """The registered roles' names, in order, as they are when read."""

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[str]: ...

    def __getitem__(self, index: int | slice) -> str | Sequence[str]:
        return tuple(role.name for role in registered())[index]

    def __len__(self) -> int:
        return len(registered())

    def __iter__(self) -> Iterator[str]:
        return iter([role.name for role in registered()])

    def __contains__(self, name: object) -> bool:
        return any(role.name == name for role in registered())

    def __repr__(self) -> str:
        return repr(tuple(self))


ROLES: Sequence[str] = _Names()
"""Every role's name (``[[devices]] role``, the hello's ``role``)."""

for _role in _BUILT_IN:
    register(_role)
