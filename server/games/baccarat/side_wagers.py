"""Judging every Baccarat wager: pure functions of the cards (and the table's paytable).

Each layout spot has a ``Spot``: its section, when it is settled (on the initial four cards
or on the completed hands), whether it needs a Player or Banker wager beside it (631a.8(a)),
and a *qualifier* that names the paytable line the cards make (or None: the wager loses).
``judge`` turns that line into a ``Decision`` through the table's ``Paytable``. The engine
settles real rounds with ``judge`` and the par sheet prices every wager with the same
``judge``: one copy of the rules (docs/architecture.md, principle 9).

Where a section pays only the highest qualifying award (Harmony, Heavenly 9 Progressive,
Lucky Nines), the qualifier lists candidate lines from the highest down and the first one
the chosen paytable contains is paid (docs/interpretations.md, 5-8).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import Enum
from fractions import Fraction
from types import MappingProxyType

import msgspec

from rng.cards import Card, Rank, Suit
from server.games.baccarat.hands import POINT_VALUE_BY_INDEX, Coup
from server.games.baccarat.paytables import Paytable
from server.games.money import return_ratio
from server.games.wagers import Outcome, Result

__all__ = [
    "BANKER_INITIAL",
    "CARDS",
    "COUNTS",
    "JACKPOT_NET",
    "LOSE",
    "PLAYER_INITIAL",
    "SPOTS",
    "Decision",
    "Spot",
    "Timing",
    "judge",
    "memo_keys",
]


class Timing(Enum):
    """When a wager is settled."""

    INITIAL = "initial"  # on the initial four cards, before any third card is dealt
    FINAL = "final"  # after both hands are complete (631a.12)


# The fixed-odds part of a jackpot award: nothing beyond the meter, which includes the wager
# ("100% of progressive" is paid *for* 1). The par sheet values the meter at 0.
JACKPOT_NET = Fraction(-1)


class Decision(msgspec.Struct, frozen=True, gc=False):
    """How the cards decide one wager: the paytable ``line`` (``"lose"`` when none), the
    fixed-odds ``outcome``, and ``jackpot``, the meter family paid 100% when the line is a
    progressive award. ``ratio`` is ``money.return_ratio(outcome.net)``: what a stake
    returns is ``stake * ratio[0] // ratio[1]``. Build one with ``Decision.of``."""

    line: str
    outcome: Outcome
    jackpot: str | None
    ratio: tuple[int, int]

    @staticmethod
    def of(line: str, outcome: Outcome, jackpot: str | None = None) -> Decision:
        return Decision(line, outcome, jackpot, return_ratio(outcome.net))


Qualifier = Callable[[Coup, Paytable], str | None]

# What a qualifier reads of the coup (``Spot.reads``), so that a table may remember its
# decisions: two coups with the same ``memo_keys`` entry for a reading get the same decision
# from every spot that reads no more than that (tests/games/baccarat prove it spot by spot).
COUNTS = 0  # both point counts and how many cards each hand holds
PLAYER_INITIAL = 1  # the Player's initial two cards, rank and suit
BANKER_INITIAL = 2  # the Banker's initial two cards, rank and suit
CARDS = 3  # anything else (suits or ranks beyond the initial two): judged afresh


def memo_keys(coup: Coup) -> tuple[int, int, int]:
    """The coup's key for the readings ``COUNTS``, ``PLAYER_INITIAL`` and ``BANKER_INITIAL``."""
    p, b = coup.player, coup.banker
    return (
        ((coup.player_count * 10 + coup.banker_count) * 2 + len(p) - 2) * 2 + len(b) - 2,
        p[0].index * 52 + p[1].index,
        b[0].index * 52 + b[1].index,
    )


@dataclass(frozen=True, slots=True)
class Spot:
    """One wager of the layout."""

    id: str
    family: str  # the paytable family (``paytables.PAYTABLES`` key, or "player"/"banker"/"tie")
    section: str
    timing: Timing
    requires_main: bool  # 631a.8(a): a Player or Banker wager must be placed first
    qualify: Qualifier
    reads: int = COUNTS  # what ``qualify`` reads of the coup (see ``memo_keys``)


