"""Each game's number of seats is limited by its chapter, and checked when the configuration
is read: a table the rules do not allow is refused with the file, table and setting named."""

from __future__ import annotations

from dataclasses import replace

import pytest

from rng.sources import HmacDrbgSource
from server.config import ConfigError, load_config, parse_config
from server.games.table import UNREGULATED_SEAT_LIMIT
from server.tables.games import build_game

# The chapters' betting positions "for no more than N players" (typed from the regulation).
CHAPTER_LIMITS = [
    ("twenty_one_baccarat", 8, "681a.2(a)"),
    ("casino_war", 7, "651a.2(a)"),
    ("down_under_blackjack", 6, "685a.2(a)"),
]
NO_NUMBER = ["baccarat", "roulette", "big_six"]  # 631a (as we have it), 617a, 619a


def _config(game: str, seats: int | None) -> str:
    line = "" if seats is None else f"seats = {seats}\n"
    return f'[[tables]]\nid = "t-1"\nname = "T"\ngame = "{game}"\n{line}'


@pytest.mark.parametrize(("game", "most", "section"), CHAPTER_LIMITS)
def test_a_chapter_s_number_of_positions_is_the_most_seats(
    game: str, most: int, section: str
) -> None:
    assert parse_config(_config(game, most), "tables.toml").tables[0].seats == most
    with pytest.raises(ConfigError) as refused:
        parse_config(_config(game, most + 1), "tables.toml")
    message = str(refused.value)
    for part in ("tables.toml", "table t-1", f"seats = {most + 1}", f"at most {most}", section):
        assert part in message, (part, message)


@pytest.mark.parametrize(("game", "most", "section"), CHAPTER_LIMITS)
def test_without_a_seats_setting_a_table_gets_seven_or_its_chapter_s_fewer(
    game: str, most: int, section: str
) -> None:
    assert parse_config(_config(game, None), "tables.toml").tables[0].seats == min(7, most)


@pytest.mark.parametrize("game", NO_NUMBER)
def test_where_the_chapter_sets_no_number_our_own_bound_applies(game: str) -> None:
    seats = parse_config(_config(game, UNREGULATED_SEAT_LIMIT), "tables.toml").tables[0].seats
    assert seats == UNREGULATED_SEAT_LIMIT
    with pytest.raises(ConfigError, match="sets no number"):
        parse_config(_config(game, UNREGULATED_SEAT_LIMIT + 1), "tables.toml")


def test_seats_must_be_a_positive_whole_number() -> None:
    for bad in ("0", "2.5", '"six"', "true"):
        text = _config("casino_war", None) + f"seats = {bad}\n"
        with pytest.raises(ConfigError, match="seats must be a whole number"):
            parse_config(text, "tables.toml")


def test_settings_made_in_code_are_checked_too() -> None:
    # The runtime hands out seat numbers as box numbers: a seventh box must never reach a
    # Down Under engine that has six.
    table = next(t for t in load_config(None).tables if t.game == "down_under_blackjack")
    with pytest.raises(ConfigError, match=r"table down-under: seats = 7.*685a\.2\(a\)"):
        build_game(replace(table, seats=7), HmacDrbgSource("seats"))


def test_the_demo_lobby_is_within_every_limit() -> None:
    for table in load_config(None).tables:
        build_game(table, HmacDrbgSource("seats"))  # raises if not
