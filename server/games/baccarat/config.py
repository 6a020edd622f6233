"""A Baccarat table's configuration: the operator's Rules Submission (601a.2) as data.

Variant (631a standard with 5% vigorish, 631b.5 commission-free, 631b.8 Rising Phoenix with
vigorish or commission-free), the optional wagers offered and the paytable chosen for each,
table limits per spot, deck count, whether the table is fully automated (Lucky Nines,
631b.4(a)) and the Must-Hit-By Mystery Bonus configuration (631b.6). ``TableConfig`` is
validated when built: a table that the chapter does not allow cannot be configured.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from types import MappingProxyType

from server.games.baccarat.paytables import BASE, PAYTABLES, Paytable
from server.games.baccarat.side_wagers import SPOTS, Spot
from server.games.progressives import MYSTERY_BONUS_CONFIGS, MysteryBonusConfig

__all__ = [
    "FAMILIES_BY_VARIANT",
    "ConfigError",
    "Limits",
    "TableConfig",
    "Variant",
]


class ConfigError(ValueError):
    """A table configuration the rules do not allow (the operator's error, not a player's)."""


class Variant(Enum):
    STANDARD = "standard"  # 631a: Banker pays 19 to 20
    COMMISSION_FREE = "commission_free"  # 631b.5
    RISING_PHOENIX = "rising_phoenix"  # 631b.8 with vigorish
    RISING_PHOENIX_COMMISSION_FREE = "rising_phoenix_commission_free"  # 631b.8(b), (g)(1)(iv)


_GENERAL = (
    "perfect_pairs",  # 631b.1
    "heavenly_9_progressive",  # 631b.2
    "five_treasures",  # 631b.3
    "lucky_nines",  # 631b.4: fully automated tables only
    "majestic_match",  # 631b.7
    "golden_talons",  # 631b.9
    "harmony_progressive",  # 631b.10
)
_RISING_PHOENIX = ("rising_phoenix_bonus", "pairs", "golden_talons", "harmony_progressive")
# The optional-wager families each variant may offer. Pairs and Lucky Six belong to
# commission-free Baccarat (631b.5(c)). 631b.8(g) lists "the permissible wagers in the game
# of Rising Phoenix Baccarat" exhaustively: its own bonus wagers and pairs ((g)(4)), Golden
# Talons ((g)(5)) and Harmony Progressive ((g)(6)) — nothing else.
FAMILIES_BY_VARIANT: Mapping[Variant, tuple[str, ...]] = MappingProxyType(
    {
        Variant.STANDARD: _GENERAL,
        Variant.COMMISSION_FREE: (*_GENERAL, "pairs", "lucky_six"),
        Variant.RISING_PHOENIX: _RISING_PHOENIX,
        Variant.RISING_PHOENIX_COMMISSION_FREE: _RISING_PHOENIX,
    }
)
_MAIN = ("player", "banker", "tie")


@dataclass(frozen=True, slots=True)
class Limits:
    """Table limits of one spot, in minor units."""

    minimum: int
    maximum: int

    def __post_init__(self) -> None:
        if not 0 < self.minimum <= self.maximum:
            raise ConfigError(f"limits must satisfy 0 < minimum <= maximum: {self}")


DEFAULT_LIMITS = Limits(100, 1_000_000)
# 631b.2(c): a Heavenly 9 Progressive wager of no less than $5.
HEAVENLY_9_MINIMUM = 500


@dataclass(frozen=True)
class TableConfig:
    """One table's Rules Submission.

    ``side_wagers`` maps each offered optional-wager family to its paytable letter (None for
    sections with a single table). ``limits`` overrides ``default_limits`` per spot.
    """

    variant: Variant = Variant.STANDARD
    decks: int = 8
    automated: bool = False
    side_wagers: Mapping[str, str | None] = field(default_factory=dict)
    default_limits: Limits = DEFAULT_LIMITS
    limits: Mapping[str, Limits] = field(default_factory=dict)
    mystery_bonus: MysteryBonusConfig | None = None

    def __post_init__(self) -> None:
        # frozen all the way down: later changes to the caller's dicts cannot reach the table
        object.__setattr__(self, "side_wagers", MappingProxyType(dict(self.side_wagers)))
        object.__setattr__(self, "limits", MappingProxyType(dict(self.limits)))
        if self.decks not in (6, 8):
            raise ConfigError(f"631a.3: six or eight decks, not {self.decks}")
        allowed = FAMILIES_BY_VARIANT[self.variant]
        for family, letter in self.side_wagers.items():
            if family not in PAYTABLES:
                raise ConfigError(f"no such optional wager: {family!r}")
            if family not in allowed:
                raise ConfigError(f"{family!r} is not offered in {self.variant.value} Baccarat")
            if letter not in PAYTABLES[family]:
                choices = sorted(str(x) for x in PAYTABLES[family])
                raise ConfigError(f"{family}: no paytable {letter!r} (choose from {choices})")
        if "lucky_nines" in self.side_wagers and not self.automated:
            raise ConfigError("631b.4(a): Lucky Nines only on a fully automated electronic table")
        if self.mystery_bonus is not None and "heavenly_9_progressive" not in self.side_wagers:
            raise ConfigError("631b.6(a): the Must-Hit-By Mystery Bonus needs Heavenly 9")
        if (
            self.mystery_bonus is not None
            and self.mystery_bonus not in MYSTERY_BONUS_CONFIGS.values()
        ):
            raise ConfigError(
                "631b.6(c)(4): the Mystery Bonus must be one of the configurations "
                + ", ".join(MYSTERY_BONUS_CONFIGS)
            )
        for spot in self.limits:
            if spot not in self.spots:
                raise ConfigError(f"limits for a spot this table does not offer: {spot!r}")
        h9 = "heavenly_9_progressive"
        if h9 in self.spots and self.limits_of(h9).minimum < HEAVENLY_9_MINIMUM:
            raise ConfigError("631b.2(c): the Heavenly 9 Progressive minimum is $5")

    @property
    def spots(self) -> tuple[str, ...]:
        """Every spot this table offers, main wagers first."""
        offered = [s.id for s in SPOTS.values() if s.family in self.side_wagers]
        return _MAIN + tuple(offered)

    def spot(self, spot_id: str) -> Spot:
        return SPOTS[spot_id]

    def paytable(self, spot_id: str) -> Paytable:
        """The paytable that settles ``spot_id`` at this table."""
        spot = SPOTS[spot_id]
        if spot.family in _MAIN:
            return BASE[self.variant.value][spot.family]
        return PAYTABLES[spot.family][self.side_wagers[spot.family]]

    def limits_of(self, spot_id: str) -> Limits:
        if spot_id in self.limits:
            return self.limits[spot_id]
        if spot_id == "heavenly_9_progressive":
            return Limits(max(HEAVENLY_9_MINIMUM, self.default_limits.minimum),
                          max(HEAVENLY_9_MINIMUM, self.default_limits.maximum))  # fmt: skip
        return self.default_limits

    @staticmethod
    def everything(
        variant: Variant = Variant.STANDARD,
        *,
        decks: int = 8,
        letter: str = "A",
        mystery_bonus: MysteryBonusConfig | None = None,
    ) -> TableConfig:
        """A fully automated table offering every optional wager its variant allows, each
        with paytable ``letter`` where the section has one (benchmarks, property tests)."""
        chosen: dict[str, str | None] = {}
        for family in FAMILIES_BY_VARIANT[variant]:
            tables = PAYTABLES[family]
            chosen[family] = letter if letter in tables else next(iter(tables))
        return TableConfig(
            variant=variant,
            decks=decks,
            automated=True,
            side_wagers=chosen,
            # 631b.6(a): the Mystery Bonus rides on Heavenly 9, which not every variant offers.
            mystery_bonus=mystery_bonus if "heavenly_9_progressive" in chosen else None,
        )
