"""Reconnect storm: every client loses its connection at the same instant — a node killed,
the load balancer restarted — and comes back within a few seconds, logging in again with
its token and resuming the table from the last event it saw.

Players (eight in ten) and spectators play as in ``peak_evening``; every
``--croupier-storm-seconds`` (default 30) from the start of the run each user drops its
connection without a word, waits a random 0–3 s, and reconnects: ``reconnect+resume`` is
measured from the drop to the table's answer (``joined``, resumed or with a snapshot).

    locust -f loadtests/scenarios/reconnect_storm.py --headless --host ws://127.0.0.1:8000/ws \\
        -u 1000 -r 100 -t 5m --croupier-storm-seconds 60 --csv runs/storm/run

To drop the connections at the server instead, kill a node of the cluster (or restart
nginx) during a run of ``peak_evening``: its users reconnect the same way. The run fails
(exit status 1) when the money check at its end finds any mismatch.
"""

from __future__ import annotations

import time
from typing import Any

import gevent
from locust import between, events, task

from loadtests.scenarios.croupier import CroupierUser, fire
from loadtests.scenarios.floors import RECONNECT_STORM
from loadtests.scenarios.wsclient import Closed, WsClient
from server.protocol.messages import PROTOCOL_VERSION, Hello, Joined, Resume, Welcome

FLOOR = RECONNECT_STORM
_started = [time.monotonic()]


@events.test_start.add_listener
def _start(environment: Any, **kwargs: Any) -> None:
    _started[0] = time.monotonic()


class Stormed(CroupierUser):
    abstract = True
    tables = FLOOR

    def on_start(self) -> None:
        super().on_start()
        self.storms = 0

    @task
    def round(self) -> None:
        every = float(getattr(self.environment.parsed_options, "croupier_storm_seconds", 30.0))
        storm = int((time.monotonic() - _started[0]) // every)
        if storm > self.storms:
            self.storms = storm
            self.reconnect()
        self.play_round()

    def reconnect(self) -> None:
        """Drop the connection without a word, come back within 0–3 s, resume."""
        assert self.ws is not None
        token = self.token
        self.ws.sock.close()  # no close frame: as when a node dies
        start = time.perf_counter()
        gevent.sleep(self.rng.uniform(0, 3))
        try:
            self.ws = WsClient(self.url, timeout=30, source=self.source)
            self.send(Hello(version=PROTOCOL_VERSION, token=token))
            self.expect(Welcome)
            self.send(Resume(table=self.table, last_seq=self.seq, role=self.role))
            self.expect(Joined)
        except (Closed, OSError, RuntimeError) as exc:
            fire("reconnect+resume", start, exc)
            raise
        fire("reconnect+resume", start)


class Player(Stormed):
    weight = 8
    role = "player"
    wait_time = between(0.5, 2.0)


class Spectator(Stormed):
    weight = 2
    role = "spectator"
    wait_time = between(0.5, 2.0)
