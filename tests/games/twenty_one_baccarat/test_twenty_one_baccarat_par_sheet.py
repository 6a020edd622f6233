"""The 21 Baccarat par sheet against an independent exact computation: every ordering of the
cards of small shoes dealt by a separately written reading of 681a.7 and 681a.8, and the
Board's published Tie hold (5.9% with four decks, 5.4% with eight; docs/interpretations.md,
1 and 2)."""

from __future__ import annotations

import json
from collections import Counter
from fractions import Fraction
from itertools import permutations

import pytest

from server.cli.main import main
from server.games.twenty_one_baccarat.par_sheet import bonus_lines, main_lines, par_sheet

# Rank numbers 1 (ace) .. 13 (king).
SMALL_SHOE = (1, 1, 1, 2, 5, 6, 7, 7, 9, 10, 13)


def _value(rank: int) -> int:
    return min(rank, 10)


def _total(hand: list[int]) -> int:  # 681a.3(d)
    t = sum(_value(r) for r in hand)
    return t + 10 if 1 in hand and t <= 11 else t


def _natural(
    hand: list[int],
) -> int:  # 681a.1; two aces outrank ace-ten (docs/interpretations.md, 2)
    if len(hand) != 2 or 1 not in hand:
        return 0
    other = hand[0] if hand[1] == 1 else hand[1]
    return 2 if other == 1 else (1 if _value(other) == 10 else 0)


def _main_nets(cards: tuple[int, ...]) -> tuple[Fraction, Fraction, Fraction]:
    """Net results of Player, Banker and Tie wagers for one ordering of the shoe."""
    player, banker = [cards[0], cards[2]], [cards[1], cards[3]]
    pn, bn = _natural(player), _natural(banker)
    nxt = 4
    if not pn and not bn:
        if _total(player) < 17:
            player.append(cards[nxt])
            nxt += 1
        if _total(banker) < 17:
            banker.append(cards[nxt])
    pt, bt = _total(player), _total(banker)
    if pn or bn:
        result = 0 if pn == bn else (1 if pn > bn else -1)
    elif pt == bt:
        result = 0
    elif (pt <= 21) != (bt <= 21):
        result = 1 if pt <= 21 else -1
    elif pt <= 21:
        result = 1 if pt > bt else -1
    else:
        result = 1 if pt < bt else -1
    if result == 0:
        return Fraction(0), Fraction(0), Fraction(10)
    win_total = pt if result > 0 else bt
    pay = Fraction(1, 2) if win_total == 17 else Fraction(1)
    return (pay, Fraction(-1), Fraction(-1)) if result > 0 else (Fraction(-1), pay, Fraction(-1))


PAYS = {  # 681a.8(c): three 7s, trips, straight, three-card 21, pair
    "A": (100, 40, 11, 5, 3), "B": (80, 40, 12, 5, 3), "C": (80, 40, 10, 6, 3),
    "D": (100, 40, 10, 5, 3), "E": (80, 40, 11, 5, 3), "F": (80, 35, 12, 5, 3),
}  # fmt: skip


def _bonus_net(cards: tuple[int, ...], letter: str) -> int:
    hand = list(cards[:2])
    if _total(hand) < 17:
        hand.append(cards[2])
    pays = PAYS[letter]
    if len(hand) == 3:
        s = sorted(hand)
        if s == [7, 7, 7]:
            return pays[0]
        if s[0] == s[2]:
            return pays[1]
        if (s[0] + 1 == s[1] and s[1] + 1 == s[2]) or s == [1, 12, 13]:
            return pays[2]
        if _total(hand) == 21:
            return pays[3]
    return pays[4] if hand[0] == hand[1] else -1


def _shoe_counts(ranks: tuple[int, ...]) -> tuple[int, ...]:
    c = Counter(ranks)
    return tuple(c[r] for r in range(1, 14))


def _edge(lines: tuple[object, ...]) -> Fraction:
    return -sum((line.probability * line.net for line in lines), Fraction(0))  # type: ignore[attr-defined]


def test_main_wagers_equal_brute_force_on_a_small_shoe() -> None:
    totals = [Fraction(0)] * 3
    count = 0
    for cards in permutations(SMALL_SHOE, 6):
        for i, net in enumerate(_main_nets(cards)):
            totals[i] += net
        count += 1
    lines = main_lines(_shoe_counts(SMALL_SHOE))
    for i, spot in enumerate(("player", "banker", "tie")):
        assert _edge(lines[spot]) == -totals[i] / count, spot


@pytest.mark.parametrize("letter", "ABCDEF")
def test_bonus_equals_brute_force_on_a_small_shoe(letter: str) -> None:
    shoe = (*SMALL_SHOE, 7, 3, 12, 13, 4)
    nets = [_bonus_net(c, letter) for c in permutations(shoe, 3)]
    assert _edge(bonus_lines(_shoe_counts(shoe), letter)) == -Fraction(sum(nets), len(nets))


def test_tie_hold_matches_the_board() -> None:
    # 46 Pa.B. 7323: Tie hold 5.9% (four decks) and 5.4% (eight decks).
    rows = {(r.variant, r.wager, r.paytable): r for r in par_sheet()}
    assert round(rows[("21_baccarat_4_decks", "tie", None)].house_edge * 100, 1) == 5.9
    assert round(rows[("21_baccarat_8_decks", "tie", None)].house_edge * 100, 1) == 5.4
    for decks in (4, 8):
        p = rows[(f"21_baccarat_{decks}_decks", "player", None)]
        b = rows[(f"21_baccarat_{decks}_decks", "banker", None)]
        assert p.house_edge_exact == b.house_edge_exact  # the hands are dealt alike
        assert sum(line.probability for line in p.outcomes) == 1


def test_cli_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["par-sheet", "twenty_one_baccarat", "--decks", "4", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["wager"], r["paytable"]) for r in rows] == [
        ("player", None), ("banker", None), ("tie", None),
        ("bonus_player", "A"), ("bonus_player", "B"), ("bonus_player", "C"),
        ("bonus_banker", "A"), ("bonus_banker", "B"), ("bonus_banker", "C"),
    ]  # fmt: skip
