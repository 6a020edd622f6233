"""Par sheet of Down Under Blackjack (685a), priced by the settlement code of the engine.

* ``match_the_dealer`` — **exact**. The player's two initial cards and the dealer's up card
  are three cards of the shoe; relative to the up card each player card is a suited match
  (``decks`` - 1 copies left), an unsuited match (3 × ``decks``) or no match (48 × ``decks``).
  Every ordered pair of classes, weighted by its exact number of card pairs, is priced by
  ``rules.match_the_dealer_outcome`` on representative cards (six and eight decks only,
  685a.6(e)).
* ``insurance`` — **exact**, per unit of the Insurance Wager: offered when the up card is an
  ace; the hole card is then any of the other 52 × ``decks`` - 1 cards (averaged over the
  player's cards, which by exchangeability change nothing), priced by
  ``rules.insurance_outcome``.
* ``bet`` — **a combinatorial approximation**, per unit of the initial Bet Wager (doubles and
  splits add to the money at risk; their results count in the net). The four initial cards
  (the player's two, the up card, the hole card) are enumerated by point value with exact
  card removal; every later card — the player's draws and the dealer's — is drawn from the
  shoe less those four cards, *with replacement*. Player strategy: never Insurance or even
  money; at each decision the action (hit, stand, double, split) with the highest expected
  value in this model given the player's hand, the up card and the hole card's range (or the
  hole card itself when both dealer cards are Large, 685a.7(h)), the hole card weighted by
  its probability given the range (not updated by the player's own later cards). The
  expected value of that strategy is then computed in the same model for every hole card.
  Dealer: 685a.7(m) with the soft 22 of docs/interpretations.md, 15; payoffs from
  ``rules.bet_outcome``.

The approximation ignores only the removal of the cards drawn after the initial four; see
``docs/par-sheets-cards.md`` for its measured precision.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from fractions import Fraction
from functools import lru_cache
from typing import TYPE_CHECKING, Final

from rng.cards import Card, Rank, Suit
from server.games.down_under_blackjack.rules import (
    DEALER_STANDS_FROM,
    MATCH_PAYTABLES,
    HoleRange,
    PlayedHand,
    bet_outcome,
    insurance_outcome,
    match_the_dealer_outcome,
)
from server.games.par_sheet import OutcomeLine, ParSheetRow, house_edge_of

if TYPE_CHECKING:
    import argparse

__all__ = [
    "BET_METHOD",
    "add_arguments",
    "best_decision",
    "bet_lines",
    "compute",
    "insurance_lines",
    "match_the_dealer_lines",
    "par_sheet",
]

EXACT: Final = "exact: enumeration of cards with card removal"
BET_METHOD: Final = (
    "approximation: initial four cards exact with card removal, later cards drawn with "
    "replacement from the shoe less those four; player strategy: best action in that model "
    "given hand, up card and hole range (no insurance)"
)

# -- exact rows ------------------------------------------------------------------------------


def _lines(weights: dict[tuple[str, Fraction], int]) -> tuple[OutcomeLine, ...]:
    total = sum(weights.values())
    return tuple(
        OutcomeLine(name, Fraction(w, total), net)
        for (name, net), w in sorted(weights.items(), key=lambda kv: (kv[0][1], kv[0][0]))
    )


@lru_cache(maxsize=4)
def match_the_dealer_lines(decks: int) -> tuple[OutcomeLine, ...]:
    """685a.7(f), 685a.11(c), exact."""
    up = Card.of(Rank.SEVEN, Suit.SPADES)
    classes = {
        Card.of(Rank.SEVEN, Suit.SPADES): decks - 1,  # suited match
        Card.of(Rank.SEVEN, Suit.HEARTS): 3 * decks,  # unsuited match
        Card.of(Rank.TWO, Suit.CLUBS): 48 * decks,  # no match
    }
    weights: dict[tuple[str, Fraction], int] = defaultdict(int)
    names = {0: "no match", 1: "one match", 2: "two matches"}
    for a, na in classes.items():
        for b, nb in classes.items():
            w = na * (nb - (a is b))
            if w:
                o = match_the_dealer_outcome((a, b), up, decks)
                matches = (a.rank is up.rank) + (b.rank is up.rank)
                weights[(f"{names[matches]}, {o.result.value}", o.net)] += w
    return _lines(weights)


def insurance_lines(decks: int) -> tuple[OutcomeLine, ...]:
    """685a.8, 685a.11(b), exact: the hole card given an ace up."""
    tens = 16 * decks
    others = 52 * decks - 1 - tens
    weights: dict[tuple[str, Fraction], int] = defaultdict(int)
    for card, w in (
        (Card.of(Rank.KING, Suit.CLUBS), tens),
        (Card.of(Rank.NINE, Suit.CLUBS), others),
    ):
        o = insurance_outcome(card)
        weights[(f"hole {'10-value' if o.net > 0 else 'other'}, {o.result.value}", o.net)] += w
    return _lines(weights)


# -- the Bet: the model ---------------------------------------------------------------------

# Point values 1 (ace) .. 10 (10-value cards) and a representative rank for each.
_VALUES: Final = tuple(range(1, 11))
_RANK_OF: Final = {v: Rank(v) for v in range(1, 11)}
_DEALER_CLASSES: Final = (17, 18, 19, 20, 21, 22, 23)  # 23: over 22
_DEALER_REPR: Final = {
    17: (Rank.TEN, Rank.SEVEN), 18: (Rank.TEN, Rank.EIGHT), 19: (Rank.TEN, Rank.NINE),
    20: (Rank.TEN, Rank.KING), 21: (Rank.TEN, Rank.SIX, Rank.FIVE),
    22: (Rank.TEN, Rank.SIX, Rank.SIX), 23: (Rank.TEN, Rank.SIX, Rank.TEN),
}  # fmt: skip


def _representative(total: int, two_large: bool) -> PlayedHand:
    """An unsplit hand of ``total`` (4-21, not a Blackjack) whose original two cards are both
    Large or not, for pricing through ``bet_outcome``."""
    if two_large:  # A, A and one more card: 12-21
        extra = total - 12
        ranks: tuple[Rank, ...] = (Rank.ACE, Rank.ACE) + ((Rank(extra),) if extra else ())
    elif total <= 11:
        ranks = (Rank.TWO, Rank(total - 2))
    else:  # 2, 9 and one more card: 12-21
        ranks = (Rank.TWO, Rank.NINE, Rank(total - 11))
    hand = PlayedHand(ranks)
    if hand.total != total or hand.two_large != two_large or hand.blackjack:
        raise AssertionError(f"bad representative for {total}, {two_large}: {ranks}")
    return hand


def _payoff_table() -> dict[tuple[int, bool], tuple[float, ...]]:
    """Net per unit of a standing hand's wager against each dealer class (``bet_outcome``)."""
    table = {}
    for total in range(4, 22):
        for large in (False, True):
            if large and total < 12:
                continue
            hand = _representative(total, large)
            table[(total, large)] = tuple(
                float(bet_outcome(hand, _DEALER_REPR[d]).net) for d in _DEALER_CLASSES
            )
    return table


