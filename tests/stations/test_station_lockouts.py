"""Every lockout of a player station, through the real transports (docs/electronic-tables.md,
"Lockouts"; AGCO 11.1.2–11.1.3, 25 CFR 547.10, Oklahoma 325:85-20-10): a door open, a tilt,
the connection lost, the heartbeat missed, a failed self-test and a failed critical-memory
check each lock the station at once — no bet, bill or cash-out is taken from it — the lock
survives a restart of the server, and only an attendant with the key clears it, once its
cause is gone. A bet placed before the lock stands and settles."""

from __future__ import annotations

import sqlite3
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from server.app.service import Service
from server.devices.station_simulator import StationSimulator
from server.journal.journal import RoundStatus
from server.protocol.messages import (
    AttendantAction,
    BetAccepted,
    CashOut,
    GetRecall,
    StationStatus,
)
from tests.devices.test_device_tables import synchronously
from tests.stations.floor import (
    assert_reconciles,
    credits,
    join,
    refused,
    running,
    screen,
    stations,
    until,
)

Step = Callable[[StationSimulator], Awaitable[None]]


async def nothing(station: StationSimulator) -> None:
    return None


async def open_door(station: StationSimulator) -> None:
    station.open_door("main")


async def close_door(station: StationSimulator) -> None:
    station.close_door("main")


async def open_cash_box(station: StationSimulator) -> None:
    station.open_door("cash_box")


async def close_cash_box(station: StationSimulator) -> None:
    station.close_door("cash_box")


async def tilt(station: StationSimulator) -> None:
    station.tilt()


async def clear_tilt(station: StationSimulator) -> None:
    station.clear_tilt()


async def disconnect(station: StationSimulator) -> None:
    station.disconnect()


async def go_silent(station: StationSimulator) -> None:
    station.go_silent()


async def pass_self_test(station: StationSimulator) -> None:
    """The station repaired: its self-test passes from now on."""
    station.self_test_fail = False
    station.self_test(True)


def causes(service: Service, station: str = "s1") -> list[str]:
    return [lock.cause for lock in service.casino.stations.status(station).locks]  # type: ignore[union-attr]


def present(service: Service, cause: str, station: str = "s1") -> bool:
    status = service.casino.stations.status(station)  # type: ignore[union-attr]
    return any(lock.cause == cause and lock.present for lock in status.locks)


def corrupt_critical_memory(data: Path) -> None:
    """A disk fault: the station's meters change under its checksum."""
    with sqlite3.connect(data / "stations.sqlite") as db:
        changed = db.execute(
            "UPDATE stations SET meters = replace(meters, '\"credits_in\":5000', "
            "'\"credits_in\":9000') WHERE id = 's1'"
        ).rowcount
    assert changed == 1


CASES = {
    # cause: (what locks it while the server runs, what makes its cause go away after the restart)
    "door_open": (open_door, close_door),
    "cash_box_open": (open_cash_box, close_cash_box),
    "tilt": (tilt, clear_tilt),
    "connection": (disconnect, nothing),
    "heartbeat": (go_silent, nothing),
    "self_test": (nothing, pass_self_test),  # a station whose self-test fails at every hello
    "critical_memory": (nothing, nothing),
}


