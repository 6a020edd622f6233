"""The device dealer's fault rules, sans-I/O: requests, device messages and time in; what to
send and the answer out (docs/devices.md, "Faults"). Each test cites the rule it checks."""

from __future__ import annotations

from typing import Any

from server.core.effects import VIRTUAL, Decided, Irregular, NewShoe
from server.devices.dealing import Answer, DealerSettings, DeviceDealer, Send, TableAction
from server.devices.messages import (
    Arm,
    CardRead,
    ConsoleAction,
    DeviceFault,
    ExpectCards,
    HoleLamp,
    Prompt,
    Restart,
    StartSpin,
    WheelResult,
    WheelWarning,
)
from server.games.chance import CardRequest, HoleRangeRequest, SpinRequest
from server.journal import records as rec

SETTINGS = DealerSettings(answer_seconds=5, hold_seconds=60, max_restarts=1)


def shoe_dealer(decks: int = 1) -> DeviceDealer:
    devices = {"card_source": "shoe", "dealer_console": "console"}
    return DeviceDealer("t", devices, decks=decks, settings=SETTINGS)


def answers(out: list[Any]) -> list[Any]:
    return [item.result for item in out if isinstance(item, Answer)]


def sent(out: list[Any]) -> list[Any]:
    return [item.message for item in out if isinstance(item, Send)]


def sign(action: str, value: str = "", dealer: str = "dana", supervisor: str = "sam") -> ConsoleAction:  # fmt: skip  # noqa: E501
    return ConsoleAction(action=action, table="t", dealer=dealer, supervisor=supervisor, value=value)  # type: ignore[arg-type]  # fmt: skip  # noqa: E501


def dealing(dealer: DeviceDealer, round_id: str = "t.1") -> None:
    """A round opened (a physical shoe: nothing burned virtually) and its betting closed."""
    assert answers(dealer.ask(round_id, NewShoe(), None, 0)) == [None]


def test_each_card_is_asked_for_and_dealt_as_read() -> None:
    dealer = shoe_dealer()
    dealing(dealer)
    out = dealer.ask("t.1", CardRequest("player"), None, 1)
    assert sent(out) == [ExpectCards(round="t.1", target="player")]
    out = dealer.receive("card_source", CardRead(card="9H", count=1, round="t.1"), 1.5)
    assert answers(out) == [rec.CardDrawn(card="9H", target="player", device="shoe", count=1)]


def test_a_double_read_is_dropped_by_the_shoes_count() -> None:
    dealer = shoe_dealer()
    dealing(dealer)
    dealer.ask("t.1", CardRequest("player"), None, 1)
    dealer.receive("card_source", CardRead(card="9H", count=1, round="t.1"), 1)
    dealer.ask("t.1", CardRequest("banker"), None, 2)
    again = dealer.receive("card_source", CardRead(card="9H", count=1, round="t.1"), 2)
    assert answers(again) == []  # the same card, counted once
    out = dealer.receive("card_source", CardRead(card="2C", count=2, round="t.1"), 2)
    assert answers(out)[0].card == "2C"


def test_a_card_found_face_up_in_the_shoe_is_never_used() -> None:
    """651a.11(a), 681a.9(a), 685a.12(a)."""
    dealer = shoe_dealer()
    dealing(dealer)
    dealer.ask("t.1", CardRequest("player"), None, 1)
    out = dealer.receive("card_source", CardRead(card="KD", count=1, round="t.1", face_up=True), 1)  # fmt: skip  # noqa: E501
    assert answers(out) == []
    out = dealer.receive("card_source", CardRead(card="3S", count=2, round="t.1"), 1)
    assert answers(out)[0].card == "3S"


def test_a_card_read_while_betting_is_open_voids_the_round() -> None:
    """Game before time: the round is void when dealing starts."""
    dealer = shoe_dealer()
    dealing(dealer)
    dealer.receive("card_source", CardRead(card="4D", count=1), 0.5)  # betting still open
    (answer,) = answers(dealer.ask("t.1", CardRequest("player"), None, 1))
    assert isinstance(answer, Irregular) and "game before time" in answer.reason