# The one losing decision: a paytable line always wins or pushes (``_decision``), so a wager
# loses exactly when ``judge`` returns this value (the engine tests identity).
LOSE = Decision.of("lose", Outcome.lose())
# Decisions are shared value objects, one per (paytable, line); keyed by the paytable's
# identity, and the entry keeps the paytable so a reused id can never match another table.
_DECISIONS: dict[tuple[int, str], tuple[Paytable, Decision]] = {}


def judge(spot: Spot, coup: Coup, paytable: Paytable) -> Decision:
    """The decision of ``spot`` on ``coup`` under ``paytable`` (a pure function)."""
    line = spot.qualify(coup, paytable)
    if line is None:
        return LOSE
    key = (id(paytable), line)
    entry = _DECISIONS.get(key)
    if entry is None or entry[0] is not paytable:
        if len(_DECISIONS) > 10_000:
            _DECISIONS.clear()
        entry = _DECISIONS[key] = (paytable, _decision(paytable, line))
    return entry[1]


def _decision(paytable: Paytable, line: str) -> Decision:
    if line == paytable.jackpot:
        return Decision.of(line, Outcome(Result.WIN, JACKPOT_NET), jackpot=paytable.family)
    net = paytable.pays[line]
    if net == 0:
        return Decision.of(line, Outcome.push())
    return Decision.of(line, Outcome.win(net))


def _first(paytable: Paytable, *candidates: str | None) -> str | None:
    """The first candidate line the paytable pays (highest award first)."""
    pays = paytable.pays
    for line in candidates:
        if line is not None and (line in pays or line == paytable.jackpot):
            return line
    return None


# -- the three main wagers (631a.8, 631a.13, 631b.5(h)-(j), 631b.8(g)(1)-(3)) -------------


def _player(c: Coup, t: Paytable) -> str | None:
    if c.player_count > c.banker_count:
        return "player_wins"
    return "tie" if c.player_count == c.banker_count else None


def _banker(c: Coup, t: Paytable) -> str | None:
    if c.banker_count > c.player_count:
        return _first(
            t,
            "banker_wins_with_6" if c.banker_count == 6 else None,  # 631b.5(i)
            "banker_wins_with_three_card_7"  # 631b.8(g)(1)(iv)
            if c.banker_count == 7 and len(c.banker) == 3
            else None,
            "banker_wins",
        )
    return "tie" if c.player_count == c.banker_count else None


def _tie(c: Coup, t: Paytable) -> str | None:
    return "tie" if c.player_count == c.banker_count else None


# -- wagers on one hand's initial two cards -----------------------------------------------


def _perfect_pairs(hand: str) -> Qualifier:
    """631b.1(a), (c): same rank; same suit is Perfect, same colour Coloured, else Mixed."""

    def qualify(c: Coup, t: Paytable) -> str | None:
        a, b = (c.player if hand == "player" else c.banker)[:2]
        if a.rank is not b.rank:
            return None
        if a.suit is b.suit:
            return "perfect_pair"
        return "coloured_pair" if a.suit.colour is b.suit.colour else "mixed_pair"

    return qualify


def _pair(hand: str) -> Qualifier:
    """631b.5(c)(1)-(2), 631b.8(g)(4)(xix)-(xx): the initial two cards are the same rank."""

    def qualify(c: Coup, t: Paytable) -> str | None:
        a, b = (c.player if hand == "player" else c.banker)[:2]
        return "pair" if a.rank is b.rank else None

    return qualify


# Enum members as module constants: in Python 3.11 each ``Rank.NINE`` is a class attribute
# lookup through the enum machinery (~70 ns), and qualifiers run for every wager settled.
_NINE, _EIGHT, _KING, _QUEEN = Rank.NINE, Rank.EIGHT, Rank.KING, Rank.QUEEN
_DIAMONDS = Suit.DIAMONDS


def _majestic_match(hand: str) -> Qualifier:
    """631b.7(e): same suit; suited king and queen is a Royal Match."""

    def qualify(c: Coup, t: Paytable) -> str | None:
        a, b = (c.player if hand == "player" else c.banker)[:2]
        if a.suit is not b.suit:
            return None
        royal = (a.rank is _KING and b.rank is _QUEEN) or (a.rank is _QUEEN and b.rank is _KING)
        return "royal_match" if royal else "suited_match"

    return qualify


