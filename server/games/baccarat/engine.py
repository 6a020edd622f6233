"""The Baccarat round: a sans-I/O state machine (docs/architecture.md, principles 1-5).

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

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final, NoReturn

from rng.cards import Card
from server.games.baccarat.config import ConfigError, TableConfig
from server.games.baccarat.events import (
    InitialCountsAnnounced,
    ProgressiveAwarded,
    ProgressiveContributed,
    ResultAnnounced,
    ThirdCardDecided,
)
from server.games.baccarat.hands import (
    BANKER_DRAWS_AFTER_PLAYER_DRAW,
    BANKER_DRAWS_WHEN_PLAYER_STANDS,
    PLAYER_DRAWS,
    POINT_VALUE_BY_INDEX,
    Coup,
    banker_draws,
    player_draws,
)
from server.games.baccarat.paytables import HARMONY_RATES, Paytable
from server.games.baccarat.side_wagers import (
    CARDS,
    LOSE,
    SPOTS,
    Decision,
    Spot,
    Timing,
    judge,
    memo_keys,
)
from server.games.betting import CHANCE_TRANSITIONS, Book
from server.games.chance import CardRequest, MysteryHitRequest
from server.games.errors import (
    ABOVE_MAXIMUM,
    BELOW_MINIMUM,
    DUPLICATE_BET_ID,
    MAIN_WAGER_REQUIRED,
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
    CardDealt,
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
from server.games.wagers import Outcome, Settlement, Wager, settle

__all__ = ["MAIN_WAGER_IN_USE", "BaccaratRound", "Meters"]


@dataclass(frozen=True, slots=True)
class _Route:
    """One offered spot as a table settles it: looked up once per configuration."""

    spot: Spot
    paytable: Paytable
    minimum: int
    maximum: int
    initial: bool  # settled on the initial four cards (Timing.INITIAL)
    main: bool  # a Player or Banker wager (631a.8(a))
    requires_main: bool  # 631a.8(a): a Player or Banker wager must be placed first
    progressive: bool  # contributes to a meter when settled
    reads: int  # spot.reads: which of the coup's ``memo_keys`` keys its decisions
    # Decisions already made, by the coup's ``memo_keys`` entry for ``spot.reads``: a
    # decision is a pure function of what the spot reads, so each is judged once per table.
    memo: dict[int, Decision]


_ROUTES: dict[int, tuple[TableConfig, dict[str, _Route]]] = {}


class _Bets:
    """One player's bets in the round being bet on."""

    __slots__ = ("by_id", "mains", "on_spot")

    def __init__(self) -> None:
        self.by_id: dict[str, Wager] = {}  # bet id -> wager
        self.on_spot: dict[str, int] = {}  # spot -> amount wagered there
        self.mains = 0  # Player/Banker wagers (631a.8(a))


_NO_BETS = _Bets()  # a player with no bet yet (never written to)
_NOT_TAKING: dict[str, _Route] = {}  # no spot takes bets (never written to)


def _routes(config: TableConfig) -> dict[str, _Route]:
    """Each offered spot's route, computed once per configuration."""
    entry = _ROUTES.get(id(config))
    if entry is None or entry[0] is not config:
        if len(_ROUTES) > 1000:
            _ROUTES.clear()
        routes = {}
        for spot_id in config.spots:
            spot, limits = SPOTS[spot_id], config.limits_of(spot_id)
            routes[spot_id] = _Route(
                spot,
                config.paytable(spot_id),
                limits.minimum,
                limits.maximum,
                spot.timing is Timing.INITIAL,
                spot_id in _MAIN_SPOTS,
                spot.requires_main,
                spot_id in _PROGRESSIVE_SPOTS,
                spot.reads,
                {},
            )
        entry = _ROUTES[id(config)] = (config, routes)
    return entry[1]


