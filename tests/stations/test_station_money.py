"""Player stations' money, end to end (docs/electronic-tables.md): a real server, station
agents on real TCP, touchscreens on real WebSockets. Bills become credits, the station bets
Banker and Lucky Nines, cashes out on a ticket redeemed at another station; handpays,
expired, altered, forged and twice-redeemed tickets, a printer that fails, a swapped
station. After each, the ledger and the meters agree to the cent."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import connect

from server.cli.main import main
from server.devices.simulator import DeviceRefused
from server.devices.station_simulator import StationSimulator
from server.protocol.codec import decode_server, encode
from server.protocol.messages import (
    PROTOCOL_VERSION,
    AttendantAction,
    BetAccepted,
    CashedOut,
    CashOut,
    Hello,
    PlaceBet,
    StationStatus,
    Winners,
)
from server.stations import cashier, tickets
from server.stations import service as stations_service
from server.stores import StorageError
from server.wallet.ledger import Transfer
from tests.devices.test_device_tables import synchronously
from tests.stations.floor import (
    KEYS,
    assert_reconciles,
    config,
    credits,
    join,
    refused,
    running,
    screen,
    stations,
    ticket_for_a_bill,
    until,
)


@synchronously
async def test_bill_in_bets_cash_out_and_the_ticket_redeemed_at_another_station(tmp_path: Path) -> None:  # fmt: skip  # noqa: E501
    async with running(tmp_path) as service, stations(service, "s1", "s2") as (s1, s2):
        assert (await s1.insert_bill(5_000)).accept
        assert (await s1.insert_bill(2_000)).accept
        assert await until(lambda: credits(service, "s1") == 7_000)
        touchscreen = screen(service, s1.screen_token)
        async with touchscreen as touch, screen(service, name="Watcher") as watcher:
            assert await until(lambda: touch.last(StationStatus) is not None)
            assert await until(lambda: touch.station().credits == 7_000)
            assert touch.station().enabled and touch.station().seat == 1
            await join(touch)
            await join(watcher, role="spectator")
            # Both bets in the same betting window: sent together, whatever the machine's speed.
            banker, lucky = await touch.bets("lucky", ("banker", 1_000, "b1"), ("lucky_nines", 500, "l9"))  # fmt: skip  # noqa: E501
            assert isinstance(banker, BetAccepted), banker
            assert isinstance(lucky, BetAccepted), lucky
            round_id = banker.round
            assert await until(lambda: touch.ended(round_id), 10)
            # The main display's "last winners" of this round (the rounds before had theirs):
            # seats and net wins, never a player. It comes once the round is journaled.
            assert await until(lambda: winners_of(watcher, round_id) is not None, 10)
            winners = winners_of(watcher, round_id)
            after_round = credits(service, "s1")
            won = after_round - 7_000
            assert winners.wins == ([{"seat": 1, "amount": won}] if won > 0 else [])
            assert await until(lambda: touch.station().credits == after_round)
            ticket = await touch.ask(CashOut())
            assert isinstance(ticket, CashedOut) and ticket.amount == after_round
            assert tickets.check(service.casino.stations.ticket_key, ticket.validation)
        assert await until(lambda: len(s1.printed) == 1)
        assert s1.printed[0].validation == ticket.validation and s1.printed[0].amount == after_round  # fmt: skip  # noqa: E501
        assert credits(service, "s1") == 0
        verdict = await s2.insert_ticket(ticket.validation, ticket.amount)
        assert verdict.accept and verdict.amount == after_round
        assert await until(lambda: credits(service, "s2") == after_round)
        # The same ticket again, at the first station, once its redemption is complete (the
        # credit is posted just before the ticket's row says so; until then it is held for
        # s2, a refusal of its own): refused as redeemed; nothing moves.
        assert await until(lambda: service.stations_store.ticket(ticket.validation).status == "redeemed")  # type: ignore[union-attr]  # fmt: skip  # noqa: E501
        again = await s1.insert_ticket(ticket.validation, ticket.amount)
        assert not again.accept and again.reason == "this ticket was redeemed already", again
        assert credits(service, "s1") == 0 and credits(service, "s2") == after_round
        await service.casino.stations.drain()
        assert_reconciles(service, "s1", "s2")
        refusals = [e for e in service.stations_store.logged("s1") if e["event"].startswith("ticket_refused")]  # fmt: skip  # noqa: E501
        assert [e["event"] for e in refusals] == ["ticket_refused:redeemed"], refusals
        meters = service.stations_store.load("s1").meters
        assert meters["bills_in"] == {"2000": 1, "5000": 1} and meters["credits_in"] == 7_000
        assert meters["tickets_out"] == 1 and meters["tickets_out_amount"] == after_round
        assert meters["games_played"] == 1 and meters["wagered"] == 1_500
        assert service.stations_store.load("s2").meters["tickets_in_amount"] == after_round
    # The operator's command agrees, on the data directory the server left.
    assert main(["meters", "s1", "s2", "--data-dir", str(tmp_path / "data")]) == 0


def winners_of(screen: Any, round_id: str) -> Winners | None:
    """The ``Winners`` of that round the screen received, if it did."""
    return next((m for m in screen.received if isinstance(m, Winners) and m.round == round_id), None)  # fmt: skip  # noqa: E501


@synchronously
async def test_a_win_above_the_handpay_limit_locks_the_station_until_an_attendant_pays_it(
    tmp_path: Path,
) -> None:
    # Player and Banker both: every round pays at least 1,000 back (a tie pushes both).
    text = config(handpay_limit=999)
    async with running(tmp_path, text) as service, stations(service, "s1") as (s1,):
        assert (await s1.insert_bill(5_000)).accept
        async with screen(service, s1.screen_token) as touch:
            await join(touch)
            banker, player = await touch.bets("lucky", ("banker", 1_000, "b"), ("player", 1_000, "p"))  # fmt: skip  # noqa: E501
            assert isinstance(banker, BetAccepted) and isinstance(player, BetAccepted), (banker, player)  # fmt: skip  # noqa: E501
            round_id = banker.round
            assert await until(lambda: touch.ended(round_id), 10)
            assert await until(lambda: touch.station().handpay is not None)
            handpay = touch.station().handpay
            paid = credits(service, "s1") - 3_000
            assert handpay == {"amount": paid, "kind": "jackpot", "round": round_id}
            assert not touch.station().enabled
            next_bet = await touch.bet("lucky", "banker", 1_000, "next")
            assert refused(next_bet, "station_locked"), next_bet
            no_key = await touch.ask(AttendantAction(action="handpay"))
            assert refused(no_key, "attendant_key_required"), no_key
            s1.turn_key("att-3")
            assert await until(lambda: touch.station().attendant == "att-3")
            done = await touch.ask(AttendantAction(action="handpay"))
            assert isinstance(done, StationStatus) and done.handpay is None and done.enabled
            assert done.credits == 3_000  # the handpay left the credits, in cash
        await service.casino.stations.drain()
        meters = service.stations_store.load("s1").meters
        assert (meters["handpays"], meters["handpays_amount"]) == (1, paid)
        assert meters["credits_out"] == paid
        paid_by = [e for e in service.stations_store.logged("s1") if e["event"] == "handpay_paid"]
        assert paid_by[-1]["actor"] == "att-3"
        assert_reconciles(service, "s1")


@synchronously
async def test_a_cash_out_above_the_ticket_limit_is_paid_by_hand(tmp_path: Path) -> None:
    text = config(ticket_limit=4_000)
    async with running(tmp_path, text) as service, stations(service, "s1") as (s1,):
        assert (await s1.insert_bill(5_000)).accept
        async with screen(service, s1.screen_token) as touch:
            assert await until(lambda: touch.last(StationStatus) is not None)
            status = await touch.ask(CashOut())
            assert isinstance(status, StationStatus), status
            assert status.handpay == {"amount": 5_000, "kind": "cancelled_credits", "round": ""}
            assert s1.printed == []
            s1.turn_key("att-1")
            assert await until(lambda: touch.station().attendant == "att-1")
            done = await touch.ask(AttendantAction(action="handpay"))
            assert isinstance(done, StationStatus) and done.credits == 0 and done.enabled
        await service.casino.stations.drain()
        meters = service.stations_store.load("s1").meters
        assert (meters["cancelled_credits"], meters["cancelled_credits_amount"]) == (1, 5_000)
        assert_reconciles(service, "s1")


@synchronously
async def test_expired_altered_forged_and_reused_tickets_are_refused_at_a_station(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Tickets expire a second after their issue here. The refusals before that are of
    # tickets forged or altered, which no expiry changes (they are checked first).
    text = config(ticket_expiry_days=1 / 86_400)
    async with running(tmp_path, text) as service, stations(service, "s1", "s2") as (s1, s2):
        assert (await s1.insert_bill(2_000)).accept
        async with screen(service, s1.screen_token) as touch:
            assert await until(lambda: touch.last(StationStatus) is not None)
            first = await touch.ask(CashOut())
            assert isinstance(first, CashedOut)
        key = service.casino.stations.ticket_key
        forged = tickets.new_validation(b"another casino's key, 32 bytes!")
        digit = str((int(first.validation[5]) + 1) % 10)
        misprinted = first.validation[:5] + digit + first.validation[6:]
        refusals = {
            "forged": await s2.insert_ticket(forged, 2_000),
            "unknown": await s2.insert_ticket(tickets.new_validation(key), 2_000),
            "altered digit": await s2.insert_ticket(misprinted, 2_000),
            "altered amount": await s2.insert_ticket(first.validation, 20_000),
        }
        for what, verdict in refusals.items():
            assert not verdict.accept, what
        assert credits(service, "s2") == 0
        issued = service.stations_store.ticket(first.validation)
        assert issued is not None
        await asyncio.sleep(max(0.0, issued.expires_at - time.time()) + 0.1)
        expired = await s2.insert_ticket(first.validation, 2_000)
        assert not expired.accept and "expired" in expired.reason
        assert credits(service, "s2") == 0
        await service.casino.stations.drain()
        events = [e["event"] for e in service.stations_store.logged()]
        assert events.count("ticket_refused:forged") == 3
        assert "ticket_refused:altered" in events and "ticket_refused:expired" in events
        assert_reconciles(service, "s1", "s2")
    # The cashier's list shows it expired (and nothing else is).
    capsys.readouterr()
    assert main(["tickets", "list", "--status", "expired", "--data-dir", str(tmp_path / "data")]) == 0  # fmt: skip  # noqa: E501
    listed = capsys.readouterr().out.splitlines()
    assert len(listed) == 1 and listed[0].startswith(first.validation) and " expired " in listed[0]


@synchronously
async def test_a_ticket_the_printer_cannot_print_goes_back_to_the_credits(tmp_path: Path) -> None:
    async with running(tmp_path) as service, stations(service, "s1", printer_fail=True) as (s1,):
        assert (await s1.insert_bill(1_000)).accept
        async with screen(service, s1.screen_token) as touch:
            assert await until(lambda: touch.last(StationStatus) is not None)
            ticket = await touch.ask(CashOut())
            assert isinstance(ticket, CashedOut)
            assert await until(lambda: credits(service, "s1") == 1_000)
            assert await until(lambda: touch.station().credits == 1_000)
        stored = service.stations_store.ticket(ticket.validation)
        assert stored is not None and stored.status == "voided"
        await service.casino.stations.drain()
        meters = service.stations_store.load("s1").meters
        assert meters["tickets_voided"] == 1 and meters["tickets_out"] == 1
        assert_reconciles(service, "s1")


@synchronously
async def test_bills_the_validators_do_not_take_are_returned(tmp_path: Path) -> None:
    async with running(tmp_path) as service, stations(service, "s1") as (s1,):
        verdict = await s1.insert_bill(300)
        assert not verdict.accept and "not accepted" in verdict.reason
        assert credits(service, "s1") == 0


@synchronously
async def test_a_swapped_or_unknown_station_is_refused(tmp_path: Path) -> None:
    """The same station id with another key (a swapped or cloned cabinet), and a station the
    server does not know: refused at the hello, counted."""
    async with running(tmp_path) as service:
        port = service.devices.port
        swapped = ("s1", KEYS["s2"], "unauthenticated")
        for device_id, key, code in (swapped, ("s9", KEYS["s1"], "unknown_device")):
            station = StationSimulator(device_id, bytes.fromhex(key), "127.0.0.1", port)
            try:
                await asyncio.wait_for(station.run(), 5)
                raise AssertionError("the station was accepted")
            except DeviceRefused as exc:
                assert exc.code == code
        assert service.devices.refused == {"unauthenticated": 1, "unknown_device": 1}
        assert not service.casino.stations.stations["s1"].up


@synchronously
async def test_a_table_with_stations_seats_its_stations_only(tmp_path: Path) -> None:
    async with running(tmp_path) as service, stations(service, "s1") as (s1,):
        async with screen(service, name="Ann") as ann:
            answer = await join(ann)
            assert refused(answer, "stations_only"), answer
            assert not refused(await join(ann, role="spectator"), "stations_only")
            round_id = await ann.open_round("lucky")
            bet = PlaceBet(table="lucky", round=round_id, bet_id="x", spot="banker", amount=100)
            assert refused(await ann.ask(bet), "stations_only")
            assert refused(await ann.ask(CashOut()), "not_a_station")
        # A token from the station's earlier session is refused once it starts a new one.
        old = s1.screen_token
        s1.power_loss()
        assert await until(lambda: s1.screen_token != old, 8)
        async with connect(f"ws://127.0.0.1:{service.port}/ws") as ws:
            await ws.send(encode(Hello(version=PROTOCOL_VERSION, token=old)))
            answer = decode_server(await ws.recv())  # type: ignore[arg-type]
            assert refused(answer, "bad_token"), answer


@synchronously
async def test_a_ticket_is_credited_only_once_stacked_and_held_for_its_station_meanwhile(
    tmp_path: Path,
) -> None:
    """The reader of s2 jams and gives the ticket back: nothing is credited and the ticket is
    good again. While a reader holds a ticket, nobody else may redeem it."""
    async with running(tmp_path) as service, stations(service, "s1", "s2") as (s1, s2):
        ticket = await ticket_for_a_bill(service, s1, 1_000)
        s2.stack_fail = True
        jammed = await s2.insert_ticket(ticket.validation, 1_000)
        assert jammed.accept  # good, but the stacker jammed: the ticket went back
        assert await until(
            lambda: service.stations_store.ticket(ticket.validation).status == "issued"
        )
        assert credits(service, "s2") == 0
        # Held by one reader, refused at the cashier; stacked, credited once.
        store, key = service.stations_store, service.casino.stations.ticket_key
        held = cashier.hold(store, service.ledger, key, ticket.validation, station="s2", amount=1_000)  # fmt: skip  # noqa: E501
        assert not isinstance(held, cashier.Refusal)
        at_cage = cashier.redeem(store, service.ledger, key, ticket.validation, destination=cashier.CASHIER, by="cage")  # fmt: skip  # noqa: E501
        assert isinstance(at_cage, cashier.Refusal) and at_cage.code == "held"
        store.write(store.release_ticket(ticket.validation, "s2"))
        s2.stack_fail = False
        assert (await s2.insert_ticket(ticket.validation, 1_000)).accept
        assert await until(lambda: credits(service, "s2") == 1_000)
        await service.casino.stations.drain()
        assert_reconciles(service, "s1", "s2")


@synchronously
async def test_a_ticket_whose_redemption_is_posted_reads_redeemed_before_its_row_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A redemption posts its ledger batch, then closes the ticket's row in the stations'
    store (a second store: the ledger may be PostgreSQL). A reader between the two commits
    is told the ticket was redeemed already — never that it is being redeemed elsewhere —
    and the cashier's command says the same."""
    async with running(tmp_path) as service, stations(service, "s1", "s2") as (s1, s2):
        ticket = await ticket_for_a_bill(service, s1, 1_000)
        store, v = service.stations_store, ticket.validation
        # The cage's redemption, between its two commits: its reader held the ticket, the
        # money has moved, the row still says held.
        assert store.write(store.hold_ticket(v, "cage"))
        moved = Transfer(cashier.TICKETS_OUTSTANDING, cashier.CASHIER, 1_000, "ticket_cashier")
        assert service.ledger.post(f"redeem:{v}", [moved]).applied
        assert store.ticket(v).status == "held"
        verdict = await s2.insert_ticket(v, 1_000)
        assert not verdict.accept
        assert verdict.reason == "this ticket was redeemed already"
        assert credits(service, "s2") == 0
        await service.casino.stations.drain()
    data = str(tmp_path / "data")
    capsys.readouterr()
    assert main(["tickets", "redeem", v, "--by", "cashier-7", "--data-dir", data]) == 1
    assert main(["tickets", "void", v, "--reason", "torn", "--by", "cashier-7", "--data-dir", data]) == 1  # fmt: skip  # noqa: E501
    printed = capsys.readouterr().err.splitlines()
    assert printed == ["refused (redeemed): this ticket was redeemed already"] * 2


