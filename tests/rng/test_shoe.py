"""The virtual shoe: composition, lazy dealing, burn and cover-card rules of each chapter."""

from collections import Counter

import pytest

from rng import (
    ALL_CARDS,
    BACCARAT,
    CASINO_WAR,
    DOWN_UNDER_BLACKJACK,
    TWENTY_ONE_BACCARAT,
    Card,
    Draw,
    ShoeExhausted,
    ShoeRules,
    VirtualShoe,
    seeded_source,
)
from tests.rng.scripted import ScriptedDraws

CHAPTERS = [BACCARAT, TWENTY_ONE_BACCARAT, CASINO_WAR, DOWN_UNDER_BLACKJACK]


@pytest.mark.parametrize(
    ("rules", "decks"),
    [(r, d) for r in CHAPTERS for d in r.decks_allowed],
    ids=lambda v: getattr(v, "chapter", v),
)
def test_a_shoe_deals_every_card_of_its_decks_exactly_once(rules: ShoeRules, decks: int) -> None:
    """631a.3 / 651a.3 / 681a.3 / 685a.3: N 52-card decks; burn cards come out of the shoe."""
    shoe = VirtualShoe(seeded_source(decks), rules, decks)
    burn = shoe.shuffle()
    dealt = list(burn.burned) + ([burn.exposed] if burn.exposed else []) + shoe.deal_all()
    assert len(dealt) == 52 * decks
    assert Counter(dealt) == {card: decks for card in ALL_CARDS}
    with pytest.raises(ShoeExhausted):
        shoe.draw()


@pytest.mark.parametrize(
    ("rules", "bad"),
    [(BACCARAT, 7), (TWENTY_ONE_BACCARAT, 6), (CASINO_WAR, 4), (DOWN_UNDER_BLACKJACK, 7)],
)
def test_deck_counts_outside_the_chapter_are_refused(rules: ShoeRules, bad: int) -> None:
    with pytest.raises(ValueError, match=f"not {bad}"):
        VirtualShoe(seeded_source(1), rules, bad)


@pytest.mark.parametrize(
    ("first", "burned"),
    [("AS", 1), ("5H", 5), ("9C", 9), ("10D", 10), ("JS", 10), ("QH", 10), ("KC", 10)],
)
def test_baccarat_burn_exposes_one_card_and_burns_its_value_631a_9(first: str, burned: int) -> None:
    shoe = VirtualShoe(seeded_source(1), BACCARAT, 8)
    shoe.shuffle()  # find where ``first`` sits in a fresh shoe, then script the draw of it
    index = [i % 52 for i in range(shoe.total)].index(Card.parse(first).index)
    shoe.source = ScriptedDraws([index] + [0] * burned)
    burn = shoe.shuffle()
    assert burn.exposed == Card.parse(first)
    assert len(burn.burned) == burned
    assert shoe.remaining == 416 - 1 - burned


@pytest.mark.parametrize("rules", [TWENTY_ONE_BACCARAT, CASINO_WAR, DOWN_UNDER_BLACKJACK])
def test_other_chapters_burn_one_card_face_down(rules: ShoeRules) -> None:
    """651a.8(b), 681a.7(c), 685a.7(c)."""
    burn = VirtualShoe(seeded_source(2), rules, rules.decks_allowed[0]).shuffle()
    assert burn.exposed is None and len(burn.burned) == 1


@pytest.mark.parametrize(
    ("rules", "decks", "lowest", "highest"),
    [
        (CASINO_WAR, 6, 78, 311),  # 651a.5(e): at least 1/4 of 312 from the bottom
        (CASINO_WAR, 8, 104, 415),
        (DOWN_UNDER_BLACKJACK, 5, 65, 259),  # 685a.5(d): 1/4 of 260
        (TWENTY_ONE_BACCARAT, 4, 10, 198),  # 681a.5(c), (d): ten cards from either end
        (BACCARAT, 8, 10, 406),
    ],
)
def test_cover_card_limits(rules: ShoeRules, decks: int, lowest: int, highest: int) -> None:
    VirtualShoe(seeded_source(1), rules, decks, cards_behind_cover=lowest)
    VirtualShoe(seeded_source(1), rules, decks, cards_behind_cover=highest)
    for bad in (lowest - 1, highest + 1):
        with pytest.raises(ValueError, match="cover card"):
            VirtualShoe(seeded_source(1), rules, decks, cards_behind_cover=bad)


def test_default_cover_positions_respect_their_chapter() -> None:
    assert VirtualShoe(seeded_source(1), BACCARAT, 8).cards_behind_cover == 16
    assert VirtualShoe(seeded_source(1), CASINO_WAR, 6).cards_behind_cover == 78
    assert VirtualShoe(seeded_source(1), DOWN_UNDER_BLACKJACK, 8).cards_behind_cover == 104
    assert VirtualShoe(seeded_source(1), TWENTY_ONE_BACCARAT, 4).cards_behind_cover == 42


def test_needs_reshuffle_once_the_cover_card_is_reached_631a_9_651a_8_d() -> None:
    shoe = VirtualShoe(seeded_source(5), CASINO_WAR, 6, cards_behind_cover=100)
    assert shoe.needs_reshuffle  # a shoe never shuffled must be shuffled first
    shoe.shuffle()
    while shoe.remaining > 101:
        shoe.draw()
        assert not shoe.needs_reshuffle
    shoe.draw()  # the next card out would be the cover card: finish the round, then shuffle
    assert shoe.remaining == 100 and shoe.needs_reshuffle
    shoe.draw()  # the round in progress may still be completed past the cover card
    assert shoe.needs_reshuffle
    shoe.shuffle()
    assert not shoe.needs_reshuffle and shoe.remaining == 311


def test_draws_are_reported_to_the_observer_before_the_card_is_returned() -> None:
    seen: list[Draw] = []
    shoe = VirtualShoe(seeded_source(9), DOWN_UNDER_BLACKJACK, 4, observer=seen.append)
    shoe.shuffle()
    card = shoe.draw()
    assert [d.seq for d in seen] == [0, 1]  # the burn card, then this one
    assert seen[-1].card is card and seen[-1].bound == 207 and 0 <= seen[-1].value < 207


def test_the_same_seed_deals_the_same_shoe_and_another_seed_does_not() -> None:
    def deal(seed: int) -> list[Card]:
        shoe = VirtualShoe(seeded_source(seed), BACCARAT, 6)
        shoe.shuffle()
        return shoe.deal_all()

    assert deal(11) == deal(11)
    assert deal(11) != deal(12)


def test_first_card_position_is_uniform_over_the_52_cards() -> None:
    from scipy import stats

    source = seeded_source(21)
    shoe = VirtualShoe(source, CASINO_WAR, 6)
    counts: Counter[int] = Counter()
    for _ in range(26_000):
        shoe.shuffle()  # burns one card
        counts[shoe.draw().index] += 1
    assert stats.chisquare([counts[i] for i in range(52)]).pvalue > 0.001
