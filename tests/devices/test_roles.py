"""Device roles as plug-ins (issue #30, item 5; docs/architecture.md, "Adding a device role"):
every role is found by its name in one registry, an unknown one is refused with a clear error,
and a role defined here alone — its messages, its dealer part and its simulator — answers a
kind of chance no built-in role knows, through the dealer, the codec, the table's devices,
the hub and a simulated device on real TCP, with no other file changed."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from rng.sources import HmacDrbgSource
from server.core.effects import Chance, Decided, Irregular
from server.devices import message_types, roles
from server.devices.dealing import Answer, DealerSettings, DeviceDealer, Send
from server.devices.frames import encode_frame
from server.devices.handshake import INVALID_HELLO, DeviceSessions, KnownDevice, Refusal
from server.devices.hub import DeviceHub
from server.devices.message_types import Message, RoundId
from server.devices.messages import (
    FROM_DEVICE,
    ROLES,
    ConsoleAction,
    Hello,
    decode_from_device,
    decode_hello,
    decode_to_device,
    encode_message,
)
from server.devices.roles import DeviceRole, RoleDealer, UnknownRole, device_role
from server.devices.roles.base import Pending
from server.devices.simulator import SimulatedDevice
from server.devices.table_devices import TableDevices, table_dealer
from server.games import registry
from server.games.table import Capabilities, ConfigError, GameEntry, SeatLimit, TableSettings
from server.tables.games import build_game
from tests.devices.test_handshake import frame
from tests.games.test_sans_io import DEVICE_FORBIDDEN, LOADED_NEVER, _forbidden, _loaded_by
from tests.high_card.table import HighCardGame

KEY = bytes.fromhex("5a" * 16)
DEVICES = Path(__file__).resolve().parents[2] / "server" / "devices"


# --- a toy role: a coin tosser answering a toss, a kind of chance no game of ours asks --------


@dataclass(frozen=True, slots=True)
class Toss:
    """The toy chance request: a coin's face is needed."""

    coin: str = "coin"


@dataclass(frozen=True, slots=True)
class Tossed:
    """The toy answer (a journal record's stand-in)."""

    face: str
    device: str


class TossNow(Message, tag="toy_toss_now", frozen=True):
    round: RoundId


class TossResult(Message, tag="toy_toss_result", frozen=True):
    round: RoundId
    face: str


class Tosser(RoleDealer):
    """Asks the coin to be tossed; a face that is neither is held for staff to enter."""

    def __init__(self, table: DeviceDealer, role: str, device: str, options: Mapping[str, Any]) -> None:  # fmt: skip  # noqa: E501
        super().__init__(table, role, device, options)
        self.faces: tuple[str, ...] = options.get("faces", ("heads", "tails"))

    @classmethod
    def options(cls, where: str, game: Any, capabilities: Capabilities) -> dict[str, Any]:
        if not capabilities.asks(Toss):
            raise ConfigError(f"{where}: a toy_tosser tosses coins; this game asks none")
        return {"faces": ("heads", "tails")}

    def request(self, pending: Pending, now: float) -> list[Any]:
        return [Send(self.role, TossNow(round=pending.round_id))]

    def receive(self, message: Any, now: float) -> list[Any]:
        if not isinstance(message, TossResult):
            return super().receive(message, now)
        if self.table.awaiting(Toss, message.round) is None:
            return []
        if message.face not in self.faces:
            reason = f"{self.device} landed on {message.face!r}: enter the face"
            return self.table.hold(reason, self.device, ("confirm", "void"), now, message, needs_value=True)  # fmt: skip  # noqa: E501
        return self.table.resume(Tossed(message.face, self.device))

    def timeout(self, pending: Pending, now: float) -> list[Any]:
        reason = f"{self.device} did not land"
        return self.table.hold(reason, self.device, ("confirm", "void"), now, needs_value=True)

    def decide(self, choice: str, value: str, pending: Pending) -> Any:
        if value not in self.faces:
            raise ValueError(f"enter heads or tails, not {value!r}")
        return Tossed(value, self.device)


class SimulatedTosser(SimulatedDevice):
    """The toy role's simulator: tosses its script (else heads) on each ``toy_toss_now``."""

    simulates = "toy_tosser"

    def _answer(self, command: Any) -> None:
        if isinstance(command, TossNow):
            face = self.script.popleft() if self.script else "heads"
            self.send(TossResult(round=command.round, face=face))


TOY = DeviceRole(
    name="toy_tosser",
    short="tosser",
    sends=(TossResult,),
    commands=(TossNow,),
    answers=(Toss,),
    dealer=Tosser,
    simulator=f"{__name__}:SimulatedTosser",
)
TOY_GAME = GameEntry(
    name="toy_coin_game",
    build=HighCardGame,
    seats=SeatLimit(4, "a test's own bound"),
    capabilities=Capabilities(chance=(Toss,)),  # type: ignore[arg-type]
)