def test_an_impossible_read_holds_until_the_supervisor_enters_the_card() -> None:
    dealer = shoe_dealer(decks=1)
    dealing(dealer)
    dealer.ask("t.1", CardRequest("player"), None, 1)
    dealer.receive("card_source", CardRead(card="AS", count=1, round="t.1"), 1)
    dealer.ask("t.1", CardRequest("banker"), None, 2)
    out = dealer.receive("card_source", CardRead(card="AS", count=2, round="t.1"), 2)
    (hold,) = answers(out)
    assert isinstance(hold, rec.Held) and "impossible read" in hold.reason
    assert hold.options == ("confirm", "void")
    assert any(isinstance(m, Prompt) and "impossible" in m.text for m in sent(out))
    assert dealer.ask("t.1", CardRequest("banker"), None, 3) == []  # asked again: waits
    refused = dealer.receive("dealer_console", sign("confirm"), 4)  # no card entered
    assert answers(refused) == [] and "enter the physical card" in sent(refused)[0].text
    alone = dealer.receive("dealer_console", sign("confirm", "AH", "dana", "dana"), 4)
    assert answers(alone) == [] and "two different people" in sent(alone)[0].text
    (decided,) = answers(dealer.receive("dealer_console", sign("confirm", "AH"), 5))
    assert isinstance(decided, Decided)
    assert decided.staff == rec.StaffDecision(
        action="confirm", dealer="dana", supervisor="sam", value="AH", reason=hold.reason
    )
    assert decided.answer.card == "AH"


def test_a_card_the_shoe_did_not_read_holds_the_table() -> None:
    """The shoe's count skipped: confirm the card read as the next one."""
    dealer = shoe_dealer()
    dealing(dealer)
    dealer.ask("t.1", CardRequest("player"), None, 1)
    dealer.receive("card_source", CardRead(card="5C", count=1, round="t.1"), 1)
    dealer.ask("t.1", CardRequest("banker"), None, 2)
    (hold,) = answers(dealer.receive("card_source", CardRead(card="6C", count=3, round="t.1"), 2))  # fmt: skip  # noqa: E501
    assert isinstance(hold, rec.Held) and "1 card(s) left the shoe unread" in hold.reason
    (decided,) = answers(dealer.receive("dealer_console", sign("confirm"), 3))
    assert decided.answer.card == "6C"


def test_no_card_in_time_holds_then_a_read_resumes() -> None:
    dealer = shoe_dealer()
    dealing(dealer)
    dealer.ask("t.1", CardRequest("player"), None, 1)
    assert dealer.next_deadline() == 6
    (hold,) = answers(dealer.tick(6))
    assert isinstance(hold, rec.Held) and "no card was read" in hold.reason
    out = dealer.receive("card_source", CardRead(card="7H", count=1, round="t.1"), 8)
    assert answers(out)[0].card == "7H"


def test_a_hold_nobody_decides_voids_the_round() -> None:
    """Malfunction voids all pays and plays."""
    dealer = shoe_dealer()
    dealing(dealer)
    dealer.ask("t.1", CardRequest("player"), None, 1)
    dealer.tick(6)
    assert dealer.next_deadline() == 66
    (void,) = answers(dealer.tick(66))
    assert isinstance(void, Irregular) and "not decided within 60 s" in void.reason


def test_cards_read_after_the_hand_hold_the_next_round_until_confirmed() -> None:
    """681a.9(b), 685a.12(d): to the discard rack."""
    dealer = shoe_dealer()
    dealing(dealer)
    dealer.ask("t.1", CardRequest("player"), None, 1)
    dealer.receive("card_source", CardRead(card="8S", count=1, round="t.1"), 1)
    dealer.receive("card_source", CardRead(card="8D", count=2, round="t.1"), 2)  # not asked
    (hold,) = answers(dealer.ask("t.2", NewShoe(), None, 3))
    assert isinstance(hold, rec.Held) and "8D" in hold.reason and hold.options == ("confirm",)
    (decided,) = answers(dealer.receive("dealer_console", sign("confirm"), 4))
    assert decided.answer is None


