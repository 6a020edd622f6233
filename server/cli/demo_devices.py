"""``croupier serve --demo-devices``: the demo lobby plus three tables dealt by simulated
devices — a Baccarat table with a card-reading shoe, a Down Under Blackjack table with a
Masque hole-card reader and a Roulette table with an automated wheel, each with a dealer
console that decides any hold — and the fully automated ``lucky-nines`` table played from
four simulated player stations (docs/electronic-tables.md), so a new user sees devices and
stations at work in the browser. Each station's touchscreen URL is printed as its agent
receives it; a station whose credits run low is given a $100 bill.

The simulators run in the server's own process and connect to its device port over loopback
TCP like real devices, with keys made up for this run. They are a demonstration: the
simulated shoe and wheel draw from a seeded ``random.Random``, never from the certified RNG,
so a demo with devices is play money only (docs/devices.md, "Simulators").
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import Callable
from dataclasses import dataclass

from server.config import ServerSettings, demo_config_text, parse_config
from server.devices.simulator import Faults, SimulatedDevice
from server.devices.station_simulator import StationSimulator

__all__ = ["DEVICES", "DemoDevice", "DemoDevices"]


@dataclass(frozen=True)
class DemoDevice:
    id: str
    role: str  # the protocol's role
    simulate: str  # ``croupier device simulate --role``
    table: str


DEVICES = (
    DemoDevice("demo-shoe", "card_source", "shoe", "baccarat-shoe"),
    DemoDevice("demo-console-baccarat", "dealer_console", "console", "baccarat-shoe"),
    DemoDevice("demo-reader", "hole_card_reader", "reader", "down-under-reader"),
    DemoDevice("demo-console-down-under", "dealer_console", "console", "down-under-reader"),
    DemoDevice("demo-wheel", "wheel", "wheel", "roulette-wheel"),
    DemoDevice("demo-console-roulette", "dealer_console", "console", "roulette-wheel"),
)

TABLES = """
[[tables]]
id = "baccarat-shoe"
name = "Baccarat — card-reading shoe (simulated device)"
game = "baccarat"
betting_seconds = 15
minimum = 100
maximum = 500000
[tables.options]
variant = "standard"
decks = 8
[tables.devices]
card_source = "demo-shoe"
dealer_console = "demo-console-baccarat"

[[tables]]
id = "down-under-reader"
name = "Down Under Blackjack — Masque reader (simulated device)"
game = "down_under_blackjack"
betting_seconds = 15
decision_seconds = 12
seats = 5
minimum = 100
maximum = 100000
[tables.options]
decks = 6
match_the_dealer = true
[tables.devices]
hole_card_reader = "demo-reader"
dealer_console = "demo-console-down-under"

[[tables]]
id = "roulette-wheel"
name = "Roulette — automated wheel (simulated device)"
game = "roulette"
betting_seconds = 15
minimum = 100
maximum = 100000
[tables.options]
wheel = "single_zero"
five_adjacent = true
[tables.devices]
wheel = "demo-wheel"
dealer_console = "demo-console-roulette"
"""

# The fully automated Lucky Nines table of the demo lobby, played from four stations.
STATION_TABLE = "lucky-nines"
STATIONS = tuple(f"demo-station-{seat}" for seat in range(1, 5))
TOP_UP = 10_000  # a station below this is given a bill of it (minor units)

# A card leaves the shoe, a ball drops, a lamp lights: not instantly, as at a real table.
DEVICE_SECONDS = {"shoe": 0.6, "reader": 0.4, "wheel": 3.0, "console": 0.0}


class DemoDevices:
    """The demo's settings (with this run's device keys) and its simulators."""

    def __init__(self, base_text: str | None = None) -> None:
        self.keys = {device.id: secrets.token_bytes(16) for device in DEVICES}
        text = base_text if base_text is not None else demo_config_text()
        # Devices listen on loopback only, on a port of the system's choosing: the
        # simulators are told where.
        text += '\n[device_link]\nhost = "127.0.0.1"\nport = 0\n'
        for device in DEVICES:
            key = self.keys[device.id].hex()
            text += f'\n[[devices]]\nid = "{device.id}"\nrole = "{device.role}"\nkey = "{key}"\n'
        for seat, station in enumerate(STATIONS, start=1):
            self.keys[station] = secrets.token_bytes(16)
            text += (
                f'\n[[devices]]\nid = "{station}"\nrole = "station"\n'
                f'key = "{self.keys[station].hex()}"\ntables = ["{STATION_TABLE}"]\nseat = {seat}\n'
            )
        self.text = text + TABLES
        self._tasks: list[asyncio.Task[None]] = []
        self._stop = asyncio.Event()
        self.simulators: list[SimulatedDevice] = []
        self.screens: dict[str, str] = {}  # station -> its touchscreen's path with the token

    def settings(self) -> ServerSettings:
        return parse_config(self.text, "<built-in demo with devices>")

    def start(
        self,
        port: int,
        *,
        seconds: dict[str, float] | None = None,
        web: str = "http://127.0.0.1:8000",
        out: Callable[[str], None] = lambda line: None,
    ) -> None:
        """Connect every simulator to the device port ``port`` (on the running loop);
        ``seconds``: each role's time to answer (``DEVICE_SECONDS`` by default); ``out``
        is told each station's touchscreen URL (under ``web``) as its agent receives it."""
        seconds = DEVICE_SECONDS if seconds is None else seconds
        out(f"main display: {web}/display/{STATION_TABLE}")
        for station in STATIONS:

            def screen(path: str, token: str, station: str = station) -> None:
                self.screens[station] = f"{path}#token={token}"
                out(f"{station} touchscreen: {web}{self.screens[station]}")

            agent = StationSimulator(
                station, self.keys[station], "127.0.0.1", port, on_screen=screen
            )
            self.simulators.append(agent)
            self._tasks.append(asyncio.create_task(self._station(agent), name=f"demo:{station}"))
        for device in DEVICES:
            sim = SimulatedDevice(
                device.id,
                device.simulate,
                self.keys[device.id],
                "127.0.0.1",
                port,
                seed=secrets.randbits(32),
                faults=Faults(delay=seconds.get(device.simulate, 0.0)),
                wheel="single_zero",
                table=device.table,
                decide=("confirm", "continue", "reopen", "void"),
                staff=("demo-dealer", "demo-supervisor"),
            )
            self.simulators.append(sim)
            self._tasks.append(asyncio.create_task(sim.run(self._stop), name=f"demo:{device.id}"))

    async def _station(self, agent: StationSimulator) -> None:
        """Run a station's agent; give it a bill whenever its credits run low."""
        running = asyncio.create_task(agent.run(self._stop))
        while not running.done():
            state = agent.state
            low = state is not None and state.enabled and state.credits < TOP_UP
            if agent.connected.is_set() and low:
                with contextlib.suppress(TimeoutError):
                    await agent.insert_bill(TOP_UP, timeout=5)
            await asyncio.sleep(1)
        await running

    async def stop(self) -> None:
        self._stop.set()
        await asyncio.gather(*self._tasks, return_exceptions=True)
