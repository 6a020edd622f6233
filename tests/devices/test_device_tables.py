"""Tables with devices, end to end: a real ``croupier`` service, simulated devices over real
loopback TCP, and a real WebSocket player (``croupier bot``) betting at every round. After
each scenario the ledger reconciles, no money is left in open wagers, every round is settled
or voided in the journal, and the player's balance is exactly what it wagered and was paid.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
from collections.abc import AsyncIterator, Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import connect

from server.app.service import Service
from server.cli.main import main
from server.config import parse_config
from server.devices.messages import CardRead, ConsoleAction
from server.devices.simulator import DeviceRefused, Faults, SimulatedDevice
from server.journal.journal import RoundStatus
from server.journal.sqlite_journal import SqliteJournal
from server.net.bot import BotReport, run_bot
from server.protocol.codec import decode_server, encode
from server.protocol.messages import (
    PROTOCOL_VERSION,
    ErrorMessage,
    Hello,
    Join,
    PlaceBet,
    TableEvent,
)
from server.wallet.ledger import OPEN_WAGERS
from server.wallet.sqlite_ledger import SqliteLedger

KEYS = {
    "shoe-1": "11" * 16,
    "wheel-1": "22" * 16,
    "reader-1": "33" * 16,
    "console-1": "44" * 16,
    "console-2": "55" * 16,
    "console-3": "66" * 16,
}

CONFIG = """
[server]
starting_balance = 100000

[device_link]
port = 0
answer_seconds = 3
hold_seconds = 30
max_restarts = 1

[[devices]]
id = "shoe-1"
role = "card_source"
key = "{shoe-1}"

[[devices]]
id = "wheel-1"
role = "wheel"
key = "{wheel-1}"

[[devices]]
id = "reader-1"
role = "hole_card_reader"
key = "{reader-1}"

[[devices]]
id = "console-1"
role = "dealer_console"
key = "{console-1}"

[[devices]]
id = "console-2"
role = "dealer_console"
key = "{console-2}"

[[devices]]
id = "console-3"
role = "dealer_console"
key = "{console-3}"

[[tables]]
id = "bac"
name = "Baccarat with a card-reading shoe"
game = "baccarat"
betting_seconds = 0.6
pause_seconds = 0.2
[tables.options]
decks = 8
[tables.devices]
card_source = "shoe-1"
dealer_console = "console-1"

[[tables]]
id = "rou"
name = "Roulette on an automated wheel"
game = "roulette"
betting_seconds = 0.6
pause_seconds = 0.2
[tables.options]
wheel = "double_zero"
[tables.devices]
wheel = "wheel-1"
dealer_console = "console-2"

