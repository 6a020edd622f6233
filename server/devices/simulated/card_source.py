"""A simulated card-reading shoe: it draws from a shuffled (seeded) or scripted shoe on each
``expect_cards``, keeping its own count, and injects the shoe's faults of ``Faults``: a
misread, a double read, a card leaving the shoe unread, a card drawn before no more bets."""

from __future__ import annotations

import asyncio
from typing import Any

from rng.cards import ALL_CARDS, Card
from server.devices.roles.card_source import CardRead, ExpectCards, ShoeState
from server.devices.simulator import SimulatedDevice

__all__ = ["SimulatedShoe"]


class SimulatedShoe(SimulatedDevice):
    """``count``: the shoe's count of cards drawn since it was filled (kept in its
    non-volatile memory); ``shoe``: the cards left, the next one last."""

    simulates = "card_source"
    remembered = ("count",)

    def _start(self) -> None:
        self.count = 0
        self.shoe: list[Card] = []
        self._early: asyncio.TimerHandle | None = None

    def _answer(self, command: Any) -> None:
        if isinstance(command, ExpectCards):
            self._draw(command)

    def _next_card(self) -> str:
        if self.script:
            return self.script.popleft()
        if not self.shoe:
            self.shoe = [card for card in ALL_CARDS for _ in range(self.decks)]
            self.random.shuffle(self.shoe)
            self.count = 0
            self.send(ShoeState(state="inserted"))  # a new shoe: its count starts again
        return self.shoe.pop().code

    def _draw(self, expect: ExpectCards) -> None:
        faults, rnd = self.faults, self.random
        if faults.missing and rnd.random() < faults.missing:
            self._next_card()
            self.count += 1  # a card left the shoe unread
        card = self._next_card()
        self.count += 1
        shown = "ZZ" if faults.misread and rnd.random() < faults.misread else card
        read = CardRead(card=shown, count=self.count, round=expect.round)
        self.send(read)
        if faults.double_read and rnd.random() < faults.double_read:
            self.send(read)
        if faults.early and self._early is None:
            loop = asyncio.get_running_loop()
            self._early = loop.call_later(faults.early_after, self._maybe_early)

    def _maybe_early(self) -> None:
        """A card drawn while the next round's betting is still open ("game before time")."""
        self._early = None
        if self.random.random() < self.faults.early:
            card = self._next_card()  # first: a new shoe starts the count again
            self.count += 1
            self.send(CardRead(card=card, count=self.count, round=""))
