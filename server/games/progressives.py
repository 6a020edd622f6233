"""Progressive meters: Heavenly 9 (631b.2), Harmony (631b.10(j)) and the Must-Hit-By
Mystery Bonus (631b.6), behind one small Protocol with an in-memory default.

Meters hold exact ``Fraction`` amounts of minor units: a 10% contribution of a 105-cent
wager adds 10.5 cents and the half cent stays on the meter, so no contribution is ever lost.
An award pays the whole cents on the meter (the rounding policy of ``money.returned``: down)
and the fraction stays on the meter after it resets.

No clock and no randomness are imported here (sans-I/O): the Must-Hit-By meter asks for its
hit value (``MysteryHitRequest``, a chance request like a card) and the caller answers it from
the certified RNG, journaling it first; a ``randbelow(n) -> int`` passed in answers it at once
instead (tests, simulations).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from types import MappingProxyType
from typing import Protocol

from server.games.chance import MysteryHitRequest

__all__ = [
    "HEAVENLY_9_INCREMENT",
    "HEAVENLY_9_SEED",
    "MYSTERY_BONUS_CONFIGS",
    "Contribution",
    "InMemoryMeter",
    "MustHitByMeter",
    "MysteryBonusConfig",
    "ProgressiveMeter",
    "harmony_meter",
    "heavenly_9_meter",
]

# 631b.2(i): meter seed/reseed $10,000, increment rate 10%.
HEAVENLY_9_SEED = 1_000_000
HEAVENLY_9_INCREMENT = Fraction(10, 100)


@dataclass(frozen=True, slots=True)
class Contribution:
    """What one wager added: ``to_meter`` (the jackpot), ``to_reserve`` (the reseed fund)
    and ``award``, the whole cents won when this contribution hit a Must-Hit-By meter."""

    meter: str
    wager: int
    to_meter: Fraction
    to_reserve: Fraction
    award: int | None = None


class ProgressiveMeter(Protocol):
    """A progressive jackpot meter (605a.7). ``amount`` is the jackpot now, in exact minor
    units."""

    @property
    def name(self) -> str: ...

    @property
    def amount(self) -> Fraction: ...

    def contribute(self, wager: int) -> Contribution: ...

    def pay_jackpot(self) -> int:
        """Pay 100% of the meter (whole minor units) and reset it; return what was paid."""
        ...


class InMemoryMeter:
    """A jackpot meter: ``increment`` of each wager to the meter, ``reserve_rate`` to the
    reseed reserve. After a jackpot the meter restarts at ``seed`` plus the reserve plus the
    fraction of a cent left over; the reserve starts again from zero."""

    def __init__(
        self,
        name: str,
        *,
        seed: int,
        increment: Fraction,
        reserve_rate: Fraction = Fraction(0),
    ) -> None:
        if seed < 0 or not 0 <= increment + reserve_rate <= 1:
            raise ValueError("a meter needs seed >= 0 and rates between 0 and 100%")
        self._name = name
        self.seed = seed
        self.increment = increment
        self.reserve_rate = reserve_rate
        # Exact amounts kept as integers over one common denominator (fast, still exact).
        self._den = math.lcm(increment.denominator, reserve_rate.denominator)
        self._meter = seed * self._den
        self._reserve = 0
        self._rates = (
            increment.numerator * (self._den // increment.denominator),
            reserve_rate.numerator * (self._den // reserve_rate.denominator),
        )
        self._by_wager: dict[int, Contribution] = {}  # the same stake contributes the same

    @property
    def name(self) -> str:
        return self._name

    @property
    def amount(self) -> Fraction:
        return Fraction(self._meter, self._den)

    @property
    def reserve(self) -> Fraction:
        return Fraction(self._reserve, self._den)

    def contribute(self, wager: int) -> Contribution:
        inc, res = self._rates
        self._meter += wager * inc
        self._reserve += wager * res
        c = self._by_wager.get(wager)
        if c is None:
            to_meter, to_reserve = (
                Fraction(wager * inc, self._den),
                Fraction(wager * res, self._den),
            )
            c = self._by_wager[wager] = Contribution(self._name, wager, to_meter, to_reserve)
        return c

    def pay_jackpot(self) -> int:
        paid = self._meter // self._den  # whole minor units; the fraction stays
        self._meter = self._meter - paid * self._den + (self.seed * self._den) + self._reserve
        self._reserve = 0
        return paid

    def state(self) -> dict[str, int]:
        """The meter's exact state, to persist (amounts in 1/``denominator`` minor units)."""
        return {"meter": self._meter, "reserve": self._reserve, "denominator": self._den}

    def restore(self, state: dict[str, int]) -> None:
        """Continue from a persisted ``state`` (same configuration, so same denominator)."""
        if state.get("denominator") != self._den:
            raise ValueError(f"meter {self._name}: saved state has another denominator")
        self._meter, self._reserve = int(state["meter"]), int(state["reserve"])


def heavenly_9_meter() -> InMemoryMeter:
    """631b.2(i): seed $10,000, 10% of each wager."""
    return InMemoryMeter(
        "heavenly_9_progressive", seed=HEAVENLY_9_SEED, increment=HEAVENLY_9_INCREMENT
    )


def harmony_meter(increment: Fraction, reserve: Fraction, seed: int = 0) -> InMemoryMeter:
    """631b.10(j): the incrementation and reserve incrementation rates of the chosen paytable
    (``paytables.HARMONY_RATES``); the reserve reseeds the meter."""
    return InMemoryMeter(
        "harmony_progressive", seed=seed, increment=increment, reserve_rate=reserve
    )


