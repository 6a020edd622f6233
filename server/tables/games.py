"""Each game, bound to the runtime: how a table's settings become rounds and chance answers.

A ``GameTable`` is one table's game: it creates each round's engine, answers chance requests
from ``rng`` (``deal_card``, ``spin``) and says what the table offers (spots, limits, rules).
Adding a game adds one ``GameTable`` class and one entry in ``GAMES``; the runtime, the
protocol and the server do not change.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Protocol

from rng.cards import Card
from rng.shoe import (
    BACCARAT,
    CASINO_WAR,
    DOWN_UNDER_BLACKJACK,
    TWENTY_ONE_BACCARAT,
    Draw,
    ShoeRules,
    VirtualShoe,
)
from rng.sources import RandomSource
from rng.wheels import BIG_SIX_WHEEL, RouletteWheel, WheelType
from server.games.baccarat.config import ConfigError as BaccaratConfigError
from server.games.baccarat.config import Limits, TableConfig, Variant
from server.games.baccarat.engine import BaccaratRound, Meters
from server.games.baccarat.paytables import HARMONY_RATES
from server.games.betting import Limits as BoxLimits
from server.games.big_six_wheel import BIG_SIX_PAYOUTS, BIG_SIX_SPOTS, BigSixRound, BigSixTable
from server.games.casino_war.round import BOXES as WAR_BOXES
from server.games.casino_war.round import PAYOUT_ODDS as WAR_ODDS
from server.games.casino_war.round import CasinoWarRound, CasinoWarTable
from server.games.chance import MysteryHitRequest
from server.games.down_under_blackjack.round import BOXES as DOWN_UNDER_BOXES
from server.games.down_under_blackjack.round import DownUnderRound, DownUnderTable
from server.games.down_under_blackjack.rules import (
    BLACKJACK_ODDS,
    INSURANCE_ODDS,
    MATCH_PAYTABLES,
    HoleRange,
)
from server.games.down_under_blackjack.rules import WIN_ODDS as DUB_WIN_ODDS
from server.games.money import PUSH, odds_text
from server.games.progressives import HEAVENLY_9_INCREMENT, HEAVENLY_9_SEED, MYSTERY_BONUS_CONFIGS
from server.games.roulette.layout import PAYOUT_ODDS, WagerKind, placements
from server.games.roulette.round import RouletteRound, RouletteTable
from server.games.round import RoundEngine
from server.games.twenty_one_baccarat.hands import (
    BONUS_HANDS,
    BONUS_PAYTABLES,
    TIE_ODDS,
    WIN_ODDS,
    WIN_WITH_17_ODDS,
)
from server.games.twenty_one_baccarat.hands import MAIN_SPOTS as TWENTY_ONE_MAIN_SPOTS
from server.games.twenty_one_baccarat.hands import SPOTS as TWENTY_ONE_SPOTS
from server.games.twenty_one_baccarat.round import (
    BETTING_POSITIONS,
    TwentyOneBaccaratRound,
    TwentyOneBaccaratTable,
)

__all__ = [
    "GAMES",
    "SEAT_LIMITS",
    "UNREGULATED_SEAT_LIMIT",
    "ConfigError",
    "GameTable",
    "SeatLimit",
    "TableSettings",
    "build_game",
]


class ConfigError(ValueError):
    """A table's configuration is not valid; the message names the table and the setting."""


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


class GameTable(Protocol):
    game: str
    variant: str
    automated: bool
    boxed: bool  # a seat is a betting box: a player bets in their own box only

    def new_round(self, round_id: str, *, replay: bool = False) -> RoundEngine:
        """A new round's engine. ``replay`` rebuilds a journaled round: no live state such as
        a progressive meter may change."""

    def deal_card(self) -> Draw:
        """The next card from this table's shoe (reshuffled by ``start_round`` as needed)."""

    def spin(self) -> tuple[Any, dict[str, Any]]:
        """A wheel result for ``provide_spin`` and its journal record."""

    def start_round(self) -> dict[str, Any] | None:
        """Called before each round: reshuffle when the cover card was reached. Returns the
        new shoe's burn record (journaled; the exposed card is public) or None."""

    def answer_from_record(self, kind: str, payload: Mapping[str, Any]) -> Any:
        """Rebuild a chance answer from its journal record (replay and recovery)."""

    def sample_spots(self) -> list[str]:
        """Spots a demo bot may bet on."""

    def rules(self) -> dict[str, Any]:
        """The rules and paytables players can read at the table (58 Pa. Code 810a.3)."""

    def meter_state(self) -> dict[str, Any] | None:
        """Progressive meters to persist after each round (None: the game has none)."""

    def restore_meters(self, state: dict[str, Any]) -> None: ...

    def meter_amounts(self) -> dict[str, int]:
        """The meters as players see them, whole minor units."""


