"""Hot table: a featured game with thousands of viewers and a few hundred bettors.

Nine users in ten watch one table (``--croupier-tables``, default ``baccarat``) without
betting — the fan-out of every event to thousands of connections is the load — and one in
ten bets on every round there. Viewers decode nothing but the frames that end a round.

    locust -f loadtests/scenarios/hot_table.py --headless --host ws://127.0.0.1:8000/ws \\
        -u 3000 -r 100 -t 10m --csv runs/hot/run

The run fails (exit status 1) when the money check at its end finds any mismatch.
"""

from __future__ import annotations

from locust import between, constant, task

from loadtests.scenarios.croupier import CroupierUser

TABLE = ("baccarat",)


class Bettor(CroupierUser):
    weight = 1
    role = "player"
    tables = TABLE
    wait_time = between(0.0, 0.5)

    @task
    def round(self) -> None:
        self.play_round()


class Viewer(CroupierUser):
    weight = 9
    role = "spectator"
    skim = True
    tables = TABLE
    wait_time = constant(0)

    @task
    def watch(self) -> None:
        self.play_round()