@synchronously
async def test_the_cashier_pays_one_ticket_and_voids_another_beside_the_running_server(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``croupier tickets redeem`` and ``void`` (docs/electronic-tables.md, "Tickets"), run
    while the server runs: the paid ticket's value reaches the cage, the voided one's
    ``tickets:voided``; each is refused at a station afterwards, and a second redeem or void
    exits 1 with the reason."""
    data = str(tmp_path / "data")

    async def cashier_says(*args: str) -> tuple[int, str, str]:
        code = await asyncio.to_thread(main, ["tickets", *args, "--by", "cashier-7", "--data-dir", data])  # fmt: skip  # noqa: E501
        printed = capsys.readouterr()
        return code, printed.out, printed.err

    async with running(tmp_path) as service, stations(service, "s1", "s2") as (s1, s2):
        paid = (await ticket_for_a_bill(service, s1, 1_000)).validation
        torn = (await ticket_for_a_bill(service, s1, 2_000)).validation
        capsys.readouterr()
        assert await cashier_says("redeem", paid) == (0, f"{paid}: paid 1000 (issued by s1)\n", "")
        assert await cashier_says("void", torn, "--reason", "torn") == (0, f"{torn}: voided 2000 (issued by s1)\n", "")  # fmt: skip  # noqa: E501
        assert service.ledger.balance(cashier.CASHIER) == 1_000
        assert service.ledger.balance(cashier.TICKETS_VOIDED) == 2_000
        assert service.ledger.balance(cashier.TICKETS_OUTSTANDING) == 0
        again = await cashier_says("redeem", paid)
        assert again == (1, "", "refused (redeemed): this ticket was redeemed already\n")
        assert await cashier_says("void", torn, "--reason", "x") == (1, "", "refused (voided): this ticket is voided\n")  # fmt: skip  # noqa: E501
        assert await cashier_says("redeem", torn) == (1, "", "refused (voided): this ticket was voided\n")  # fmt: skip  # noqa: E501
        for validation, amount, why in ((paid, 1_000, "redeemed already"), (torn, 2_000, "voided")):
            verdict = await s2.insert_ticket(validation, amount)
            assert not verdict.accept and why in verdict.reason, verdict
        assert credits(service, "s2") == 0
        await service.casino.stations.drain()
        assert_reconciles(service, "s1", "s2")


@synchronously
async def test_no_cash_out_while_a_round_the_station_bet_in_is_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Winnings above the handpay limit must not leave on a ticket: a cash-out waits for the
    station's round to end, and is refused while it still takes bets."""
    # The server waits CASH_OUT_WAIT_STEPS tenths of a second for the round to end before it
    # refuses; for the refusal, 3 tenths, ten times within the 3-second betting window.
    slow = config().replace("betting_seconds = 0.8", "betting_seconds = 3")
    async with running(tmp_path, slow) as service, stations(service, "s1") as (s1,):
        assert (await s1.insert_bill(5_000)).accept
        async with screen(service, s1.screen_token) as touch:
            await join(touch)
            bet = await touch.bet("lucky", "banker", 1_000, "b")
            assert isinstance(bet, BetAccepted), bet
            with monkeypatch.context() as patched:
                patched.setattr(stations_service, "CASH_OUT_WAIT_STEPS", 3)
                early = await touch.ask(CashOut())
            assert refused(early, "round_in_play"), early
            assert not touch.ended(bet.round)
            assert await until(lambda: touch.ended(bet.round), 15)
            ticket = await touch.ask(CashOut())  # at once: it waits for the round's end
            assert isinstance(ticket, CashedOut), ticket
            assert ticket.amount >= 4_000 and credits(service, "s1") == 0
        await service.casino.stations.drain()
        assert_reconciles(service, "s1")


@synchronously
async def test_a_bill_the_ledger_could_not_take_is_credited_when_the_station_says_it_again(
    tmp_path: Path,
) -> None:
    """The link acknowledged ``bill_stacked`` but the ledger failed: the station, never told
    ``bill_credited``, says it again after its next welcome, and the bill is credited once."""
    async with running(tmp_path) as service, stations(service, "s1") as (s1,):
        ledger = service.ledger
        real = ledger.apost
        failures = []

        async def failing_once(key: str, transfers: Any) -> Any:
            if key.startswith("bill:") and not failures:
                failures.append(key)
                raise StorageError("disk full (simulated)")
            return await real(key, transfers)

        ledger.apost = failing_once  # type: ignore[method-assign]
        assert (await s1.insert_bill(5_000)).accept
        assert await until(lambda: failures and s1.uncredited_bills == {1: 5_000})
        assert credits(service, "s1") == 0
        s1.disconnect()  # it reconnects, resumes its session and says the bill again
        assert await until(lambda: not s1.uncredited_bills, 8)
        assert credits(service, "s1") == 5_000
        # Again: nothing is credited twice. (Waited for until the station is back on a new
        # connection: just after the disconnect, the old one may still look up.)
        channel = service.devices.channels["s1"]
        before = channel.connections
        s1.disconnect()
        assert await until(lambda: channel.connections > before and s1.connected.is_set() and service.casino.stations.stations["s1"].up, 8)  # fmt: skip  # noqa: E501
        await service.casino.stations.drain()
        assert credits(service, "s1") == 5_000
        assert service.stations_store.load("s1").meters["bills_in"] == {"5000": 1}
        assert_reconciles(service, "s1")


@synchronously
async def test_a_ticket_never_printed_is_printed_when_the_station_is_back(tmp_path: Path) -> None:
    """The cash-out was debited while the station's link was failing, and the server
    restarted before the station printed it: the station is asked again when it returns,
    and prints it once."""
    async with running(tmp_path) as service, stations(service, "s1", tmp=tmp_path) as (s1,):
        assert (await s1.insert_bill(2_000)).accept
        async with screen(service, s1.screen_token) as touch:
            assert await until(lambda: touch.last(StationStatus) is not None)
            s1.go_silent()  # frozen: the print command waits in the link's queue
            ticket = await touch.ask(CashOut())
            assert isinstance(ticket, CashedOut) and ticket.amount == 2_000
        assert s1.printed == []
    async with running(tmp_path) as service, stations(service, "s1", tmp=tmp_path) as (s1,):
        assert await until(lambda: s1.printed != [], 8)
        assert [t.validation for t in s1.printed] == [ticket.validation]
        assert await until(lambda: service.stations_store.ticket(ticket.validation).printed)  # type: ignore[union-attr]
        await service.casino.stations.drain()
        assert_reconciles(service, "s1")


@synchronously
async def test_a_station_bets_at_its_own_tables_only_and_sits_at_its_own_seat(tmp_path: Path) -> None:  # fmt: skip  # noqa: E501
    text = config() + PLAIN_TABLE
    async with running(tmp_path, text) as service, stations(service, "s1", "s2") as (s1, s2):
        assert (await s1.insert_bill(5_000)).accept
        async with screen(service, s2.screen_token) as two, screen(service, s1.screen_token) as one:
            joined = await join(two)  # s2 first: it still sits at its seat, 2
            assert joined.snapshot.seat == 2
            assert (await join(one)).snapshot.seat == 1
            elsewhere = await join(one, table="plain")
            assert refused(elsewhere, "stations_only"), elsewhere
            # Watching is allowed; betting the station's credits there is not.
            assert not refused(await join(one, table="plain", role="spectator"), "stations_only")
            round_id = await one.open_round("plain")
            bet = PlaceBet(table="plain", round=round_id, bet_id="x", spot="banker", amount=100)
            assert refused(await one.ask(bet), "stations_only")
        assert credits(service, "s1") == 5_000


PLAIN_TABLE = """
[[tables]]
id = "plain"
name = "Baccarat"
game = "baccarat"
betting_seconds = 0.8
pause_seconds = 0.2
"""
