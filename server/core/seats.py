"""Who sits at a table: admission, seat numbers, and seats held for dropped players.

A player holds a seat while one of their connections watches as a ``player``, and for
``grace_seconds`` after the last one dropped without leaving (bets stand while they are
away). A seat is a betting box in the boxed games (Casino War, Down Under Blackjack): a
player keeps their box number for as long as they hold the seat, and gets it back when they
return to a seat nobody took meanwhile.
"""

from __future__ import annotations

from collections import Counter

from server.games.errors import IllegalAction

__all__ = ["NOT_SEATED", "TABLE_FULL", "Seats"]

TABLE_FULL = "table_full"
NOT_SEATED = "not_seated"


class Seats:
    def __init__(self, table_id: str, seats: int, grace_seconds: float = 60.0) -> None:
        self.table_id = table_id
        self.seats = seats
        self.grace_seconds = grace_seconds
        self.seat_of: dict[str, int] = {}  # a seated player's seat number (a betting box)
        # Seats that belong to one player whenever they sit (a player station's seat at its
        # electronic table): nobody else is given them.
        self.reserved: dict[str, int] = {}
        self._connected: Counter[str] = Counter()  # live connections as a player
        self._held: dict[str, float] = {}  # dropped players' seats, held until then

    def seated(self, now: float) -> set[str]:
        """Players holding a seat: connected as a player, or dropped less than
        ``grace_seconds`` ago."""
        self._expire(now)
        return set(self._connected) | set(self._held)

    def count(self, now: float) -> int:
        """How many players hold a seat (``len(seated(now))``, without building the set:
        the lobby asks it of every table for every reader)."""
        held = self._held
        if held and next(iter(held.values())) <= now:
            self._expire(now)
        return len(self._connected) + len(held)

    def next_end(self) -> float:
        """When the first held seat ends (infinity: none is held)."""
        held = self._held
        return next(iter(held.values())) if held else float("inf")

    def _expire(self, now: float) -> None:
        # Holds are kept in the order they end (``drop`` re-inserts a player's hold at the
        # back), so the expired ones are at the front: nothing to walk while none is due.
        held = self._held
        while held:
            player, until = next(iter(held.items()))
            if until > now:
                return
            del held[player]

    def join(self, player_id: str, role: str, now: float, seat: int | None = None) -> None:
        """Admit a connection; ``IllegalAction(table_full)`` when it would need a seat and
        every seat is taken (it may watch as a spectator). ``seat``: the one the player had
        (at the table's previous node), theirs again unless someone has it."""
        if seat is not None and role == "player":
            self.seat_of.setdefault(player_id, seat)
        seated = self.seated(now)
        if role == "player" and player_id not in seated and len(seated) >= self.seats:
            raise IllegalAction(
                TABLE_FULL, "every seat is taken; join as a spectator", self.table_id
            )
        self._held.pop(player_id, None)
        if role != "player":
            return
        self._connected[player_id] += 1
        if player_id in self.reserved:
            self.seat_of[player_id] = self.reserved[player_id]
            return
        taken = {self.seat_of[p] for p in seated if p in self.seat_of and p != player_id}
        taken |= {seat for player, seat in self.reserved.items() if player != player_id}
        if self.seat_of.get(player_id) in (None, *taken):
            self.seat_of[player_id] = next(n for n in range(1, self.seats + 2) if n not in taken)

    def leave(self, player_id: str, role: str) -> None:
        if role == "player":
            self._connected[player_id] -= 1
            if self._connected[player_id] <= 0:
                del self._connected[player_id]

    def drop(self, player_id: str, role: str, now: float) -> None:
        self.leave(player_id, role)
        if role == "player" and player_id not in self._connected:
            self._held.pop(player_id, None)  # to the back: holds stay in the order they end
            self._held[player_id] = now + self.grace_seconds

    def require_seated(self, player_id: str) -> None:
        """Only a player connected as a player bets."""
        if player_id not in self._connected:
            raise IllegalAction(NOT_SEATED, "join the table as a player to bet", self.table_id)
