"""The shoe or wheel a game package asked for (its ``ChanceSpec``), built from ``rng`` with
the table's random source; the runtime binds it to the game's adapter (``build_game``).

Each device also writes and reads its journal records: a burn at a new shoe, a card's draw,
a wheel result with the uniform draw that chose it. Every device also draws with the table's
source for any other kind of chance its game declares (``ChanceRequest.outcomes``): the one
virtual answer of every such kind, journaled as a ``ChanceAnswered`` with its draw; a game
that needs no shoe or wheel (``chance`` None) gets a device that only draws.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol, cast

from rng.cards import Card
from rng.shoe import Draw, VirtualShoe
from rng.sources import RandomSource
from rng.wheels import BIG_SIX_WHEEL, RouletteWheel
from server.core import effects as fx
from server.games.chance import (
    CardRequest,
    ChanceRequest,
    HoleRangeRequest,
    MysteryHitRequest,
    SpinRequest,
)
from server.games.table import (
    BigSixWheelSpec,
    ChanceDevice,
    ChanceSpec,
    ConfigError,
    RouletteWheelSpec,
    ShoeSpec,
    TableSettings,
)
from server.journal.records import CardDrawn, ChanceAnswered, Record, answered, record_from

__all__ = [
    "BigSixWheelDevice",
    "DrawingDevice",
    "HoleCardReader",
    "MysteryHitDrawer",
    "RouletteWheelDevice",
    "ShoeDevice",
    "answer_chance",
    "build_device",
    "draw_answer",
]

if TYPE_CHECKING:
    from server.games.table import TableGame


class ShoeDevice:
    """A virtual shoe per table, reshuffled at a round's start after its cover card was
    reached (631a.9, 651a.8(d), 681a.7(d), 685a.7(d))."""

    def __init__(self, shoe: VirtualShoe, source: RandomSource) -> None:
        self.shoe, self.source = shoe, source  # the shoe's source; a test may script the shoe

    def start_round(self) -> dict[str, Any] | None:
        if not self.shoe.needs_reshuffle:
            return None
        reseed = getattr(self.shoe.source, "reseed", None)
        if reseed is not None:
            reseed(b"new shoe")
        burn = self.shoe.shuffle()
        return {
            "shoe": self.shoe.shoe_number,
            "exposed": burn.exposed.code if burn.exposed else None,
            "burned": [card.code for card in burn.burned],
        }

    def deal_card(self) -> Draw:
        return self.shoe.draw_recorded()

    def spin(self) -> tuple[Any, dict[str, Any]]:
        raise TypeError("a card game has no wheel")

    def answer_from_record(self, kind: str, payload: Mapping[str, Any]) -> Any:
        if kind != "card":
            raise ValueError(f"a card game cannot replay a {kind!r} record")
        return Card.parse(payload["card"])


class _Wheel:
    def start_round(self) -> dict[str, Any] | None:
        return None

    def deal_card(self) -> Draw:
        raise TypeError("a wheel game deals no cards")


class RouletteWheelDevice(_Wheel):
    """A roulette wheel (617a.2): the answer is the pocket's label."""

    def __init__(self, wheel: RouletteWheel, source: RandomSource) -> None:
        self.wheel = wheel
        self.source = source

    def spin(self) -> tuple[Any, dict[str, Any]]:
        spin = self.wheel.spin(self.source)
        label = spin.pocket.label
        return label, {"result": label, "bound": spin.bound, "value": spin.value}

    def answer_from_record(self, kind: str, payload: Mapping[str, Any]) -> Any:
        if kind != "spin":
            raise ValueError(f"roulette cannot replay a {kind!r} record")
        return str(payload["result"])


class BigSixWheelDevice(_Wheel):
    """The Big Six Wheel (619a.2): the answer is the section's index."""

    def __init__(self, source: RandomSource) -> None:
        self.source = source

    def spin(self) -> tuple[Any, dict[str, Any]]:
        spin = BIG_SIX_WHEEL.spin(self.source)
        record = {
            "result": spin.section,
            "symbol": spin.symbol.value,
            "bound": spin.bound,
            "value": spin.value,
        }
        return spin.section, record

    def answer_from_record(self, kind: str, payload: Mapping[str, Any]) -> Any:
        if kind != "spin":
            raise ValueError(f"the Big Six Wheel cannot replay a {kind!r} record")
        return int(payload["result"])