class _NoMeters:
    """Games without progressive meters."""

    def meter_state(self) -> dict[str, Any] | None:
        return None

    def restore_meters(self, state: dict[str, Any]) -> None:
        return None

    def meter_amounts(self) -> dict[str, int]:
        return {}


class _ShoeGame(_NoMeters):
    """Card games: a virtual shoe per table (``self.shoe``, made by the subclass), reshuffled
    at a round's start after its cover card was reached."""

    boxed = False

    shoe: VirtualShoe

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


class _WheelGame(_NoMeters):
    boxed = False

    def start_round(self) -> dict[str, Any] | None:
        return None

    def deal_card(self) -> Draw:
        raise TypeError("a wheel game deals no cards")


def _pays(section: str, pays: Mapping[str, Fraction], letter: str | None = None) -> dict[str, Any]:
    """One paytable as the ``rules`` message shows it: the regulation section, the paytable
    letter and each line's odds in the regulation's words, written from the same odds the
    engine settles at so the two cannot drift (tests/tables/test_displayed_payouts.py)."""
    return {
        "section": section,
        "letter": letter,
        "pays": {line: odds_text(net) for line, net in pays.items()},
    }


def _percent(rate: Fraction) -> str:
    return f"{float(rate * 100):g}%"


def _dollars(minor_units: int) -> str:
    return f"${minor_units // 100:,}.{minor_units % 100:02d}"


def _option(settings: TableSettings, name: str, default: Any, kind: type) -> Any:
    value = settings.options.get(name, default)
    if not isinstance(value, kind) or isinstance(value, bool) is not (kind is bool):
        raise ConfigError(f"table {settings.id}: {name} must be a {kind.__name__}, not {value!r}")
    return value


class RouletteGame(_WheelGame):
    """Roulette (617a) on one of the three wheel types."""

    game = "roulette"
    automated = False

    def __init__(self, settings: TableSettings, source: RandomSource) -> None:
        wheel = _option(settings, "wheel", "single_zero", str)
        try:
            self.wheel_type = WheelType(wheel)
        except ValueError:
            choices = ", ".join(w.value for w in WheelType)
            raise ConfigError(f"table {settings.id}: wheel must be one of {choices}") from None
        self.variant = self.wheel_type.value
        self.table = RouletteTable(
            self.wheel_type,
            five_adjacent_offered=_option(settings, "five_adjacent", True, bool),
            minimum=settings.minimum,
            maximum=settings.maximum,
        )
        self.wheel = RouletteWheel(self.wheel_type)
        self.source = source

    def new_round(self, round_id: str, *, replay: bool = False) -> RoundEngine:
        return RouletteRound(self.table, round_id)

    def spin(self) -> tuple[Any, dict[str, Any]]:
        spin = self.wheel.spin(self.source)
        label = spin.pocket.label
        return label, {"result": label, "bound": spin.bound, "value": spin.value}

    def answer_from_record(self, kind: str, payload: Mapping[str, Any]) -> Any:
        if kind != "spin":
            raise ValueError(f"roulette cannot replay a {kind!r} record")
        return str(payload["result"])

    def _paytables(self) -> dict[str, Any]:
        """617a.4(a), for the wagers this wheel offers (First Five Numbers needs 00). A Five
        Adjacent Numbers wager is five Straight Wagers (617a.3(e)(1)(iii)): its odds are shown on
        the whole wager, as the engine settles it."""
        offered = [k for k in PAYOUT_ODDS if next(placements(k, self.wheel_type), None)]
        tables = {"roulette": _pays("617a.4(a)", {k.value: PAYOUT_ODDS[k] for k in offered})}
        if self.table.five_adjacent_offered:
            five = next(placements(WagerKind.FIVE_ADJACENT, self.wheel_type))
            tables["five_adjacent"] = _pays(
                "617a.3(e)(1)(i)-(iii)", {"whole_wager": five.net_if_won}
            )
        return tables

    def sample_spots(self) -> list[str]:
        kinds = [
            WagerKind.STRAIGHT,
            WagerKind.SPLIT,
            WagerKind.RED,
            WagerKind.BLACK,
            WagerKind.DOZEN,
            WagerKind.COLUMN,
            WagerKind.ODD,
            WagerKind.EVEN,
        ]
        return [p.spot for kind in kinds for p in placements(kind, self.wheel_type)]

    def rules(self) -> dict[str, Any]:
        return {
            "summary": (
                "Roulette (58 Pa. Code 617a) on a "
                + self.wheel_type.value.replace("_", " ")
                + " wheel. Bet on where the ball comes to rest; payouts per 617a.4."
            ),
            "paytables": self._paytables(),
            "five_adjacent": self.table.five_adjacent_offered,
        }


