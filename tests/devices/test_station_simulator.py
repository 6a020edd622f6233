"""The simulated player-station agent (``server.devices.station_simulator``,
``croupier device simulate --role station``) against the real ``DeviceHub`` over loopback TCP:
its hello is accepted and its self-test arrives; bills go escrow → verdict → stacked or
returned, each verdict reaching its own bill; tickets in and out (printed to a directory, or
failing); doors, tilt, attendant key, player card, memory; a station gone silent is found by
the hub's silence limit; its non-volatile memory resumes its session and its bill count. A
small listener plays the server's station service (it answers bills and tickets)."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import sys
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest

from server.cli.main import main
from server.devices.handshake import KnownDevice
from server.devices.hub import DeviceHub
from server.devices.messages import (
    AttendantKey,
    BillCredited,
    BillEscrow,
    BillReturned,
    BillStacked,
    BillVerdict,
    CardIn,
    CardOut,
    DeviceFault,
    PrintTicket,
    Screen,
    SelfTest,
    StationState,
    TicketCredited,
    TicketIn,
    TicketPrinted,
    TicketPrintFailed,
    TicketReturned,
    TicketStacked,
    TicketVerdict,
)
from server.devices.station_simulator import StationScript, StationSimulator, play_script

KEY = bytes.fromhex("5a" * 16)
GOOD = "123456789012345678"  # a ticket the listener redeems, once
TICKET = PrintTicket(
    validation="987654321098765432",
    amount=1250,
    issued_at="2025-01-01T12:00:00Z",
    expires_at="2025-04-01T12:00:00Z",
    station="s1",
)


def synchronously(test: Callable[..., Coroutine[Any, Any, None]]) -> Callable[..., None]:
    @functools.wraps(test)
    def run(*args: Any, **kwargs: Any) -> None:
        asyncio.run(test(*args, **kwargs))

    return run


async def until(condition: Callable[[], object], seconds: float = 5.0) -> None:
    """Poll every 20 ms until ``condition()`` holds or ``seconds`` pass (the caller asserts)."""
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        await asyncio.sleep(0.02)


class Service:
    """The server's side of a station, small: every message kept; bills of ``accepted``
    amounts accepted, ``GOOD`` redeemed once (unless ``answer`` is off: the test answers);
    the link's ups and downs kept (``device_link``); ``on_up`` called at each."""

    def __init__(self, hub: DeviceHub, accepted: tuple[int, ...] = (2000, 5000)) -> None:
        self.hub, self.accepted = hub, accepted
        self.messages: list[Any] = []
        self.links: list[tuple[bool, str]] = []
        self.answer = True
        self.credit = True  # confirm stacked bills and tickets credited (as the server does)
        self.redeemed: set[str] = set()
        self.on_up: Callable[[], None] = lambda: None
        self.on_down: Callable[[], None] = lambda: None

    def device_message(self, role: str, message: Any) -> None:
        assert role == "station"
        self.messages.append(message)
        if not self.answer:
            return
        if isinstance(message, BillStacked) and self.credit:
            self.hub.send("s1", BillCredited(bill=message.bill))
        elif isinstance(message, TicketStacked) and self.credit:
            self.hub.send("s1", TicketCredited(validation=message.validation))
        elif isinstance(message, BillEscrow):
            ok = message.amount in self.accepted
            reason = "" if ok else f"bills of {message.amount} are not accepted"
            self.hub.send("s1", BillVerdict(bill=message.bill, accept=ok, reason=reason))
        elif isinstance(message, TicketIn):
            if message.validation == GOOD and GOOD not in self.redeemed:
                self.redeemed.add(GOOD)
                verdict = TicketVerdict(validation=GOOD, accept=True, amount=message.amount)
            else:
                verdict = TicketVerdict(
                    validation=message.validation, accept=False, reason="unknown or redeemed"
                )
            self.hub.send("s1", verdict)

    def device_link(self, up: bool, cause: str, session: int | None) -> None:
        self.links.append((up, cause))
        if up:
            self.on_up()
        else:
            self.on_down()

    def of(self, kind: type) -> list[Any]:
        return [m for m in self.messages if isinstance(m, kind)]


