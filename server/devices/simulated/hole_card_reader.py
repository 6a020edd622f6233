"""A simulated Masque hole-card reader: armed for a round, it lights the lamp of the hole
card's range (of the card the server dealt from its virtual shoe, or a random range), in the
chapter's colours, and injects the reader's faults of ``Faults``: a wrong lamp, no lamp."""

from __future__ import annotations

from typing import Any

from rng.cards import Card
from server.devices.roles.hole_card_reader import Arm, HoleLamp
from server.devices.simulator import SimulatedDevice
from server.games.down_under_blackjack.rules import DEFAULT_LIGHTS, HoleRange

__all__ = ["SimulatedReader"]


class SimulatedReader(SimulatedDevice):
    simulates = "hole_card_reader"

    def _answer(self, command: Any) -> None:
        if isinstance(command, Arm):
            self._lamp(command)

    def _lamp(self, arm: Arm) -> None:
        faults, rnd = self.faults, self.random
        if faults.no_lamp and rnd.random() < faults.no_lamp:
            lamp = "none"
        else:
            actual = HoleRange.of(Card.parse(arm.card)) if arm.card else rnd.choice(list(HoleRange))  # fmt: skip  # noqa: E501
            if faults.wrong_lamp and rnd.random() < faults.wrong_lamp:
                actual = rnd.choice([r for r in HoleRange if r is not actual])
            lamp = DEFAULT_LIGHTS[actual]
        self.send(HoleLamp(round=arm.round, lamp=lamp))
