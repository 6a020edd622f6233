"""What every vendor adapter gives the hub (docs/devices.md, "Writing an adapter for a new
vendor"): sans-I/O, bytes in and role messages out, role commands in and bytes out."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = ["Adapter", "LineIssue", "Received"]


@dataclass(frozen=True, slots=True)
class LineIssue:
    """A line the adapter dropped (``dropped``), or used with a warning (a game number that
    jumped: the table holds on it), and why (``reason``: a short code the hub counts)."""

    reason: str
    line: str
    dropped: bool = True


@dataclass(slots=True)
class Received:
    """What some bytes from the device said: ``messages`` (role messages, in order, as a
    device on the framed link would have sent them), the ``issues`` met, and how many
    well-formed lines were ``heard`` (the hub's sign that the line is up)."""

    messages: list[Any] = field(default_factory=list)
    issues: list[LineIssue] = field(default_factory=list)
    heard: int = 0


class Adapter(Protocol):
    """One device's vendor protocol; the hub keeps one per device across reconnections, so
    what it checks (the order of states, the game number) spans a lost line."""

    role: str  # the role whose messages it produces

    def receive(self, data: bytes) -> Received:
        """Bytes from the device, in any chunks."""
        ...

    def command(self, message: Any) -> bytes:
        """A role command from the table, as the device's bytes (empty: nothing to send)."""
        ...

    def line_opened(self) -> None:
        """The line was (re)opened: a partial line from before is not part of the next."""
        ...