class BigSixGame(_WheelGame):
    """Big Six Wheel (619a)."""

    game = "big_six"
    variant = "standard"
    automated = False

    def __init__(self, settings: TableSettings, source: RandomSource) -> None:
        self.table = BigSixTable(minimum=settings.minimum, maximum=settings.maximum)
        self.source = source

    def new_round(self, round_id: str, *, replay: bool = False) -> RoundEngine:
        return BigSixRound(self.table, round_id)

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

    def sample_spots(self) -> list[str]:
        return list(BIG_SIX_SPOTS)

    def rules(self) -> dict[str, Any]:
        return {
            "summary": "Big Six Wheel (58 Pa. Code 619a): bet on the symbol the wheel stops on.",
            "paytables": {
                "big_six": _pays(
                    "619a.3", {spot: BIG_SIX_PAYOUTS[sym] for spot, sym in BIG_SIX_SPOTS.items()}
                )
            },
        }


class BaccaratGame(_ShoeGame):
    """Baccarat (631a, 631b): any variant, side wagers and paytables the operator chose.

    Options: ``variant``, ``decks`` (6 or 8), ``automated`` (a fully automated electronic
    table: the only kind that may offer Lucky Nines), ``side_wagers`` (family → paytable
    letter, "" where the section has one table), ``mystery_bonus`` (e.g. "A-$1", 631b.6),
    ``cards_behind_cover``.
    """

    game = "baccarat"

    def __init__(self, settings: TableSettings, source: RandomSource) -> None:
        where = f"table {settings.id}"
        try:
            variant = Variant(_option(settings, "variant", "standard", str))
        except ValueError:
            choices = ", ".join(v.value for v in Variant)
            raise ConfigError(f"{where}: variant must be one of {choices}") from None
        decks = _option(settings, "decks", 8, int)
        wagers = _option(settings, "side_wagers", {}, dict)
        bonus = settings.options.get("mystery_bonus")
        if bonus is not None and bonus not in MYSTERY_BONUS_CONFIGS:
            choices = ", ".join(MYSTERY_BONUS_CONFIGS)
            raise ConfigError(f"{where}: mystery_bonus must be one of {choices}")
        try:
            self.config = TableConfig(
                variant=variant,
                decks=decks,
                automated=_option(settings, "automated", False, bool),
                side_wagers={family: (letter or None) for family, letter in wagers.items()},
                default_limits=Limits(settings.minimum, settings.maximum),
                mystery_bonus=MYSTERY_BONUS_CONFIGS[bonus] if bonus else None,
            )
        except (BaccaratConfigError, ValueError) as exc:
            raise ConfigError(f"{where}: {exc}") from None
        behind = settings.options.get("cards_behind_cover")
        try:
            self.shoe = VirtualShoe(source, BACCARAT, decks, cards_behind_cover=behind)
        except ValueError as exc:
            raise ConfigError(f"{where}: {exc}") from None
        self.variant = variant.value
        self.automated = self.config.automated
        # The rounds ask for each Must-Hit-By hit value (631b.6(c)(3)): ``draw_mystery_hit``.
        self._source = source
        self.meters = Meters.asking(self.config)

    def new_round(self, round_id: str, *, replay: bool = False) -> RoundEngine:
        if replay:  # a replay must not move the live meters: it plays on a copy of them
            return BaccaratRound(self.config, round_id, self.meters.copy(self.config), replay=True)
        return BaccaratRound(self.config, round_id, self.meters)

    def draw_mystery_hit(self, request: MysteryHitRequest) -> tuple[int, dict[str, Any]]:
        """A Must-Hit-By hit value from the certified RNG and its journal record (631b.6(c)(3));
        the record stays in the journal: the value is never sent to a client."""
        value = request.answer(self._source.randbelow)
        return value, {"value": value, "low": request.low, "high": request.high}

    def answer_from_record(self, kind: str, payload: Mapping[str, Any]) -> Any:
        if kind == "mystery_hit":
            return int(payload["value"])
        return super().answer_from_record(kind, payload)

    def sample_spots(self) -> list[str]:
        return list(self.config.spots)

    def meter_state(self) -> dict[str, Any] | None:
        state = self.meters.state()
        return dict(state) if state else None

    def restore_meters(self, state: dict[str, Any]) -> None:
        self.meters.restore(state)

    def meter_amounts(self) -> dict[str, int]:
        return self.meters.amounts()

    def _meters_explained(self) -> str:
        """What each progressive meter is and why it shows what it shows. Harmony
        (631b.10(j)) sets how much of each wager goes to the meter and to the reserve that
        reseeds it, but no opening amount, unlike Heavenly 9's $10,000 (631b.2(i)): a new
        Harmony meter starts at $0 rather than at a seed of our invention."""
        notes = ""
        if "heavenly_9_progressive" in self.config.side_wagers:
            notes += (
                " Heavenly 9 Progressive (631b.2): the meter is seeded at "
                f"{_dollars(HEAVENLY_9_SEED)} and grows by {_percent(HEAVENLY_9_INCREMENT)} of "
                "every Heavenly 9 wager; after a jackpot it is reseeded."
            )
        letter = self.config.side_wagers.get("harmony_progressive")
        if letter:
            rates = HARMONY_RATES[letter]
            notes += (
                " Harmony Progressive (631b.10(j), paytable "
                f"{letter}): the meter grows by {_percent(rates.increment)} of every Harmony "
                f"wager and a further {_percent(rates.reserve)} builds a reserve that reseeds "
                "it after six of a kind is paid. The section sets no opening seed, so a new "
                "table's meter starts at $0.00 and shows what its wagers have added."
            )
        return notes

    def rules(self) -> dict[str, Any]:
        tables = {}
        for spot in self.config.spots:
            paytable = self.config.paytable(spot)
            pays = paytable.shown(spot)
            tables[spot] = {"section": paytable.section, "letter": paytable.letter, "pays": pays}
        default = (self.config.default_limits.minimum, self.config.default_limits.maximum)
        spot_limits = {}
        for spot in self.config.spots:
            limits = self.config.limits_of(spot)
            if (limits.minimum, limits.maximum) != default:
                spot_limits[spot] = {"minimum": limits.minimum, "maximum": limits.maximum}
        return {
            "main_spots": ["player", "banker"],  # 631a.8(a); Majestic Match may stand alone
            "spot_limits": spot_limits,
            "summary": (
                f"Baccarat ({self.variant.replace('_', ' ')}), 58 Pa. Code 631a/631b, "
                f"{self.config.decks} decks. Bet on the Player's or the Banker's hand, or a "
                "tie; the hand closer to 9 wins. Side wagers pay per their paytables."
                + self._meters_explained()
            ),
            "paytables": tables,
        }