@contextlib.asynccontextmanager
async def hub_with_service(**timing: float) -> AsyncIterator[tuple[DeviceHub, Service]]:
    hub = DeviceHub([KnownDevice("s1", "station", KEY)], host="127.0.0.1", port=0, **timing)
    service = Service(hub)
    hub.attach("s1", "tbl", service)
    await hub.start()
    try:
        yield hub, service
    finally:
        await hub.stop()


@contextlib.asynccontextmanager
async def running(station: StationSimulator) -> AsyncIterator[StationSimulator]:
    stop = asyncio.Event()
    task = asyncio.create_task(station.run(stop))
    try:
        await asyncio.wait_for(station.connected.wait(), 5)
        yield station
    finally:
        station.wake()
        stop.set()
        await asyncio.wait_for(task, 5)


@contextlib.asynccontextmanager
async def station_at_hub(
    timing: dict[str, float] | None = None, **options: Any
) -> AsyncIterator[tuple[DeviceHub, Service, StationSimulator]]:
    async with hub_with_service(**(timing or {})) as (hub, service):
        station = StationSimulator("s1", KEY, "127.0.0.1", hub.port, **options)
        async with running(station):
            yield hub, service, station


@synchronously
async def test_its_hello_is_accepted_and_its_self_test_arrives() -> None:
    async with station_at_hub() as (hub, service, station):
        await until(lambda: service.of(SelfTest))
        channel = hub.channels["s1"]
        assert channel.up and channel.connections == 1
        assert channel.session == station.session
        assert service.links == [(True, "")]
        assert service.of(SelfTest) == [SelfTest(passed=True)]
        assert hub.refused == {}


@synchronously
async def test_a_failed_self_test_is_reported_after_every_welcome() -> None:
    async with station_at_hub(self_test_fail=True) as (hub, service, station):
        await until(lambda: service.of(SelfTest))
        station.disconnect()
        await until(lambda: len(service.of(SelfTest)) == 2)
        failed = SelfTest(passed=False, detail="simulated self-test failure")
        assert service.of(SelfTest) == [failed, failed]
        assert hub.channels["s1"].connections == 2
        assert hub.channels["s1"].session == station.session  # resumed, not a new session


@synchronously
async def test_bills_are_escrowed_then_stacked_or_returned_as_the_verdict_says() -> None:
    async with station_at_hub() as (_, service, station):
        accepted = await station.insert_bill(2000, timeout=5)
        refused = await station.insert_bill(1000, timeout=5)
        await until(lambda: service.of(BillStacked) and service.of(BillReturned))
        assert accepted == BillVerdict(bill=1, accept=True)
        assert refused == BillVerdict(bill=2, accept=False, reason="bills of 1000 are not accepted")  # fmt: skip  # noqa: E501
        assert service.of(BillEscrow) == [BillEscrow(bill=1, amount=2000), BillEscrow(bill=2, amount=1000)]  # fmt: skip  # noqa: E501
        assert service.of(BillStacked) == [BillStacked(bill=1, amount=2000)]
        assert service.of(BillReturned) == [BillReturned(bill=2)]
        assert station.verdicts == [accepted, refused]
        assert station.escrow == {}


@synchronously
async def test_verdicts_answered_out_of_order_reach_their_own_bills() -> None:
    async with station_at_hub() as (hub, service, station):
        service.answer = False
        waits = [asyncio.create_task(station.insert_bill(a, timeout=5)) for a in (2000, 5000, 100)]
        await until(lambda: len(service.of(BillEscrow)) == 3)
        assert station.escrow == {1: 2000, 2: 5000, 3: 100}
        for bill, accept in ((3, False), (1, True), (2, True)):
            hub.send("s1", BillVerdict(bill=bill, accept=accept))
        verdicts = await asyncio.gather(*waits)
        assert [(v.bill, v.accept) for v in verdicts] == [(1, True), (2, True), (3, False)]
        await until(lambda: len(service.of(BillStacked)) == 2 and service.of(BillReturned))
        assert service.of(BillReturned) == [BillReturned(bill=3)]
        assert sorted(m.bill for m in service.of(BillStacked)) == [1, 2]