_PAYOFF: Final = _payoff_table()


def _total(hard: int, ace: bool) -> int:
    return hard + 10 if ace and hard + 10 <= 21 else hard


def _dealer_distribution(up: int, hole: int, p: Sequence[float]) -> tuple[float, ...]:
    """Probabilities of the dealer's final classes (17..22, over 22), drawing from ``p``."""
    memo: dict[tuple[int, int], tuple[float, ...]] = {}

    def total(hard: int, aces: int) -> int:
        t = hard
        for _ in range(aces):
            if t + 10 <= 22:  # 685a.3(d)(3): an ace is 11 unless over 22
                t += 10
        return t

    def go(hard: int, aces: int) -> tuple[float, ...]:
        key = (hard, min(aces, 2))
        if key in memo:
            return memo[key]
        t = total(hard, min(aces, 2))
        if t >= DEALER_STANDS_FROM:
            out = [0.0] * 7
            out[min(t, 23) - 17] = 1.0
            result = tuple(out)
        else:
            acc = [0.0] * 7
            for v, pv in zip(_VALUES, p, strict=True):
                if pv:
                    sub = go(hard + v, aces + (v == 1))
                    for i in range(7):
                        acc[i] += pv * sub[i]
            result = tuple(acc)
        memo[key] = result
        return result

    return go(up + hole, (up == 1) + (hole == 1))


