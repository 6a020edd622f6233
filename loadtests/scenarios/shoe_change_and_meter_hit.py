"""Shoe changes and progressive hits under load: the moments a live table does the most
at once — a new shoe shuffled and burned, a jackpot paid from a meter many tables share.

Serve ``loadtests/scenarios/shoe_change_and_meter_hit.toml`` (two baccarat tables whose
cover card comes out every few rounds and which share one Must-Hit-By Mystery Bonus meter);
every player bets a main wager and a large Heavenly 9 Progressive wager on every round, so
the shared meter passes its hit value again and again; spectators watch.

    croupier serve --config loadtests/scenarios/shoe_change_and_meter_hit.toml &
    locust -f loadtests/scenarios/shoe_change_and_meter_hit.py --headless \\
        --host ws://127.0.0.1:8000/ws -u 300 -r 50 -t 5m --csv runs/meter/run

Besides the money check (awards included), the run fails when it saw no new shoe or no
progressive award: it would not have tested what it is for.
"""

from __future__ import annotations

import sys
from typing import Any

from locust import between, events, task

from loadtests.scenarios.croupier import CroupierUser
from server.protocol.messages import TableEvent

TABLES = ("meter-1", "meter-2")
SEEN = {"shoe_shuffled": 0, "progressive_awarded": 0}


class Player(CroupierUser):
    weight = 4
    role = "player"
    tables = TABLES
    wait_time = between(0.0, 1.0)

    @task
    def round(self) -> None:
        self.play_round()

    def read(self, frame: bytes) -> Any:
        message = super().read(frame)
        if isinstance(message, TableEvent) and message.event in SEEN:
            SEEN[message.event] += 1
        return message

    def bet(self, round_id: str, sent: dict[int, float]) -> None:
        """The minimum on the banker, and a Heavenly 9 wager of a tenth of the balance up to
        the spot's maximum: big contributions, so the shared meter hits often."""
        assert self.book is not None
        minimum = self.limits["minimum"]
        h9 = self.spot_limits.get("heavenly_9_progressive", {})
        large = min(h9.get("maximum", self.limits["maximum"]), self.book.balance // 10)
        bets = [
            ("banker", minimum),
            ("heavenly_9_progressive", max(large, h9.get("minimum", minimum))),
        ]
        for n, (spot, amount) in enumerate(bets):
            self.place(round_id, f"{round_id}-{n}", spot, amount, sent)


class Spectator(CroupierUser):
    weight = 1
    role = "spectator"
    tables = TABLES
    wait_time = between(0.0, 1.0)

    @task
    def watch(self) -> None:
        self.play_round()


@events.quitting.add_listener
def _saw_it(environment: Any, **kwargs: Any) -> None:
    print(f"shoe_change_and_meter_hit: saw {SEEN}", file=sys.stderr)
    if not all(SEEN.values()):
        print("shoe_change_and_meter_hit: no new shoe or no award seen", file=sys.stderr)
        environment.process_exit_code = 1
