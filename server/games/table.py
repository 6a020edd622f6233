"""What a game package declares so a table can run it: settings in, a table adapter out.

Every game package holds one ``GameEntry`` (registered in ``server/games/registry.py``): its
name, its table adapter's factory, its seat limit (with the chapter's section) and its
par-sheet provider, and its ``Capabilities``: what chance its rounds ask (cards, a wheel, the
hole card's range), whether players decide during a round, whether its progressive meters may
be linked — declared, so that the devices (and anyone else) read them instead of probing the
adapter. The adapter (a ``TableGame`` subclass) turns a table's settings into each round's
engine and says what the table offers: spots, the rules text players read (58 Pa. Code
810a.3), progressive meters.

Sans-I/O like the engines: an adapter never draws. It declares the chance device it needs as
data — ``ShoeSpec`` (a chapter's ``ShoeRules`` and deck count), ``RouletteWheelSpec`` or
``BigSixWheelSpec`` — and the table runtime (``server/tables/chance.py``) builds the shoe or
wheel from it, with the table's random source, and binds it with ``bind_chance``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Protocol, cast

from rng.shoe_rules import ShoeRules
from rng.wheel_layouts import WheelType
from server.games.chance import ChanceRequest
from server.games.money import odds_text
from server.games.round import RoundEngine

__all__ = [
    "UNREGULATED_SEAT_LIMIT",
    "BigSixWheelSpec",
    "Capabilities",
    "ChanceDevice",
    "ChanceSpec",
    "ConfigError",
    "GameEntry",
    "ParSheetProvider",
    "Randbelow",
    "RouletteWheelSpec",
    "SeatLimit",
    "ShoeSpec",
    "TableGame",
    "TableSettings",
    "dollars",
    "option",
    "pays",
    "percent",
]


class ConfigError(ValueError):
    """A table's configuration is not valid; the message names the table and the setting."""


@dataclass(frozen=True)
class TableSettings:
    """One table as the operator configures it (``[[tables]]`` in the TOML file)."""

    id: str
    name: str
    game: str
    betting_seconds: float = 15.0
    pause_seconds: float = 4.0
    decision_seconds: float = 12.0
    seats: int = 7
    minimum: int = 100
    maximum: int = 500_000
    options: Mapping[str, Any] = field(default_factory=dict)
    # The table's devices by role (``[tables.devices]``): its chance requests are answered by
    # them instead of the virtual shoe or wheel (docs/devices.md).
    devices: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class SeatLimit:
    """How many seats (players who may bet) a game's table may have, and why: the chapter's
    number of betting positions, or, where the chapter sets none, a bound of our own."""

    most: int
    reason: str

    @property
    def default(self) -> int:
        """``seats`` when the configuration does not say: seven, or fewer if the game's
        chapter allows fewer."""
        return min(7, self.most)


# Where a chapter sets no number of player positions (617a Roulette, 619a Big Six Wheel, the
# 631a/631b Baccarat text we implement), a table still needs a bound: seats limit only who
# may bet (anyone may watch), and a typo such as 7000 should be refused, not served.
UNREGULATED_SEAT_LIMIT = 100
NO_NUMBER = "its chapter sets no number of player positions; Croupier's own bound"


# --- the chance device a game needs, as data ------------------------------------------------


@dataclass(frozen=True)
class ShoeSpec:
    """A virtual shoe of ``decks`` decks dealt by ``rules`` (the chapter's burn and cover
    card); ``cards_behind_cover`` None takes the chapter's default."""

    rules: ShoeRules
    decks: int
    cards_behind_cover: int | None = None


@dataclass(frozen=True)
class RouletteWheelSpec:
    """A roulette wheel of one of 617a.2's types."""

    wheel_type: WheelType


@dataclass(frozen=True)
class BigSixWheelSpec:
    """The Big Six Wheel of 619a.2."""


ChanceSpec = ShoeSpec | RouletteWheelSpec | BigSixWheelSpec