@pytest.fixture
def toy() -> Iterator[DeviceRole]:
    roles.register(TOY)
    registry.register(TOY_GAME)
    try:
        yield TOY
    finally:
        roles.unregister(TOY.name)
        registry.unregister(TOY_GAME.name)


SETTINGS = DealerSettings(answer_seconds=5, hold_seconds=60, max_restarts=1)


def answers(out: list[Any]) -> list[Any]:
    return [item.result for item in out if isinstance(item, Answer)]


def sent(out: list[Any]) -> list[Any]:
    return [item.message for item in out if isinstance(item, Send)]


# --- the registry -------------------------------------------------------------------------


def test_the_built_in_roles_are_registered_in_order() -> None:
    assert list(ROLES) == ["card_source", "hole_card_reader", "wheel", "dealer_console", "station"]  # fmt: skip  # noqa: E501
    assert device_role("shoe") is device_role("card_source")  # the simulator's short name


def test_an_unknown_role_is_refused_with_the_roles_there_are() -> None:
    with pytest.raises(UnknownRole) as unknown:
        device_role("toaster")
    assert str(unknown.value) == (
        "unknown device role 'toaster' "
        "(one of card_source, hole_card_reader, wheel, dealer_console, station)"
    )
    with pytest.raises(UnknownRole, match="unknown device role 'toaster'"):
        DeviceDealer("t", {"toaster": "t-1"})
    with pytest.raises(UnknownRole, match="unknown device role 'toaster'"):
        decode_from_device("toaster", b"\x80")


def test_a_table_naming_an_unknown_role_is_a_configuration_error() -> None:
    table = TableSettings("t1", "T", "baccarat", devices={"toaster": "t-1"})
    game = build_game(table, HmacDrbgSource("t"))
    with pytest.raises(ConfigError) as refused:
        table_dealer(table, game, DealerSettings())
    assert "table t1 (baccarat): devices: unknown device role 'toaster'" in str(refused.value)


def test_a_hello_in_an_unknown_role_is_an_invalid_hello() -> None:
    body = encode_message(Hello("shoe-1", "toaster", 1, 0))
    with pytest.raises(message_types.DeviceMessageError, match="unknown role 'toaster'"):
        decode_hello(body)
    sessions = DeviceSessions([KnownDevice("shoe-1", "card_source", KEY)])
    refusal = sessions.hello(frame(encode_frame(0, 0, body, key=KEY, control=True)), 0.0)
    assert isinstance(refusal, Refusal) and refusal.code == INVALID_HELLO


def test_a_role_name_or_message_type_taken_is_refused() -> None:
    with pytest.raises(ValueError, match="registered already"):
        roles.register(DeviceRole(name="wheel", short="wheel2", sends=()))
    with pytest.raises(ValueError, match="already names"):
        roles.register(DeviceRole(name="wheel2", short="wheel", sends=()))

    class Clash(Message, tag="card_read", frozen=True):
        round: RoundId

    with pytest.raises(ValueError, match="'card_read' of 'clash' is 'card_source''s already"):
        roles.register(DeviceRole(name="clash", short="clash", sends=(Clash,)))
    assert "clash" not in ROLES


def test_the_dealer_and_the_table_devices_name_no_role() -> None:
    """The per-role branches are gone: the dealer, the table's devices and the codec find
    each role in the registry."""
    for name in ("dealing.py", "table_devices.py", "hub.py", "simulator.py"):
        text = (DEVICES / name).read_text()
        for role in ("hole_card_reader", '"wheel"', "read_hole", "hasattr"):
            assert role not in text, (name, role)


@pytest.mark.parametrize(
    "path",
    sorted([*(DEVICES / "roles").glob("*.py"), DEVICES / "message_types.py"]),
    ids=lambda p: p.name,
)
def test_each_role_module_is_sans_io(path: Path) -> None:
    assert not _forbidden(path, DEVICE_FORBIDDEN), path


@pytest.mark.parametrize("module", ["server.devices.dealing", "server.devices.messages"])
def test_the_dealer_and_the_codec_load_no_io_module(module: str) -> None:
    """Each role names its simulator (an asyncio device) by its module, imported only when a
    simulator runs: the sans-I/O dealer never loads it."""
    loaded = _loaded_by(module)
    assert not {m for m in loaded if m.split(".")[0] in LOADED_NEVER}
    assert not {m for m in loaded if m.startswith("server.devices.simulat")}


# --- a toy role, registered here alone -------------------------------------------------------


