"""Peak evening: the lobby fills to the target concurrency and stays busy.

Seven users in ten are players who bet on every round — one to three legal wagers on a mix
of games weighted as a casino floor is (baccarat most, then roulette, then the rest) — and
who leave after a few rounds to be replaced by new players (churn: new logins, new seats, all
the time); three in ten are spectators who browse the lobby, watch a table a while, and move
on. Think times are a few seconds between rounds. Run it as any Locust file; the ramp is
``-r`` users a second up to ``-u``:

    locust -f loadtests/scenarios/peak_evening.py --headless --host ws://127.0.0.1:8000/ws \\
        -u 500 -r 25 -t 10m --csv runs/peak/run

The run fails (exit status 1) when the money check at its end finds any mismatch
(``loadtests/scenarios/croupier.py``).
"""

from __future__ import annotations

from locust import between, task

from loadtests.scenarios.croupier import CroupierUser
from loadtests.scenarios.floors import PEAK_EVENING
from server.protocol.messages import ListTables, Lobby

# The floor's mix: a table appears as often as its share of players.
FLOOR = PEAK_EVENING


class Player(CroupierUser):
    weight = 7
    role = "player"
    tables = FLOOR
    wait_time = between(0.5, 3.0)  # a player's pause between rounds

    def on_start(self) -> None:
        super().on_start()
        self.stay = self.rng.randint(3, 12)

    @task
    def round(self) -> None:
        self.play_round()
        self.stay -= 1
        if self.stay <= 0:  # churn: this player goes home, a new one sits down
            self.leave()
            self.sit_down()
            self.stay = self.rng.randint(3, 12)


class Spectator(CroupierUser):
    weight = 3
    role = "spectator"
    skim = True
    tables = FLOOR
    wait_time = between(1.0, 5.0)

    @task
    def watch(self) -> None:
        self.play_round()
        if self.rng.random() < 0.3:  # browse the lobby, then watch another table
            self.send(ListTables())
            self.expect(Lobby)
            self.leave()
            self.table = self.rng.choice(self.choices)
            self.sit_down()
