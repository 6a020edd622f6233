"""The Casino War par sheet against an independent exact computation (closed forms by
counting cards), and the CLI."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from server.cli.main import main
from server.games.casino_war.par_sheet import casino_war_par_sheet


def _independent(decks: int) -> dict[str, Fraction]:
    n = 52 * decks
    per_rank = 4 * decks
    p_tie = Fraction(per_rank - 1, n - 1)  # the dealer's card matches the player's rank
    # War deal: two cards from the shoe less the two tied cards (one rank has per_rank - 2).
    q = Fraction(
        (per_rank - 2) * (per_rank - 3) + 12 * per_rank * (per_rank - 1), (n - 2) * (n - 3)
    )
    go_to_war = p_tie * ((1 - q) / 2 * 1 + (1 - q) / 2 * -2 + q * 2)  # 651a.9(c)(2), 651a.10(3)
    surrender = p_tie * Fraction(-1, 2)  # 651a.9(c)(1); wins and losses cancel
    return {
        "initial_go_to_war": -go_to_war,
        "initial_surrender": -surrender,
        "tie": -(p_tie * 10 - (1 - p_tie)),  # 651a.10(2)
        "war_tie": -(q * 10 - (1 - q)),
    }


# docs/par-sheets-cards.md, "Casino War (651a)": each row's house edge as printed, and exact.
DOCUMENTED = {
    6: {
        "initial_go_to_war": ("2.3301%", Fraction(23138, 993023)),
        "initial_surrender": ("3.6977%", Fraction(23, 622)),
        "tie": ("18.6495%", Fraction(58, 311)),
        "war_tie": ("18.6282%", Fraction(2974, 15965)),
    },
    8: {
        "initial_go_to_war": ("2.3398%", Fraction(276706, 11826255)),
        "initial_surrender": ("3.7349%", Fraction(31, 830)),
        "tie": ("17.8313%", Fraction(74, 415)),
        "war_tie": ("17.8194%", Fraction(5078, 28497)),
    },
}


@pytest.mark.parametrize("decks", [6, 8])
def test_rows_equal_independent_exact_and_the_documented_figures(decks: int) -> None:
    rows = {r.wager: r for r in casino_war_par_sheet((decks,))}
    assert {w: r.house_edge_exact for w, r in rows.items()} == _independent(decks)
    documented = DOCUMENTED[decks]
    assert {w: exact for w, (_, exact) in documented.items()} == _independent(decks)
    for wager, (percent, exact) in documented.items():
        assert f"{float(exact) * 100:.4f}%" == percent, wager


@pytest.mark.parametrize(("decks", "expected"), [(6, Fraction(23, 622)), (8, Fraction(31, 830))])
def test_always_surrendering_costs_half_a_tie(decks: int, expected: Fraction) -> None:
    """Surrender gives up half the Initial Wager on a tie (651a.9(c)(1)); otherwise the two
    cards are exchangeable, so the player wins as often as the dealer and those cancel: the
    edge is P(tie) / 2, where the dealer's card is one of the 4d - 1 other cards of the
    player's rank among the 52d - 1 left."""
    p_tie = Fraction(4 * decks - 1, 52 * decks - 1)
    assert p_tie / 2 == expected
    rows = {r.wager: r for r in casino_war_par_sheet((decks,))}
    assert rows["initial_surrender"].house_edge_exact == expected


def test_cli_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["par-sheet", "casino_war", "--decks", "8", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["wager"] for r in rows] == [
        "initial_go_to_war",
        "initial_surrender",
        "tie",
        "war_tie",
    ]
    assert rows[2]["house_edge_exact"] == "74/415"