def wheel_dealer() -> DeviceDealer:
    results: dict[str, str | int] = {str(n): str(n) for n in range(37)}
    return DeviceDealer("t", {"wheel": "w", "dealer_console": "c"}, wheel_results=results, settings=SETTINGS)  # fmt: skip  # noqa: E501


def test_the_clapper_between_sections_spins_again() -> None:
    """619a.2(d) (and 617a.6 for a ball that does not drop): restart, then the result."""
    dealer = wheel_dealer()
    assert sent(dealer.ask("t.1", SpinRequest("roulette"), None, 0)) == [StartSpin(round="t.1", game=0)]  # fmt: skip  # noqa: E501
    out = dealer.receive("wheel", WheelWarning(round="t.1", warning="between_sections"), 1)
    assert sent(out) == [Restart(round="t.1", reason="between_sections")]
    out = dealer.receive("wheel", WheelResult(round="t.1", game=1, result="17"), 2)
    assert answers(out) == [rec.Spin(result="17", device="w", game=1)]


def test_no_spin_twice_voids_and_closes_the_table_until_reopened() -> None:
    """617a.6; then no round opens before a supervisor reopens the table."""
    dealer = wheel_dealer()
    dealer.ask("t.1", SpinRequest("roulette"), None, 0)
    assert isinstance(sent(dealer.tick(5))[0], Restart)
    (void,) = answers(dealer.tick(10))
    assert isinstance(void, Irregular) and "617a.6" in void.reason
    (hold,) = answers(dealer.ask("t.2", NewShoe(), None, 11))
    assert hold.options == ("reopen",)
    assert dealer.next_deadline() is None  # a closed table waits for staff, however long
    (decided,) = answers(dealer.receive("dealer_console", sign("reopen"), 500))
    assert decided.answer == VIRTUAL and decided.staff.action == "reopen"


def test_a_game_number_that_jumps_holds_the_result() -> None:
    dealer = wheel_dealer()
    dealer.ask("t.1", SpinRequest("roulette"), None, 0)
    dealer.receive("wheel", WheelResult(round="t.1", game=4, result="5"), 1)
    dealer.ask("t.2", SpinRequest("roulette"), None, 2)
    (hold,) = answers(dealer.receive("wheel", WheelResult(round="t.2", game=9, result="6"), 3))
    assert isinstance(hold, rec.Held) and "jumped from 4 to 9" in hold.reason
    (decided,) = answers(dealer.receive("dealer_console", sign("confirm"), 4))
    assert decided.answer == rec.Spin(result="6", device="w", game=9)


def reader_dealer() -> DeviceDealer:
    lights = {"blue": "small", "red": "medium", "yellow": "large"}
    return DeviceDealer("t", {"hole_card_reader": "r", "dealer_console": "c"}, lights=lights, settings=SETTINGS)  # fmt: skip  # noqa: E501


def test_the_reader_lamp_gives_the_hole_cards_range() -> None:
    """685a.7(h): the lamp's colour, mapped by the table's lights."""
    dealer = reader_dealer()
    assert sent(dealer.ask("t.1", HoleRangeRequest(), "QS", 0)) == [Arm(round="t.1", card="QS")]
    out = dealer.receive("hole_card_reader", HoleLamp(round="t.1", lamp="yellow"), 1)
    assert answers(out) == [rec.HoleRangeRead(range="large", device="r", lamp="yellow")]


def test_a_wrong_lamp_lets_the_dealer_continue_and_closes_the_table() -> None:
    """685a.12(h): continue (the card's true range) or dead; 685a.12(i): closed until
    repaired."""
    dealer = reader_dealer()
    dealer.ask("t.1", HoleRangeRequest(), "3C", 0)
    (hold,) = answers(dealer.receive("hole_card_reader", HoleLamp(round="t.1", lamp="red"), 1))
    assert hold.options == ("continue", "dead") and "685a.12(h)" in hold.reason
    (decided,) = answers(dealer.receive("dealer_console", sign("continue"), 2))
    assert decided.answer == rec.HoleRangeRead(range="small", device="r", lamp="red")
    (closed,) = answers(dealer.ask("t.2", NewShoe(), None, 3))
    assert isinstance(closed, rec.Held) and "685a.12(i)" in closed.reason