@synchronously
async def test_a_bill_without_a_verdict_in_time_is_returned_and_a_late_verdict_stacks_nothing() -> None:  # fmt: skip  # noqa: E501
    async with station_at_hub() as (hub, service, station):
        service.answer = False
        with pytest.raises(TimeoutError):
            await station.insert_bill(2000, timeout=0.3)
        await until(lambda: service.of(BillReturned))
        assert service.of(BillReturned) == [BillReturned(bill=1)]
        hub.send("s1", BillVerdict(bill=1, accept=True))
        await until(lambda: station.verdicts)
        assert station.verdicts == [BillVerdict(bill=1, accept=True)]
        # Whatever the station said upon the verdict arrives before what it says next.
        station.card_in("PLAYER-9")
        await until(lambda: service.of(CardIn))
        assert service.of(CardIn) == [CardIn(card="PLAYER-9")]
        assert service.of(BillStacked) == []


@synchronously
async def test_a_bill_that_cannot_be_stacked_is_returned_though_accepted() -> None:
    async with station_at_hub(stack_fail=True) as (_, service, station):
        verdict = await station.insert_bill(5000, timeout=5)
        await until(lambda: service.of(BillReturned))
        assert verdict.accept
        assert service.of(BillReturned) == [BillReturned(bill=1)]
        assert service.of(BillStacked) == []


@synchronously
async def test_the_bill_count_and_session_survive_a_restart_in_the_state_file(
    tmp_path: Path,
) -> None:
    state = tmp_path / "station.json"
    async with hub_with_service() as (hub, service):
        first = StationSimulator("s1", KEY, "127.0.0.1", hub.port, state=state)
        async with running(first):
            await first.insert_bill(2000, timeout=5)
            await first.insert_bill(5000, timeout=5)
            await until(lambda: len(service.of(BillStacked)) == 2)
        saved = json.loads(state.read_text())
        assert saved["bills"] == 2 and saved["escrow"] == {}
        again = StationSimulator("s1", KEY, "127.0.0.1", hub.port, state=state)
        assert (again.session, again.bills) == (first.session, 2)
        async with running(again):
            verdict = await again.insert_bill(2000, timeout=5)
            await until(lambda: len(service.of(BillStacked)) == 3)
        assert verdict.bill == 3
        assert [m.bill for m in service.of(BillStacked)] == [1, 2, 3]
        assert hub.channels["s1"].session == first.session
        assert len(service.of(SelfTest)) == 2  # one after each welcome


@synchronously
async def test_what_was_stacked_is_said_again_after_each_welcome_until_credited(
    tmp_path: Path,
) -> None:
    """A server that acknowledged ``bill_stacked`` on the link and crashed before the ledger
    had it: the station keeps the bill in its non-volatile memory and says it again after
    every welcome until ``bill_credited`` comes. An open door is said again after a
    reconnection too (a server that restarted may not know it)."""
    state = tmp_path / "station.json"
    door = DeviceFault(code="door_open")
    async with hub_with_service() as (hub, service):
        service.credit = False
        first = StationSimulator("s1", KEY, "127.0.0.1", hub.port, state=state)
        async with running(first):
            await first.insert_bill(5000, timeout=5)
            first.open_door("main")
            await until(lambda: len(service.of(BillStacked)) == 1 and service.of(DeviceFault))
            first.disconnect()
            await until(lambda: len(service.of(BillStacked)) == 2)
            await until(lambda: service.of(DeviceFault) == [door, door])
            assert service.of(DeviceFault) == [door, door]
        assert json.loads(state.read_text())["uncredited_bills"] == {"1": 5000}
        service.credit = True
        again = StationSimulator("s1", KEY, "127.0.0.1", hub.port, state=state)
        async with running(again):
            await until(lambda: len(service.of(BillStacked)) == 3 and not again.uncredited_bills)
        assert service.of(BillStacked) == [BillStacked(bill=1, amount=5000)] * 3
        assert again.uncredited_bills == {}
        assert json.loads(state.read_text())["uncredited_bills"] == {}


@synchronously
async def test_tickets_are_redeemed_or_refused_and_each_insertion_gets_its_verdict() -> None:
    async with station_at_hub() as (_, service, station):
        first, second = await asyncio.gather(
            station.insert_ticket(GOOD, 500, timeout=5),
            station.insert_ticket(GOOD, 500, timeout=5),
        )
        unknown = await station.insert_ticket("111", 900, timeout=5)
        assert first == TicketVerdict(validation=GOOD, accept=True, amount=500)
        assert second == TicketVerdict(validation=GOOD, accept=False, reason="unknown or redeemed")
        assert not unknown.accept and unknown.validation == "111"
        assert service.of(TicketIn) == [
            TicketIn(validation=GOOD, amount=500),
            TicketIn(validation=GOOD, amount=500),
            TicketIn(validation="111", amount=900),
        ]
        assert station.verdicts == [first, second, unknown]
        # Only the accepted ticket goes into the stacker (and says so: it is credited then).
        await until(lambda: service.of(TicketStacked) != [])
        assert service.of(TicketStacked) == [TicketStacked(validation=GOOD)]
        assert service.of(TicketReturned) == []