def test_a_toy_role_is_decoded_like_a_built_in_one(toy: DeviceRole) -> None:
    assert "toy_tosser" in ROLES and FROM_DEVICE["toy_tosser"][0] is TossResult
    result = TossResult(round="t.1", face="tails")
    assert decode_from_device("toy_tosser", encode_message(result)) == result
    assert decode_to_device(encode_message(TossNow(round="t.1"))) == TossNow(round="t.1")
    with pytest.raises(message_types.DeviceMessageError):  # another role's message
        decode_from_device("wheel", encode_message(result))
    assert decode_hello(encode_message(Hello("coin-1", "toy_tosser", 1, 0))).role == "toy_tosser"


def test_a_toy_role_answers_its_chance_request_and_its_holds(toy: DeviceRole) -> None:
    dealer = DeviceDealer(
        "t",
        {"toy_tosser": "coin-1", "dealer_console": "c"},
        settings=SETTINGS,
        faces=("heads", "tails"),
    )
    assert dealer.answers(Toss()) and not dealer.answers(object())
    out = dealer.ask("t.1", Toss(), None, 0)
    assert sent(out) == [TossNow(round="t.1")]
    out = dealer.receive("toy_tosser", TossResult(round="t.1", face="tails"), 1)
    assert answers(out) == [Tossed("tails", "coin-1")]
    # Nothing in time: the dealer's own hold, decided by staff through the toy's part.
    dealer.ask("t.2", Toss(), None, 2)
    (held,) = answers(dealer.tick(7))
    assert held.reason == "coin-1 did not land" and held.options == ("confirm", "void")
    sign = {"table": "t", "dealer": "dana", "supervisor": "sam"}
    refused = dealer.receive("dealer_console", ConsoleAction(action="confirm", value="edge", **sign), 8)  # type: ignore[arg-type]  # fmt: skip  # noqa: E501
    assert answers(refused) == [] and "enter heads or tails" in sent(refused)[0].text
    out = dealer.receive("dealer_console", ConsoleAction(action="confirm", value="heads", **sign), 9)  # type: ignore[arg-type]  # fmt: skip  # noqa: E501
    (decided,) = answers(out)
    assert isinstance(decided, Decided) and decided.answer == Tossed("heads", "coin-1")
    # A device fault suspends it like any table device's.
    dealer.ask("t.3", Toss(), None, 10)
    out = dealer.receive("toy_tosser", message_types.DeviceFault(code="tilt"), 11)
    assert answers(out)[0].options == ("void",)
    out = dealer.stop()
    assert answers(out) == [Irregular("the table was stopped")]


def test_a_toy_role_is_configured_from_what_the_game_declares(toy: DeviceRole) -> None:
    coin = TableSettings("c1", "C", "toy_coin_game", seats=4, devices={"toy_tosser": "coin-1"})
    dealer = table_dealer(coin, build_game(coin, HmacDrbgSource("c")), DealerSettings())
    assert dealer.answers(Toss())
    bac = TableSettings("b1", "B", "baccarat", devices={"toy_tosser": "coin-1"})
    with pytest.raises(ConfigError, match="a toy_tosser tosses coins; this game asks none"):
        table_dealer(bac, build_game(bac, HmacDrbgSource("b")), DealerSettings())


class LoopClock:
    def now(self) -> float:
        return asyncio.get_running_loop().time()

    async def sleep_until(self, deadline: float) -> None:
        await asyncio.sleep(max(0.0, deadline - self.now()))


@contextlib.asynccontextmanager
async def hub_with(*devices: KnownDevice) -> AsyncIterator[DeviceHub]:
    hub = DeviceHub(devices, host="127.0.0.1", port=0, heartbeat_every=0.2, silence_limit=2.0)
    await hub.start()
    try:
        yield hub
    finally:
        await hub.stop()


def test_a_toy_roles_simulator_answers_a_table_over_tcp(toy: DeviceRole) -> None:
    async def scenario() -> None:
        async with hub_with(KnownDevice("coin-1", "toy_tosser", KEY)) as hub:
            dealer = DeviceDealer("coin", {"toy_tosser": "coin-1"}, faces=("heads", "tails"))
            table = TableDevices(dealer, hub, LoopClock())
            coin = SimulatedDevice("coin-1", "tosser", KEY, "127.0.0.1", hub.port, script=["tails"])  # fmt: skip  # noqa: E501
            assert isinstance(coin, SimulatedTosser) and coin.role == "toy_tosser"
            stop = asyncio.Event()
            running = asyncio.create_task(coin.run(stop))
            try:
                await asyncio.wait_for(coin.connected.wait(), 5)
                answer = await asyncio.wait_for(table.answer(Chance(Toss(), round_id="coin.1")), 5)  # type: ignore[arg-type]  # fmt: skip
                assert answer == Tossed("tails", "coin-1")
                assert coin.commands == [TossNow(round="coin.1")]
            finally:
                table.stop()
                stop.set()
                await running

    asyncio.run(scenario())