def _lucky_nines(c: Coup, t: Paytable) -> str | None:
    """631b.4(a), (e), docs/interpretations.md, 8: the nines among the four initial cards."""
    p, b = c.player, c.banker
    if (
        p[0].rank is not _NINE
        and b[0].rank is not _NINE
        and p[1].rank is not _NINE
        and b[1].rank is not _NINE
    ):
        return None  # most coups: no nine among the initial four cards
    suits = [card.suit for card in (p[0], b[0], p[1], b[1]) if card.rank is _NINE]
    n = len(suits)
    same_suit = suits.count(suits[0]) == n
    if n == 4:
        return "four_nines"
    if n == 3:
        return "three_nines_same_suit" if same_suit else "three_nines"
    if n == 2:
        return "two_nines_same_suit" if same_suit else "two_nines"
    return "one_nine_diamonds" if suits[0] is _DIAMONDS else "one_nine"


# -- wagers on the completed hands ---------------------------------------------------------


def _lucky_six(c: Coup, t: Paytable) -> str | None:
    """631b.5(c)(3), (k): the Banker's Hand wins with 6, two or three cards."""
    if c.banker_count == 6 and c.player_count < 6:
        return (
            "banker_wins_with_two_card_6" if len(c.banker) == 2 else "banker_wins_with_three_card_6"
        )
    return None


def _three_card(cards: tuple[Card, ...], count: int, wanted: int) -> bool:
    return len(cards) == 3 and count == wanted


_RED = frozenset({Suit.HEARTS, Suit.DIAMONDS})


def _one_colour(cards: tuple[Card, ...]) -> bool:
    """Every card is red, or every card is black."""
    red = cards[0].suit in _RED
    return all((card.suit in _RED) is red for card in cards)


def _heavenly_9_progressive(c: Coup, t: Paytable) -> str | None:
    """631b.2(g): three-card nines; a tie of two three-card nines pays more by colour/suit."""
    if c.player_count != 9 and c.banker_count != 9:
        return None  # most coups: neither hand counts 9
    p9 = _three_card(c.player, c.player_count, 9)
    b9 = _three_card(c.banker, c.banker_count, 9)
    if p9 and b9:
        cards = c.player + c.banker
        suit = cards[0].suit
        return _first(
            t,
            "three_card_9_tie_same_suit" if all(x.suit is suit for x in cards) else None,
            "three_card_9_tie_same_colour" if _one_colour(cards) else None,
            "three_card_9_tie",
        )
    if b9:
        return "banker_three_card_9"
    return "player_three_card_9" if p9 else None


# 631b.3(f), docs/interpretations.md, 5
def _fortune_7(c: Coup, t: Paytable) -> str | None:
    won = c.banker_count > c.player_count
    return _first(t, "fortune_7") if won and _three_card(c.banker, c.banker_count, 7) else None


def _golden_8(c: Coup, t: Paytable) -> str | None:
    won = c.player_count > c.banker_count
    return _first(t, "golden_8") if won and _three_card(c.player, c.player_count, 8) else None


def _heavenly_9(c: Coup, t: Paytable) -> str | None:
    p9 = _three_card(c.player, c.player_count, 9)
    b9 = _three_card(c.banker, c.banker_count, 9)
    if p9 and b9:
        return _first(t, "heavenly_9_player_and_banker")
    return _first(t, "heavenly_9_player_or_banker") if p9 or b9 else None


def _blazing_7s(c: Coup, t: Paytable) -> str | None:
    if c.player_count == 7 and c.banker_count == 7 and len(c.player) == len(c.banker):
        return _first(t, "blazing_7s_three_card" if len(c.player) == 3 else "blazing_7s_two_card")
    return None


def _cover_all(c: Coup, t: Paytable) -> str | None:
    for other in (_fortune_7, _golden_8, _heavenly_9, _blazing_7s):
        if other(c, t) is not None:
            return _first(t, "cover_all")
    return None


def _golden_talons(hand: str) -> Qualifier:
    """631b.9(e)-(g), docs/interpretations.md, 6: wins by 4 or more, natural win (1 to 1
    whatever its margin), natural tie; other ties and smaller margins lose."""

    def qualify(c: Coup, t: Paytable) -> str | None:
        if hand == "player":
            mine, theirs, cards = c.player_count, c.banker_count, c.player
        else:
            mine, theirs, cards = c.banker_count, c.player_count, c.banker
        natural = len(cards) == 2 and mine >= 8
        if mine > theirs:
            if natural:
                return _first(t, "natural_win")
            margin = mine - theirs
            return _first(t, f"win_by_{margin}") if margin >= 4 else None
        if mine == theirs and natural:
            return _first(t, "natural_tie")
        return None

    return qualify