class _Situation:
    """One decision situation: the hole cards possible (with prior weights), and for each the
    draw probabilities and the dealer's final distribution."""

    def __init__(
        self, holes: list[tuple[int, int, list[float], tuple[float, ...]]], stand_only: bool
    ) -> None:
        self.stand_only = stand_only
        self.weights = [float(w) for _, w, _, _ in holes]
        self.p = [p for _, _, p, _ in holes]
        self.dealer = [d for _, _, _, d in holes]
        self.k = len(holes)
        self._stand: dict[tuple[int, bool], list[float]] = {}
        self._memo: dict[tuple[int, bool, bool, bool, bool], list[float]] = {}

    def stand(self, total: int, large: bool) -> list[float]:
        key = (total, large and total >= 12)
        cached = self._stand.get(key)
        if cached is None:
            pay = _PAYOFF[key]
            cached = [sum(f * x for f, x in zip(d, pay, strict=True)) for d in self.dealer]
            self._stand[key] = cached
        return cached

    def weighted(self, values: list[float]) -> float:
        """The value the player maximises: each hole card weighted by its probability."""
        return sum(w * x for w, x in zip(self.weights, values, strict=True))

    def _best(self, options: list[list[float]]) -> list[float]:
        return max(options, key=self.weighted)

    def value(self, hard: int, ace: bool, large: bool, two: bool, split: bool) -> list[float]:
        """Expected net per unit of the hand's wager under the strategy, for each hole card."""
        key = (hard, ace, large, two, split)
        cached = self._memo.get(key)
        if cached is not None:
            return cached
        total = _total(hard, ace)
        if total > 21:
            result = [-1.0] * self.k
        elif total == 21 or self.stand_only:
            result = self.stand(total, large)
        else:
            options = [self.stand(total, large), self.hit(hard, ace, large, split)]
            if two:
                options.append(self.double(hard, ace, large))
            result = self._best(options)
        self._memo[key] = result
        return result

    def hit(self, hard: int, ace: bool, large: bool, split: bool) -> list[float]:
        out = [0.0] * self.k
        for v in _VALUES:
            sub = self.value(hard + v, ace or v == 1, large, False, split)
            for i in range(self.k):
                out[i] += self.p[i][v - 1] * sub[i]
        return out

    def double(self, hard: int, ace: bool, large: bool) -> list[float]:
        out = [0.0] * self.k
        for v in _VALUES:
            t = _total(hard + v, ace or v == 1)
            sub = [-1.0] * self.k if t > 21 else self.stand(t, large)
            for i in range(self.k):
                out[i] += 2 * self.p[i][v - 1] * sub[i]
        return out

    def split_value(self, v: int) -> list[float]:
        """Two hands each starting with ``v`` (685a.10); split aces take one card each."""
        out = [0.0] * self.k
        for c in _VALUES:
            hard, ace = v + c, v == 1 or c == 1
            if v == 1:
                t = _total(hard, ace)
                sub = self.stand(t, False)
            else:
                sub = self.value(hard, ace, False, True, True)
            for i in range(self.k):
                out[i] += 2 * self.p[i][c - 1] * sub[i]
        return out

    def play(self, a: int, b: int) -> list[float]:
        large = all(x in (1, 10) for x in (a, b))
        options = [self.value(a + b, 1 in (a, b), large, True, False)]
        if a == b and not self.stand_only:
            options.append(self.split_value(a))
        return self._best(options)


@lru_cache(maxsize=4096)
def _situation(decks: int, a: int, b: int, up: int, key: str) -> _Situation:
    counts = {v: 4 * decks for v in range(1, 10)}
    counts[10] = 16 * decks
    for x in (a, b, up):
        counts[x] -= 1
    holes = []
    for hole in _VALUES:
        shown = key.startswith("shown ")
        if (shown and key != f"shown {hole}") or (not shown and _range_of(hole) != key):
            continue
        if {up, hole} == {1, 10} or not counts[hole]:
            continue  # a dealer Blackjack ends the round before any decision
        left = dict(counts)
        left[hole] -= 1
        n = sum(left.values())
        p = [left[v] / n for v in _VALUES]
        holes.append((hole, counts[hole], p, _dealer_distribution(up, hole, p)))
    return _Situation(holes, stand_only=False)


def best_decision(
    decks: int,
    original: Sequence[Rank],
    hand: Sequence[Rank],
    up: Rank,
    hole: HoleRange | Rank,
    *,
    split_hand: bool,
    options: Sequence[str],
) -> str:
    """The par sheet's player strategy: the decision among ``options`` (``hit``, ``stand``,
    ``double``, ``split``) for ``hand`` (the cards of the hand being played), given the
    box's ``original`` two cards, the up card, and the hole card's range — or the hole card
    itself when both dealer cards are Large (685a.7(h)); ``split_hand`` if the hand came
    from a split. Insurance and even money are never taken."""
    a, b = sorted(min(int(r), 10) for r in original)
    key = hole.value if isinstance(hole, HoleRange) else f"shown {min(int(hole), 10)}"
    situation = _situation(decks, a, b, min(int(up), 10), key)
    values = [min(int(r), 10) for r in hand]
    hard, ace = sum(values), 1 in values
    large = not split_hand and a in (1, 10) and b in (1, 10)
    candidates = {"stand": situation.stand(_total(hard, ace), large)}
    if "hit" in options:
        candidates["hit"] = situation.hit(hard, ace, large, split_hand)
    if "double" in options:
        candidates["double"] = situation.double(hard, ace, large)
    if "split" in options:
        candidates["split"] = situation.split_value(values[0])
    return max(candidates, key=lambda k: situation.weighted(candidates[k]))


