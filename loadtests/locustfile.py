"""Locust scenario: players who play rounds like ``croupier bot``, over the real protocol.

Each simulated user opens a WebSocket (websocket-client, which gevent makes cooperative), says
hello as a new demo player, reads the table's rules, sits down, and on every
``betting_opened`` places one to three legal bets (a main wager first where the game
requires one), answering any decision the table asks of it. Locust records:

- ``place_bet → bet_accepted`` (or the error answering it) per bet, in milliseconds;
- ``round`` once per round the user played (``betting_opened`` → ``round_settled``);
- ``connect+hello+join`` once per user.

Locust is for behaviour (bets, joins, churn); raw fan-out load comes from
``loadtests/wsload.py``, whose clients cost a fraction of a locust user per frame.

    croupier serve --config my_tables.toml --port 8000 &
    .venv/bin/locust -f loadtests/locustfile.py --host ws://127.0.0.1:8000 \\
        --headless -u 50 -r 10 -t 60s

Environment: ``CROUPIER_TABLES`` (comma-separated table ids, default ``baccarat``; users are
spread over them) and ``CROUPIER_ROLE`` (``player`` or ``spectator``).
"""

from __future__ import annotations

import itertools
import os
import random
import time
from typing import Any, Literal

import websocket
from locust import User, between, events, task

from server.protocol.codec import decode_server, encode
from server.protocol.messages import (
    PROTOCOL_VERSION,
    BetAccepted,
    Decide,
    ErrorMessage,
    GetRules,
    Hello,
    Join,
    Joined,
    PlaceBet,
    Rules,
    TableEvent,
    Welcome,
)

TABLES = [t for t in os.environ.get("CROUPIER_TABLES", "baccarat").split(",") if t]
ROLE: Literal["player", "spectator"] = (
    "spectator" if os.environ.get("CROUPIER_ROLE") == "spectator" else "player"
)
_numbers = itertools.count()


class CroupierPlayer(User):
    """One demo player at one table; each task run plays one round."""

    wait_time = between(0, 0.1)

    def on_start(self) -> None:
        n = next(_numbers)
        self.table = TABLES[n % len(TABLES)]
        self.rng = random.Random(n)
        self.ref = 0
        self.sent: dict[int, float] = {}
        start = time.perf_counter()
        url = (self.host or "ws://127.0.0.1:8000").rstrip("/") + "/ws"
        try:
            self.ws = websocket.create_connection(url, timeout=30)
            self._send(Hello(version=PROTOCOL_VERSION, name=f"locust{n}"))
            welcome = self._expect(Welcome)
            self.player, self.balance = welcome.player_id, welcome.balance
            self._send(GetRules(table=self.table))
            rules = self._expect(Rules)
            self.spots, self.main_spots = rules.spots, rules.main_spots
            self.spot_limits = rules.spot_limits
            self.minimum, self.maximum = rules.limits["minimum"], rules.limits["maximum"]
            self._send(Join(table=self.table, role=ROLE))
            self._expect(Joined)
        except Exception as exc:
            self._fire("connect+hello+join", start, exc)
            raise
        self._fire("connect+hello+join", start)

    def on_stop(self) -> None:
        ws = getattr(self, "ws", None)
        if ws is not None:
            ws.close()

    # --- plumbing ----------------------------------------------------------------------------

    def _fire(self, name: str, start: float, exc: Exception | None = None, size: int = 0) -> None:
        events.request.fire(  # type: ignore[no-untyped-call]
            request_type="WS",
            name=name,
            response_time=(time.perf_counter() - start) * 1e3,
            response_length=size,
            exception=exc,
            context={},
        )

    def _send(self, message: Any) -> None:
        self.ws.send(encode(message), opcode=websocket.ABNF.OPCODE_BINARY)

    def _receive(self) -> Any:
        frame = self.ws.recv()
        message = decode_server(frame if isinstance(frame, bytes) else frame.encode())
        ref = getattr(message, "ref", None)
        if isinstance(message, BetAccepted | ErrorMessage) and ref in self.sent:
            start = self.sent.pop(ref)
            if isinstance(message, BetAccepted):
                self.balance = message.balance
                self._fire("place_bet → bet_accepted", start, size=len(frame))
            else:
                error = RuntimeError(f"{message.code}: {message.message}")
                self._fire("place_bet → bet_accepted", start, error)
        return message

    def _expect(self, kind: type) -> Any:
        while True:
            message = self._receive()
            if isinstance(message, kind):
                return message
            if isinstance(message, ErrorMessage) and message.ref is None:
                continue
            if isinstance(message, ErrorMessage):
                raise RuntimeError(f"{message.code}: {message.message}")

    # --- behaviour ---------------------------------------------------------------------------

    @task
    def play_round(self) -> None:
        """Wait for betting to open, bet, and follow the round until it settles."""
        opened: float | None = None
        while True:
            message = self._receive()
            if not isinstance(message, TableEvent):
                continue
            if message.event == "betting_opened":
                opened = time.perf_counter()
                if ROLE == "player":
                    self._bet(message.round)
            elif message.event == "decision_requested":
                if message.data.get("player_id") == self.player:
                    self._send(
                        Decide(
                            table=self.table,
                            round=message.round,
                            spot=message.data["spot"],
                            decision=self.rng.choice(message.data["options"]),
                        )
                    )
            elif message.event in ("round_settled", "round_voided") and opened is not None:
                self._fire("round", opened)
                return

    def _bet(self, round_id: str) -> None:
        for n in range(self.rng.randint(1, 3)):
            pool = self.main_spots if n == 0 and self.main_spots else self.spots
            spot = self.rng.choice(pool)
            limits = self.spot_limits.get(spot, {})
            minimum = limits.get("minimum", self.minimum)
            maximum = limits.get("maximum", self.maximum)
            unit = minimum * (5 if spot.startswith("five_adjacent") else 1)
            most = min(maximum, unit * 5, self.balance // 3) // unit
            if most < 1:
                return
            self.ref += 1
            self.sent[self.ref] = time.perf_counter()
            self._send(
                PlaceBet(
                    table=self.table,
                    round=round_id,
                    bet_id=f"{round_id}-{n}",
                    spot=spot,
                    amount=unit * self.rng.randint(1, most),
                    ref=self.ref,
                )
            )
