"""A device role answering a new kind of chance (docs/architecture.md, "Adding a device
role"): a die shaker, defined here alone — its messages, its dealer part and its simulator —
rolls the die High Die asks (``tests/high_card/high_die.py``: the kind declared with its game).
The device dealer answers with the generic ``chance`` record; a table core journals it, shows
it, holds for staff when the die shows nothing it can trust, and replays and recovers it —
through the dealer alone, and over a device hub with the simulated shaker on real TCP —
with no server file naming the kind or the role."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rng import seeded_source
from server.config import parse_config
from server.core import commands as cmd
from server.core.replay import replay_round
from server.devices import roles
from server.devices.dealing import Answer, DealerSettings, DeviceDealer, Send
from server.devices.handshake import KnownDevice
from server.devices.hub import DeviceHub
from server.devices.message_types import Message, RoundId
from server.devices.messages import ConsoleAction
from server.devices.roles import DeviceRole, RoleDealer
from server.devices.roles.base import Pending
from server.devices.simulator import SimulatedDevice
from server.devices.table_devices import TableDevices, table_dealer
from server.games import registry
from server.games.chance import ChanceRequest
from server.games.table import Capabilities, ConfigError, GameEntry, TableSettings
from server.journal import records as rec
from server.tables.games import build_game
from server.wallet import OPEN_WAGERS
from server.wallet.ledger import player_account
from tests.high_card.high_die import GAME, DieRoll, HighDieRound
from tests.tables.core_driver import Driver

KEY = bytes.fromhex("7a" * 16)
CONSOLE_KEY = bytes.fromhex("7b" * 16)


# --- the toy role: a die shaker ----------------------------------------------------------------


class ShakeDie(Message, tag="toy_shake_die", frozen=True):
    round: RoundId
    target: str


class DieShown(Message, tag="toy_die_shown", frozen=True):
    round: RoundId
    target: str
    face: int


class Shaker(RoleDealer):
    """Asks the die to be shaken for the pending roll; a face the roll cannot show is held
    for staff to enter what the die shows."""

    @classmethod
    def options(cls, where: str, game: Any, capabilities: Capabilities) -> dict[str, Any]:
        if not capabilities.asks(DieRoll):
            raise ConfigError(f"{where}: a toy_die_shaker rolls dice; this game asks none")
        return {}

    def request(self, pending: Pending, now: float) -> list[Any]:
        return [Send(self.role, ShakeDie(round=pending.round_id, target=pending.request.target))]

    def receive(self, message: Any, now: float) -> list[Any]:
        if not isinstance(message, DieShown):
            return super().receive(message, now)
        pending = self.table.awaiting(DieRoll, message.round)
        if pending is None or pending.request.target != message.target:
            return []
        try:
            face = pending.request.read(message.face)
        except ValueError:
            reason = f"{self.device} shows {message.face}: enter the face"
            return self.table.hold(reason, self.device, ("confirm", "void"), now, message, needs_value=True)  # fmt: skip  # noqa: E501
        return self.table.resume(rec.answered(pending.request, face, device=self.device))

    def timeout(self, pending: Pending, now: float) -> list[Any]:
        reason = f"{self.device} showed nothing"
        return self.table.hold(reason, self.device, ("confirm", "void"), now, needs_value=True)

    def decide(self, choice: str, value: str, pending: Pending) -> Any:
        face = pending.request.read(int(value) if value.isdigit() else value)  # ValueError
        return rec.answered(pending.request, face, device=self.device)


class SimulatedShaker(SimulatedDevice):
    """The toy role's simulator: shows its script's faces (else a one) on each shake."""

    simulates = "toy_die_shaker"

    def _answer(self, command: Any) -> None:
        if isinstance(command, ShakeDie):
            face = int(self.script.popleft()) if self.script else 1
            self.send(DieShown(round=command.round, target=command.target, face=face))


SHAKER = DeviceRole(
    name="toy_die_shaker",
    short="shaker",
    sends=(DieShown,),
    commands=(ShakeDie,),
    answers=(DieRoll,),
    dealer=Shaker,
    simulator=f"{__name__}:SimulatedShaker",
)
DEVICES = {"toy_die_shaker": "shaker-1", "dealer_console": "console-1"}
SETTINGS = TableSettings(
    "hd", "High Die", "high_die", betting_seconds=10, pause_seconds=1, seats=4, devices=DEVICES
)
STAFF = {"table": "hd", "dealer": "dana", "supervisor": "sam"}


@pytest.fixture(autouse=True)
def shaker() -> Iterator[None]:
    roles.register(SHAKER)
    registry.register(GAME)
    try:
        yield
    finally:
        roles.unregister(SHAKER.name)
        registry.unregister(GAME.name)


def _answers(out: list[Any]) -> list[Any]:
    return [item.result for item in out if isinstance(item, Answer)]


def _sent(out: list[Any]) -> list[Any]:
    return [item.message for item in out if isinstance(item, Send)]


def _dealer() -> DeviceDealer:
    return table_dealer(SETTINGS, build_game(SETTINGS, seeded_source(1)), DealerSettings())


# --- the dealer alone ----------------------------------------------------------------------


def test_the_dealer_answers_the_new_kind_with_the_generic_record() -> None:
    dealer = _dealer()
    assert dealer.answers(DieRoll("player")) and not dealer.answers(object())
    out = dealer.ask("hd.1", DieRoll("player"), None, 0)
    assert _sent(out) == [ShakeDie(round="hd.1", target="player")]
    assert dealer.receive("toy_die_shaker", DieShown(round="hd.0", target="player", face=3), 1) == []  # fmt: skip  # noqa: E501
    (record,) = _answers(dealer.receive("toy_die_shaker", DieShown(round="hd.1", target="player", face=3), 1))  # fmt: skip  # noqa: E501
    assert record == rec.ChanceAnswered(chance="toy_die", answer=3, device="shaker-1")
    # A face no die shows: held, and staff enter what it shows through the role's part.
    dealer.ask("hd.1", DieRoll("dealer"), None, 2)
    (held,) = _answers(dealer.receive("toy_die_shaker", DieShown(round="hd.1", target="dealer", face=0), 3))  # fmt: skip  # noqa: E501
    assert isinstance(held, rec.Held) and held.reason == "shaker-1 shows 0: enter the face"
    refused = dealer.receive("dealer_console", ConsoleAction(action="confirm", value="8", **STAFF), 4)  # type: ignore[arg-type]  # fmt: skip  # noqa: E501
    assert _answers(refused) == [] and "shows 1 to 6, not 8" in _sent(refused)[0].text
    (decided,) = _answers(dealer.receive("dealer_console", ConsoleAction(action="confirm", value="5", **STAFF), 5))  # type: ignore[arg-type]  # fmt: skip  # noqa: E501
    assert decided.staff.value == "5"
    assert decided.answer == rec.ChanceAnswered(chance="toy_die", answer=5, device="shaker-1")


def test_a_game_asking_no_dice_cannot_have_a_shaker() -> None:
    bac = TableSettings("b1", "B", "baccarat", devices={"toy_die_shaker": "shaker-1"})
    with pytest.raises(ConfigError, match="a toy_die_shaker rolls dice; this game asks none"):
        table_dealer(bac, build_game(bac, seeded_source(1)), DealerSettings())


# --- through the table core ------------------------------------------------------------------


class ScriptedShaker:
    """A table's devices (``ChanceDevices``) performed synchronously: the dealer asks, the
    shaker shows its script's faces at once; staff's decisions go to the console part."""

    def __init__(self, dealer: DeviceDealer, faces: list[int]) -> None:
        self.dealer, self.faces = dealer, faces
        self.staff: list[ConsoleAction] = []  # what staff decide at the next hold
        self._answers: list[Any] = []

    def answers(self, request: Any) -> bool:
        return self.dealer.answers(request)

    async def answer(self, chance: Any) -> Any:
        self._perform(self.dealer.ask(chance.round_id, chance.request, chance.hole, 0))
        if not self._answers and self.staff:  # held: staff decide from the console
            self._perform(self.dealer.receive("dealer_console", self.staff.pop(0), 0))
        return self._answers.pop(0)

    def _perform(self, out: list[Any]) -> None:
        self._answers += _answers(out)
        for message in _sent(out):
            if isinstance(message, ShakeDie):
                shown = DieShown(round=message.round, target=message.target, face=self.faces.pop(0))  # fmt: skip  # noqa: E501
                self._perform(self.dealer.receive("toy_die_shaker", shown, 0))

    def stop(self) -> None:
        self.dealer.stop()

    def on_console(self, deliver: Any) -> None:
        pass


def _bet(d: Driver) -> str:
    round_id = d.core.round_id or ""
    for player, spot in (("ann", "player"), ("bob", "dealer")):
        reply = d.play(cmd.Place, player, round_id=round_id, bet_id="b", spot=spot, amount=500)
        assert reply is not None and reply.refusal is None, reply
    return round_id


def _driver(seed: int = 2) -> Driver:
    d = Driver(SETTINGS, seed=seed)
    for player in ("ann", "bob"):
        d.fund(player, 10_000)
        d.seat(player)
    return d


def test_the_core_plays_the_devices_rolls_holds_for_staff_and_replays_them() -> None:
    d = _driver()
    devices = ScriptedShaker(_dealer(), faces=[6, 2, 9, 5, 3, 3])
    d.stores.devices = devices
    first = _bet(d)
    d.run_until(d.now + SETTINGS.betting_seconds + SETTINGS.pause_seconds)
    second = _bet(d)
    devices.staff.append(ConsoleAction(action="confirm", value="4", **STAFF))  # type: ignore[arg-type]
    d.run_until(d.now + SETTINGS.betting_seconds + SETTINGS.pause_seconds)
    third = _bet(d)
    d.run_until(d.now + SETTINGS.betting_seconds + SETTINGS.pause_seconds)
    journal = {r: d.journal.records(r) for r in (first, second, third)}
    assert [r.kind for r in journal[first]] == ["opened", "bet", "bet", "closed", "chance", "chance", "settled"]  # fmt: skip  # noqa: E501
    assert [r.payload for r in journal[first] if r.kind == "chance"] == [
        {"chance": "toy_die", "answer": 6, "device": "shaker-1"},
        {"chance": "toy_die", "answer": 2, "device": "shaker-1"},
    ]
    # The 9 was held, shown to every viewer, and decided by two people before it counted.
    kinds = [r.kind for r in journal[second]]
    assert kinds[4:] == ["held", "staff", "chance", "chance", "settled"]
    assert journal[second][5].payload["value"] == "4"
    assert journal[second][6].payload == {"chance": "toy_die", "answer": 4, "device": "shaker-1"}  # fmt: skip  # noqa: E501
    names = [e.name for e in d.emits if e.round_id == second]
    assert names.index("table_held") < names.index("table_resumed")
    faces = {r: [p.payload["answer"] for p in journal[r] if p.kind == "chance"] for r in journal}
    assert faces == {first: [6, 2], second: [4, 5], third: [3, 3]}
    # Replay rebuilds each round from the device's records (no device, no draw).
    for round_id, records in journal.items():
        replayed = replay_round(build_game(SETTINGS, seeded_source(99)), round_id, records)
        assert replayed.finished == "settled"
        assert isinstance(replayed.engine, HighDieRound)
        assert list(replayed.engine.faces.values()) == faces[round_id]
    # ann on the player, bob on the dealer: 6-2 ann, 4-5 bob, 3-3 a push.
    assert d.ledger.balance(player_account("ann")) == 10_000
    assert d.ledger.balance(player_account("bob")) == 10_000
    assert d.ledger.balance(OPEN_WAGERS) == 0 and d.ledger.reconcile() == {}
    d.close()


def test_a_round_the_devices_left_half_rolled_is_recovered_at_the_next_start() -> None:
    d = _driver()
    d.stores.devices = ScriptedShaker(_dealer(), faces=[5, 1])
    round_id = _bet(d)
    d.faults.arm("record", skip=2)  # "closed" and the player's roll; the dealer's fails
    d.run_until(d.now + SETTINGS.betting_seconds)
    assert d.core.finished
    (recovered,) = d.restart()
    assert (recovered.round_id, recovered.outcome) == (round_id, "voided")
    assert d.ledger.balance(player_account("ann")) == 10_000
    assert d.ledger.balance(OPEN_WAGERS) == 0 and d.ledger.reconcile() == {}
    d.close()


# --- over a device hub, the simulated shaker on real TCP ------------------------------------


class LoopClock:
    def now(self) -> float:
        return asyncio.get_running_loop().time()

    async def sleep_until(self, deadline: float) -> None:
        await asyncio.sleep(max(0.0, deadline - self.now()))


def test_the_simulated_shaker_rolls_for_a_table_core_over_tcp() -> None:
    d = _driver(seed=4)
    run = d.loop.run_until_complete
    known = (KnownDevice("shaker-1", "toy_die_shaker", KEY), KnownDevice("console-1", "dealer_console", CONSOLE_KEY))  # fmt: skip  # noqa: E501
    hub = DeviceHub(known, host="127.0.0.1", port=0, heartbeat_every=0.2, silence_limit=30.0)
    run(hub.start())
    device = SimulatedDevice("shaker-1", "shaker", KEY, "127.0.0.1", hub.port, script=["4", "2"])
    assert isinstance(device, SimulatedShaker) and device.role == "toy_die_shaker"
    stop = asyncio.Event()
    running = d.loop.create_task(device.run(stop))
    table: TableDevices | None = None
    try:
        run(asyncio.wait_for(device.connected.wait(), 5))
        table = TableDevices(_dealer(), hub, LoopClock())
        d.stores.devices = table
        round_id = _bet(d)
        d.run_until(d.now + SETTINGS.betting_seconds)
        records = d.journal.records(round_id)
        assert [r.payload for r in records if r.kind == "chance"] == [
            {"chance": "toy_die", "answer": 4, "device": "shaker-1"},
            {"chance": "toy_die", "answer": 2, "device": "shaker-1"},
        ]
        assert records[-1].kind == "settled"
        assert device.commands == [
            ShakeDie(round=round_id, target="player"),
            ShakeDie(round=round_id, target="dealer"),
        ]
        assert d.ledger.balance(player_account("ann")) == 10_500
    finally:
        if table is not None:
            table.stop()
        stop.set()
        with contextlib.suppress(Exception):
            run(asyncio.wait_for(running, 5))
        run(hub.stop())
        d.close()


def test_no_server_module_names_the_toy_kind_or_role() -> None:
    server = Path(__file__).resolve().parents[2] / "server"
    for path in server.rglob("*.py"):
        text = path.read_text()
        for name in ("DieRoll", "toy_die", "high_die", "shaker"):
            assert name not in text, (path, name)


class SensedRoll(DieRoll):
    """A roll only a device can give: no virtual draw (``outcomes`` not overridden)."""

    kind = "toy_sensed_die"
    outcomes = ChanceRequest.outcomes


SENSED = GameEntry(
    name="high_die_sensed",
    build=GAME.build,
    seats=GAME.seats,
    capabilities=Capabilities(chance=(SensedRoll,)),
)


def _high_die_table(game: str, devices: str = "") -> str:
    return f"""
[[tables]]
id = "hd"
name = "High Die"
game = "{game}"
{devices}
"""


def test_a_kind_only_a_device_answers_needs_that_device_in_the_configuration() -> None:
    """A table whose game asks a kind of chance with no virtual answer, and names no device
    that answers it, is refused when the file is read — not by a table closing in its first
    round. A kind the table can draw is fine without a device."""
    parse_config(_high_die_table("high_die"), "croupier.toml")  # DieRoll: drawn virtually
    registry.register(SENSED)
    try:
        with pytest.raises(ConfigError, match=r"toy_sensed_die.*only a device answers.*none"):
            parse_config(_high_die_table("high_die_sensed"), "croupier.toml")
    finally:
        registry.unregister(SENSED.name)