# Baccarat's own rejection code: cancelling the last Player/Banker wager that a side wager
# depends on (631a.8(a)); cancel the side wagers first.
MAIN_WAGER_IN_USE: Final = "main_wager_in_use"

_MAIN_SPOTS = frozenset({"player", "banker"})
_MAINS = tuple(sorted(_MAIN_SPOTS))


def depends_on(spot: str) -> tuple[str, ...]:
    """631a.8(a): a side wager goes with a Player or Banker wager of the same player."""
    side = SPOTS.get(spot)
    return _MAINS if side is not None and side.requires_main else ()


_PROGRESSIVE_SPOTS = frozenset({"heavenly_9_progressive", "harmony_progressive"})

# The initial four cards: first and third to the Player, second and fourth to the Banker.
_INITIAL_TARGETS = ("player", "banker", "player", "banker")
_REQUESTS = {"player": CardRequest("player"), "banker": CardRequest("banker")}
_DEALING = Phase.DEALING
_LOST = LOSE.outcome

# The rule each third-card decision cites (631a.11), worded once per table cell.
_NATURAL_RULE = "631a.11(a): a Natural, no further cards"


def _word(draws: bool) -> str:
    return "draws" if draws else "stands"


_PLAYER_RULES = tuple(
    f"631a.11(b): Player {_word(PLAYER_DRAWS[count])} on {count}" for count in range(10)
)
_BANKER_RULES_PLAYER_STOOD = tuple(
    f"631a.11(c): Player stood; Banker {_word(BANKER_DRAWS_WHEN_PLAYER_STANDS[count])} on {count}"
    for count in range(10)
)
_BANKER_RULES_PLAYER_DREW = tuple(
    tuple(
        f"631a.11(c): Banker {_word(row[third])} on {count} against a Player third card of {third}"
        for third in range(10)
    )
    for count, row in enumerate(BANKER_DRAWS_AFTER_PLAYER_DRAW)
)


@dataclass
class Meters:
    """The table's progressive meters, shared by its rounds (they outlive a round)."""

    heavenly_9: ProgressiveMeter | None = None
    harmony: ProgressiveMeter | None = None
    mystery: MustHitByMeter | None = None

    @staticmethod
    def for_table(config: TableConfig, randbelow: Callable[[int], int] | None = None) -> Meters:
        """In-memory meters for every progressive ``config`` offers whose Must-Hit-By hit
        values (631b.6(c)(3)) ``randbelow`` draws at once (tests, simulations); a table asks
        for them instead: ``asking``."""
        if config.mystery_bonus is not None and randbelow is None:
            raise ConfigError(
                "631b.6(c)(3): the Mystery Bonus needs the RNG's randbelow (or Meters.asking)"
            )
        return Meters._build(config, randbelow)

    @staticmethod
    def asking(config: TableConfig) -> Meters:
        """A table's meters: each Must-Hit-By hit value is asked for by the round as a chance
        request (``MysteryHitRequest``), which the table answers from the certified RNG and
        journals before it takes effect (631b.6(c)(3))."""
        return Meters._build(config, None)

    def copy(self, config: TableConfig) -> Meters:
        """Meters of ``config`` in this state, to replay a round without moving these."""
        meters = Meters.asking(config)
        meters.restore(self.state())
        return meters

    @staticmethod
    def _build(config: TableConfig, randbelow: Callable[[int], int] | None) -> Meters:
        meters = Meters()
        if "heavenly_9_progressive" in config.side_wagers:
            meters.heavenly_9 = heavenly_9_meter()
        letter = config.side_wagers.get("harmony_progressive")
        if letter is not None:
            rates = HARMONY_RATES[letter]
            meters.harmony = harmony_meter(rates.increment, rates.reserve)
        if config.mystery_bonus is not None:
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

    def named(self) -> dict[str, InMemoryMeter | MustHitByMeter]:
        """Every meter by its name (``heavenly_9_progressive``, ``mystery_bonus`` ...)."""
        return {meter.name: meter for meter in self._all().values()}

    def amounts(self) -> dict[str, int]:
        """What the meters show players: whole minor units (never a hit value)."""
        return {meter.name: int(meter.amount) for meter in self._all().values()}