@synchronously
async def test_a_ticket_the_server_asks_for_is_printed_to_the_tickets_dir(tmp_path: Path) -> None:
    tickets = tmp_path / "tickets"
    async with station_at_hub(tickets_dir=tickets) as (hub, service, station):
        hub.send("s1", TICKET)
        await until(lambda: service.of(TicketPrinted))
        assert service.of(TicketPrinted) == [TicketPrinted(validation=TICKET.validation)]
        assert station.printed == [TICKET]
        printed = json.loads((tickets / f"{TICKET.validation}.json").read_text())
        assert printed == {
            "validation": TICKET.validation,
            "amount": 1250,
            "issued_at": "2025-01-01T12:00:00Z",
            "expires_at": "2025-04-01T12:00:00Z",
            "station": "s1",
        }


@synchronously
async def test_a_printer_out_of_paper_fails_the_ticket_and_prints_nothing(tmp_path: Path) -> None:
    tickets = tmp_path / "tickets"
    async with station_at_hub(tickets_dir=tickets, printer_fail=True) as (hub, service, station):
        hub.send("s1", TICKET)
        await until(lambda: service.of(TicketPrintFailed))
        station.printer_fail = False  # paper again; but a number a barcode cannot carry (and
        # that would name no safe file) fails too
        hub.send("s1", PrintTicket(validation="../x", amount=5, issued_at="", expires_at="", station="s1"))  # fmt: skip  # noqa: E501
        await until(lambda: len(service.of(TicketPrintFailed)) == 2)
        assert service.of(TicketPrintFailed) == [
            TicketPrintFailed(validation=TICKET.validation, reason="out of paper"),
            TicketPrintFailed(validation="../x", reason="not a barcode number (digits only)"),
        ]
        assert station.printed == [] and len(station.print_failed) == 2
        assert not tickets.exists() and not (tmp_path / "x.json").exists()


@synchronously
async def test_it_keeps_the_screen_and_the_station_state_the_server_sends() -> None:
    screens: list[tuple[str, str]] = []
    async with station_at_hub(on_screen=lambda p, t: screens.append((p, t))) as (hub, _, station):
        hub.send("s1", Screen(path="/station/s1", token="tok-1"))
        state = StationState(enabled=False, credits=700, locks=("door_open",), called=True)
        hub.send("s1", state)
        await until(lambda: station.state is not None)
        assert (station.screen_path, station.screen_token) == ("/station/s1", "tok-1")
        assert screens == [("/station/s1", "tok-1")]
        assert station.state == state


@synchronously
async def test_doors_tilt_key_card_and_memory_are_reported_and_cleared() -> None:
    async with station_at_hub() as (hub, service, station):
        channel = hub.channels["s1"]
        station.open_door()
        station.open_door("cash_box")
        station.tilt()
        station.memory_fault("checksum")
        await until(lambda: len(service.of(DeviceFault)) == 4)
        assert channel.faults == ["door_open", "cash_box_open", "tilt", "memory"]
        assert station.doors == {"main", "cash_box"} and station.tilted
        station.close_door()
        station.close_door("cash_box")
        station.clear_tilt()
        station.turn_key("ann")
        station.card_in("PLAYER-42")
        station.card_out()
        station.release_key()
        await until(lambda: len(service.of(AttendantKey)) == 2)
        assert channel.faults == ["memory"]
        assert service.of(DeviceFault) == [
            DeviceFault(code="door_open"),
            DeviceFault(code="cash_box_open"),
            DeviceFault(code="tilt"),
            DeviceFault(code="memory", detail="checksum"),
            DeviceFault(code="door_open", cleared=True),
            DeviceFault(code="cash_box_open", cleared=True),
            DeviceFault(code="tilt", cleared=True),
        ]
        assert service.of(AttendantKey) == [
            AttendantKey(on=True, attendant="ann"),
            AttendantKey(on=False, attendant="ann"),
        ]
        assert service.of(CardIn) == [CardIn(card="PLAYER-42")] and len(service.of(CardOut)) == 1
        assert station.doors == set() and not station.tilted and station.attendant is None
        with pytest.raises(ValueError, match="no door 'back'"):
            station.open_door("back")


