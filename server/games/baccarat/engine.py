"""The Baccarat round: a sans-I/O state machine (DESIGN.md principles 1-5).

It follows ``server.games.round.RoundEngine``: ``open`` → ``place``/``cancel`` → ``close_betting``
("no more bets", 631a.9) → answer ``pending()`` card requests one at a time with
``provide_card`` → settled. It never touches a clock, a socket or the RNG: each card is the
caller's answer to a ``CardRequest`` (the virtual shoe, a card-reading shoe, a test script).

Settlement timing: wagers judged on the initial two cards of a hand (Perfect Pairs 631b.1(d),
Lucky Nines 631b.4(d), Player/Banker Pair 631b.5(d), Majestic Match 631b.7(c)) are settled
right after the fourth card, before any third card is requested; every other wager after the
result is announced (631a.12). Within each settlement losing wagers are collected first
(631a.12, 631b.5(f)).

Progressive wagers contribute to their meters when they are settled (a voided round
contributes nothing); a jackpot line is paid 100% of the meter after this round's
contributions, and a Must-Hit-By Mystery Bonus (631b.6) is paid to the qualifying Heavenly 9
Progressive wager whose contribution takes its meter past the hit value.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

from rng.cards import Card
from server.games.baccarat.config import ConfigError, Limits, TableConfig
from server.games.baccarat.events import (
    InitialCountsAnnounced,
    ProgressiveAwarded,
    ProgressiveContributed,
    ResultAnnounced,
    ThirdCardDecided,
)
from server.games.baccarat.hands import (
    Coup,
    banker_draws,
    player_draws,
    point_count,
    value_of,
)
from server.games.baccarat.paytables import HARMONY_RATES, Paytable
from server.games.baccarat.side_wagers import SPOTS, Decision, Spot, Timing, judge
from server.games.chance import CardRequest
from server.games.errors import (
    ABOVE_MAXIMUM,
    BELOW_MINIMUM,
    BETTING_CLOSED,
    DUPLICATE_BET_ID,
    MAIN_WAGER_REQUIRED,
    NOT_IN_PHASE,
    UNKNOWN_BET,
    UNKNOWN_WAGER,
    WAGER_NOT_OFFERED,
    IllegalAction,
    InvariantViolation,
    allowed,
)
from server.games.events import (
    BetAccepted,
    BetCancelled,
    BettingClosed,
    BettingOpened,
    CardDealt,
    RoundSettled,
    RoundVoided,
    WagerSettled,
)
from server.games.money import check_amount
from server.games.progressives import (
    InMemoryMeter,
    MustHitByMeter,
    ProgressiveMeter,
    harmony_meter,
    heavenly_9_meter,
)
from server.games.round import Phase, RoundEngine
from server.games.wagers import Outcome, Result, Settlement, Wager, settle

__all__ = ["MAIN_WAGER_IN_USE", "BaccaratRound", "Meters"]

Route = tuple[Spot, Paytable, Limits]
_ROUTES: dict[int, tuple[TableConfig, dict[str, Route]]] = {}


def _routes(config: TableConfig) -> dict[str, Route]:
    """Each offered spot with its paytable and limits, computed once per configuration."""
    entry = _ROUTES.get(id(config))
    if entry is None or entry[0] is not config:
        if len(_ROUTES) > 1000:
            _ROUTES.clear()
        routes = {
            spot_id: (SPOTS[spot_id], config.paytable(spot_id), config.limits_of(spot_id))
            for spot_id in config.spots
        }
        entry = _ROUTES[id(config)] = (config, routes)
    return entry[1]


# Baccarat's own rejection code: cancelling the last Player/Banker wager that a side wager
# depends on (631a.8(a)); cancel the side wagers first.
MAIN_WAGER_IN_USE: Final = "main_wager_in_use"

_MAIN_SPOTS = frozenset({"player", "banker"})

# Which command each phase admits (h11-style: the transitions are data).
_COMMANDS: Mapping[Phase, frozenset[str]] = MappingProxyType(
    {
        Phase.BETTING: frozenset({"open", "place", "cancel", "close_betting", "void"}),
        Phase.DEALING: frozenset({"provide_card", "void"}),
        Phase.SETTLED: frozenset(),
        Phase.VOIDED: frozenset(),
    }
)
# The initial four cards: first and third to the Player, second and fourth to the Banker.
_INITIAL_TARGETS = ("player", "banker", "player", "banker")
_REQUESTS = {"player": CardRequest("player"), "banker": CardRequest("banker")}


@dataclass
class Meters:
    """The table's progressive meters, shared by its rounds (they outlive a round)."""

    heavenly_9: ProgressiveMeter | None = None
    harmony: ProgressiveMeter | None = None
    mystery: MustHitByMeter | None = None

    @staticmethod
    def for_table(config: TableConfig, randbelow: Callable[[int], int] | None = None) -> Meters:
        """In-memory meters for every progressive ``config`` offers; ``randbelow`` (from
        the certified RNG) is needed for a Must-Hit-By Mystery Bonus."""
        meters = Meters()
        if "heavenly_9_progressive" in config.side_wagers:
            meters.heavenly_9 = heavenly_9_meter()
        letter = config.side_wagers.get("harmony_progressive")
        if letter is not None:
            rates = HARMONY_RATES[letter]
            meters.harmony = harmony_meter(rates.increment, rates.reserve)
        if config.mystery_bonus is not None:
            if randbelow is None:
                raise ConfigError("631b.6(c)(3): the Mystery Bonus needs the RNG's randbelow")
            meters.mystery = MustHitByMeter(config.mystery_bonus, randbelow)
        return meters

    def _all(self) -> dict[str, InMemoryMeter | MustHitByMeter]:
        found: dict[str, InMemoryMeter | MustHitByMeter] = {}
        for key in ("heavenly_9", "harmony", "mystery"):
            meter = getattr(self, key)
            if isinstance(meter, InMemoryMeter | MustHitByMeter):
                found[key] = meter
        return found

    def state(self) -> dict[str, dict[str, int]]:
        """Every meter's exact state, to persist after each round."""
        return {key: meter.state() for key, meter in self._all().items()}

    def restore(self, state: dict[str, dict[str, int]]) -> None:
        for key, meter in self._all().items():
            if key in state:
                meter.restore(state[key])

    def amounts(self) -> dict[str, int]:
        """What the meters show players: whole minor units (never a hit value)."""
        return {meter.name: int(meter.amount) for meter in self._all().values()}