@dataclass(frozen=True, slots=True)
class MysteryBonusConfig:
    """One 631b.6(c)(4) configuration: minimum qualifying Heavenly 9 Progressive wager,
    the meter's minimum and maximum dollar values, and the contribution rate (minor units)."""

    name: str
    minimum_wager: int
    minimum: int
    maximum: int
    rate: Fraction


def _mhb(letter: str, dollars: int, low: int, high: int, rate: str) -> MysteryBonusConfig:
    return MysteryBonusConfig(
        f"{letter}-${dollars}", dollars * 100, low * 100, high * 100, Fraction(rate) / 100
    )


# 631b.6(c)(4): paytables A-D, each in a $1, $2 and $5 configuration.
MYSTERY_BONUS_CONFIGS: Mapping[str, MysteryBonusConfig] = MappingProxyType(
    {
        c.name: c
        for c in (
            _mhb("A", 1, 100, 200, "2"),
            _mhb("A", 2, 100, 200, "1.5"),
            _mhb("A", 5, 100, 250, "1"),
            _mhb("B", 1, 100, 500, "5"),
            _mhb("B", 2, 100, 500, "3.5"),
            _mhb("B", 5, 100, 500, "2"),
            _mhb("C", 1, 250, 500, "2"),
            _mhb("C", 2, 250, 500, "1.5"),
            _mhb("C", 5, 250, 500, "0.5"),
            _mhb("D", 1, 250, 1000, "5"),
            _mhb("D", 2, 250, 1000, "3"),
            _mhb("D", 5, 250, 1000, "2"),
        )
    }
)


class MustHitByMeter:
    """The Must-Hit-By Mystery Bonus meter (631b.6, docs/interpretations.md, 11).

    The hit value is a whole number of minor units uniform over (minimum, maximum], chosen when
    the meter is set and every time it resets (the meter starts at the minimum, so the hit lies
    ahead of it). The meter asks for it: ``pending()`` is a ``MysteryHitRequest`` while it has
    none, answered with ``set_hit_value``; the table draws it from the certified RNG and
    journals it before it takes effect. A ``randbelow`` passed in answers each request at once
    (tests, simulations). The qualifying contribution that takes the meter past the hit value
    wins 100% of the meter (whole minor units; the fraction stays), and the meter resets to
    the minimum, waiting for a fresh hit value.
    """

    def __init__(
        self, config: MysteryBonusConfig, randbelow: Callable[[int], int] | None = None
    ) -> None:
        self.config = config
        self._randbelow = randbelow
        self._den = config.rate.denominator
        self._meter = config.minimum * self._den  # exact, in 1/den minor units
        # Whole minor units in (minimum, maximum]: the meter restarts at the minimum (plus at
        # most a fraction of a cent), so a contribution must always carry it past the hit.
        self.request = MysteryHitRequest(config.minimum + 1, config.maximum)
        self.hit_value: int | None = None
        self._choose()

    def _choose(self) -> None:
        """A new hit value is needed: drawn now from ``randbelow`` if given, else asked."""
        self.hit_value = None if self._randbelow is None else self.request.answer(self._randbelow)

    def pending(self) -> MysteryHitRequest | None:
        """The request for a hit value, while the meter has none."""
        return self.request if self.hit_value is None else None

    def set_hit_value(self, value: int) -> None:
        """The answer to ``pending()``; ``ValueError`` outside the configuration's range."""
        if self.hit_value is not None:
            raise ValueError("mystery bonus: the meter already has its hit value")
        self.hit_value = self.request.check(value)

    @property
    def name(self) -> str:
        return "mystery_bonus"

    @property
    def amount(self) -> Fraction:
        return Fraction(self._meter, self._den)

    def qualifies(self, wager: int) -> bool:
        """631b.6(c)(1): a Heavenly 9 Progressive wager of at least the configuration's
        minimum progressive wager qualifies."""
        return wager >= self.config.minimum_wager

    def contribute(self, wager: int) -> Contribution:
        """Add a qualifying wager's contribution and pay the meter if it passes the hit value.
        Without a hit value (only while replaying a round on a copy of the meters, whose
        journal did not record one) nothing can be won."""
        if not self.qualifies(wager):
            return Contribution(self.name, wager, Fraction(0), Fraction(0))
        added = wager * self.config.rate.numerator
        self._meter += added
        hit = self.hit_value
        award = self.pay_jackpot() if hit is not None and self._meter > hit * self._den else None
        return Contribution(self.name, wager, Fraction(added, self._den), Fraction(0), award)

    def pay_jackpot(self) -> int:
        paid = self._meter // self._den
        self._meter += (self.config.minimum - paid) * self._den
        self._choose()
        return paid

    def state(self) -> dict[str, int]:
        """The meter and its hit value (never shown to players: 631b.6 keeps it secret); no
        ``hit_value`` while the meter waits for one, so a restart asks for it, not re-draws."""
        state = {"meter": self._meter, "denominator": self._den}
        if self.hit_value is not None:
            state["hit_value"] = self.hit_value
        return state

    def restore(self, state: dict[str, int]) -> None:
        if state.get("denominator") != self._den:
            raise ValueError("mystery bonus: saved state has another denominator")
        hit = state.get("hit_value")
        self._meter = int(state["meter"])
        if hit is None:
            self._choose()
        else:
            self.hit_value = int(hit)