def _limits(settings: TableSettings, kinds: tuple[str, ...]) -> dict[str, BoxLimits]:
    return {kind: BoxLimits(settings.minimum, settings.maximum) for kind in kinds}


def _shoe(
    settings: TableSettings, source: RandomSource, rules: ShoeRules, decks: int
) -> VirtualShoe:
    try:
        return VirtualShoe(
            source, rules, decks, cards_behind_cover=settings.options.get("cards_behind_cover")
        )
    except ValueError as exc:
        raise ConfigError(f"table {settings.id}: {exc}") from None


class TwentyOneBaccaratGame(_ShoeGame):
    """21 Baccarat (681a). Options: ``decks`` (4 or 8), ``bonus_paytable`` (A-C with four
    decks, D-F with eight, "" for no Bonus Wagers), ``tie`` (offered or not)."""

    game = "twenty_one_baccarat"
    automated = False

    def __init__(self, settings: TableSettings, source: RandomSource) -> None:
        decks = _option(settings, "decks", 8, int)
        bonus = _option(settings, "bonus_paytable", "D" if decks == 8 else "A", str)
        try:
            self.table = TwentyOneBaccaratTable(
                decks=decks,
                bonus_paytable=bonus or None,
                tie_offered=_option(settings, "tie", True, bool),
                limits=_limits(settings, TWENTY_ONE_SPOTS),
            )
        except ValueError as exc:
            raise ConfigError(f"table {settings.id}: {exc}") from None
        self.shoe = _shoe(settings, source, TWENTY_ONE_BACCARAT, decks)
        self.variant = f"{decks}_decks" + (f"_bonus_{bonus}" if bonus else "")

    def new_round(self, round_id: str, *, replay: bool = False) -> RoundEngine:
        return TwentyOneBaccaratRound(self.table, round_id)

    def sample_spots(self) -> list[str]:
        return list(self.table.spots)

    def rules(self) -> dict[str, Any]:
        paytables: dict[str, Any] = {
            hand: _pays(
                "681a.8(a)",
                {f"{hand}_wins": WIN_ODDS, f"{hand}_wins_with_17": WIN_WITH_17_ODDS, "tie": PUSH},
            )
            for hand in ("player", "banker")
        }
        if self.table.tie_offered:
            paytables["tie"] = _pays("681a.8(b)", {"tie": TIE_ODDS})
        letter = self.table.bonus_paytable
        if letter:
            bonus = {h: BONUS_PAYTABLES[letter][h] for h in BONUS_HANDS}
            paytables["bonus"] = _pays("681a.8(c)", bonus, letter)
        return {
            "main_spots": list(TWENTY_ONE_MAIN_SPOTS),
            "summary": (
                f"21 Baccarat (58 Pa. Code 681a), {self.table.decks} decks: the hand closer to 21 "
                "wins; a hand under 17 takes one more card; naturals win first."
            ),
            "paytables": paytables,
        }