class DrawingDevice:
    """A table that needs no shoe or wheel: only the draws of the kinds of chance its game
    declares (``ChanceRequest``, answered by ``draw_answer``)."""

    def __init__(self, source: RandomSource) -> None:
        self.source = source

    def start_round(self) -> dict[str, Any] | None:
        return None

    def deal_card(self) -> Draw:
        raise TypeError("this game has no shoe")

    def spin(self) -> tuple[Any, dict[str, Any]]:
        raise TypeError("this game has no wheel")

    def answer_from_record(self, kind: str, payload: Mapping[str, Any]) -> Any:
        raise ValueError(f"this game cannot replay a {kind!r} record")


def build_device(
    spec: ChanceSpec | None, settings: TableSettings, source: RandomSource
) -> ChanceDevice:
    """The device ``spec`` names (None: no shoe or wheel, only draws); a shoe the chapter
    does not allow (decks, cover card) is the operator's ``ConfigError``."""
    if isinstance(spec, ShoeSpec):
        try:
            shoe = VirtualShoe(
                source, spec.rules, spec.decks, cards_behind_cover=spec.cards_behind_cover
            )
        except ValueError as exc:
            raise ConfigError(f"table {settings.id}: {exc}") from None
        return ShoeDevice(shoe, source)
    if spec is None:
        return DrawingDevice(source)
    if isinstance(spec, RouletteWheelSpec):
        return RouletteWheelDevice(RouletteWheel(spec.wheel_type), source)
    if isinstance(spec, BigSixWheelSpec):
        return BigSixWheelDevice(source)
    raise TypeError(f"no device for {spec!r}")


# --- answering a table core's chance requests ------------------------------------------------


class MysteryHitDrawer(Protocol):
    """A game whose meters ask for a Must-Hit-By hit value (``MysteryHitRequest``)."""

    def draw_mystery_hit(self, request: MysteryHitRequest) -> tuple[int, dict[str, Any]]: ...


class HoleCardReader(Protocol):
    """A game whose table reads the dealer's hole card's range (``HoleRangeRequest``)."""

    def read_hole(self, card: Card) -> tuple[Any, dict[str, Any]]: ...


def answer_chance(
    game: TableGame, request: Any, hole: str | None
) -> Record | dict[str, Any] | None:
    """Answer a table core's ``Chance`` from the table's game (its virtual shoe or wheel):
    the outcome's journal record; for ``NewShoe``, the new shoe's burn record or None."""
    if isinstance(request, fx.NewShoe):
        return game.start_round()
    if isinstance(request, CardRequest):
        draw = game.deal_card()
        return CardDrawn(
            card=draw.card.code,
            target=request.target,
            seq=draw.seq,
            bound=draw.bound,
            value=draw.value,
        )
    if isinstance(request, SpinRequest):
        return record_from("spin", game.spin()[1])
    if isinstance(request, MysteryHitRequest):  # Baccarat's Must-Hit-By meter, 631b.6(c)(3)
        return record_from("mystery_hit", cast(MysteryHitDrawer, game).draw_mystery_hit(request)[1])
    if isinstance(request, HoleRangeRequest):  # Down Under's Masque Card Reader, 685a.7(h)
        reader = cast(HoleCardReader, game)
        return record_from("hole_range", reader.read_hole(Card.parse(hole or ""))[1])
    return draw_answer(cast(Any, game.device).source, request)


def draw_answer(source: RandomSource, request: ChanceRequest) -> ChanceAnswered:
    """The virtual answer to a kind of chance a game declares: ``value`` drawn uniformly below
    the kind's ``outcomes()`` from the table's certified ``source``, and the answer it stands
    for, with the draw, as its journal record."""
    bound = request.outcomes()
    value = source.randbelow(bound)
    return answered(request, request.outcome(value), bound=bound, value=value)
