"""Baccarat (631a, 631b) at a table: variant, decks, side wagers and paytables the operator
chose, the progressive meters, the rules players read and the registry entry."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from rng.shoe_rules import BACCARAT
from server.games.baccarat.config import ConfigError as BaccaratConfigError
from server.games.baccarat.config import Limits, TableConfig, Variant
from server.games.baccarat.engine import BaccaratRound, Meters, depends_on
from server.games.baccarat.linked import LINKABLE, MYSTERY, UNREACHABLE, apply_ops, link_ops, relink
from server.games.baccarat.paytables import HARMONY_RATES
from server.games.chance import CardRequest, MysteryHitRequest
from server.games.progressives import (
    HEAVENLY_9_INCREMENT,
    HEAVENLY_9_SEED,
    MYSTERY_BONUS_CONFIGS,
    MustHitByMeter,
)
from server.games.round import RoundEngine
from server.games.table import (
    NO_NUMBER,
    UNREGULATED_SEAT_LIMIT,
    Capabilities,
    ConfigError,
    GameEntry,
    ParSheetProvider,
    Randbelow,
    SeatLimit,
    ShoeSpec,
    TableGame,
    TableSettings,
    dollars,
    option,
    percent,
)

__all__ = ["GAME", "BaccaratGame"]


class BaccaratGame(TableGame):
    """Baccarat (631a, 631b): any variant, side wagers and paytables the operator chose.

    Options: ``variant``, ``decks`` (6 or 8), ``automated`` (a fully automated electronic
    table: the only kind that may offer Lucky Nines), ``side_wagers`` (family → paytable
    letter, "" where the section has one table), ``mystery_bonus`` (e.g. "A-$1", 631b.6),
    ``cards_behind_cover``, ``progressive_link`` (a name: every table naming the same link
    shares its progressive meters, on any node; ``server.games.baccarat.linked``).
    """

    game = "baccarat"

    def __init__(self, settings: TableSettings, randbelow: Randbelow) -> None:
        where = f"table {settings.id}"
        try:
            variant = Variant(option(settings, "variant", "standard", str))
        except ValueError:
            choices = ", ".join(v.value for v in Variant)
            raise ConfigError(f"{where}: variant must be one of {choices}") from None
        decks = option(settings, "decks", 8, int)
        wagers = option(settings, "side_wagers", {}, dict)
        bonus = settings.options.get("mystery_bonus")
        if bonus is not None and bonus not in MYSTERY_BONUS_CONFIGS:
            choices = ", ".join(MYSTERY_BONUS_CONFIGS)
            raise ConfigError(f"{where}: mystery_bonus must be one of {choices}")
        try:
            self.config = TableConfig(
                variant=variant,
                decks=decks,
                automated=option(settings, "automated", False, bool),
                side_wagers={family: (letter or None) for family, letter in wagers.items()},
                default_limits=Limits(settings.minimum, settings.maximum),
                mystery_bonus=MYSTERY_BONUS_CONFIGS[bonus] if bonus else None,
            )
        except (BaccaratConfigError, ValueError) as exc:
            raise ConfigError(f"{where}: {exc}") from None
        self.chance = ShoeSpec(BACCARAT, decks, settings.options.get("cards_behind_cover"))
        self.variant = variant.value
        self.automated = self.config.automated
        # The rounds ask for each Must-Hit-By hit value (631b.6(c)(3)): ``draw_mystery_hit``.
        self._randbelow = randbelow
        self.meters = Meters.asking(self.config)
        self.link = option(settings, "progressive_link", "", str)
        # meter name -> its key in the store, for each meter shared with the link's tables
        self.linked: dict[str, str] = {}
        if self.link:
            names = [name for name in self.meters.named() if name in LINKABLE]
            if not names:
                raise ConfigError(
                    f"{where}: progressive_link needs a progressive meter to share "
                    "(heavenly_9_progressive, harmony_progressive or mystery_bonus)"
                )
            self.linked = {name: f"{self.link}/{name}" for name in names}
            mystery = self.meters.mystery
            if mystery is not None:  # the shared meter decides the Mystery Bonus
                mystery.hit_value = UNREACHABLE

    def new_round(self, round_id: str, *, replay: bool = False) -> RoundEngine:
        if replay:  # a replay must not move the live meters: it plays on a copy of them
            return BaccaratRound(self.config, round_id, self.meters.copy(self.config), replay=True)
        return BaccaratRound(self.config, round_id, self.meters)

    def draw_mystery_hit(self, request: MysteryHitRequest) -> tuple[int, dict[str, Any]]:
        """A Must-Hit-By hit value from the certified RNG and its journal record (631b.6(c)(3));
        the record stays in the journal: the value is never sent to a client."""
        value = request.answer(self._randbelow)
        return value, {"value": value, "low": request.low, "high": request.high}

    def answer_from_record(self, kind: str, payload: Mapping[str, Any]) -> Any:
        if kind == "mystery_hit":
            return int(payload["value"])
        return super().answer_from_record(kind, payload)

    def depends_on(self, spot: str) -> tuple[str, ...]:
        return depends_on(spot)

    def sample_spots(self) -> list[str]:
        return list(self.config.spots)

    def meter_state(self) -> dict[str, Any] | None:
        # A linked meter is kept by the store for the whole link, not by the table.
        state = {
            key: value
            for key, value in self.meters.state().items()
            if getattr(self.meters, key).name not in self.linked
        }
        return state or None

    def restore_meters(self, state: dict[str, Any]) -> None:
        self.meters.restore(state)

    # --- linked progressives (server.games.baccarat.linked) ---------------------------------

    def link_signature(self) -> tuple[object, ...]:
        """What every table of one link must agree on: the same meters, alike."""
        letter = self.config.side_wagers.get("harmony_progressive")
        return (sorted(self.linked), letter, self.config.mystery_bonus)

    def linked_ops(
        self, events: Iterable[object], wagers: Mapping[tuple[str, str], int]
    ) -> list[dict[str, Any]]:
        return link_ops(events, self.linked, wagers) if self.linked else []

    def hit_values_for(self, ops: Iterable[Mapping[str, Any]]) -> list[int]:
        """Must-Hit-By hit values from the certified RNG (631b.6(c)(3)), drawn on the table's
        own thread before the shared meters are settled: one per contribution that could pass
        the shared meter's hit value, and one for a new link's meter."""
        mystery = self.meters.mystery
        if mystery is None or MYSTERY not in self.linked:
            return []
        adds = sum(1 for op in ops if op["meter"] == MYSTERY)
        return [self.draw_mystery_hit(mystery.request)[0] for _ in range(adds + 1)]

    def settle_linked(
        self,
        ops: list[dict[str, Any]],
        hit_values: list[int],
        states: Mapping[str, dict[str, int] | None],
    ) -> tuple[dict[str, dict[str, int]], dict[str, Any]]:
        """Apply a round's ``ops`` to the shared meters in ``states`` (by meter name; None: a
        new link's meter, at its seed): the new states and the round's result."""
        meters = Meters.asking(self.config).named()
        for name, state in states.items():
            if state is not None:
                meters[name].restore(state)
        shared = {name: meters[name] for name in self.linked}
        result = apply_ops(shared, ops, iter(hit_values))
        return {name: meter.state() for name, meter in shared.items()}, result

    def relinked(self, events: Iterable[object], result: Mapping[str, Any]) -> list[object]:
        return relink(events, self.linked, result)

    def restore_linked(self, states: Mapping[str, dict[str, int] | None]) -> None:
        """Show the shared meters as the store holds them (this table's copy follows them;
        its Must-Hit-By copy keeps no hit value: the value stays in the store)."""
        named = self.meters.named()
        for name, state in states.items():
            if state is None or name not in self.linked:
                continue
            meter = named[name]
            if isinstance(meter, MustHitByMeter):
                meter.restore({k: v for k, v in state.items() if k != "hit_value"})
                meter.hit_value = UNREACHABLE
            else:
                meter.restore(state)

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
                f"{dollars(HEAVENLY_9_SEED)} and grows by {percent(HEAVENLY_9_INCREMENT)} of "
                "every Heavenly 9 wager; after a jackpot it is reseeded."
            )
        letter = self.config.side_wagers.get("harmony_progressive")
        if letter:
            rates = HARMONY_RATES[letter]
            notes += (
                " Harmony Progressive (631b.10(j), paytable "
                f"{letter}): the meter grows by {percent(rates.increment)} of every Harmony "
                f"wager and a further {percent(rates.reserve)} builds a reserve that reseeds "
                "it after six of a kind is paid. The section sets no opening seed, so a new "
                "table's meter starts at $0.00 and shows what its wagers have added."
            )
        return notes

    def rules(self) -> dict[str, Any]:
        tables = {}
        for spot in self.config.spots:
            paytable = self.config.paytable(spot)
            shown = paytable.shown(spot)
            tables[spot] = {"section": paytable.section, "letter": paytable.letter, "pays": shown}
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


GAME = GameEntry(
    name="baccarat",
    build=BaccaratGame,
    seats=SeatLimit(UNREGULATED_SEAT_LIMIT, NO_NUMBER),
    par_sheet=ParSheetProvider(
        "Baccarat, every 631a/631b wager, variant and paytable (exact)",
        "server.games.baccarat.par_sheet",
    ),
    capabilities=Capabilities(chance=(CardRequest, MysteryHitRequest), linked_meters=True),
)
