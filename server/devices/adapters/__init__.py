"""Vendor adapters: devices that do not speak the framed link, served through a sans-I/O
translator of their own protocol into the role messages (docs/devices.md, "Writing an adapter
for a new vendor"). ``ADAPTERS`` maps a ``[[devices]]`` ``protocol`` to its adapter."""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from server.devices.adapters.base import Adapter, LineIssue, Received
from server.devices.adapters.cammegh import CammeghWheel

__all__ = ["ADAPTERS", "FRAMED", "Adapter", "LineIssue", "Received", "adapter_role"]

FRAMED: Final = "croupier"  # the project's own framed link (docs/devices.md, "Frames")
ADAPTERS: Final[dict[str, Callable[[], Adapter]]] = {"cammegh": CammeghWheel}


def adapter_role(protocol: str) -> str:
    """The role a device speaking ``protocol`` serves."""
    return ADAPTERS[protocol]().role