def _harmony_progressive(c: Coup, t: Paytable) -> str | None:
    """631b.10(g)-(i), docs/interpretations.md, 7: ties only; the highest qualifying award."""
    count = c.player_count
    if count != c.banker_count:
        return None
    cards = c.player + c.banker
    n = len(cards)
    # Four or six of a kind, and six zero-value cards, need four or six cards: a five-card
    # tie skips those tests (the candidates below stay in the paytable's order).
    same_rank = n != 5 and _same_rank(cards)
    rank = cards[0].rank
    return _first(
        t,
        "six_of_a_kind" if n == 6 and same_rank else None,
        "four_8s" if n == 4 and same_rank and rank is _EIGHT else None,
        "four_of_a_kind" if n == 4 and same_rank else None,
        "six_zero_value_cards" if n == 6 and count == 0 and _all_zero(cards) else None,
        "tie_0" if count == 0 else ("tie_1_to_5" if count <= 5 else "tie_6_to_9"),
        "tie_same_colour" if _one_colour(cards) else None,
        "any_tie",
        _N_CARD_TIE[n],
    )


_N_CARD_TIE = {4: "four_card_tie", 5: "five_card_tie", 6: "six_card_tie"}


def _same_rank(cards: tuple[Card, ...]) -> bool:
    rank = cards[0].rank
    return all(card.rank is rank for card in cards)


def _all_zero(cards: tuple[Card, ...]) -> bool:
    return not any(POINT_VALUE_BY_INDEX[card.index] for card in cards)


# -- Rising Phoenix bonus wagers (631b.8(g)(4), docs/interpretations.md, 9) ----------------


def _win_over(c: Coup) -> tuple[int, int, int, int] | None:
    """(winner's count, winner's cards, loser's count, loser's cards), None on a tie."""
    if c.player_count > c.banker_count:
        return c.player_count, len(c.player), c.banker_count, len(c.banker)
    if c.banker_count > c.player_count:
        return c.banker_count, len(c.banker), c.player_count, len(c.player)
    return None


def _over(line: str, win: int, lose: int, cards: int | None = None) -> Qualifier:
    """Either hand wins with ``win`` over a losing ``lose`` (both with ``cards`` cards, if
    given)."""

    def qualify(c: Coup, t: Paytable) -> str | None:
        w = _win_over(c)
        if w is None or w[0] != win or w[2] != lose:
            return None
        if cards is not None and (w[1] != cards or w[3] != cards):
            return None
        return line

    return qualify


def _rp(line: str, test: Callable[[Coup], bool]) -> Qualifier:
    def qualify(c: Coup, t: Paytable) -> str | None:
        return line if test(c) else None

    return qualify


def _tie_in(line: str, counts: frozenset[int]) -> Qualifier:
    return _rp(line, lambda c: c.player_count == c.banker_count and c.player_count in counts)


def _b_wins(c: Coup) -> bool:
    return c.banker_count > c.player_count


def _p_wins(c: Coup) -> bool:
    return c.player_count > c.banker_count


def _p3(c: Coup, count: int) -> bool:
    return _three_card(c.player, c.player_count, count)


def _b3(c: Coup, count: int) -> bool:
    return _three_card(c.banker, c.banker_count, count)