@pytest.mark.parametrize("cause", list(CASES))
@synchronously
async def test_a_lock_refuses_everything_survives_a_restart_and_an_attendant_clears_it(
    tmp_path: Path, cause: str
) -> None:
    lock, fix = CASES[cause]
    data = tmp_path / "data"
    broken = cause == "self_test"
    async with running(tmp_path) as service, stations(service, "s1", tmp=tmp_path) as (s1,):
        s1.self_test_fail = broken  # from its next hello on
        assert (await s1.insert_bill(5_000)).accept
        assert await until(lambda: credits(service, "s1") == 5_000)
        async with screen(service, s1.screen_token) as touch:
            await join(touch)
            before = await touch.bet("lucky", "banker", 1_000, "before")
            assert isinstance(before, BetAccepted), before
            await lock(s1)
            if broken:
                s1.disconnect()  # it restarts, and fails its self-test
            if cause != "critical_memory":  # that one fails at the next start
                assert await until(lambda: cause in causes(service), 8), causes(service)
                assert not service.casino.stations.status("s1").enabled  # type: ignore[union-attr]
                # Nothing new is taken (the bet placed before stands: below).
                after = await touch.bet("lucky", "banker", 1_000, "after")
                assert refused(after, "station_locked"), after
                assert refused(await touch.ask(CashOut()), "station_locked")
                if cause not in ("connection", "heartbeat"):  # the validator is on the link
                    assert not (await s1.insert_bill(1_000)).accept
            assert await until(lambda: touch.ended(before.round), 10)
            assert any(m.round == before.round for m in touch.events("round_settled"))
        await service.casino.stations.drain()
        assert_reconciles(service, "s1")
    if cause == "critical_memory":
        corrupt_critical_memory(data)
    # The server restarts; the station comes back (its session resumed): still locked.
    restart = {"tmp": tmp_path, "self_test_fail": broken}
    async with running(tmp_path) as service, stations(service, "s1", **restart) as (s1,):
        # The lock came back with the server, and the restart itself added none (the
        # station that failed its self-test had restarted itself: its link went down).
        assert set(causes(service)) == {cause} | ({"connection"} if broken else set())
        async with screen(service, s1.screen_token) as touch:
            await join(touch)
            assert await until(lambda: touch.last(StationStatus) is not None)
            assert cause in [lock.cause for lock in touch.station().locks]
            assert refused(await touch.bet("lucky", "banker", 1_000, "locked"), "station_locked")
            # Without the attendant key: refused. With it, while the cause is there: refused.
            no_key = await touch.ask(AttendantAction(action="clear"))
            assert refused(no_key, "attendant_key_required"), no_key
            s1.turn_key("att-7")
            assert await until(lambda: touch.station().attendant == "att-7")
            assert touch.station().meters is not None  # the attendant menu shows the meters
            if cause in ("door_open", "cash_box_open", "tilt", "self_test"):
                assert present(service, cause)
                assert refused(await touch.ask(AttendantAction(action="clear")), "fault_present")
            await fix(s1)
            assert await until(lambda: not any(lock.present for lock in touch.station().locks))
            cleared = await touch.ask(AttendantAction(action="clear"))
            assert not refused(cleared, "fault_present"), cleared
            assert await until(lambda: touch.station().enabled)
            s1.release_key()
            assert await until(lambda: touch.station().attendant is None)
            bet = await touch.bet("lucky", "banker", 1_000, "cleared")
            assert isinstance(bet, BetAccepted), bet
            # Game recall on the touchscreen: the rounds before the restart are there. The
            # recall reads the journal, where the round is finished just after its settled
            # event reached the screen: once it is finished there, it is recalled.
            assert await until(lambda: service.journal.status(bet.round) is RoundStatus.SETTLED, 10)  # fmt: skip  # noqa: E501
            assert touch.ended(bet.round)
            recall = await touch.ask(GetRecall(table="lucky"))
            recalled = {r.round: r for r in recall.rounds}
            assert {before.round, bet.round} <= set(recalled)
            assert recalled[before.round].wagered == 1_000 and recalled[before.round].cards
        await service.casino.stations.drain()
        logged = service.stations_store.logged("s1")
        clear = [e for e in logged if e["event"] == "locks_cleared"]
        assert clear and clear[-1]["actor"] == "att-7" and cause in clear[-1]["detail"]
        assert_reconciles(service, "s1")
        if cause == "critical_memory":
            # Rebuilt from the ledger: the corrupted 9000 is gone.
            assert service.stations_store.load("s1").meters["credits_in"] == 5_000
