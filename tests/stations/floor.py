"""A casino floor for the station tests: a real ``croupier`` service with an electronic
Lucky Nines table and two player stations, simulated station agents on real loopback TCP,
and touchscreens as real WebSocket clients (docs/electronic-tables.md)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from functools import partial
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

from server.app.service import Service
from server.config import parse_config
from server.devices.station_simulator import StationSimulator
from server.protocol.codec import decode_server, encode
from server.protocol.messages import (
    PROTOCOL_VERSION,
    CashedOut,
    CashOut,
    ErrorMessage,
    Hello,
    Join,
    PlaceBet,
    StationStatus,
    TableEvent,
    Welcome,
)
from server.stations.meters import expected_balance, station_account
from server.wallet.ledger import OPEN_WAGERS
from tests.devices.test_device_tables import raise_failures

KEYS = {"s1": "a1" * 16, "s2": "b2" * 16}
# A bet's refusals when it reached the table after its window closed (nothing moved).
LATE = ("betting_closed", "round_not_open")

CONFIG = """
[server]
starting_balance = 100000

[device_link]
port = 0

[stations]
handpay_limit = {handpay_limit}
ticket_limit = {ticket_limit}
ticket_expiry_days = {ticket_expiry_days}
bills = [100, 500, 1000, 2000, 5000, 10000]

[[devices]]
id = "s1"
role = "station"
key = "{s1}"
tables = ["lucky"]
seat = 1

[[devices]]
id = "s2"
role = "station"
key = "{s2}"
tables = ["lucky"]
seat = 2

[[tables]]
id = "lucky"
name = "Lucky Nines (electronic)"
game = "baccarat"
betting_seconds = 0.8
pause_seconds = 0.2
seats = 4
minimum = 100
maximum = 500000
[tables.options]
decks = 8
automated = true
[tables.options.side_wagers]
lucky_nines = "A"
"""


def config(
    *,
    handpay_limit: int = 10_000_000,
    ticket_limit: int = 1_000_000,
    ticket_expiry_days: float = 30,
) -> str:
    return CONFIG.format(
        handpay_limit=handpay_limit,
        ticket_limit=ticket_limit,
        ticket_expiry_days=ticket_expiry_days,
        **KEYS,
    )


@contextlib.asynccontextmanager
async def running(tmp: Path, text: str | None = None) -> AsyncIterator[Service]:
    service = Service(parse_config(text or config(), str(tmp / "croupier.toml")), tmp / "data", port=0)  # fmt: skip  # noqa: E501
    await service.start(stagger=False)
    try:
        yield service
    finally:
        await service.stop()


@contextlib.asynccontextmanager
async def stations(
    service: Service, *ids: str, tmp: Path | None = None, **knobs: Any
) -> AsyncIterator[list[StationSimulator]]:
    """Station agents connected (and self-tested) for the block; each keeps its
    non-volatile memory in ``tmp`` when given, so a later block resumes its session. On
    exit the server's device port closes first, as when the server stops: the agents' links
    going down then is no station's fault (and locks nothing)."""
    stop = asyncio.Event()
    made = [
        StationSimulator(
            i,
            bytes.fromhex(KEYS[i]),
            "127.0.0.1",
            service.devices.port,
            state=(tmp / f"{i}.json") if tmp is not None else None,
            **knobs,
        )
        for i in ids
    ]
    tasks = [asyncio.create_task(s.run(stop)) for s in made]
    try:
        await asyncio.wait_for(asyncio.gather(*(s.connected.wait() for s in made)), 5)
        await until(lambda: all(s.screen_token for s in made))
        yield made
    finally:
        await service.devices.stop()
        stop.set()
        raise_failures("station agents", await asyncio.gather(*tasks, return_exceptions=True))


async def until(condition: Any, seconds: float = 5.0) -> bool:
    for _ in range(int(seconds / 0.05)):
        if condition():
            return True
        await asyncio.sleep(0.05)
    return bool(condition())