def test_no_lamp_voids_the_round() -> None:
    """685a.12(i): no decision is ever offered without the range."""
    dealer = reader_dealer()
    dealer.ask("t.1", HoleRangeRequest(), "3C", 0)
    (void,) = answers(dealer.receive("hole_card_reader", HoleLamp(round="t.1", lamp="none"), 1))
    assert isinstance(void, Irregular) and "685a.12(i)" in void.reason


def test_a_stop_voids_the_round_waiting_for_a_device() -> None:
    dealer = shoe_dealer()
    dealing(dealer)
    dealer.ask("t.1", CardRequest("player"), None, 1)
    (void,) = answers(dealer.stop())
    assert void == Irregular("the table was stopped")


def test_a_door_open_suspends_the_round_until_it_is_closed() -> None:
    """Notes §2.3, "door open → cease play": the card awaited is held (a card read meanwhile
    waits); once the shoe reports the door closed it is asked again and the round goes on."""
    dealer = shoe_dealer()
    dealing(dealer)
    dealer.ask("t.1", CardRequest("player"), None, 1)
    (hold,) = answers(dealer.receive("card_source", DeviceFault(code="door_open"), 1))
    assert isinstance(hold, rec.Held) and hold.options == ("void",)
    assert "shoe reports door_open" in hold.reason
    assert answers(dealer.receive("card_source", CardRead(card="9H", count=1, round="t.1"), 2)) == []  # fmt: skip  # noqa: E501
    assert answers(dealer.tick(30)) == []  # a suspension is not "no card in time"
    out = dealer.receive("card_source", DeviceFault(code="door_open", cleared=True), 40)
    assert not any(isinstance(m, ExpectCards) for m in sent(out))  # the card is out already
    assert answers(out) == [rec.CardDrawn(card="9H", target="player", device="shoe", count=1)]


def test_no_round_opens_while_a_device_reports_a_tilt() -> None:
    """A fault between rounds: the next round waits, however long, until it clears."""
    dealer = wheel_dealer()
    dealer.receive("wheel", DeviceFault(code="tilt"), 0)
    (hold,) = answers(dealer.ask("t.1", NewShoe(), None, 1))
    assert isinstance(hold, rec.Held) and hold.options == () and "w reports tilt" in hold.reason
    assert dealer.next_deadline() is None
    refused = sent(dealer.receive("dealer_console", sign("reopen"), 2))
    assert refused[0].text.startswith("refused")  # staff cannot override the device
    (opened,) = answers(dealer.receive("wheel", DeviceFault(code="tilt", cleared=True), 500))
    assert opened == VIRTUAL


def test_a_tilt_during_a_spin_voids_it_if_staff_say_so() -> None:
    """A result the wheel reports while tilted is never used; staff may void the round."""
    dealer = wheel_dealer()
    dealer.ask("t.1", SpinRequest("roulette"), None, 0)
    dealer.receive("wheel", DeviceFault(code="tilt"), 1)
    assert answers(dealer.receive("wheel", WheelResult(round="t.1", game=0, result="5"), 2)) == []  # fmt: skip  # noqa: E501
    (decided,) = answers(dealer.receive("dealer_console", sign("void"), 3))
    assert isinstance(decided.answer, Irregular) and "tilt" in decided.answer.reason
    assert decided.staff.action == "void"


def test_a_suspension_nobody_clears_voids_the_round() -> None:
    dealer = reader_dealer()
    dealer.ask("t.1", HoleRangeRequest(), "3C", 0)
    dealer.receive("hole_card_reader", DeviceFault(code="door_open"), 1)
    (void,) = answers(dealer.tick(1 + SETTINGS.hold_seconds))
    assert isinstance(void, Irregular) and "door_open" in void.reason