FAST = {"retransmit_after": 0.1, "heartbeat_every": 0.25, "silence_limit": 1.0}


@synchronously
async def test_a_silent_station_is_found_by_the_hubs_silence_limit_then_wakes() -> None:
    async with station_at_hub(FAST) as (hub, service, station):
        channel = hub.channels["s1"]
        await until(lambda: service.of(SelfTest))
        # Silent, not disconnected: when the hub finds the silence, the connection is still
        # open on both sides.
        open_then: list[bool] = []
        service.on_down = lambda: open_then.append(
            channel.writer is not None
            and station._writer is not None
            and not station._writer.is_closing()
        )
        station.go_silent()
        station.card_in("PLAYER-7")  # waits in the frozen station's link
        await until(lambda: not channel.up, 10 * FAST["silence_limit"])
        assert not channel.up, "the hub did not find the silence"
        assert service.links == [(True, ""), (False, "heartbeat")]
        assert open_then == [True]
        # The hub closed the connection; the station, still frozen, does not connect again
        # (for more than twice its 0.2 s pause between connections).
        await until(lambda: station._writer is None)
        assert station._writer is None and not station.connected.is_set()
        await asyncio.sleep(0.5)
        assert service.of(CardIn) == [] and channel.connections == 1  # still silent
        station.wake()
        await until(lambda: service.of(CardIn) and len(service.of(SelfTest)) == 2)
        assert channel.up and channel.connections == 2
        assert service.of(CardIn) == [CardIn(card="PLAYER-7")]
        assert service.links[-1] == (True, "")


@synchronously
async def test_a_short_freeze_is_bridged_by_the_link() -> None:
    """A freeze shorter than the silence limit (here: until the hub missed two heartbeats,
    a sixth of the limit) keeps the connection; what was said meanwhile arrives after it, and
    the heartbeats flow again."""
    timing = {"retransmit_after": 0.1, "heartbeat_every": 0.25, "silence_limit": 3.0}
    beat = timing["heartbeat_every"]
    async with station_at_hub(timing) as (hub, service, station):
        channel = hub.channels["s1"]
        await until(lambda: service.of(SelfTest))
        link = channel.link
        assert link is not None
        station.go_silent()
        station.turn_key("bob")  # waits in the frozen station's link
        await until(lambda: time.monotonic() - link.last_heard >= 2 * beat, timing["silence_limit"])  # fmt: skip  # noqa: E501
        assert time.monotonic() - link.last_heard >= 2 * beat, "the hub still heard the station"
        assert service.of(AttendantKey) == [] and channel.up
        station.wake()
        await until(lambda: service.of(AttendantKey))
        assert service.of(AttendantKey) == [AttendantKey(on=True, attendant="bob")]
        # Heartbeats again: the station, with nothing more to say, is heard two beats later.
        woke = link.last_heard
        await until(lambda: link.last_heard >= woke + 2 * beat, timing["silence_limit"])
        assert link.last_heard >= woke + 2 * beat, "no heartbeat after the freeze"
        assert channel.up and channel.connections == 1 and channel.link is link
        assert service.links == [(True, "")]


@synchronously
async def test_play_script_runs_the_timeline() -> None:
    async with station_at_hub() as (_, service, station):
        script = StationScript(
            bills=(2000, 1000),
            tickets=((GOOD, 300),),
            door_open_at=0.2,
            tilt_at=0.3,
            clear_after=0.4,
            attendant="ann",
            key_at=0.5,
        )
        started = time.monotonic()
        await asyncio.wait_for(play_script(station, script), 30)
        # Bills at 1 s and 2 s, the ticket at 3 s: not before (a timer never fires early).
        assert time.monotonic() - started >= 3.0
        await until(lambda: service.of(BillReturned) and len(service.of(AttendantKey)) == 2)
        money = [m for m in service.messages if isinstance(m, BillEscrow | TicketIn)]
        assert money == [BillEscrow(bill=1, amount=2000), BillEscrow(bill=2, amount=1000), TicketIn(validation=GOOD, amount=300)]  # fmt: skip  # noqa: E501
        assert service.of(BillStacked) == [BillStacked(bill=1, amount=2000)]
        assert service.of(BillReturned) == [BillReturned(bill=2)]
        assert [v.accept for v in station.verdicts] == [True, False, True]
        assert [(f.code, f.cleared) for f in service.of(DeviceFault)] == [
            ("door_open", False),
            ("tilt", False),
            ("door_open", True),
            ("tilt", True),
        ]
        assert [k.on for k in service.of(AttendantKey)] == [True, False]