class Screen:
    """A touchscreen (or any WebSocket client): what it received, and requests that wait
    for their answer."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self._received: list[Any] = []
        self._failure: Exception | None = None
        self._ref = 0
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        try:
            async for frame in self.ws:
                self._received.append(decode_server(frame))  # type: ignore[arg-type]
        except Exception as exc:  # a frame it cannot decode, the connection failing
            self._failure = exc

    @property
    def received(self) -> list[Any]:
        """What the screen received, in order; if its reader stopped on an error (a frame
        it could not decode, the connection failing), that error, with its cause."""
        self.check()
        return self._received

    def check(self) -> None:
        """Raise the error the screen's reader stopped on, if it did."""
        failure = self._failure
        if failure is not None:
            raise AssertionError(f"the screen stopped reading: {failure!r}") from failure

    async def ask(self, message: Any, seconds: float = 5.0) -> Any:
        """Send ``message`` with a new ``ref``; the first reply carrying it (the error the
        screen's reader stopped on, if it stops before the reply)."""
        self._ref += 1
        ref = self._ref
        message.ref = ref
        await self.ws.send(encode(message))
        await until(lambda: self._answer(ref) is not None, seconds)
        answer = self._answer(ref)
        assert answer is not None, f"no answer to {message}"
        return answer

    def _answer(self, ref: int) -> Any:
        return next((m for m in self.received if getattr(m, "ref", None) == ref), None)

    def last(self, kind: type) -> Any:
        return next((m for m in reversed(self.received) if isinstance(m, kind)), None)

    def station(self) -> StationStatus:
        status = self.last(StationStatus)
        assert status is not None
        return status  # type: ignore[no-any-return]

    def ended(self, round_id: str) -> bool:
        """The round settled or was voided (its event reached this screen)."""
        return any(
            isinstance(m, TableEvent)
            and m.round == round_id
            and m.event in ("round_settled", "round_voided")
            for m in self.received
        )

    def events(self, name: str) -> list[TableEvent]:
        return [m for m in self.received if isinstance(m, TableEvent) and m.event == name]

    async def bet(self, table: str, spot: str, amount: int, bet_id: str) -> Any:
        """Place a bet in the round now open (waiting for one to open)."""
        (answer,) = await self.bets(table, (spot, amount, bet_id))
        return answer

    async def bets(self, table: str, *bets: tuple[str, int, str]) -> list[Any]:
        """Place ``bets`` (spot, amount, bet id) in the round now open (waiting for one to
        open), all sent before any answer is awaited, so that they land in the same betting
        window; their answers, in order. On a loaded machine they may come after the window
        closed: refused all (nothing moved), they are placed in the next round, in three
        rounds at most; refused some only (the window closed between them), that fails."""
        closed: str | None = None
        for _ in range(3):
            round_id = await self.open_round(table, after=closed)
            placed = [
                PlaceBet(table=table, round=round_id, bet_id=bet_id, spot=spot, amount=amount)
                for spot, amount, bet_id in bets
            ]
            answers = list(await asyncio.gather(*(self.ask(bet) for bet in placed)))
            late = [a for a in answers if isinstance(a, ErrorMessage) and a.code in LATE]
            if not late:
                return answers
            assert len(late) == len(answers), f"round {round_id} closed between the bets: {answers}"  # fmt: skip  # noqa: E501
            closed = round_id
        raise AssertionError(f"the bets came after the betting window in three rounds: {answers}")

    async def open_round(self, table: str, after: str | None = None) -> str:
        """The round taking bets at ``table`` (waiting for one to open; for one after the
        round ``after``, if given)."""

        def opened() -> str | None:
            events = [m for m in self.received if isinstance(m, TableEvent) and m.table == table]
            if events and events[-1].event == "betting_opened" and events[-1].round != after:
                return events[-1].round
            return None

        assert await until(lambda: opened() is not None, 10), "no round opened"
        round_id = opened()
        assert round_id is not None
        return round_id

    async def close(self) -> None:
        await self.ws.close()
        self._reader.cancel()


@contextlib.asynccontextmanager
async def screen(service: Service, token: str | None = None, name: str = "Ann") -> AsyncIterator[Screen]:  # fmt: skip  # noqa: E501
    """A touchscreen logged in with a station's token (or a demo player by ``name``)."""
    async with connect(f"ws://127.0.0.1:{service.port}/ws") as ws:
        s = Screen(ws)
        hello = Hello(version=PROTOCOL_VERSION, token=token) if token else Hello(version=PROTOCOL_VERSION, name=name)  # fmt: skip  # noqa: E501
        welcome = await s.ask(hello)
        assert isinstance(welcome, Welcome), welcome
        try:
            yield s
        finally:
            await s.close()
        s.check()  # an error after the block's last look fails it too


async def ticket_for_a_bill(service: Service, station: StationSimulator, amount: int) -> CashedOut:  # fmt: skip  # noqa: E501
    """A bill of ``amount`` into ``station`` (which holds no credits), then CASH OUT on its
    touchscreen once it shows them: the ticket printed."""
    assert (await station.insert_bill(amount)).accept
    async with screen(service, station.screen_token) as touch:
        assert await until(lambda: touch.last(StationStatus) is not None)
        assert await until(lambda: touch.station().credits == amount)
        ticket = await touch.ask(CashOut())
    assert isinstance(ticket, CashedOut), ticket
    return ticket


async def join(s: Screen, table: str = "lucky", role: str = "player") -> Any:
    return await s.ask(Join(table=table, role=role))  # type: ignore[arg-type]


def credits(service: Service, station: str) -> int:
    return service.ledger.balance(station_account(station))


def assert_reconciles(service: Service, *ids: str) -> None:
    """The ledger reconciles, nothing is left in open wagers, and each station's meters
    agree with its credits to the cent."""
    assert service.ledger.reconcile() == {}
    assert service.ledger.total() == 0
    assert service.ledger.balance(OPEN_WAGERS) == 0
    store = service.stations_store
    for station in ids:
        read = partial(service.ledger.history_after, station_account(station))
        row = store.load(station)
        assert expected_balance(row.meters, store.in_play(station, read)) == credits(service, station)  # fmt: skip  # noqa: E501


def refused(answer: Any, code: str) -> bool:
    return isinstance(answer, ErrorMessage) and answer.code == code