class CasinoWarGame(_ShoeGame):
    """Casino War (651a). Options: ``decks`` (6 or 8). Each seat is a betting box."""

    game = "casino_war"
    automated = False
    boxed = True

    def __init__(self, settings: TableSettings, source: RandomSource) -> None:
        decks = _option(settings, "decks", 6, int)
        try:
            self.table = CasinoWarTable(decks=decks, limits=_limits(settings, ("initial", "tie")))
        except ValueError as exc:
            raise ConfigError(f"table {settings.id}: {exc}") from None
        self.shoe = _shoe(settings, source, CASINO_WAR, decks)
        self.variant = f"{decks}_decks"

    def new_round(self, round_id: str, *, replay: bool = False) -> RoundEngine:
        return CasinoWarRound(self.table, round_id)

    def sample_spots(self) -> list[str]:
        return ["initial:{seat}", "tie:{seat}"]

    def rules(self) -> dict[str, Any]:
        return {
            "main_spots": ["initial:{seat}"],
            "summary": (
                "Casino War (58 Pa. Code 651a): your card against the dealer's, ace high. On a "
                "tie, surrender half your wager, or go to War: the Initial Wager is forfeited "
                "and an equal War Wager placed, which pays 2 to 1, or 3 to 1 if the War deal "
                "ties too."
            ),
            "paytables": {
                "initial": _pays("651a.10(1)", {"win": WAR_ODDS["initial"]}),
                "tie": _pays("651a.10(2)", {"tie_hand": WAR_ODDS["tie"]}),
                "war": _pays(
                    "651a.10(3)", {"war_won": WAR_ODDS["war"], "war_tie": WAR_ODDS["war_on_tie"]}
                ),
            },
        }


