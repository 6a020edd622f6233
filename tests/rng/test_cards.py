"""Cards and card codes (the 52-card deck of 631a.3, 651a.3, 681a.3, 685a.3)."""

import pytest

from rng import ALL_CARDS, Card, Colour, Rank, Suit, deck, parse_cards


def test_a_deck_has_52_distinct_cards_13_ranks_in_4_suits() -> None:
    cards = deck()
    assert len(cards) == len(set(cards)) == 52
    assert {c.rank for c in cards} == set(Rank)
    assert {c.suit for c in cards} == set(Suit)
    assert [c.index for c in ALL_CARDS] == list(range(52))


@pytest.mark.parametrize(
    ("code", "rank", "suit", "colour"),
    [
        ("AS", Rank.ACE, Suit.SPADES, Colour.BLACK),
        ("10H", Rank.TEN, Suit.HEARTS, Colour.RED),
        ("KD", Rank.KING, Suit.DIAMONDS, Colour.RED),
        ("2C", Rank.TWO, Suit.CLUBS, Colour.BLACK),
    ],
)
def test_card_codes(code: str, rank: Rank, suit: Suit, colour: Colour) -> None:
    card = Card.parse(code)
    assert (card.rank, card.suit, card.colour, card.code, str(card)) == (
        rank,
        suit,
        colour,
        code,
        code,
    )
    assert card is Card.of(rank, suit)  # interned


def test_parse_accepts_t_and_lower_case_and_lists() -> None:
    assert Card.parse("td") is Card.parse("10D")
    assert parse_cards("AS, 10h qc") == [Card.parse("AS"), Card.parse("10H"), Card.parse("QC")]


@pytest.mark.parametrize("bad", ["", "1S", "11H", "AX", "A", "10", "ZZZ"])
def test_bad_codes_are_refused_with_the_code_named(bad: str) -> None:
    with pytest.raises(ValueError, match="not a card code"):
        Card.parse(bad)


def test_every_code_round_trips() -> None:
    assert all(Card.parse(c.code) is c for c in ALL_CARDS)