class BaccaratRound:
    """One round of Baccarat at a table configured by ``config``.

    ``meters`` are the table's progressive meters, shared by its rounds; if omitted, fresh
    in-memory meters are made for this round alone (tests, par-sheet checks)."""

    def __init__(self, config: TableConfig, round_id: str, meters: Meters | None = None) -> None:
        self.config = config
        self.round_id = round_id
        self.meters = meters if meters is not None else Meters.for_table(config)
        if "heavenly_9_progressive" in config.side_wagers and self.meters.heavenly_9 is None:
            raise ConfigError("Heavenly 9 Progressive offered without its meter")
        if "harmony_progressive" in config.side_wagers and self.meters.harmony is None:
            raise ConfigError("Harmony Progressive offered without its meter")
        if config.mystery_bonus is not None and self.meters.mystery is None:
            raise ConfigError("Must-Hit-By Mystery Bonus offered without its meter")
        self._phase = Phase.BETTING
        self._allowed = _COMMANDS[Phase.BETTING]  # what the phase admits (kept in step)
        self._opened = False
        # each offered spot with its paytable and limits, looked up once per table round
        self._routes = _routes(config)
        self._open: dict[tuple[str, str], Wager] = {}  # accepted and not yet settled
        self._on_spot: dict[tuple[str, str], int] = {}  # (player, spot) -> amount wagered
        self._mains: dict[str, int] = {}  # player -> number of Player/Banker wagers
        # after "no more bets": the wagers settled on the initial cards, and the others
        self._initial: list[tuple[tuple[str, str], Wager, Spot, Paytable]] = []
        self._final: list[tuple[tuple[str, str], Wager, Spot, Paytable]] = []
        self.settlements: list[Settlement] = []
        self._player: list[Card] = []
        self._banker: list[Card] = []
        self._seq = 0
        self._next: str | None = None
        self._coup: Coup | None = None

    # -- state ---------------------------------------------------------------------------

    @property
    def phase(self) -> Phase:
        return self._phase

    @property
    def wagers(self) -> tuple[Wager, ...]:
        """Wagers accepted and not yet settled."""
        return tuple(self._open.values())

    @property
    def coup(self) -> Coup | None:
        """The completed hands, once the round is settled."""
        return self._coup

    def _require(self, command: str) -> None:
        if self._opened and command in self._allowed and command != "open":
            return  # the common case, checked first
        if command not in self._allowed:
            if command in ("place", "cancel") and self._phase is not Phase.BETTING:
                raise IllegalAction(BETTING_CLOSED, "no more bets", self._phase.value)
            raise IllegalAction(
                NOT_IN_PHASE, f"cannot {command} in phase {self._phase.value}", command
            )
        if command != "open" and self._phase is Phase.BETTING and not self._opened:
            raise IllegalAction(NOT_IN_PHASE, f"cannot {command} before betting opens", command)

    # -- betting -------------------------------------------------------------------------

    def open(self) -> Sequence[object]:
        self._require("open")
        if self._opened:
            raise IllegalAction(NOT_IN_PHASE, "betting is already open", "open")
        self._opened = True
        return (BettingOpened(self.round_id),)

    def check_place(self, wager: Wager) -> None:
        """Raise the ``IllegalAction`` that ``place(wager)`` would raise; change nothing."""
        self._require("place")
        route = self._routes.get(wager.spot)
        if route is None:
            if wager.spot in SPOTS:
                raise IllegalAction(WAGER_NOT_OFFERED, "this table does not offer it", wager.spot)
            raise IllegalAction(UNKNOWN_WAGER, "no such Baccarat wager", wager.spot)
        spot, _, limits = route
        amount = check_amount(wager.amount)
        if (wager.player_id, wager.bet_id) in self._open:
            raise IllegalAction(DUPLICATE_BET_ID, "bet id already used", wager.bet_id)
        if amount < limits.minimum:
            raise IllegalAction(BELOW_MINIMUM, f"minimum {limits.minimum}", amount)
        on_spot = amount + self._on_spot.get((wager.player_id, wager.spot), 0)
        if on_spot > limits.maximum:
            raise IllegalAction(ABOVE_MAXIMUM, f"maximum {limits.maximum}", on_spot)
        if spot.requires_main and not self._mains.get(wager.player_id):
            raise IllegalAction(
                MAIN_WAGER_REQUIRED, "631a.8(a): place a Player or Banker wager first", wager.spot
            )

    def can_place(self, wager: Wager) -> bool:
        return allowed(self.check_place, wager)

    def place(self, wager: Wager) -> Sequence[object]:
        self.check_place(wager)
        self._open[(wager.player_id, wager.bet_id)] = wager
        self._count(wager, +1)
        return (BetAccepted(self.round_id, wager),)

    def _count(self, wager: Wager, sign: int) -> None:
        key = (wager.player_id, wager.spot)
        self._on_spot[key] = self._on_spot.get(key, 0) + sign * wager.amount
        if wager.spot in _MAIN_SPOTS:
            self._mains[wager.player_id] = self._mains.get(wager.player_id, 0) + sign

    def cancel(self, player_id: str, bet_id: str) -> Sequence[object]:
        self._require("cancel")
        wager = self._open.get((player_id, bet_id))
        if wager is None:
            raise IllegalAction(UNKNOWN_BET, "no such bet", bet_id)
        if wager.spot in _MAIN_SPOTS and self._mains[player_id] == 1:
            dependent = any(
                w.player_id == player_id and SPOTS[w.spot].requires_main
                for w in self._open.values()
            )
            if dependent:
                raise IllegalAction(
                    MAIN_WAGER_IN_USE, "631a.8(a): side wagers depend on this wager", bet_id
                )
        del self._open[(player_id, bet_id)]
        self._count(wager, -1)
        return (BetCancelled(self.round_id, wager),)

    def close_betting(self) -> Sequence[object]:
        self._require("close_betting")
        # "no more bets": the wagers are final; group them by when they are settled
        for key, wager in self._open.items():
            spot, paytable, _ = self._routes[wager.spot]
            group = self._initial if spot.timing is Timing.INITIAL else self._final
            group.append((key, wager, spot, paytable))
        self._phase = Phase.DEALING
        self._allowed = _COMMANDS[Phase.DEALING]
        self._next = "player"
        return (BettingClosed(self.round_id),)

    # -- dealing -------------------------------------------------------------------------

    def pending(self) -> CardRequest | None:
        if self._phase is not Phase.DEALING or self._next is None:
            return None
        return _REQUESTS[self._next]

    def provide_card(self, card: Card) -> Sequence[object]:
        self._require("provide_card")
        if not isinstance(card, Card):
            raise InvariantViolation(f"not a card: {card!r}")
        target = self._next
        if target is None:  # pragma: no cover - DEALING always has a next target
            raise InvariantViolation("no card pending while dealing")
        (self._player if target == "player" else self._banker).append(card)
        events: list[object] = [CardDealt(self.round_id, target, card, self._seq)]
        self._seq += 1
        dealt = len(self._player) + len(self._banker)
        if dealt < 4:
            self._next = _INITIAL_TARGETS[dealt]
        elif dealt == 4:
            self._after_initial(events)
        elif target == "player":
            self._after_player_third(events)
        else:
            self._finish(events)
        return tuple(events)

    def _after_initial(self, events: list[object]) -> None:
        pc, bc = point_count(self._player), point_count(self._banker)
        natural = pc >= 8 or bc >= 8
        events.append(InitialCountsAnnounced(self.round_id, pc, bc, natural))
        initial = Coup(tuple(self._player), tuple(self._banker), pc, bc)
        self._settle(Timing.INITIAL, initial, events)
        draws = player_draws(pc, bc)
        rule = (
            "631a.11(a): a Natural, no further cards"
            if natural
            else f"631a.11(b): Player {'draws' if draws else 'stands'} on {pc}"
        )
        events.append(ThirdCardDecided(self.round_id, "player", pc, None, draws, rule))
        if draws:
            self._next = "player"
        else:
            self._decide_banker(events, None)

    def _after_player_third(self, events: list[object]) -> None:
        self._decide_banker(events, value_of(self._player[2]))

    def _decide_banker(self, events: list[object], third: int | None) -> None:
        pc, bc = point_count(self._player[:2]), point_count(self._banker)
        draws = banker_draws(pc, bc, third)
        word = "draws" if draws else "stands"
        if pc >= 8 or bc >= 8:
            rule = "631a.11(a): a Natural, no further cards"
        elif third is None:
            rule = f"631a.11(c): Player stood; Banker {word} on {bc}"
        else:
            rule = f"631a.11(c): Banker {word} on {bc} against a Player third card of {third}"
        events.append(ThirdCardDecided(self.round_id, "banker", bc, third, draws, rule))
        if draws:
            self._next = "banker"
        else:
            self._finish(events)

    def _finish(self, events: list[object]) -> None:
        self._next = None
        coup = Coup.of(self._player, self._banker)
        self._coup = coup
        events.append(
            ResultAnnounced(
                self.round_id,
                coup.player,
                coup.banker,
                coup.player_count,
                coup.banker_count,
                coup.winner.value,
            )
        )
        self._contribute(events)
        self._settle(Timing.FINAL, coup, events)
        self._phase = Phase.SETTLED
        self._allowed = _COMMANDS[Phase.SETTLED]
        events.append(RoundSettled(self.round_id, coup.describe()))

    # -- settlement ----------------------------------------------------------------------

    def _settle(self, timing: Timing, coup: Coup, events: list[object]) -> None:
        decisions: dict[str, Decision] = {}  # one judgement per spot, however many wagers
        losers: list[tuple[Wager, Decision]] = []
        others: list[tuple[Wager, Decision]] = []
        for key, wager, spot, paytable in (
            self._initial if timing is Timing.INITIAL else self._final
        ):
            decision = decisions.get(spot.id)
            if decision is None:
                decision = decisions[spot.id] = judge(spot, coup, paytable)
            del self._open[key]
            # 631a.12: losing wagers are collected first, then winning wagers paid.
            (losers if decision.outcome.result is Result.LOSE else others).append((wager, decision))
        for wager, decision in losers + others:
            settlement = settle(wager, decision.outcome)
            self.settlements.append(settlement)
            events.append(WagerSettled(self.round_id, settlement))
            if decision.jackpot is not None:
                meter = self._meter(decision.jackpot)
                amount = meter.pay_jackpot()
                events.append(
                    ProgressiveAwarded(
                        self.round_id, wager.player_id, wager.bet_id, meter.name, amount
                    )
                )

    def _meter(self, family: str) -> ProgressiveMeter:
        meter = self.meters.heavenly_9 if family == "heavenly_9_progressive" else None
        if family == "harmony_progressive":
            meter = self.meters.harmony
        if meter is None:  # pragma: no cover - checked in __init__
            raise InvariantViolation(f"no meter for {family}")
        return meter

    def _contribute(self, events: list[object]) -> None:
        for wager in self._open.values():
            if wager.spot not in ("heavenly_9_progressive", "harmony_progressive"):
                continue
            meter = self._meter(wager.spot)
            c = meter.contribute(wager.amount)
            events.append(
                ProgressiveContributed(
                    self.round_id, wager.player_id, wager.bet_id, c.meter, c.to_meter, c.to_reserve
                )
            )
            mystery = self.meters.mystery
            if wager.spot == "heavenly_9_progressive" and mystery is not None:
                m = mystery.contribute(wager.amount)
                if m.to_meter:
                    events.append(
                        ProgressiveContributed(
                            self.round_id,
                            wager.player_id,
                            wager.bet_id,
                            m.meter,
                            m.to_meter,
                            m.to_reserve,
                        )
                    )
                if m.award is not None:
                    events.append(
                        ProgressiveAwarded(
                            self.round_id, wager.player_id, wager.bet_id, m.meter, m.award
                        )
                    )

    # -- irregularities ------------------------------------------------------------------

    def void(self, reason: str) -> Sequence[object]:
        """End the round before settlement (631a.15, a device fault): every wager not yet
        settled is returned in full. Wagers already settled on the initial cards stand."""
        self._require("void")
        events: list[object] = []
        for wager in self._open.values():
            settlement = settle(wager, Outcome.void())
            self.settlements.append(settlement)
            events.append(WagerSettled(self.round_id, settlement))
        self._open.clear()
        self._next = None
        self._phase = Phase.VOIDED
        self._allowed = _COMMANDS[Phase.VOIDED]
        events.append(RoundVoided(self.round_id, reason))
        return tuple(events)


def _is_a_round_engine(round: BaccaratRound) -> RoundEngine:
    """Static proof (mypy) that ``BaccaratRound`` has the shape of every round engine."""
    return round
