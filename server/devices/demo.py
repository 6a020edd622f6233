"""``croupier serve --demo-devices``: the demo lobby plus three tables dealt by simulated
devices — a Baccarat table with a card-reading shoe, a Down Under Blackjack table with a
Masque hole-card reader and a Roulette table with an automated wheel, each with a dealer
console that decides any hold — so a new user sees devices at work in the browser.

The simulators run in the server's own process and connect to its device port over loopback
TCP like real devices, with keys made up for this run. They are a demonstration: the
simulated shoe and wheel draw from a seeded ``random.Random``, never from the certified RNG,
so a demo with devices is play money only (docs/devices.md, "Simulators").
"""

from __future__ import annotations

import asyncio
import secrets
from dataclasses import dataclass

from server.config import ServerSettings, demo_config_text, parse_config
from server.devices.simulator import Faults, SimulatedDevice

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
        self.text = text + TABLES
        self._tasks: list[asyncio.Task[None]] = []
        self._stop = asyncio.Event()
        self.simulators: list[SimulatedDevice] = []

    def settings(self) -> ServerSettings:
        return parse_config(self.text, "<built-in demo with devices>")

    def start(self, port: int, *, seconds: dict[str, float] | None = None) -> None:
        """Connect every simulator to the device port ``port`` (on the running loop);
        ``seconds``: each role's time to answer (``DEVICE_SECONDS`` by default)."""
        seconds = DEVICE_SECONDS if seconds is None else seconds
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

    async def stop(self) -> None:
        self._stop.set()
        await asyncio.gather(*self._tasks, return_exceptions=True)