def _range_of(v: int) -> str:
    return "large" if v in (1, 10) else ("small" if v <= 5 else "medium")


@lru_cache(maxsize=4)
def bet_lines(decks: int, *, stand_only: bool = False) -> tuple[OutcomeLine, ...]:
    """The Bet Wager's outcome lines in the model (see the module docstring): exact
    probabilities of Blackjacks, and the mean net of the hands played out. ``stand_only``
    replaces the strategy by "always stand" (used to measure the model's precision against
    an exact enumeration, which is feasible for that strategy)."""
    counts = {v: 4 * decks for v in range(1, 10)}
    counts[10] = 16 * decks
    exact: dict[tuple[str, Fraction], int] = defaultdict(int)
    played_weight = 0
    played_sum = 0.0
    for a in _VALUES:
        for b in _VALUES:
            if b < a:
                continue
            for up in _VALUES:
                rest = dict(counts)
                for x in (a, b, up):
                    rest[x] -= 1
                # The ordered deals (a, up, b, hole) and (b, up, a, hole) have the same weight
                # up to the hole: count the first three cards once, times 2 if a != b.
                w3 = _ordered(counts, (a, up, b)) * (2 if a != b else 1)
                groups: dict[str, list[tuple[int, int]]] = defaultdict(list)
                for hole in _VALUES:
                    if rest[hole]:
                        key = _range_of(hole)
                        if up in (1, 10) and key == "large":
                            key = f"shown {hole}"  # 685a.7(h): exposed
                        groups[key].append((hole, rest[hole]))
                player_bj = {a, b} == {1, 10}
                for members in groups.values():
                    holes = []
                    for hole, n in members:
                        weight = w3 * n
                        dealer_bj = {up, hole} == {1, 10}
                        if dealer_bj or player_bj:
                            name = (
                                "both Blackjack"
                                if dealer_bj and player_bj
                                else ("dealer Blackjack" if dealer_bj else "player Blackjack")
                            )
                            hand = PlayedHand((_RANK_OF[a], _RANK_OF[b]))
                            o = bet_outcome(hand, (_RANK_OF[up], _RANK_OF[hole]))
                            exact[(name, o.net)] += weight
                            continue
                        left = dict(rest)
                        left[hole] -= 1
                        n4 = sum(left.values())
                        p = [left[v] / n4 for v in _VALUES]
                        holes.append((hole, weight, p, _dealer_distribution(up, hole, p)))
                    if not holes:
                        continue
                    situation = _Situation(holes, stand_only)
                    values = situation.play(a, b)
                    for (_, w, _, _), ev in zip(holes, values, strict=True):
                        played_weight += w
                        played_sum += w * ev
    lines = dict(exact)
    mean = Fraction(played_sum / played_weight).limit_denominator(10**9)
    lines[("hands played (mean net)", mean)] = played_weight
    return _lines(lines)


def _ordered(counts: dict[int, int], cards: Sequence[int]) -> int:
    left = dict(counts)
    weight = 1
    for c in cards:
        weight *= left[c]
        left[c] -= 1
    return weight


def par_sheet(decks_list: Sequence[int] = (4, 5, 6, 8)) -> list[ParSheetRow]:
    rows = []
    for decks in decks_list:
        variant = f"down_under_blackjack_{decks}_decks"
        lines = bet_lines(decks)
        rows.append(ParSheetRow(variant, "bet", None, house_edge_of(lines), BET_METHOD, lines))
        ins = insurance_lines(decks)
        rows.append(ParSheetRow(variant, "insurance", None, house_edge_of(ins), EXACT, ins))
        if decks in MATCH_PAYTABLES:
            mtd = match_the_dealer_lines(decks)
            rows.append(
                ParSheetRow(variant, "match_the_dealer", None, house_edge_of(mtd), EXACT, mtd)
            )
    return rows


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--decks", type=int, choices=(4, 5, 6, 8), help="four, five, six or eight decks"
    )


def compute(args: argparse.Namespace) -> list[ParSheetRow]:
    return par_sheet((args.decks,) if args.decks else (4, 5, 6, 8))
