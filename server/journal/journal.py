"""What a journal stores, and the protocol every implementation keeps."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, Protocol

__all__ = ["Journal", "JournalRecord", "RoundStatus"]


class RoundStatus(Enum):
    OPEN = "open"  # inputs still arriving; after a crash: complete or void it
    SETTLED = "settled"
    VOIDED = "voided"


@dataclass(frozen=True, slots=True)
class JournalRecord:
    """One input of a round, in order: ``kind`` names it (``opened``, ``bet``,
    ``bet_refused`` — the player's bet of that id, recorded before it (other bets of the
    player's may come between), never stood: its debit was refused —
    ``cancel``, ``closed``, ``card``, ``spin``, ``hole_range``, ``decision``, ``timeout``,
    ``settled``, ``voided``), ``payload`` holds its fields (JSON-compatible)."""

    seq: int
    table_id: str
    round_id: str
    kind: str
    payload: dict[str, Any]


class Journal(Protocol):
    """Every write is durable when it returns. Each write the table runtime makes has an
    awaitable twin prefixed ``a`` (``aappend`` ...): the same write, resolved once durable,
    without blocking the event loop while it is written (a commit failure raises
    ``server.stores.StorageError``: nothing was applied). Writes are applied in the order
    they were made."""

    def open_round(self, table_id: str, round_id: str, payload: dict[str, Any]) -> None:
        """Start a round's record (kind ``opened``)."""

    def append(
        self, round_id: str, kind: str, payload: dict[str, Any], *, player: str | None = None
    ) -> int:
        """Durably record one input of an open round; returns its sequence number. Returns
        only once the record is on disk: a card is journaled before anyone sees it. With
        ``player``, the same commit notes that the player had wagers in the round."""

    def finish_round(self, round_id: str, status: RoundStatus, payload: dict[str, Any]) -> None:
        """Record the round's end (kind ``settled`` or ``voided``)."""

    async def aopen_round(self, table_id: str, round_id: str, payload: dict[str, Any]) -> None: ...

    async def aappend(
        self, round_id: str, kind: str, payload: dict[str, Any], *, player: str | None = None
    ) -> int: ...

    async def afinish_round(
        self, round_id: str, status: RoundStatus, payload: dict[str, Any]
    ) -> None: ...

    def records(self, round_id: str) -> list[JournalRecord]: ...

    def status(self, round_id: str) -> RoundStatus | None: ...

    def open_rounds(self) -> list[tuple[str, str]]:
        """(table_id, round_id) of every round neither settled nor voided, oldest first."""

    def player_rounds(self, player_id: str, limit: int = 10) -> list[str]:
        """The player's most recent finished rounds, newest first."""

    def last_round(self, table_id: str) -> str | None:
        """The table's most recent round id."""

    def save_state(self, table_id: str, key: str, state: dict[str, Any]) -> None:
        """Durably keep a table's state that outlives rounds (its progressive meters)."""

    async def asave_state(self, table_id: str, key: str, state: dict[str, Any]) -> None: ...

    def load_state(self, table_id: str, key: str) -> dict[str, Any] | None: ...

    def settle_meters(
        self, round_id: str, keys: Mapping[str, str], apply: Callable[..., Any]
    ) -> dict[str, Any]:
        """Apply one round to the linked progressive meters at ``keys`` (meter name → key)
        exactly once, in one transaction that holds those meters: ``apply(states)`` returns
        the new states and the round's result. Asked again for the same round (recovery), the
        first result comes back, its ``states`` the meters as they stand now (other tables of
        the link may have moved them), and nothing changes."""

    async def asettle_meters(
        self, round_id: str, keys: Mapping[str, str], apply: Callable[..., Any]
    ) -> dict[str, Any]: ...

    def linked_meters(self, keys: Collection[str]) -> dict[str, dict[str, int] | None]:
        """The linked meters' states by key (None: not used yet)."""

    def meter_settlement(self, round_id: str) -> dict[str, Any] | None:
        """One round's result on its linked meters (None: it moved none)."""

    def meter_settlements(self) -> list[tuple[str, dict[str, Any]]]:
        """Every round's result on its linked meters."""

    def close(self) -> None:
        """Finish every write still queued, then let the store go."""