def test_a_fault_cleared_mid_spin_spins_again() -> None:
    dealer = wheel_dealer()
    dealer.ask("t.1", SpinRequest("roulette"), None, 0)
    dealer.receive("wheel", DeviceFault(code="tilt"), 1)
    dealer.receive("wheel", WheelResult(round="t.1", game=0, result="5"), 1.5)  # not used
    out = dealer.receive("wheel", DeviceFault(code="tilt", cleared=True), 2)
    assert sent(out)[-1] == StartSpin(round="t.1", game=1)
    (spin,) = answers(dealer.receive("wheel", WheelResult(round="t.1", game=1, result="7"), 3))
    assert spin == rec.Spin(result="7", device="w", game=1)


def test_a_console_fault_does_not_stop_the_table() -> None:
    dealer = shoe_dealer()
    dealing(dealer)
    dealer.ask("t.1", CardRequest("player"), None, 1)
    assert answers(dealer.receive("dealer_console", DeviceFault(code="tilt"), 1)) == []
    out = dealer.receive("card_source", CardRead(card="9H", count=1, round="t.1"), 2)
    assert answers(out)[0].card == "9H"


def test_a_reopen_before_the_next_round_is_journaled_with_it() -> None:
    """Who reopened a closed table is journaled in the round it lets open."""
    dealer = wheel_dealer()
    dealer.ask("t.1", SpinRequest("roulette"), None, 0)
    dealer.tick(5)
    dealer.tick(10)  # void: out of order
    dealer.receive("dealer_console", sign("reopen"), 11)
    (opened,) = answers(dealer.ask("t.2", NewShoe(), None, 12))
    assert isinstance(opened, Decided) and opened.answer == VIRTUAL
    assert (opened.staff.action, opened.staff.dealer, opened.staff.supervisor) == ("reopen", "dana", "sam")  # fmt: skip  # noqa: E501
    assert answers(dealer.ask("t.3", NewShoe(), None, 20)) == [VIRTUAL]  # once


def test_the_dealer_alone_calls_no_more_bets() -> None:
    dealer = shoe_dealer()
    dealing(dealer)
    out = dealer.receive("dealer_console", sign("no_more_bets", supervisor=""), 1)
    (action,) = [item for item in out if isinstance(item, TableAction)]
    assert (action.staff.action, action.staff.dealer) == ("no_more_bets", "dana")
    refused = dealer.receive("dealer_console", sign("no_more_bets", dealer=" ", supervisor=""), 1)  # fmt: skip  # noqa: E501
    assert sent(refused)[0].text == "refused: the dealer signs no more bets"


def test_a_void_outside_a_hold_voids_the_round_in_play() -> None:
    """A correction: while the round waits on the shoe, the void answers the wait; in betting
    or decisions it goes to the table. Two people sign, as for any void."""
    dealer = shoe_dealer()
    dealing(dealer)
    (action,) = [i for i in dealer.receive("dealer_console", sign("void"), 1) if isinstance(i, TableAction)]  # fmt: skip  # noqa: E501
    assert (action.staff.action, action.staff.supervisor) == ("void", "sam")
    dealer.ask("t.1", CardRequest("player"), None, 2)
    (decided,) = answers(dealer.receive("dealer_console", sign("void"), 3))
    assert isinstance(decided.answer, Irregular) and "dana and sam" in decided.answer.reason
    alone = dealer.receive("dealer_console", sign("void", supervisor="dana"), 4)
    assert sent(alone)[0].text.startswith("refused: a dealer and a supervisor")


def test_a_request_after_the_stop_is_answered_at_once() -> None:
    """The core may ask again between the stop and its own Stop (it was journaling the last
    card): the devices may be gone, so nothing is asked of them and the round is voided."""
    dealer = shoe_dealer()
    dealing(dealer)
    dealer.ask("t.1", CardRequest("player"), None, 1)
    dealer.receive("card_source", CardRead(card="9H", count=1, round="t.1"), 1)
    assert dealer.stop() == []  # nothing pending: the card was answered
    out = dealer.ask("t.1", CardRequest("banker"), None, 2)
    assert sent(out) == [] and answers(out) == [Irregular("the table was stopped")]
    assert answers(dealer.ask("t.2", NewShoe(), None, 3)) == [None]  # opens to be voided