_RP_BONUS: dict[str, tuple[str, Qualifier]] = {
    "sun_7": ("(i)", _rp("sun_7", lambda c: _b_wins(c) and _b3(c, 7))),
    "moon_8": ("(ii)", _rp("moon_8", lambda c: _p_wins(c) and _p3(c, 8))),
    "nine_over_seven": ("(iii)", _over("nine_over_seven", 9, 7)),
    "two_card_8_over_two_card_1": ("(iv)", _over("two_card_8_over_two_card_1", 8, 1, 2)),
    "player_wins_three_card_6": (
        "(v)", _rp("player_wins_three_card_6", lambda c: _p_wins(c) and _p3(c, 6))),
    "banker_wins_1_or_2": (
        "(vi)", _rp("banker_wins_1_or_2", lambda c: _b_wins(c) and c.banker_count in (1, 2))),
    "both_8_or_9": (
        "(vii)", _rp("both_8_or_9", lambda c: c.player_count >= 8 and c.banker_count >= 8)),
    "one_over_zero": ("(viii)", _over("one_over_zero", 1, 0)),
    "three_card_6_over_three_card_3": ("(ix)", _over("three_card_6_over_three_card_3", 6, 3, 3)),
    "three_card_8_over_three_card_0": ("(x)", _over("three_card_8_over_three_card_0", 8, 0, 3)),
    "banker_wins_over_two_card_7": ("(xi)", _rp(
        "banker_wins_over_two_card_7",
        lambda c: _b_wins(c) and c.player_count == 7 and len(c.player) == 2)),
    "three_card_9_over_three_card_6": ("(xii)", _over("three_card_9_over_three_card_6", 9, 6, 3)),
    "three_card_9_over_three_card_8": ("(xiii)", _over("three_card_9_over_three_card_8", 9, 8, 3)),
    "player_three_card_8_over_banker_three_card_0": ("(xiv)", _rp(
        "player_three_card_8_over_banker_three_card_0", lambda c: _p3(c, 8) and _b3(c, 0))),
    "tie_0": ("(xv)", _tie_in("tie_0", frozenset({0}))),
    "tie_1_2_3": ("(xvi)", _tie_in("tie_1_2_3", frozenset({1, 2, 3}))),
    "tie_4_5_6_7": ("(xvii)", _tie_in("tie_4_5_6_7", frozenset({4, 5, 6, 7}))),
    "tie_8_9": ("(xviii)", _tie_in("tie_8_9", frozenset({8, 9}))),
}  # fmt: skip


def _spots() -> dict[str, Spot]:
    i, f, hp, hb = Timing.INITIAL, Timing.FINAL, "heavenly_9_progressive", "harmony_progressive"
    mm, pp = "majestic_match", "perfect_pairs"
    pi, bi, any_card = PLAYER_INITIAL, BANKER_INITIAL, CARDS
    spots = [
        Spot("player", "player", "631a.8(a)(1)", f, False, _player),
        Spot("banker", "banker", "631a.8(a)(2)", f, False, _banker),
        Spot("tie", "tie", "631a.8(a)(3)", f, False, _tie),
        Spot("perfect_pairs_player", pp, "631b.1", i, True, _perfect_pairs("player"), pi),
        Spot("perfect_pairs_banker", pp, "631b.1", i, True, _perfect_pairs("banker"), bi),
        Spot(hp, hp, "631b.2", f, True, _heavenly_9_progressive, any_card),
        Spot("fortune_7", "five_treasures", "631b.3(f)(1)", f, True, _fortune_7),
        Spot("golden_8", "five_treasures", "631b.3(f)(2)", f, True, _golden_8),
        Spot("heavenly_9", "five_treasures", "631b.3(f)(3)", f, True, _heavenly_9),
        Spot("blazing_7s", "five_treasures", "631b.3(f)(4)", f, True, _blazing_7s),
        Spot("cover_all", "five_treasures", "631b.3(f)(5)", f, True, _cover_all),
        Spot("lucky_nines", "lucky_nines", "631b.4", i, True, _lucky_nines, any_card),
        Spot("player_pair", "pairs", "631b.5(c)(1)", i, True, _pair("player"), pi),
        Spot("banker_pair", "pairs", "631b.5(c)(2)", i, True, _pair("banker"), bi),
        Spot("lucky_six", "lucky_six", "631b.5(c)(3)", f, True, _lucky_six),
        # 631b.7(b): Majestic Match needs no Baccarat wager.
        Spot("majestic_match_player", mm, "631b.7", i, False, _majestic_match("player"), pi),
        Spot("majestic_match_banker", mm, "631b.7", i, False, _majestic_match("banker"), bi),
        Spot("golden_talons_player", "golden_talons", "631b.9", f, True, _golden_talons("player")),
        Spot("golden_talons_banker", "golden_talons", "631b.9", f, True, _golden_talons("banker")),
        Spot(hb, hb, "631b.10", f, True, _harmony_progressive, any_card),
    ]  # fmt: skip
    spots += [
        Spot(name, "rising_phoenix_bonus", f"631b.8(g)(4){roman}", Timing.FINAL, True, q)
        for name, (roman, q) in _RP_BONUS.items()
    ]
    return {spot.id: spot for spot in spots}


SPOTS: Mapping[str, Spot] = MappingProxyType(_spots())
