"""Helpers for the Baccarat tests: play a scripted round through the engine."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from rng.cards import Card, parse_cards
from server.games.baccarat.config import TableConfig
from server.games.baccarat.engine import BaccaratRound, Meters
from server.games.events import WagerSettled
from server.games.wagers import Settlement, Wager


@dataclass
class Played:
    round: BaccaratRound
    events: list[object] = field(default_factory=list)

    def settlement(self, bet_id: str) -> Settlement:
        found = [
            e.settlement
            for e in self.events
            if isinstance(e, WagerSettled) and e.settlement.wager.bet_id == bet_id
        ]
        assert len(found) == 1, found
        return found[0]


def play(
    config: TableConfig,
    wagers: Sequence[tuple[str, int]],
    cards: str | Sequence[Card],
    *,
    meters: Meters | None = None,
    player_id: str = "p1",
) -> Played:
    """Open, place ``wagers`` (spot, amount) with bet ids ``b0, b1, ...``, close, deal
    ``cards`` in order as the engine asks for them. Fails if a card is left over."""
    deck = parse_cards(cards) if isinstance(cards, str) else list(cards)
    rnd = BaccaratRound(config, "r", meters)
    played = Played(rnd)
    played.events += rnd.open()
    for i, (spot, amount) in enumerate(wagers):
        played.events += rnd.place(Wager(f"b{i}", player_id, spot, amount))
    played.events += rnd.close_betting()
    it = iter(deck)
    while rnd.pending() is not None:
        played.events += rnd.provide_card(next(it))
    assert next(it, None) is None, "scripted cards left over"
    return played
