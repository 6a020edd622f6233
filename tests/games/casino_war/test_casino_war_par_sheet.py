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


@pytest.mark.parametrize("decks", [6, 8])
def test_rows_equal_independent_exact(decks: int) -> None:
    rows = {r.wager: r for r in casino_war_par_sheet((decks,))}
    assert {w: r.house_edge_exact for w, r in rows.items()} == _independent(decks)
    assert rows["initial_surrender"].house_edge_exact == Fraction(23, 622) if decks == 6 else True


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