@synchronously
async def test_croupier_device_simulate_role_station(tmp_path: Path) -> None:
    """The command line, against the hub: the timeline played, the screen printed, a ticket
    printed to ``--tickets-dir``, the state file written."""
    tickets, state = tmp_path / "tickets", tmp_path / "station.json"
    async with hub_with_service() as (hub, service):

        def welcome() -> None:
            hub.send("s1", Screen(path="/station/s1", token="tok-cli"))

        service.on_up = welcome
        croupier = Path(sys.executable).with_name("croupier")
        process = await asyncio.create_subprocess_exec(
            str(croupier), "device", "simulate", "--role", "station", "--device-id", "s1",
            "--server", f"127.0.0.1:{hub.port}", "--key", KEY.hex(), "--state", str(state),
            "--bills", "2000,5000", "--ticket", f"{GOOD}:400", "--door-open-at", "0.5",
            "--clear-after", "0.5", "--attendant", "ann", "--key-at", "1",
            "--tickets-dir", str(tickets), "--print-screen",
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        try:
            await until(lambda: service.of(TicketIn), 20)
            hub.send("s1", TICKET)
            # The ticket printed, and the timeline's door and key done with (both closed).
            await until(
                lambda: (
                    service.of(TicketPrinted)
                    and len(service.of(DeviceFault)) == 2
                    and len(service.of(AttendantKey)) == 2
                ),
                20,
            )
        finally:
            process.terminate()
            out, err = await asyncio.wait_for(process.communicate(), 10)
        text = out.decode()
        assert "screen: /station/s1#token=tok-cli" in text, (text, err.decode())
        assert "s1: self-test passed" in text
        assert "s1: bill 2 (5000) stacked" in text
        assert f"s1: ticket {GOOD} stacked for 400" in text
        assert service.of(BillStacked) == [BillStacked(bill=1, amount=2000), BillStacked(bill=2, amount=5000)]  # fmt: skip  # noqa: E501
        assert [(f.code, f.cleared) for f in service.of(DeviceFault)] == [("door_open", False), ("door_open", True)]  # fmt: skip  # noqa: E501
        assert [k.on for k in service.of(AttendantKey)] == [True, False]
        assert (tickets / f"{TICKET.validation}.json").exists()
        assert json.loads(state.read_text())["bills"] == 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--role", "shoe", "--bills", "2000"], "--bills is for --role station"),
        (["--role", "wheel", "--print-screen"], "--print-screen is for --role station"),
        (["--role", "shoe", "--door-open-at", "2.5"], "--door-open-at counts messages"),
        (["--role", "station", "--attendant", "ann"], "--attendant and --key-at go together"),
        (["--role", "station", "--key-at", "3"], "--attendant and --key-at go together"),
    ],
)
def test_the_station_options_are_checked(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["device", "simulate", "--device-id", "s1", "--key", KEY.hex(), "--server", "h:1"]
    assert main(base + args) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--bills", "20,x"], "not amounts: '20,x'"),
        (["--bills", "0"], "amounts are positive minor units"),
        (["--ticket", "123"], "not VALIDATION:AMOUNT: '123'"),
        (["--key-at", "soon"], "invalid float value"),
    ],
)
def test_malformed_station_options_are_refused_by_the_parser(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["device", "simulate", "--role", "station", "--device-id", "s1", "--server", "h:1"]
    with pytest.raises(SystemExit) as exited:
        main(base + args)
    assert exited.value.code == 2
    assert message in capsys.readouterr().err


def test_clear_after_takes_fractions_of_a_second() -> None:
    """``--clear-after`` is a float knob (it was parsed as a whole number before)."""
    from server.cli.main import build_parser

    args = build_parser().parse_args(
        ["device", "simulate", "--role", "shoe", "--clear-after", "0.5", "--tilt-at", "3"]
    )
    assert args.clear_after == 0.5 and args.tilt_at == 3.0
