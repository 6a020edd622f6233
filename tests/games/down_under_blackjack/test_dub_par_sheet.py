"""The Down Under Blackjack par sheet: Match-the-Dealer and Insurance against independent
exact closed forms, the Bet's exact Blackjack probabilities, and the CLI."""

from __future__ import annotations

import json
import random
from fractions import Fraction
from functools import cache
from itertools import product

import pytest

from server.cli.main import main
from server.games.down_under_blackjack.par_sheet import BET_METHOD, bet_lines, par_sheet
from server.games.par_sheet import house_edge_of
from tests.games.down_under_blackjack.strategy_play import play_round


def _mtd_edge(decks: int) -> Fraction:
    # 685a.11(c), docs/interpretations.md, 15: each matching card pays; awards add; no match loses.
    suited, unsuited = {6: (11, 4), 8: (14, 3)}[decks]
    n = 52 * decks - 1  # cards other than the up card
    p_suited, p_unsuited = Fraction(decks - 1, n), Fraction(3 * decks, n)
    p_none = Fraction(48 * decks * (48 * decks - 1), n * (n - 1))
    expected = 2 * (p_suited * suited + p_unsuited * unsuited) - p_none
    return -expected


def _insurance_edge(decks: int) -> Fraction:
    p = Fraction(16 * decks, 52 * decks - 1)  # 685a.8(a): a 10-value hole card under an ace
    return -(2 * p - (1 - p))


# docs/par-sheets-cards.md, "Down Under Blackjack (685a)": the Bet's house edge by decks, as
# printed (four decimals of a percent).
BET_EDGE_DOCUMENTED = {4: "-0.0084%", 5: "0.0220%", 6: "0.0421%", 8: "0.0669%"}


@pytest.mark.parametrize("decks", [4, 5, 6, 8])
def test_rows(decks: int) -> None:
    rows = {r.wager: r for r in par_sheet((decks,))}
    assert rows["insurance"].house_edge_exact == _insurance_edge(decks)
    if decks in (6, 8):
        assert rows["match_the_dealer"].house_edge_exact == _mtd_edge(decks)
    else:
        assert "match_the_dealer" not in rows  # 685a.6(e)
    bet = rows["bet"]
    assert bet.method == BET_METHOD
    assert sum(line.probability for line in bet.outcomes) == 1
    n = 52 * decks
    aces, tens = 4 * decks, 16 * decks
    # P(two given cards form A + 10-value), exact: 2 * aces * tens / (n (n - 1)).
    p_bj = Fraction(2 * aces * tens, n * (n - 1))
    lines = {line.name: line.probability for line in bet.outcomes}
    assert lines["player Blackjack"] + lines["both Blackjack"] == p_bj
    assert lines["dealer Blackjack"] + lines["both Blackjack"] == p_bj
    # The documented figure, to its printed precision: within half a unit of its last digit.
    documented = float(BET_EDGE_DOCUMENTED[decks].rstrip("%")) / 100
    assert abs(bet.house_edge - documented) <= 0.000_000_5
    assert f"{bet.house_edge * 100:.4f}%" == BET_EDGE_DOCUMENTED[decks]


def test_six_deck_figures() -> None:
    rows = {r.wager: r for r in par_sheet((6,))}
    assert rows["insurance"].house_edge_exact == Fraction(23, 311)
    assert rows["match_the_dealer"].house_edge_exact == Fraction(1958, 48205)


def test_cli_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["par-sheet", "down_under_blackjack", "--decks", "8", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["wager"] for r in rows] == ["bet", "insurance", "match_the_dealer"]
    assert rows[0]["method"].startswith("approximation")


def _exact_always_stand(decks: int) -> float:
    """The Bet's edge for a player who always stands, computed exactly with full card removal
    (the dealer's draws without replacement), independently of the par-sheet code."""
    counts = [0] + [4 * decks] * 9 + [16 * decks]

    def dealer_total(hard: int, aces: int) -> int:  # 685a.3(d)(3): ace 11 unless over 22
        t = hard
        for _ in range(min(aces, 2)):
            if t + 10 <= 22:
                t += 10
        return t

    @cache
    def dealer(hard: int, aces: int, comp: tuple[int, ...]) -> dict[int, float]:
        t = dealer_total(hard, aces)
        if t >= 17:  # 685a.7(m)
            return {min(t, 23): 1.0}
        n = sum(comp)
        out: dict[int, float] = {}
        for v in range(1, 11):
            if comp[v]:
                rest = list(comp)
                rest[v] -= 1
                for k, p in dealer(hard + v, aces + (v == 1), tuple(rest)).items():
                    out[k] = out.get(k, 0.0) + p * comp[v] / n
        return out

    total_w, ev = 0, 0.0
    for a, up, b, h in product(range(1, 11), repeat=4):
        comp, w = list(counts), 1
        for x in (a, up, b, h):
            w *= comp[x]
            comp[x] -= 1
        total_w += w
        player_bj, dealer_bj = {a, b} == {1, 10}, {up, h} == {1, 10}
        if dealer_bj or player_bj:
            ev += w * (0.0 if player_bj and dealer_bj else (-1.0 if dealer_bj else 1.5))
            continue
        t = a + b + (10 if 1 in (a, b) and a + b <= 11 else 0)
        large = a in (1, 10) and b in (1, 10)
        for d, p in dealer(up + h, (up == 1) + (h == 1), tuple(comp)).items():
            r = (t > d) - (t < d)
            if d == 22:  # 685a.7(n)(1)
                r = 1 if t == 21 or large else 0
            elif d == 23:
                r = 1
            ev += w * p * r
    return -ev / total_w


def test_bet_model_precision_against_exact_always_stand() -> None:
    # The approximation (later cards with replacement) against an exact enumeration, on the
    # one strategy where exact enumeration is cheap: the error is a few hundredths of a %.
    model = float(house_edge_of(bet_lines(4, stand_only=True)))
    exact = _exact_always_stand(4)
    assert abs(model - exact) < 0.0005
    assert 0.2 < exact < 0.23


def test_the_stated_strategy_plays_through_the_engine() -> None:
    # Every decision the strategy makes is legal; the engine settles every round.
    rng = random.Random(5)
    nets = [play_round(6, rng) for _ in range(300)]
    assert all(-4000 <= n <= 4000 for n in nets)