class DownUnderBlackjackGame(_ShoeGame):
    """Down Under Blackjack (685a). Options: ``decks`` (4, 5, 6, 8), ``match_the_dealer``
    (six or eight decks only). Each seat is a betting box; the hole-card reader is virtual."""

    game = "down_under_blackjack"
    automated = False
    boxed = True

    def __init__(self, settings: TableSettings, source: RandomSource) -> None:
        decks = _option(settings, "decks", 6, int)
        try:
            self.table = DownUnderTable(
                decks=decks,
                match_the_dealer=_option(settings, "match_the_dealer", decks in (6, 8), bool),
                limits=_limits(settings, ("bet", "match_the_dealer")),
            )
        except ValueError as exc:
            raise ConfigError(f"table {settings.id}: {exc}") from None
        self.shoe = _shoe(settings, source, DOWN_UNDER_BLACKJACK, decks)
        self.variant = f"{decks}_decks"

    def new_round(self, round_id: str, *, replay: bool = False) -> RoundEngine:
        return DownUnderRound(self.table, round_id)

    def read_hole(self, card: Card) -> tuple[Any, dict[str, Any]]:
        """The virtual Masque Card Reader: the range of the face-down card (685a.7(h))."""
        reading = HoleRange.of(card)
        return reading, {"range": reading.value}

    def answer_from_record(self, kind: str, payload: Mapping[str, Any]) -> Any:
        if kind == "hole_range":
            return HoleRange(payload["range"])
        return super().answer_from_record(kind, payload)

    def sample_spots(self) -> list[str]:
        spots = ["bet:{seat}"]
        if self.table.match_the_dealer:
            spots.append("match_the_dealer:{seat}")
        return spots

    def rules(self) -> dict[str, Any]:
        return {
            "main_spots": ["bet:{seat}"],
            "summary": (
                f"Down Under Blackjack (58 Pa. Code 685a), {self.table.decks} decks. The reader "
                "shows the range of the dealer's hole card; the dealer stands on 17 to 22; a "
                "dealer 22 pushes most hands."
            ),
            "paytables": {
                "bet": _pays("685a.11(a)", {"win": DUB_WIN_ODDS, "blackjack": BLACKJACK_ODDS}),
                "insurance": _pays("685a.11(b)", {"win": INSURANCE_ODDS}),
                # Not a payout: the colour the reader lights for each hole-card range.
                "lights": {r.value: c for r, c in self.table.lights.items()},
                **self._match_pays(),
            },
        }

    def _match_pays(self) -> dict[str, Any]:
        """685a.11: Match-the-Dealer pays each matching card (six or eight decks only)."""
        if not self.table.match_the_dealer:
            return {}
        suited, unsuited = MATCH_PAYTABLES[self.table.decks]
        pays = {"suited_match_each_card": suited, "unsuited_match_each_card": unsuited}
        return {"match_the_dealer": _pays("685a.11(c)", pays)}


_NO_NUMBER = "its chapter sets no number of player positions; Croupier's own bound"
SEAT_LIMITS: dict[str, SeatLimit] = {
    "baccarat": SeatLimit(UNREGULATED_SEAT_LIMIT, _NO_NUMBER),
    "twenty_one_baccarat": SeatLimit(BETTING_POSITIONS, "681a.2(a)"),
    "casino_war": SeatLimit(WAR_BOXES, "651a.2(a)"),
    "down_under_blackjack": SeatLimit(DOWN_UNDER_BOXES, "685a.2(a)"),
    "roulette": SeatLimit(UNREGULATED_SEAT_LIMIT, _NO_NUMBER),
    "big_six": SeatLimit(UNREGULATED_SEAT_LIMIT, _NO_NUMBER),
}
"""The most seats a table of each game may have (``[[tables]] seats``), checked when the
configuration is read. In Casino War and Down Under Blackjack a seat is a betting box, so
the limit is also the engine's box count."""

GameFactory = Callable[[TableSettings, RandomSource], GameTable]
GAMES: dict[str, GameFactory] = {
    "baccarat": BaccaratGame,
    "twenty_one_baccarat": TwentyOneBaccaratGame,
    "casino_war": CasinoWarGame,
    "down_under_blackjack": DownUnderBlackjackGame,
    "roulette": RouletteGame,
    "big_six": BigSixGame,
}


def build_game(settings: TableSettings, source: RandomSource) -> GameTable:
    factory = GAMES.get(settings.game)
    if factory is None:
        raise ConfigError(
            f"table {settings.id}: unknown game {settings.game!r} (one of {', '.join(GAMES)})"
        )
    limit = SEAT_LIMITS[settings.game]
    if not 1 <= settings.seats <= limit.most:
        # load_config already refuses this; settings made in code must not get past it either,
        # or the runtime could seat a player in a box the engine does not have.
        raise ConfigError(
            f"table {settings.id}: seats = {settings.seats}, but a {settings.game} table has "
            f"at most {limit.most} ({limit.reason})"
        )
    return factory(settings, source)
