"""Each game declares what its rounds ask of their table (``GameEntry.capabilities``): the
kinds of chance, whether players decide, whether its meters may be linked. The devices read
the declaration instead of probing the adapter; here the declaration is checked against what
each game's adapter and engine really do, so it cannot drift."""

from __future__ import annotations

import pytest

from server.games.chance import CardRequest, HoleRangeRequest, MysteryHitRequest, SpinRequest
from server.games.registry import GAMES, capabilities
from server.games.table import (
    BigSixWheelSpec,
    Capabilities,
    ConfigError,
    RouletteWheelSpec,
    ShoeSpec,
    TableGame,
    TableSettings,
)

BUILT_IN = sorted(GAMES)


def _built(name: str, **options: object) -> TableGame:
    entry = GAMES[name]
    settings = TableSettings("t", "T", name, seats=entry.seats.default, options=options)
    return entry.build(settings, lambda n: 0)


@pytest.mark.parametrize("name", BUILT_IN)
def test_the_chance_a_game_declares_is_the_chance_its_adapter_deals(name: str) -> None:
    declared = capabilities(name)
    game = _built(name)
    assert declared.asks(CardRequest) == isinstance(game.chance, ShoeSpec)
    assert declared.asks(SpinRequest) == isinstance(game.chance, RouletteWheelSpec | BigSixWheelSpec)  # fmt: skip  # noqa: E501
    assert declared.asks(HoleRangeRequest) == bool(game.hole_card_lamps())
    assert declared.asks(MysteryHitRequest) == (name == "baccarat")  # its Mystery Bonus


@pytest.mark.parametrize("name", BUILT_IN)
def test_decisions_and_linked_meters_are_declared_as_the_game_has_them(name: str) -> None:
    declared = capabilities(name)
    game = _built(name)
    engine = game.new_round("t.1")
    # (Probing is the test's job: the declaration is what the server reads.)
    assert declared.decisions == hasattr(engine, "decide")
    assert declared.linked_meters == (type(game).settle_linked is not TableGame.settle_linked)


def test_a_linked_baccarat_table_is_a_game_that_declares_linked_meters() -> None:
    game = _built("baccarat", progressive_link="floor-1", side_wagers={"harmony_progressive": "B"})
    assert game.linked and capabilities("baccarat").linked_meters


def test_the_hole_card_lamps_are_the_readers_colours() -> None:
    lamps = _built("down_under_blackjack").hole_card_lamps()
    assert lamps == {"blue": "small", "red": "medium", "yellow": "large"}


def test_a_game_nobody_registered_has_no_capabilities_to_read() -> None:
    with pytest.raises(ConfigError, match="unknown game 'pachinko'"):
        capabilities("pachinko")


def test_a_game_that_declares_nothing_asks_nothing() -> None:
    nothing = Capabilities()
    assert not nothing.asks(CardRequest) and not nothing.decisions and not nothing.linked_meters