[[tables]]
id = "du"
name = "Down Under with a Masque reader"
game = "down_under_blackjack"
betting_seconds = 0.6
pause_seconds = 0.2
decision_seconds = 0.6
[tables.devices]
hole_card_reader = "reader-1"
dealer_console = "console-3"
"""


def synchronously(test: Callable[..., Coroutine[Any, Any, None]]) -> Callable[..., None]:
    """Run an async test on its own event loop (the suite's tests use ``asyncio.run``)."""

    @functools.wraps(test)
    def run(*args: Any, **kwargs: Any) -> None:
        asyncio.run(test(*args, **kwargs))

    return run


def config(answer_seconds: float | None = None) -> str:
    """``CONFIG`` with the devices' keys; ``answer_seconds`` for a test that waits for a
    device to time out (the default, 3 s, is never reached by a device that answers, even on
    a loaded machine)."""
    text = CONFIG
    for device, key in KEYS.items():
        text = text.replace("{" + device + "}", key)
    if answer_seconds is not None:
        text = text.replace("answer_seconds = 3", f"answer_seconds = {answer_seconds}")
    return text


@contextlib.asynccontextmanager
async def running(tmp: Path, text: str | None = None) -> AsyncIterator[Service]:
    """A started service with ``CONFIG`` (or ``text``); on exit, stopped, with its ledger and
    journal reopened from disk for the assertions."""
    text = config() if text is None else text
    service = Service(parse_config(text, str(tmp / "croupier.toml")), tmp / "data", port=0)
    await service.start(stagger=False)
    try:
        yield service
    finally:
        await service.stop()
        # What the stopped server left on disk is what the assertions read.
        service.ledger = SqliteLedger(tmp / "data" / "ledger.sqlite")
        service.journal = SqliteJournal(tmp / "data" / "journal.sqlite")


@contextlib.asynccontextmanager
async def devices(
    service: Service, *sims: dict[str, Any], kind: type[SimulatedDevice] = SimulatedDevice
) -> AsyncIterator[list[SimulatedDevice]]:
    """Simulators (each a dict of ``SimulatedDevice`` arguments) connected to the service's
    device port for the block; stopped after it."""
    stop = asyncio.Event()
    made = [
        kind(
            s["id"],
            s["role"],
            bytes.fromhex(s.get("key", KEYS[s["id"]])),
            "127.0.0.1",
            service.devices.port,
            **{k: v for k, v in s.items() if k not in ("id", "role", "key")},
        )
        for s in sims
    ]
    tasks = [asyncio.create_task(d.run(stop)) for d in made]
    try:
        await asyncio.wait_for(asyncio.gather(*(d.connected.wait() for d in made)), 5)
        yield made
    finally:
        stop.set()
        raise_failures("simulated devices", await asyncio.gather(*tasks, return_exceptions=True))


def raise_failures(what: str, results: list[Any]) -> None:
    """Raise the failures among what ``gather(..., return_exceptions=True)`` returned: one
    as it is, several as a group (a task cancelled is none: its block ended)."""
    failures = [
        r
        for r in results
        if isinstance(r, BaseException) and not isinstance(r, asyncio.CancelledError)
    ]
    if len(failures) == 1:
        raise failures[0]
    if failures:
        raise BaseExceptionGroup(f"{what} failed", failures)


async def play(service: Service, table: str, rounds: int) -> BotReport:
    url = f"ws://127.0.0.1:{service.port}/ws"
    return await run_bot(url, table, rounds, seed=7, timeout=60)


async def until(condition: Callable[[], object], seconds: float = 5.0) -> None:
    """Wait, polling every 50 ms, until ``condition()`` holds or ``seconds`` have passed (the
    caller asserts what it needs afterwards)."""
    for _ in range(int(seconds / 0.05)):
        if condition():
            return
        await asyncio.sleep(0.05)


def table(service: Service, table_id: str) -> Any:
    """The table's core: its phase and the hold it waits on (``held``)."""
    return service.casino.tables[table_id].core


def records(service: Service, round_id: str) -> list[tuple[str, dict[str, Any]]]:
    return [(r.kind, r.payload) for r in service.journal.records(round_id)]


def number(round_id: str) -> int:
    """A round's number at its table (``bac.7`` -> 7)."""
    return int(round_id.rsplit(".", 1)[1])


def table_rounds(report: BotReport) -> list[str]:
    """Every round of the bot's table from its first to its last round (a round whose bets
    all came too late on a loaded machine was dealt without the bot)."""
    first, last = number(report.played[0].round), number(report.played[-1].round)
    return [f"{report.table}.{n}" for n in range(first, last + 1)]


# A player's command that reaches the table after its moment passed: a bet after betting
# closed (the window's end, or the dealer's "no more bets"), after its round ended or once
# the table went on hold, a decision after its time. Refused, and nothing moves: the bot's
# arithmetic checks that.
LATE = ("betting_closed:", "round_not_open:", "table_held:", "no_decision_pending:")


def without_late_refusals(report: BotReport, most: int) -> BotReport:
    """The report without the refusals of its commands that came too late (``LATE``), of
    which there may be ``most``; any other error stays for ``assert_money_intact``."""
    late = [e for e in report.errors if e.startswith(LATE)]
    assert len(late) <= most, (report.table, late)
    report.errors = [e for e in report.errors if not e.startswith(LATE)]
    return report


def assert_money_intact(service: Service, report: BotReport) -> None:
    """Nothing lost, nothing paid twice: the ledger reconciles, no wager is left open, the
    player's balance is its start less what it wagered plus what it was paid, and every
    round it played is finished in the journal. The bot made no error, but for bets that
    came after their window closed on a loaded machine (up to a round's 3 bets for each
    round it played: refused, nothing moved; it bets in the next round)."""
    without_late_refusals(report, 3 * report.rounds)
    assert report.errors == []
    assert report.arithmetic_ok, report.as_dict()
    assert report.recall_matches, report.as_dict()
    assert service.ledger.reconcile() == {}
    assert service.ledger.balance(OPEN_WAGERS) == 0
    for played in report.played:
        assert service.journal.status(played.round) in (RoundStatus.SETTLED, RoundStatus.VOIDED)


@synchronously
async def test_a_card_reading_shoe_deals_baccarat(tmp_path: Path) -> None:
    async with running(tmp_path) as service, devices(service, {"id": "shoe-1", "role": "shoe", "seed": 3}):  # fmt: skip  # noqa: E501
        report = await play(service, "bac", 3)
    assert_money_intact(service, report)
    assert all(not r.result.startswith("voided") for r in report.played), report.as_dict()
    for played in report.played:
        cards = [p for kind, p in records(service, played.round) if kind == "card"]
        assert len(cards) >= 4  # 631a.9: two hands of two cards at least
        assert all(c["device"] == "shoe-1" for c in cards)
        assert [c["count"] for c in cards] == sorted(c["count"] for c in cards)


@synchronously
async def test_a_lossy_link_loses_nothing(tmp_path: Path) -> None:
    """Frames dropped, duplicated, reordered and corrupted: retransmission and the sequence
    numbers deliver every card once, in order."""
    faults = Faults(drop=0.15, duplicate=0.15, reorder=0.15, corrupt=0.1)
    async with running(tmp_path) as service, devices(service, {"id": "shoe-1", "role": "shoe", "seed": 4, "faults": faults}):  # fmt: skip  # noqa: E501
        report = await play(service, "bac", 3)
        channel = service.devices.channels["shoe-1"]
    assert_money_intact(service, report)
    for played in report.played:
        counts = [p["count"] for kind, p in records(service, played.round) if kind == "card"]
        assert counts == sorted(set(counts))  # no card twice
    assert sum(channel.dropped.values()) > 0  # the faults did reach the server


@synchronously
async def test_a_card_drawn_before_no_more_bets_voids_the_round(tmp_path: Path) -> None:
    """ "Game before time": a card read while betting is open voids that round, every wager
    returned; the next round, with no such card, is dealt and settled. The card is drawn once
    a bet of the round is in and the dealer calls no more bets once the table has it, in a
    30 s window: the card is read in betting, however slow the machine."""
    text = config().replace("betting_seconds = 0.6", "betting_seconds = 30", 1)
    shoe = {"id": "shoe-1", "role": "shoe", "seed": 5}
    console = {"id": "console-1", "role": "console", "decide": (), "table": "bac"}
    async with running(tmp_path, text) as service, devices(service, shoe, console) as sims:
        report, _ = await asyncio.gather(
            play(service, "bac", 2), game_before_time_then_a_round(service, *sims)
        )
    # The bot's bets after its first in a round may come after the dealer's no more bets.
    assert_money_intact(service, without_late_refusals(report, 2 * 2))
    early, dealt = report.played
    assert early.result.startswith("voided") and "game before time" in early.result, early
    assert early.returned == early.wagered
    kinds = [kind for kind, _ in records(service, early.round)]
    assert "card" not in kinds and kinds[-1] == "voided"
    assert not dealt.result.startswith("voided"), dealt
    assert [k for k, _ in records(service, dealt.round)][-1] == "settled"


async def game_before_time_then_a_round(
    service: Service, shoe: SimulatedDevice, console: SimulatedDevice
) -> None:
    """At table bac: once a bet of the round is in, a card out of the shoe (betting is
    open), and once the table has it, no more bets; in the next round, no more bets once a
    bet is in."""
    core = table(service, "bac")
    channel = service.devices.channels["shoe-1"]
    await until(lambda: core._bets, 20)
    assert core._bets, "no bet was accepted at table bac within 20 s"
    first = core.round_id
    card = shoe._next_card()  # (a new shoe: its count starts again)
    shoe.count += 1
    shoe.send(CardRead(card=card, count=shoe.count, round=""))
    dealer = channel.listener.dealer
    await until(lambda: dealer.shoe.early is not None)
    assert dealer.shoe.early is not None, "the table did not take the card as game before time"
    no_more_bets = ConsoleAction(action="no_more_bets", table="bac", dealer="dana", supervisor="sam")  # type: ignore[arg-type]  # fmt: skip  # noqa: E501
    console.send(no_more_bets)
    await until(lambda: core.round_id != first and core._bets, 20)
    assert core.round_id != first and core._bets, "no bet was accepted in the next round"
    console.send(no_more_bets)


@synchronously
async def test_an_impossible_read_holds_until_two_people_void(tmp_path: Path) -> None:
    """A card that is no card: the table holds; the dealer and supervisor void the round
    from the console (confirm is refused without the physical card)."""
    shoe = {"id": "shoe-1", "role": "shoe", "faults": Faults(misread=1.0)}
    console = {"id": "console-1", "role": "console", "decide": ("confirm", "void"), "table": "bac"}  # fmt: skip  # noqa: E501
    async with running(tmp_path) as service, devices(service, shoe, console) as sims:
        report = await play(service, "bac", 2)
    assert_money_intact(service, report)
    assert all(r.result.startswith("voided") for r in report.played)
    kinds = [kind for kind, _ in records(service, report.played[0].round)]
    assert kinds.index("held") < kinds.index("staff") < kinds.index("voided")
    staff = next(p for kind, p in records(service, report.played[0].round) if kind == "staff")
    assert (staff["action"], staff["dealer"], staff["supervisor"]) == ("void", "dealer-sim", "supervisor-sim")  # fmt: skip  # noqa: E501
    assert "no card" in staff["reason"]
    texts = [p.text for p in sims[1].prompts]
    assert any(t.startswith("refused: enter the physical card") for t in texts)


@pytest.mark.parametrize(
    ("faults", "why"), [(Faults(jam=1.0), "no result"), (Faults(not_sensed=1.0), "ball_not_sensed")]
)
@synchronously
async def test_a_wheel_that_gives_no_result_is_restarted_then_voided(
    tmp_path: Path, faults: Faults, why: str
) -> None:
    """617a.6: no spin (the ball never drops, or the wheel warns it did not sense it) —
    restarted once (max_restarts), then the round is void, every wager returned, and the
    wheel out of order until a supervisor reopens the table."""
    wheel = {"id": "wheel-1", "role": "wheel", "wheel": "double_zero", "faults": faults}
    console = {"id": "console-2", "role": "console", "decide": ("reopen",), "table": "rou"}
    text = config(answer_seconds=0.6)  # a jammed wheel is restarted after this
    async with running(tmp_path, text) as service, devices(service, wheel, console) as sims:
        report = await play(service, "rou", 2)
    assert_money_intact(service, report)
    assert all(f"no spin ({why})" in r.result and "617a.6" in r.result for r in report.played)
    # Who reopened the table is journaled in the round it let open.
    reopened = [p for k, p in records(service, report.played[1].round) if k == "staff"]
    assert [(s["action"], s["dealer"], s["supervisor"]) for s in reopened] == [("reopen", "dealer-sim", "supervisor-sim")]  # fmt: skip  # noqa: E501
    assert sum(isinstance(c, type(sims[0].commands[0])) for c in sims[0].commands) >= 2
    restarts = [c for c in sims[0].commands if type(c).__name__ == "Restart"]
    assert len(restarts) >= 2  # once per round
    assert all(r.returned == r.wagered for r in report.played)


@synchronously
async def test_a_wheel_result_out_of_range_is_held_and_voided(tmp_path: Path) -> None:
    wheel = {"id": "wheel-1", "role": "wheel", "wheel": "double_zero", "faults": Faults(out_of_range=1.0)}  # fmt: skip  # noqa: E501
    console = {"id": "console-2", "role": "console", "decide": ("confirm", "void"), "table": "rou"}  # fmt: skip  # noqa: E501
    async with running(tmp_path) as service, devices(service, wheel, console):
        report = await play(service, "rou", 1)
    assert_money_intact(service, report)
    kinds = [kind for kind, _ in records(service, report.played[0].round)]
    assert "held" in kinds and "staff" in kinds and kinds[-1] == "voided"


@synchronously
async def test_an_automated_wheel_settles_roulette(tmp_path: Path) -> None:
    wheel = {"id": "wheel-1", "role": "wheel", "wheel": "double_zero", "seed": 9}
    async with running(tmp_path) as service, devices(service, wheel):
        report = await play(service, "rou", 3)
    assert_money_intact(service, report)
    assert all(not r.result.startswith("voided") for r in report.played)
    spins = [p for r in report.played for k, p in records(service, r.round) if k == "spin"]
    # One spin a round, numbered as the rounds (every round spins, with bets or not).
    assert [s["game"] for s in spins] == [number(r.round) for r in report.played]
    assert all(s["device"] == "wheel-1" for s in spins)


@pytest.mark.parametrize(
    ("faults", "decide", "rule"),
    [
        (Faults(wrong_lamp=1.0), ("dead", "reopen"), "685a.12(h)"),
        (Faults(no_lamp=1.0), ("reopen",), "685a.12(i)"),
    ],
)
@synchronously
async def test_a_reader_that_shows_no_or_the_wrong_range_closes_down_under(
    tmp_path: Path, faults: Faults, decide: tuple[str, ...], rule: str
) -> None:
    """685a.12(h): the reader lit another range's lamp — the dealer calls the hands dead and
    every Bet Wager is returned; (i): no lamp — the round is void. Either way no decision is
    offered without the range, and no Down Under round is dealt until the reader is repaired
    (the supervisor reopens the table: journaled in the round it lets open)."""
    reader = {"id": "reader-1", "role": "reader", "faults": faults}
    console = {"id": "console-3", "role": "console", "decide": decide, "table": "du"}
    async with running(tmp_path) as service, devices(service, reader, console):
        report = await play(service, "du", 2)
    assert_money_intact(service, report)
    for played in report.played:
        # The Bet Wager comes back; a Match the Dealer wager was settled on the first cards,
        # before the reader lit its lamp, and stands.
        bets = sum(amount for spot, amount in played.wagers if spot.startswith("bet:"))
        assert rule in played.result and played.returned >= bets > 0
        journal = records(service, played.round)
        assert "hole_range" not in [kind for kind, _ in journal]
        # Insurance is offered on the dealer's up card, before the reader (685a.7(g)); a
        # hand's decision never is without the range.
        decided = [p["spot"] for kind, p in journal if kind in ("decision", "timeout") and "spot" in p]  # fmt: skip  # noqa: E501
        assert all(spot.startswith("insurance:") for spot in decided), decided
    second = records(service, report.played[1].round)
    staff = [p["action"] for k, p in second if k == "staff"]
    assert staff == ["reopen", "dead"] if rule == "685a.12(h)" else staff == ["reopen"]
    assert [k for k, _ in second].index("staff") < [k for k, _ in second].index("voided")


@synchronously
async def test_the_hole_card_reader_answers_down_under(tmp_path: Path) -> None:
    reader = {"id": "reader-1", "role": "reader"}
    async with running(tmp_path) as service, devices(service, reader):
        report = await play(service, "du", 2)
    assert_money_intact(service, report)
    for played in report.played:
        reads = [p for kind, p in records(service, played.round) if kind == "hole_range"]
        assert reads and reads[0]["device"] == "reader-1"


@pytest.mark.parametrize(
    ("device", "role", "key", "code"),
    [
        ("nobody", "shoe", "11" * 16, "unknown_device"),
        ("shoe-1", "shoe", "99" * 16, "unauthenticated"),
        ("shoe-1", "wheel", "11" * 16, "wrong_role"),
    ],
)
@synchronously
async def test_a_device_that_is_not_configured_so_is_refused(
    tmp_path: Path, device: str, role: str, key: str, code: str
) -> None:
    async with running(tmp_path) as service:
        sim = SimulatedDevice(device, role, bytes.fromhex(key), "127.0.0.1", service.devices.port)  # fmt: skip  # noqa: E501
        with pytest.raises(DeviceRefused) as refused:
            await sim.run()
        assert refused.value.code == code
        assert service.devices.refused == {code: 1}


@synchronously
async def test_croupier_devices_lists_each_device_with_its_link(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async with running(tmp_path) as service, devices(service, {"id": "wheel-1", "role": "wheel", "wheel": "double_zero"}):  # fmt: skip  # noqa: E501
        url = f"http://127.0.0.1:{service.port}"
        code = await asyncio.to_thread(main, ["devices", "--url", url])
    assert code == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(KEYS)
    wheel = next(line for line in lines if line.startswith("wheel-1\t"))
    assert "\twheel\ttable=rou\tlink=up\theard=" in wheel and wheel.endswith("faults=-")
    shoe = next(line for line in lines if line.startswith("shoe-1\t"))
    assert "link=down" in shoe and "heard=never" in shoe


def test_croupier_devices_says_when_the_server_is_not_there(capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip  # noqa: E501
    assert main(["devices", "--url", "http://127.0.0.1:9"]) == 1
    assert "cannot read http://127.0.0.1:9/devices" in capsys.readouterr().err


def card_counts(service: Service, report: BotReport) -> list[int]:
    """The shoe's count of each card dealt, over the table's rounds from the bot's first to
    its last, in order."""
    rounds = table_rounds(report)
    return [p["count"] for r in rounds for kind, p in records(service, r) if kind == "card"]


def assert_dealt_once_in_order(service: Service, report: BotReport) -> None:
    """Every card left the shoe once, none skipped, none dealt twice, no round voided."""
    counts = card_counts(service, report)
    assert counts == list(range(counts[0], counts[0] + len(counts))), counts
    statuses = {r: service.journal.status(r) for r in table_rounds(report)}
    assert set(statuses.values()) == {RoundStatus.SETTLED}, statuses


@synchronously
async def test_a_shoe_that_loses_power_resumes_its_session(tmp_path: Path) -> None:
    """Notes §2.3, power loss (device): the shoe restarts from its non-volatile memory, says
    hello with the same session, and replays what the server had not acknowledged; the round
    goes on with every card dealt once."""
    shoe = {"id": "shoe-1", "role": "shoe", "seed": 6, "faults": Faults(power_loss_at=3), "state": tmp_path / "shoe.json"}  # fmt: skip  # noqa: E501
    async with running(tmp_path) as service, devices(service, shoe) as sims:
        session = sims[0].session
        report = await play(service, "bac", 2)
        channel = service.devices.channels["shoe-1"]
        assert "power" in sims[0]._fired and channel.connections >= 2
        assert channel.session == sims[0].session == session  # resumed, not a new session
        assert table(service, "bac").held is None
    assert_money_intact(service, report)
    assert_dealt_once_in_order(service, report)


@synchronously
async def test_a_shoe_that_disconnects_mid_round_resumes_it(tmp_path: Path) -> None:
    """A shoe disconnected after its second card: it reconnects, resumes its session and the
    round goes on."""
    shoe = {"id": "shoe-1", "role": "shoe", "seed": 8, "faults": Faults(disconnect_at=2)}
    async with running(tmp_path) as service, devices(service, shoe):
        report = await play(service, "bac", 2)
        assert service.devices.channels["shoe-1"].connections >= 2
    assert_money_intact(service, report)
    assert_dealt_once_in_order(service, report)


@synchronously
async def test_a_slow_shoe_holds_the_table_and_its_late_card_resumes_it(tmp_path: Path) -> None:
    """A card not read within answer_seconds (0.5 s; the shoe takes 1 s): the table holds —
    journaled, shown to players — and the card, once read, resumes the round; nobody had to
    decide anything."""
    shoe = {"id": "shoe-1", "role": "shoe", "seed": 10, "faults": Faults(delay=1.0)}
    async with running(tmp_path, config(answer_seconds=0.5)) as service, devices(service, shoe):
        report = await play(service, "bac", 1)
        assert table(service, "bac").held is None
    assert_money_intact(service, report)
    assert_dealt_once_in_order(service, report)
    kinds = [kind for kind, _ in records(service, report.played[0].round)]
    held = [p for kind, p in records(service, report.played[0].round) if kind == "held"]
    assert held and all("no card was read from shoe-1 for" in h["reason"] for h in held)
    assert "staff" not in kinds and kinds[-1] == "settled"


@synchronously
async def test_a_card_the_shoe_reads_twice_is_dealt_once(tmp_path: Path) -> None:
    shoe = {"id": "shoe-1", "role": "shoe", "seed": 11, "faults": Faults(double_read=1.0)}
    async with running(tmp_path) as service, devices(service, shoe):
        report = await play(service, "bac", 2)
    assert_money_intact(service, report)
    assert_dealt_once_in_order(service, report)
    kinds = [kind for r in report.played for kind, _ in records(service, r.round)]
    assert "held" not in kinds


@synchronously
async def test_a_card_that_left_the_shoe_unread_holds_until_confirmed(tmp_path: Path) -> None:
    """The shoe's count skips (a card missing): each time the table holds until the dealer and
    supervisor confirm the card read as the next one."""
    shoe = {"id": "shoe-1", "role": "shoe", "seed": 12, "faults": Faults(missing=1.0)}
    console = {"id": "console-1", "role": "console", "decide": ("confirm",), "table": "bac"}
    async with running(tmp_path) as service, devices(service, shoe, console):
        report = await play(service, "bac", 2)
        assert table(service, "bac").held is None
    assert_money_intact(service, report)
    assert all(not r.result.startswith("voided") for r in report.played)
    second = records(service, report.played[1].round)
    holds = [p for kind, p in second if kind == "held"]
    decisions = [p for kind, p in second if kind == "staff"]
    cards = [p for kind, p in second if kind == "card"]
    assert len(holds) == len(decisions) == len(cards) >= 4  # every card skipped one
    assert all("left the shoe unread" in h["reason"] for h in holds)
    assert all(d["action"] == "confirm" and d["supervisor"] == "supervisor-sim" for d in decisions)  # fmt: skip  # noqa: E501
    counts = [c["count"] for c in cards]
    assert all(b - a == 2 for a, b in itertools.pairwise(counts))


@synchronously
async def test_a_wheel_game_number_that_jumps_holds_until_confirmed(tmp_path: Path) -> None:
    """Notes §2.3: a game number not continuous is verified by hand before it is used."""
    wheel = {"id": "wheel-1", "role": "wheel", "wheel": "double_zero", "seed": 2, "faults": Faults(game_jump=1.0)}  # fmt: skip  # noqa: E501
    console = {"id": "console-2", "role": "console", "decide": ("confirm",), "table": "rou"}
    async with running(tmp_path) as service, devices(service, wheel, console):
        report = await play(service, "rou", 2)
    assert_money_intact(service, report)
    assert all(not r.result.startswith("voided") for r in report.played)
    # Every spin jumps 7 games: from round 2 on, each round holds until confirmed.
    later = [r.round for r in report.played if number(r.round) >= 2]
    assert later, report.as_dict()
    for round_id in later:
        game, journal = 7 * number(round_id), records(service, round_id)
        (held,) = [p for kind, p in journal if kind == "held"]
        (staff,) = [p for kind, p in journal if kind == "staff"]
        (spin,) = [p for kind, p in journal if kind == "spin"]
        assert f"jumped from {game - 7} to {game}" in held["reason"] and staff["action"] == "confirm"  # fmt: skip  # noqa: E501
        assert spin["game"] == game and [k for k, _ in journal][-1] == "settled"


@synchronously
async def test_a_shoe_door_opened_mid_round_suspends_the_table_until_closed(tmp_path: Path) -> None:  # fmt: skip  # noqa: E501
    """Notes §2.3 "door open → cease play": after its second card the shoe reports its door
    open; the table holds (players see why) until the shoe reports it closed, then the round
    goes on — no card lost, nothing voided, nobody had to decide."""
    faults = Faults(door_open_at=2, clear_after=0.8)
    shoe = {"id": "shoe-1", "role": "shoe", "seed": 13, "faults": faults}
    async with running(tmp_path) as service, devices(service, shoe):
        report = await play(service, "bac", 1)
        assert table(service, "bac").held is None
        assert service.devices.channels["shoe-1"].faults == []  # cleared
    assert_money_intact(service, report)
    assert_dealt_once_in_order(service, report)
    # The door opened after the shoe's second card: in the table's first round.
    first = records(service, "bac.1")
    (held,) = [p for kind, p in first if kind == "held"]
    assert "shoe-1 reports door_open" in held["reason"] and held["options"] == ["void"]
    assert "staff" not in [k for k, _ in first] and first[-1][0] == "settled"


@synchronously
async def test_a_wheel_tilted_between_rounds_opens_no_round_until_cleared(tmp_path: Path) -> None:  # fmt: skip  # noqa: E501
    """A tilt after the first spin: the next round does not open (no bets taken on a tilted
    wheel) until the wheel clears it; the hold is journaled in the round that opens next."""
    faults = Faults(tilt_at=1, clear_after=1.0)
    wheel = {"id": "wheel-1", "role": "wheel", "wheel": "double_zero", "seed": 3, "faults": faults}
    async with running(tmp_path) as service, devices(service, wheel):
        report = await play(service, "rou", 2)
        assert table(service, "rou").held is None
    assert_money_intact(service, report)
    assert all(not r.result.startswith("voided") for r in report.played)
    second = records(service, "rou.2")  # the round after the first spin
    (held,) = [p for kind, p in second if kind == "held"]
    assert "wheel-1 reports tilt" in held["reason"] and not held.get("options")  # none: wait
    kinds = [k for k, _ in second]
    assert kinds.index("held") < kinds.index("spin") and kinds[-1] == "settled"


async def console_once_bets_are_in(service: Service, console: SimulatedDevice, action: str) -> None:  # fmt: skip  # noqa: E501
    """Send the console's ``action`` at table bac once a bet of the round is accepted."""
    core = table(service, "bac")
    await until(lambda: core._bets, 20)
    assert core._bets, "no bet was accepted at table bac within 20 s"
    console.send(ConsoleAction(action=action, table="bac", dealer="dana", supervisor="sam"))  # type: ignore[arg-type]


@pytest.mark.parametrize("action", ["no_more_bets", "void"])
@synchronously
async def test_the_dealer_console_closes_betting_or_voids_the_round(tmp_path: Path, action: str) -> None:  # fmt: skip  # noqa: E501
    """The console outside a hold: the dealer calls no more bets before the 30 s window ends
    (the round deals and settles at once), or dealer and supervisor void the round in betting
    (a correction: every wager returned). Who did it is journaled in the round."""
    text = config().replace("betting_seconds = 0.6", "betting_seconds = 30", 1)
    shoe = {"id": "shoe-1", "role": "shoe", "seed": 14}
    console = {"id": "console-1", "role": "console", "table": "bac"}
    async with running(tmp_path, text) as service, devices(service, shoe, console) as sims:
        report, _ = await asyncio.gather(
            play(service, "bac", 1), console_once_bets_are_in(service, sims[1], action)
        )
    # The bot's bets after its first may come after the console's action.
    assert_money_intact(service, without_late_refusals(report, 2))
    (played,) = report.played
    kinds = [kind for kind, _ in records(service, played.round)]
    (staff,) = [p for kind, p in records(service, played.round) if kind == "staff"]
    assert (staff["action"], staff["dealer"]) == (action, "dana")
    # The console's action ended betting, not the window: it is journaled before the round
    # closed (or, voided in betting, the round never closed).
    if action == "no_more_bets":
        assert kinds.index("staff") < kinds.index("closed") and kinds[-1] == "settled"
    else:
        assert "closed" not in kinds and kinds[-1] == "voided"
        assert played.returned == played.wagered and "dana and sam" in played.result


@synchronously
async def test_a_player_command_during_a_hold_is_answered_at_once(tmp_path: Path) -> None:
    """While the table is held, a bet is refused with table_held (and the reason) at once,
    not left waiting for the hold to end."""
    shoe = {"id": "shoe-1", "role": "shoe", "faults": Faults(misread=1.0)}
    async with running(tmp_path) as service, devices(service, shoe):
        url = f"ws://127.0.0.1:{service.port}/ws"
        async with connect(url) as ws:
            await ws.send(encode(Hello(version=PROTOCOL_VERSION, name="held")))
            await ws.send(encode(Join(table="bac", role="player")))
            async with asyncio.timeout(20):  # the first round holds at its first card
                while True:
                    message = decode_server(await ws.recv(decode=False))
                    if isinstance(message, TableEvent) and message.event == "table_held":
                        break
            bet = PlaceBet(table="bac", round=message.round, bet_id="b1", spot="player", amount=100)  # fmt: skip  # noqa: E501
            await ws.send(encode(bet))
            # Answered while the hold (hold_seconds, 30 s) still stands.
            async with asyncio.timeout(20):
                while not isinstance(message, ErrorMessage):
                    message = decode_server(await ws.recv(decode=False))
            assert table(service, "bac").held is not None
        assert message.code == "table_held" and "no card" in message.message


@synchronously
async def test_bytes_that_are_no_frame_before_a_hello_close_the_connection(tmp_path: Path) -> None:  # fmt: skip  # noqa: E501
    """A peer that sends more than 1 KiB that is no frame before any hello (a magic at every
    other byte: the decoder's most expensive input) is cut off and counted, without an
    answer; a device connecting next is welcomed as usual."""
    async with running(tmp_path) as service:
        hub = service.devices
        reader, writer = await asyncio.open_connection("127.0.0.1", hub.port)
        writer.write(b"CD" * 4096)
        assert await asyncio.wait_for(reader.read(), 5) == b""  # closed, nothing answered
        writer.close()
        assert hub.refused == {"not_a_hello": 1}
        async with devices(service, {"id": "wheel-1", "role": "wheel", "wheel": "double_zero"}):
            assert hub.channels["wheel-1"].up