class BaccaratRound:
    """One round of Baccarat at a table configured by ``config``.

    ``meters`` are the table's progressive meters, shared by its rounds; if omitted, fresh
    in-memory meters are made for this round alone (tests, par-sheet checks).

    A Must-Hit-By meter without a hit value (631b.6(c)(3)) makes the round ask for one
    (``MysteryHitRequest``) right after "no more bets", before any card and so before any
    contribution can reach it. ``replay``: the round is rebuilt from its journal on a copy of
    the meters, whose state may be later than the round's; it asks for nothing and takes the
    journaled hit value, if there is one, before the first card."""

    # A round is made per coup and read on every placement and card: fixed slots make both
    # cheaper than an instance dict (bench_baccarat).
    __slots__ = (
        "_banker",
        "_book",
        "_coup",
        "_final",
        "_hit_request",
        "_initial",
        "_initial_settled",
        "_next",
        "_open",
        "_player",
        "_players",
        "_points",
        "_progressive",
        "_replay",
        "_routes",
        "_seq",
        "_taking",
        "_two_card_counts",
        "config",
        "meters",
        "round_id",
        "settlements",
    )

    def __init__(
        self,
        config: TableConfig,
        round_id: str,
        meters: Meters | None = None,
        *,
        replay: bool = False,
    ) -> None:
        self.config = config
        self.round_id = round_id
        self._replay = replay
        self._hit_request: MysteryHitRequest | None = None  # asked before the first card
        self.meters = meters if meters is not None else Meters.for_table(config)
        # each offered spot with its paytable and limits, looked up once per configuration
        self._routes = routes = _routes(config)
        if "heavenly_9_progressive" in routes and self.meters.heavenly_9 is None:
            raise ConfigError("Heavenly 9 Progressive offered without its meter")
        if "harmony_progressive" in routes and self.meters.harmony is None:
            raise ConfigError("Harmony Progressive offered without its meter")
        if config.mystery_bonus is not None and self.meters.mystery is None:
            raise ConfigError("Must-Hit-By Mystery Bonus offered without its meter")
        # The phase and its transitions (as data, the table every chance game shares: a card
        # or a Mystery Bonus hit value is a chance request answered, "deal") and the
        # settlements; the wagers stay in this engine's indexes below, the hot path.
        self._book = Book(round_id, CHANCE_TRANSITIONS)
        self.settlements: list[Settlement] = self._book.settlements
        # The routes that take bets: the table's while betting is open (phase BETTING, and
        # opened), else ``_NOT_TAKING``: one test on the hot paths, and place's spot lookup.
        self._taking = _NOT_TAKING
        self._open: list[Wager] = []  # accepted, in order; see ``wagers`` once dealing
        self._players: dict[str, _Bets] = {}  # each player's bets this round
        # the wagers settled on the initial cards, the others, and the progressive ones
        # (kept as they are placed, so "no more bets" has nothing left to sort)
        self._initial: list[tuple[Wager, _Route]] = []
        self._final: list[tuple[Wager, _Route]] = []
        self._progressive: list[Wager] = []
        self._initial_settled = False
        self._player: list[Card] = []
        self._banker: list[Card] = []
        self._points = [0, 0]  # running sums of the Player's and Banker's card values
        self._two_card_counts = (0, 0)
        self._seq = 0
        self._next: str | None = None
        self._coup: Coup | None = None

    # -- state ---------------------------------------------------------------------------

    @property
    def phase(self) -> Phase:
        return self._book.phase

    @property
    def wagers(self) -> tuple[Wager, ...]:
        """Wagers accepted and not yet settled, in the order they were placed."""
        phase = self._book.phase
        if phase is Phase.SETTLED or phase is Phase.VOIDED:
            return ()
        if self._initial_settled:
            routes = self._routes
            return tuple(w for w in self._open if not routes[w.spot].initial)
        return tuple(self._open)

    @property
    def coup(self) -> Coup | None:
        """The completed hands, once the round is settled."""
        return self._coup

    # -- betting -------------------------------------------------------------------------

    def open(self) -> Sequence[object]:
        events = self._book.open()
        self._taking = self._routes
        return events

    def verify_place(self, wager: Wager) -> None:
        """Raise the ``IllegalAction`` that ``place(wager)`` would raise; change nothing.

        The rules in the order they are checked; the first one broken is reported."""
        if self._taking is _NOT_TAKING:
            self._book.require("place")
        spot = wager.spot
        route = self._routes.get(spot)
        if route is None:
            if spot in SPOTS:
                raise IllegalAction(WAGER_NOT_OFFERED, "this table does not offer it", spot)
            raise IllegalAction(UNKNOWN_WAGER, "no such Baccarat wager", spot)
        amount = check_amount(wager.amount)  # BAD_AMOUNT naming the value
        bets = self._players.get(wager.player_id, _NO_BETS)
        if wager.bet_id in bets.by_id:
            raise IllegalAction(DUPLICATE_BET_ID, "bet id already used", wager.bet_id)
        if amount < route.minimum:
            raise IllegalAction(BELOW_MINIMUM, f"minimum {route.minimum}", amount)
        total = amount + bets.on_spot.get(spot, 0)
        if total > route.maximum:
            raise IllegalAction(ABOVE_MAXIMUM, f"maximum {route.maximum}", total)
        if route.requires_main and not bets.mains:
            raise IllegalAction(
                MAIN_WAGER_REQUIRED, "631a.8(a): place a Player or Banker wager first", spot
            )

    def can_place(self, wager: Wager) -> bool:
        return allowed(self.verify_place, wager)

    def place(self, wager: Wager) -> Sequence[object]:
        """Accept ``wager`` while betting is open, within the table's limits and, for a side
        wager, after a Player or Banker wager (631a.8(a)); otherwise raise the
        ``IllegalAction`` of ``verify_place``, naming the offending value. Nothing changes on a
        refusal."""
        spot = wager.spot
        route = self._taking.get(spot)  # no route at all unless betting is open
        bets = self._players.get(wager.player_id, _NO_BETS)
        amount = wager.amount
        # The rules of ``verify_place`` tested at once, for the busy table's common case (a
        # minimum is at least 1, so a whole amount at or above it is positive); a wager that
        # breaks any of them goes to ``verify_place``, which reports the first one broken.
        if (
            route is None
            or type(amount) is not int
            or amount < route.minimum
            or wager.bet_id in bets.by_id
            or (route.requires_main and not bets.mains)
        ):
            self._refuse(wager)
        total = amount + bets.on_spot.get(spot, 0)
        if total > route.maximum:
            self._refuse(wager)
        if bets is _NO_BETS:
            bets = self._players[wager.player_id] = _Bets()
        bets.by_id[wager.bet_id] = wager
        bets.on_spot[spot] = total
        if route.main:
            bets.mains += 1
        self._open.append(wager)
        (self._initial if route.initial else self._final).append((wager, route))
        if route.progressive:
            self._progressive.append(wager)
        return (BetAccepted(self.round_id, wager),)

    def _refuse(self, wager: Wager) -> NoReturn:
        self.verify_place(wager)
        raise InvariantViolation(f"place refused a wager that verify_place accepts: {wager!r}")

    def cancel(self, player_id: str, bet_id: str) -> Sequence[object]:
        if self._taking is _NOT_TAKING:
            self._book.require("cancel")
        bets = self._players.get(player_id, _NO_BETS)
        wager = bets.by_id.get(bet_id)
        if wager is None:
            raise IllegalAction(UNKNOWN_BET, "no such bet", bet_id)
        routes = self._routes
        route = routes[wager.spot]
        last_main = route.main and bets.mains == 1
        if last_main and any(routes[w.spot].requires_main for w in bets.by_id.values()):
            raise IllegalAction(
                MAIN_WAGER_IN_USE, "631a.8(a): side wagers depend on this wager", bet_id
            )
        del bets.by_id[bet_id]
        bets.on_spot[wager.spot] -= wager.amount
        if route.main:
            bets.mains -= 1
        self._open.remove(wager)
        (self._initial if route.initial else self._final).remove((wager, route))
        if route.progressive:
            self._progressive.remove(wager)
        return (BetCancelled(self.round_id, wager),)

    def close_betting(self) -> Sequence[object]:
        events = self._book.close_betting()
        self._taking = _NOT_TAKING
        mystery = self.meters.mystery
        if mystery is not None and not self._replay and mystery.hit_value is None:
            self._hit_request = mystery.request  # answered before the first card is asked
        else:
            self._next = "player"
        return events

    # -- dealing -------------------------------------------------------------------------

    def pending(self) -> CardRequest | MysteryHitRequest | None:
        # ``_next`` is set only while dealing (one test on the hot path, not two)
        if self._next is None:
            return self._hit_request  # None but while a Mystery Bonus hit value is asked
        return _REQUESTS[self._next]

    def provide_mystery_hit(self, value: int) -> Sequence[object]:
        """The answer to ``MysteryHitRequest``: the Must-Hit-By meter's hit value (631b.6(c)(3)),
        journaled by the caller first. No event: the value is secret and is never sent; the
        round goes on to its first card. ``InvariantViolation`` (nothing changed) if no hit
        value is asked or ``value`` is outside the configuration's range."""
        self._book.require("deal")
        mystery = self.meters.mystery
        request = self._hit_request
        if request is None and self._replay and self._seq == 0 and self._next is not None:
            request = mystery.request if mystery is not None else None
        if mystery is None or request is None:
            raise InvariantViolation("no Mystery Bonus hit value is pending")
        try:
            checked = request.check(value)
        except ValueError as exc:
            raise InvariantViolation(str(exc)) from None
        mystery.hit_value = checked  # when replaying, the journaled value replaces the copy's
        self._hit_request = None
        self._next = "player"
        return ()

    def provide_card(self, card: Card) -> Sequence[object]:
        target = self._next  # set only while dealing and no hit value is asked
        if target is None:
            self._book.require("deal")  # out of phase: the book's error
            raise InvariantViolation("no card pending: a Mystery Bonus hit value is asked first")
        if not isinstance(card, Card):
            raise InvariantViolation(f"not a card: {card!r}")
        seq = self._seq
        self._seq = seq + 1
        dealt = CardDealt(self.round_id, target, card, seq)
        hand = 0 if target == "player" else 1
        (self._banker if hand else self._player).append(card)
        self._points[hand] += POINT_VALUE_BY_INDEX[card.index]
        if seq < 3:  # the initial four cards: Player, Banker, Player, Banker (631a.9)
            self._next = _INITIAL_TARGETS[seq + 1]
            return (dealt,)
        events: list[object] = [dealt]
        if seq == 3:
            self._after_initial(events)
        elif hand == 0:
            self._decide_banker(events, POINT_VALUE_BY_INDEX[card.index])
        else:
            self._finish(events)
        return tuple(events)

    def _after_initial(self, events: list[object]) -> None:
        pc, bc = self._two_card_counts = self._points[0] % 10, self._points[1] % 10
        natural = pc >= 8 or bc >= 8
        events.append(InitialCountsAnnounced(self.round_id, pc, bc, natural))
        if self._initial:
            initial = Coup(tuple(self._player), tuple(self._banker), pc, bc)
            self._settle(self._initial, initial, events)
        self._initial_settled = True
        draws = player_draws(pc, bc)
        rule = _NATURAL_RULE if natural else _PLAYER_RULES[pc]
        events.append(ThirdCardDecided(self.round_id, "player", pc, None, draws, rule))
        if draws:
            self._next = "player"
        else:
            self._decide_banker(events, None)

    def _decide_banker(self, events: list[object], third: int | None) -> None:
        pc, bc = self._two_card_counts  # the third-card rule reads the two-card counts
        draws = banker_draws(pc, bc, third)
        if pc >= 8 or bc >= 8:
            rule = _NATURAL_RULE
        elif third is None:
            rule = _BANKER_RULES_PLAYER_STOOD[bc]
        else:
            rule = _BANKER_RULES_PLAYER_DREW[bc][third]
        events.append(ThirdCardDecided(self.round_id, "banker", bc, third, draws, rule))
        if draws:
            self._next = "banker"
        else:
            self._finish(events)

    def _finish(self, events: list[object]) -> None:
        self._next = None
        pc, bc = self._points[0] % 10, self._points[1] % 10
        coup = self._coup = Coup(tuple(self._player), tuple(self._banker), pc, bc)
        winner = "player" if pc > bc else ("banker" if bc > pc else "tie")
        events.append(ResultAnnounced(self.round_id, coup.player, coup.banker, pc, bc, winner))
        self._contribute(events)
        self._settle(self._final, coup, events)
        events.extend(self._book.finish(coup.describe()))

    # -- settlement ----------------------------------------------------------------------

    def _settle(self, group: list[tuple[Wager, _Route]], coup: Coup, events: list[object]) -> None:
        keys = memo_keys(coup)
        round_id, settlements = self.round_id, self.settlements
        winners: list[tuple[Wager, Decision]] = []
        for wager, route in group:
            reads = route.reads
            if reads == CARDS:
                decision = judge(route.spot, coup, route.paytable)
            else:
                found = route.memo.get(keys[reads])
                if found is None:
                    found = route.memo[keys[reads]] = judge(route.spot, coup, route.paytable)
                decision = found
            if decision is not LOSE:  # every losing decision is the one LOSE value
                winners.append((wager, decision))
                continue
            # 631a.12: losing wagers are collected first, then winning wagers paid.
            settlement = Settlement(wager, _LOST, 0)
            settlements.append(settlement)
            events.append(WagerSettled(round_id, settlement))
        for wager, decision in winners:
            multiplier, divisor = decision.ratio  # money.returned's policy, ratio precomputed
            settlement = Settlement(wager, decision.outcome, wager.amount * multiplier // divisor)
            settlements.append(settlement)
            events.append(WagerSettled(round_id, settlement))
            if decision.jackpot is not None:
                meter = self._meter(decision.jackpot)
                amount = meter.pay_jackpot()
                events.append(
                    ProgressiveAwarded(round_id, wager.player_id, wager.bet_id, meter.name, amount)
                )

    def _meter(self, family: str) -> ProgressiveMeter:
        meter = self.meters.heavenly_9 if family == "heavenly_9_progressive" else None
        if family == "harmony_progressive":
            meter = self.meters.harmony
        if meter is None:  # pragma: no cover - checked in __init__
            raise InvariantViolation(f"no meter for {family}")
        return meter

    def _contribute(self, events: list[object]) -> None:
        for wager in self._progressive:
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
        self._book.require("void")  # before anything changes
        events: list[object] = []
        for wager in self.wagers:
            settlement = settle(wager, Outcome.void())
            self.settlements.append(settlement)
            events.append(WagerSettled(self.round_id, settlement))
        self._open.clear()
        self._next = None
        self._hit_request = None
        self._taking = _NOT_TAKING
        events.extend(self._book.void(reason))  # RoundVoided: the book holds no wager
        return tuple(events)


def _is_a_round_engine(round: BaccaratRound) -> RoundEngine:
    """Static proof (mypy) that ``BaccaratRound`` has the shape of every round engine."""
    return round