class ChanceDevice(Protocol):
    """What the runtime binds to an adapter: the shoe or wheel its ``ChanceSpec`` asked for.
    The answers are ``rng`` values (a ``Draw``, a wheel result and its journal record), typed
    where the device is built (``server/tables/chance.py``)."""

    def start_round(self) -> dict[str, Any] | None: ...

    def deal_card(self) -> Any: ...

    def spin(self) -> tuple[Any, dict[str, Any]]: ...

    def answer_from_record(self, kind: str, payload: Mapping[str, Any]) -> Any: ...


# --- what a game asks of its table, declared ---------------------------------------------------

ChanceKind = type[ChanceRequest]


@dataclass(frozen=True)
class Capabilities:
    """What a game's rounds ask of their table, declared in its ``GameEntry``:

    - ``chance``: the kinds of chance its engines ask (``server.games.chance``):
      ``CardRequest`` (cards: a virtual or card-reading shoe), ``SpinRequest`` (a wheel),
      ``HoleRangeRequest`` (the hole card's range: a hole-card reader), ``MysteryHitRequest``
      (a Must-Hit-By meter's hit value, never a device's), or a kind the game declares in
      its own package (a ``ChanceRequest`` subclass: drawn virtually, or a role's device);
    - ``decisions``: players decide during a round (``DecisionRequest``: War, hit or stand);
    - ``linked_meters``: its progressive meters may be shared by the tables of a link
      (``progressive_link``; the adapter's ``linked_*`` methods).

    The devices read ``chance`` to refuse a device its game cannot use; nothing probes an
    adapter for a method to find out."""

    chance: tuple[ChanceKind, ...] = ()
    decisions: bool = False
    linked_meters: bool = False

    def asks(self, kind: type) -> bool:
        """Whether the game's engines ask chance of ``kind``."""
        return kind in self.chance


# --- the adapter ------------------------------------------------------------------------------


class TableGame:
    """One table's game, the base of every game package's adapter. Subclasses set ``game``,
    ``variant``, ``automated``, ``boxed`` and ``chance`` and implement ``new_round``,
    ``sample_spots`` and ``rules``; games with progressive meters override the meter methods.
    Chance answers go to the device the runtime bound (``bind_chance``); ``chance`` None: the
    game needs no shoe or wheel (only the kinds of chance it declares, drawn virtually)."""

    game: str
    variant: str
    automated: bool = False
    boxed: bool = False  # a seat is a betting box: a player bets in their own box only
    chance: ChanceSpec | None
    _device: ChanceDevice | None = None

    def bind_chance(self, device: ChanceDevice) -> None:
        self._device = device

    @property
    def device(self) -> ChanceDevice:
        if self._device is None:
            raise TypeError(f"no shoe or wheel is bound to this {self.game} table")
        return self._device

    @property
    def shoe(self) -> Any:
        """A card game's bound shoe; a test may replace it with a scripted one."""
        return cast(Any, self.device).shoe

    @shoe.setter
    def shoe(self, shoe: Any) -> None:
        cast(Any, self.device).shoe = shoe

    def new_round(self, round_id: str, *, replay: bool = False) -> RoundEngine:
        """A new round's engine. ``replay`` rebuilds a journaled round: no live state such as
        a progressive meter may change."""
        raise NotImplementedError

    def sample_spots(self) -> list[str]:
        """Spots a demo bot may bet on."""
        raise NotImplementedError

    def depends_on(self, spot: str) -> tuple[str, ...]:
        """The spots one of which the same player must hold a wager on before a wager on
        ``spot`` is accepted (a side wager's main wager); none in most games. The table
        writes a player's bets that depend on nothing side by side."""
        return ()

    def rules(self) -> dict[str, Any]:
        """The rules and paytables players can read at the table (58 Pa. Code 810a.3)."""
        raise NotImplementedError

    def start_round(self) -> dict[str, Any] | None:
        return self.device.start_round()

    def deal_card(self) -> Any:
        return self.device.deal_card()

    def spin(self) -> tuple[Any, dict[str, Any]]:
        return self.device.spin()

    def answer_from_record(self, kind: str, payload: Mapping[str, Any]) -> Any:
        return self.device.answer_from_record(kind, payload)

    def hole_card_lamps(self) -> Mapping[str, str]:
        """A game that asks the hole card's range (``HoleRangeRequest``): the colour of each
        lamp of its table's hole-card reader -> the range it shows (685a.1); none otherwise."""
        return {}

    def meter_state(self) -> dict[str, Any] | None:
        return None

    def restore_meters(self, state: dict[str, Any]) -> None:
        return None

    def meter_amounts(self) -> dict[str, int]:
        return {}

    # Linked progressives (a game whose meters a link shares overrides these; see
    # ``server.games.baccarat.linked``): none by default.
    linked: dict[str, str] = {}  # noqa: RUF012 -- read-only here; a game sets its own

    def link_signature(self) -> tuple[object, ...]:
        return ()

    def linked_ops(
        self, events: Iterable[object], wagers: Mapping[tuple[str, str], int]
    ) -> list[dict[str, Any]]:
        return []

    def hit_values_for(self, ops: Iterable[Mapping[str, Any]]) -> list[int]:
        return []

    def settle_linked(
        self,
        ops: list[dict[str, Any]],
        hit_values: list[int],
        states: Mapping[str, dict[str, int] | None],
    ) -> tuple[dict[str, dict[str, int]], dict[str, Any]]:
        raise NotImplementedError(f"{self.game} has no linked meters")

    def relinked(self, events: Iterable[object], result: Mapping[str, Any]) -> list[object]:
        return list(events)

    def restore_linked(self, states: Mapping[str, dict[str, int] | None]) -> None:
        return None


