"""The shared betting book: phases and commands as data, wagers, settlement and voiding."""

from __future__ import annotations

import pytest

from server.games.betting import (
    CHANCE_TRANSITIONS,
    DECISION_TRANSITIONS,
    Book,
    Decisions,
    Limits,
)
from server.games.errors import (
    ABOVE_MAXIMUM,
    BAD_AMOUNT,
    BELOW_MINIMUM,
    BETTING_CLOSED,
    NO_DECISION_PENDING,
    NOT_IN_PHASE,
    IllegalAction,
    InvariantViolation,
)
from server.games.events import BetAccepted, RoundSettled, RoundVoided, WagerSettled
from server.games.round import DecisionRequest, Phase
from server.games.wagers import Outcome, Result, Wager


def test_every_transition_is_from_a_live_phase() -> None:
    for table in (CHANCE_TRANSITIONS, DECISION_TRANSITIONS):
        assert all(phase not in (Phase.SETTLED, Phase.VOIDED) for _, phase in table)
        assert ("void", Phase.BETTING) in table and ("close_betting", Phase.BETTING) in table
    assert ("ask", Phase.DEALING) not in CHANCE_TRANSITIONS


def test_phase_errors_and_limits() -> None:
    book = Book("r")
    with pytest.raises(IllegalAction) as info:
        book.place(Wager("a", "p", "x", 10))
    assert info.value.code == NOT_IN_PHASE
    book.open()
    with pytest.raises(IllegalAction):
        book.open()
    for amount, code in [
        (0, BAD_AMOUNT),
        (5.0, BAD_AMOUNT),
        (9, BELOW_MINIMUM),
        (101, ABOVE_MAXIMUM),
    ]:
        with pytest.raises(IllegalAction) as info:
            book.place(Wager("a", "p", "x", amount), Limits(10, 100))  # type: ignore[arg-type]
        assert info.value.code == code
    book.place(Wager("a", "p", "x", 60), Limits(10, 100))
    with pytest.raises(IllegalAction) as info:  # the maximum applies to the total on the spot
        book.place(Wager("b", "p", "x", 60), Limits(10, 100))
    assert info.value.code == ABOVE_MAXIMUM
    book.close_betting()
    with pytest.raises(IllegalAction) as info:
        book.cancel("p", "a")
    assert info.value.code == BETTING_CLOSED
    with pytest.raises(IllegalAction):
        book.add(Wager("w", "p", "war", 10))  # only while deciding
    book.advance("ask")
    assert isinstance(book.add(Wager("w", "p", "war", 10))[0], BetAccepted)
    with pytest.raises(InvariantViolation):
        book.add(Wager("w", "p", "war", 10))
    events = book.settle([(book.wagers[1], Outcome.win(2)), (book.wagers[0], Outcome.lose())])  # type: ignore[arg-type]
    assert [e.settlement.outcome.result for e in events if isinstance(e, WagerSettled)] == [
        Result.LOSE,
        Result.WIN,
    ]  # losers collected first
    with pytest.raises(InvariantViolation):
        book.settle([(Wager("a", "p", "x", 60), Outcome.lose())])
    assert isinstance(book.finish("done")[-1], RoundSettled)
    assert book.phase is Phase.SETTLED
    with pytest.raises(IllegalAction):
        book.void("late")


def test_finish_needs_every_wager_settled_and_void_returns_them() -> None:
    book = Book("r", CHANCE_TRANSITIONS)
    book.open()
    book.place(Wager("a", "p", "x", 7))
    book.close_betting()
    with pytest.raises(InvariantViolation):
        book.finish("early")
    events = book.void("fault")
    assert isinstance(events[-1], RoundVoided)
    settled = [e.settlement for e in events if isinstance(e, WagerSettled)]
    assert [(s.outcome.result, s.returned) for s in settled] == [(Result.VOID, 7)]


def test_decisions() -> None:
    d = Decisions("r")
    assert not d and d.first() is None
    d.ask(DecisionRequest("p", "s", ("hit", "stand"), "stand"))
    with pytest.raises(InvariantViolation):
        d.ask(DecisionRequest("p", "s", ("hit", "stand"), "stand"))
    with pytest.raises(IllegalAction) as info:
        d.take("q", "s", "hit")
    assert info.value.code == NO_DECISION_PENDING
    timed = d.time_out("p")
    assert [t.default for t in timed] == ["stand"]
    assert not d