# --- the registry entry -----------------------------------------------------------------------


@dataclass(frozen=True)
class ParSheetProvider:
    """``croupier par-sheet GAME``: ``module`` exposes ``add_arguments(parser)`` and
    ``compute(args) -> list[ParSheetRow]``; imported only when the command runs."""

    help: str
    module: str


Randbelow = Callable[[int], int]


@dataclass(frozen=True)
class GameEntry:
    """One game, as the registry holds it. ``build(settings, randbelow)`` makes the table's
    adapter, raising ``ConfigError`` for a bad option (``randbelow`` is the table's source,
    for the Mystery Bonus's must-hit-by amount, 631b.6). ``capabilities``: what its rounds ask
    of the table (a game that declares none can have no devices)."""

    name: str
    build: Callable[[TableSettings, Randbelow], TableGame]
    seats: SeatLimit
    par_sheet: ParSheetProvider | None = None
    capabilities: Capabilities = Capabilities()


# --- reading options and writing rules text ---------------------------------------------------


def option(settings: TableSettings, name: str, default: Any, kind: type) -> Any:
    """``[tables.options] name``, checked to be a ``kind`` (a bool is not an int here)."""
    value = settings.options.get(name, default)
    if not isinstance(value, kind) or isinstance(value, bool) is not (kind is bool):
        raise ConfigError(f"table {settings.id}: {name} must be a {kind.__name__}, not {value!r}")
    return value


def pays(section: str, odds: Mapping[str, Fraction], letter: str | None = None) -> dict[str, Any]:
    """One paytable as the ``rules`` message shows it: the regulation section, the paytable
    letter and each line's odds in the regulation's words, written from the same odds the
    engine settles at so the two cannot drift (tests/tables/test_displayed_payouts.py)."""
    return {
        "section": section,
        "letter": letter,
        "pays": {line: odds_text(net) for line, net in odds.items()},
    }


def percent(rate: Fraction) -> str:
    return f"{float(rate * 100):g}%"


def dollars(minor_units: int) -> str:
    return f"${minor_units // 100:,}.{minor_units % 100:02d}"
