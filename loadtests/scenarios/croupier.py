"""What every load-test scenario shares: a Croupier player or spectator as a Locust user, its
own book of the money it saw move, and the money check at the end of a run.

A scenario file (``loadtests/scenarios/<name>.py``) imports ``CroupierUser`` and sets who its
users are and how many there are; Locust runs it as usual:

    locust -f loadtests/scenarios/peak_evening.py --headless --host ws://127.0.0.1:8000/ws \\
        -u 200 -r 20 -t 5m --csv runs/peak/run

Every user keeps a ``Book`` of its player's money: the balance the server welcomed it with,
each bet the server acknowledged, each settlement and progressive award sent to it. When the
run ends, the **money check** logs in again as every player the run made, waits for the
rounds still in play to settle, and asks the server for the player's balance and game
recall: the balance must be the opening balance plus everything returned less everything
wagered (the player's own book, completed from the recall for the rounds it did not see
end), and every recalled round must say what the player saw. With ``--croupier-data-dir`` or
``--croupier-database`` the run also checks the whole ledger (``croupier wallet reconcile``).
Any mismatch is a failure of the request ``money check``: Locust then exits with status 1.

**Operator mode.** With ``--croupier-jwt-secret-file`` every new player says hello with a
token signed as an operator's platform signs it (HS256, a ``sub`` of its own for the run),
for a server under ``[auth] mode = "jwt"``. With ``--croupier-wallet`` (and its
``--croupier-wallet-secret-file``) the players' money is that operator's wallet's
(docs/wallet.md): the money check also reads each player's balance there, with a signed
``balance`` call, and it must equal the player's book once the server's credits are in.
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import os
import random
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import gevent
import gevent.pool
import jwt
from locust import User, events

from loadtests.scenarios.money import Book, OperatorWallet, check_money, reconcile
from loadtests.scenarios.wsclient import Closed, WsClient
from server.protocol.codec import decode_server, encode
from server.protocol.messages import (
    PROTOCOL_VERSION,
    BalanceChanged,
    BetAccepted,
    Decide,
    ErrorMessage,
    GetRules,
    Hello,
    Join,
    Joined,
    Leave,
    ListTables,
    Lobby,
    PlaceBet,
    Rules,
    TableEvent,
    Welcome,
)

__all__ = ["BOOKS", "CroupierUser"]

WS = "WS"  # Locust's request type for every measured step
_numbers = itertools.count()


BOOKS: list[Book] = []  # every player this process simulated, in order
FULL = [0]  # players who found every table full and watched instead


@events.init_command_line_parser.add_listener
def _options(parser: Any) -> None:
    group = parser.add_argument_group("Croupier")
    group.add_argument(
        "--croupier-tables",
        default=os.environ.get("CROUPIER_TABLES", ""),
        help="table ids to spread users over (default: the scenario's)",
    )
    group.add_argument(
        "--croupier-data-dir",
        default="",
        help="also reconcile the ledger in this data directory at the end",
    )
    group.add_argument(
        "--croupier-database",
        default="",
        help="also reconcile the ledger in this PostgreSQL database at the end",
    )
    group.add_argument(
        "--croupier-settle-seconds",
        type=float,
        default=30.0,
        help="how long the money check waits for rounds in play to end",
    )
    group.add_argument(
        "--croupier-source-addresses",
        default="",
        help="comma-separated local addresses to connect from (127.0.0.2,...)",
    )
    group.add_argument(
        "--croupier-metrics",
        default="",
        help="the servers' /metrics URLs to sample into PREFIX_server.csv (default: the host's)",
    )
    group.add_argument(
        "--croupier-storm-seconds",
        type=float,
        default=30.0,
        help="reconnect_storm: seconds between storms (every connection dropped at once)",
    )
    group.add_argument(
        "--croupier-warmup-seconds",
        type=float,
        default=0.0,
        help="restart the statistics this long after every user has started (one process)",
    )
    group.add_argument(
        "--croupier-untimed-stop",
        action="store_true",
        help="count nothing that ends once the run's time is up and Locust stops its users",
    )
    group.add_argument(
        "--croupier-jwt-secret-file",
        default="",
        help="operator mode: players say hello with a JWT (HS256) signed with this secret",
    )
    group.add_argument(
        "--croupier-wallet",
        default="",
        help="operator mode: the operator's wallet URL (docs/wallet.md); the money check "
        "reads each player's balance there too",
    )
    group.add_argument(
        "--croupier-wallet-secret-file",
        default="",
        help="the operator's wallet's shared HMAC secret (with --croupier-wallet)",
    )
    group.add_argument(
        "--croupier-currency",
        default="USD",
        help="operator mode: the players' currency (the tokens' claim, the balance calls')",
    )
    group.add_argument(
        "--croupier-step-users",
        type=int,
        default=50,
        help="step_to_failure: users added at each step",
    )
    group.add_argument(
        "--croupier-step-seconds",
        type=float,
        default=30.0,
        help="step_to_failure: how long each step lasts",
    )
    group.add_argument(
        "--croupier-max-error-rate",
        type=float,
        default=0.001,
        help="step_to_failure: most failed requests a step may have (0.001 = 0.1%%)",
    )
    group.add_argument(
        "--croupier-max-p99-ms",
        type=float,
        default=50.0,
        help="step_to_failure: highest bet-ack p99 a step may have",
    )


# Set once the run's time is up and Locust stops its users, under
# ``--croupier-untimed-stop``: what ends from then on is not counted (see ``_steady``).
_STOPPING = [False]


def fire(
    name: str, start: float, exc: Exception | None = None, size: int = 0, *, always: bool = False
) -> None:
    """Report one timed step to Locust (``always``: even while the users stop)."""
    if _STOPPING[0] and not always:
        return
    events.request.fire(  # type: ignore[no-untyped-call]
        request_type=WS,
        name=name,
        response_time=(time.perf_counter() - start) * 1e3,
        response_length=size,
        exception=exc,
        context={},
    )


class CroupierUser(User):
    """A player (``role = "player"``) who bets on every round at its table, or a spectator
    who watches; ``tables`` are spread over the users."""

    abstract = True
    role = "player"
    tables: tuple[str, ...] = ("baccarat",)
    bets_per_round = (1, 3)
    # Seconds a player looks at the table after betting opens before its first bet: players
    # do not all bet in the same millisecond, and a scenario whose did would measure a burst
    # no floor makes. Within the shortest betting window the scenarios serve (5 s); and
    # never longer than most of the window the player saw last (a table with shorter rounds,
    # as the test suite's, still gets its bets).
    think_before_bet = (0.2, 1.5)
    window: float | None = None  # seconds from betting_opened to betting_closed, last seen
    skim = False  # a spectator that decodes only the frames that open and end rounds

    def on_start(self) -> None:
        # Users are numbered per process; a worker's index keeps each user's choices its own
        # when several Locust processes run the scenario.
        worker = getattr(self.environment.runner, "worker_index", 0) or 0
        self.n = next(_numbers) + 1_000_000 * worker
        self.rng = random.Random(self.n)
        options = self.environment.parsed_options
        chosen = [t for t in (getattr(options, "croupier_tables", "") or "").split(",") if t]
        self.choices = chosen or list(self.tables)
        self.table = self.rng.choice(self.choices)
        sources = [
            s for s in (getattr(options, "croupier_source_addresses", "") or "").split(",") if s
        ]
        self.source = sources[self.n % len(sources)] if sources else None
        self.ws: WsClient | None = None
        self.book: Book | None = None
        self.refs = itertools.count(1)
        self.sit_down()

    def on_stop(self) -> None:
        if self.ws is not None:
            self.ws.close()
            self.ws = None

    # --- connecting ----------------------------------------------------------------------------

    @property
    def url(self) -> str:
        return _url(self.environment)

    def sit_down(self, token: str | None = None) -> None:
        """Connect, say hello (a new demo player, or the one ``token`` names), read the rules
        and join the table: one ``connect+hello+join`` request."""
        start = time.perf_counter()
        self.role = type(self).role  # a player who last found every table full tries again
        new = token is None
        if new:
            self.book = None  # a new player: its book starts once it is welcomed
            token = _operator_token(self.environment)  # None: a demo player, by name
        try:
            self.ws = WsClient(self.url, timeout=30, source=self.source)
            name = f"locust{self.n}" if token is None else None
            self.send(Hello(version=PROTOCOL_VERSION, name=name, token=token))
            welcome = self.expect(Welcome)
            self.joined = self.join()
            self.send(GetRules(table=self.table))  # the table it sat at
            rules = self.expect(Rules)
            self.spots, self.main_spots = rules.spots, rules.main_spots
            self.spot_limits, self.limits = rules.spot_limits, rules.limits
            self.token = welcome.token
            self.seq = self.joined.snapshot.seq
        except Exception as exc:
            fire("connect+hello+join", start, exc)
            raise
        fire("connect+hello+join", start)
        if self.role == "player" and new:
            self.book = Book(
                welcome.player_id, welcome.token or "", self.table, welcome.balance, welcome.balance
            )
            BOOKS.append(self.book)

    def join(self) -> Joined:
        """Sit down at the table; a player who finds it full looks at the lobby for the
        scenario's tables with a free seat and tries those (as a player walks the floor: not
        every table in turn, which the server's rate limit would rightly refuse), and watches
        the first if every one is full."""
        first = self.table
        tables = [first]
        while tables:
            table = tables.pop(0)
            self.send(Join(table=table, role=self.role))
            try:
                joined: Joined = self.expect(Joined)
            except RuntimeError as exc:
                if self.role != "player" or not str(exc).startswith("table_full"):
                    raise
                if table == first:
                    tables = self.free_tables(first)
                continue
            self.table = joined.table
            return joined
        self.role, self.table = "spectator", first  # nowhere to sit: it watches
        FULL[0] += 1
        self.send(Join(table=self.table, role="spectator"))
        watching: Joined = self.expect(Joined)
        return watching

    def free_tables(self, full: str) -> list[str]:
        """The scenario's tables with a free seat in the lobby, but ``full``, a few of them
        in random order (each appears once: the choices' weights chose the first)."""
        self.send(ListTables())
        lobby: Lobby = self.expect(Lobby)
        wanted = set(self.choices) - {full}
        free = [t.table for t in lobby.tables if t.table in wanted and t.seated < t.seats]
        self.rng.shuffle(free)
        return free[:5]

    def leave(self) -> None:
        """Leave the table and hang up (churn: the next ``sit_down`` is a new player)."""
        if self.ws is not None:
            with contextlib.suppress(Closed):
                self.send(Leave(table=self.table))
            self.ws.close()
            self.ws = None

    # --- frames --------------------------------------------------------------------------------

    def send(self, message: Any) -> None:
        assert self.ws is not None
        self.ws.send(encode(message))

    def frame(self, timeout: float = 30.0) -> bytes:
        assert self.ws is not None
        return self.ws.recv(timeout)

    def read(self, frame: bytes) -> Any:
        """Decode one frame, and keep the book of what it says of this player's money."""
        message = decode_server(frame)
        if isinstance(message, TableEvent):
            self.seq = message.seq  # where a resume starts from
        book = self.book
        if book is None:
            return message
        if isinstance(message, (BetAccepted, BalanceChanged)):
            book.balance = message.balance
        elif isinstance(message, TableEvent):
            data = message.data
            if message.event == "bet_accepted":
                wager = data["wager"]
                if wager["player_id"] == book.player_id:
                    book.wagered[message.round] += int(wager["amount"])
            elif message.event == "bet_cancelled":
                wager = data["wager"]
                if wager["player_id"] == book.player_id:
                    book.wagered[message.round] -= int(wager["amount"])
            elif message.event == "wager_settled":
                settlement = data["settlement"]
                if settlement["wager"]["player_id"] == book.player_id:
                    book.returned[message.round] += int(settlement["returned"])
            elif message.event == "progressive_awarded" and data.get("player_id") == book.player_id:
                book.awarded[message.round] += int(data["amount"])
            elif message.event in ("round_settled", "round_voided"):
                book.settled.add(message.round)
        return message

    def expect(self, kind: type, timeout: float = 30.0) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            message = self.read(self.frame(max(0.01, deadline - time.monotonic())))
            if isinstance(message, kind):
                return message
            if isinstance(message, ErrorMessage):  # the answer to the request just sent
                raise RuntimeError(f"{message.code}: {message.message}")

    # --- a round -------------------------------------------------------------------------------

    def play_round(self) -> None:
        """Follow one round from ``betting_opened`` to its end, betting as a player (each bet
        a ``place_bet → bet_accepted`` request) and answering its decisions; a spectator only
        counts frames (``round`` request: betting opened → the round ended)."""
        opened: float | None = None
        sent: dict[int, float] = {}
        # A player's bets wait for their moment while it goes on reading the table, as a
        # player's screen does: a ``betting_closed`` read meanwhile (this user read
        # ``betting_opened`` late, on a loaded machine) means no bets this round, not bets
        # sent into a closed window.
        waiting: tuple[float, str] | None = None  # when to bet, and on which round
        while True:
            if waiting is not None:
                due, round_id = waiting
                try:
                    raw = self.frame(max(0.001, due - time.monotonic()))
                except TimeoutError:
                    waiting = None
                    self.bet(round_id, sent)
                    continue
            else:
                raw = self.frame()
            if self.skim and b"round_" not in raw and b"betting_opened" not in raw:
                continue  # a spectator reads nothing else: no decode
            message = self.read(raw)
            ref = getattr(message, "ref", None)
            if isinstance(message, BetAccepted | ErrorMessage) and ref in sent:
                start = sent.pop(ref)
                if isinstance(message, BetAccepted):
                    fire("place_bet → bet_accepted", start, size=len(raw))
                else:
                    fire(
                        "place_bet → bet_accepted",
                        start,
                        RuntimeError(f"{message.code}: {message.message}"),
                    )
                continue
            if not isinstance(message, TableEvent):
                continue
            if message.event == "betting_opened":
                opened = time.perf_counter()
                if self.role == "player":
                    low, high = self.think_before_bet
                    # Thinking takes at most 30 % of the betting window (no limit at all with
                    # the 15 s windows of a real floor; the tests' 1 s windows leave room for
                    # a loaded machine); until this user has seen one whole window (it joined
                    # mid-round) it bets after the least.
                    high = low if self.window is None else min(high, max(low, 0.3 * self.window))
                    waiting = (time.monotonic() + self.rng.uniform(low, high), message.round)
            elif message.event == "betting_closed":
                if waiting is not None and waiting[1] == message.round:
                    waiting = None  # too late: this round goes by without its bets
                if opened is not None:
                    self.window = time.perf_counter() - opened
            elif message.event == "decision_requested":
                if self.book is not None and message.data.get("player_id") == self.book.player_id:
                    options = message.data["options"]
                    self.send(
                        Decide(
                            table=self.table,
                            round=message.round,
                            spot=message.data["spot"],
                            decision=self.rng.choice(options),
                        )
                    )
            elif message.event in ("round_settled", "round_voided") and opened is not None:
                fire("round", opened)
                return

    def bet(self, round_id: str, sent: dict[int, float]) -> None:
        """One to three legal bets, a main wager first where the game requires one."""
        assert self.book is not None
        low, high = self.bets_per_round
        chosen: set[str] = set()
        for n in range(self.rng.randint(low, high)):
            pool = self.main_spots if n == 0 and self.main_spots else self.spots
            # a boxed game's spots name the player's own box: its seat
            spot = self.rng.choice(pool).replace("{seat}", str(self.joined.snapshot.seat or ""))
            if spot in chosen:  # some games take one wager per spot: choose another round
                continue
            chosen.add(spot)
            limits = self.spot_limits.get(spot, {})
            minimum = limits.get("minimum", self.limits["minimum"])
            maximum = limits.get("maximum", self.limits["maximum"])
            unit = minimum * (5 if spot.startswith("five_adjacent") else 1)
            most = min(maximum, unit * 5, self.book.balance // 3) // unit
            if most < 1:
                return
            self.place(round_id, f"{round_id}-{n}", spot, unit * self.rng.randint(1, most), sent)

    def place(
        self, round_id: str, bet_id: str, spot: str, amount: int, sent: dict[int, float]
    ) -> None:
        """Send one bet, timed from now (``sent``: its ref → when it went out)."""
        assert self.book is not None
        ref = next(self.refs)
        sent[ref] = time.perf_counter()
        self.book.wagered[round_id] += 0  # in play from now: the check asks the recall
        self.send(
            PlaceBet(
                table=self.table, round=round_id, bet_id=bet_id, spot=spot, amount=amount, ref=ref
            )
        )


# --- the server's own figures, beside Locust's ----------------------------------------------

_SAMPLED = (
    "process_cpu_seconds_total",
    "process_resident_memory_bytes",
    "croupier_connections_open",
)


@events.test_start.add_listener
def _sample_servers(environment: Any, **kwargs: Any) -> None:
    """Every 2 s, each server's CPU seconds, memory and connections from its ``/metrics``,
    into ``PREFIX_server.csv`` (``--csv PREFIX``) for ``python -m loadtests.report``."""
    options = environment.parsed_options
    prefix = getattr(options, "csv_prefix", None)
    if not prefix or type(environment.runner).__name__ == "WorkerRunner":
        return
    urls = [u for u in (getattr(options, "croupier_metrics", "") or "").split(",") if u]
    if not urls:
        host = (environment.host or "ws://127.0.0.1:8000/ws").removesuffix("/ws")
        urls = [host.replace("wss://", "https://").replace("ws://", "http://") + "/metrics"]
    gevent.spawn(_sample, urls, f"{prefix}_server.csv")


def _sample(urls: list[str], path: str) -> None:
    with open(path, "w", encoding="utf-8") as out:
        out.write("timestamp,server," + ",".join(_SAMPLED) + "\n")
        while True:
            for url in urls:
                try:
                    with urllib.request.urlopen(url, timeout=2) as response:
                        text = response.read().decode()
                except OSError:
                    continue
                values = dict.fromkeys(_SAMPLED, "")
                for line in text.splitlines():
                    name, _, value = line.partition(" ")
                    if name in values:
                        values[name] = value
                out.write(f"{time.time():.1f},{url}," + ",".join(values.values()) + "\n")
            out.flush()
            gevent.sleep(2.0)


# --- the load generator's own lateness ------------------------------------------------------

# How late this process's gevent loop woke from 10 ms sleeps since the users finished
# starting: a reply that arrived meanwhile waited that long before its user read it, and
# Locust timed it as the server's. Printed at the end ("locust loop lag"), for
# bench_loadtest to put beside the server's own figures.
_LAGS: list[float] = []


@events.test_start.add_listener
def _watch_own_loop(environment: Any, **kwargs: Any) -> None:
    if type(environment.runner).__name__ != "MasterRunner":  # a master runs no users
        gevent.spawn(_own_lag)


@events.spawning_complete.add_listener
def _lag_from_now(user_count: int, **kwargs: Any) -> None:
    _LAGS.clear()  # the steady part only, as --reset-stats does for the requests


# The steady part of a run, for a capacity figure (loadtests/bench_loadtest.py): it begins
# ``--croupier-warmup-seconds`` after the last user started — the ramp's logins (a new
# account and grant each, 100 a second) leave a backlog the first seconds still clear — and,
# with ``--croupier-untimed-stop``, ends when the run's time is up: Locust then stops its
# users at once, the server takes thousands of disconnections in a second, and the steps
# that end meanwhile time the harness's teardown, not the floor.
@events.spawning_complete.add_listener
def _steady(user_count: int, **kwargs: Any) -> None:
    environment = _ENVIRONMENT[0]
    if environment is None:
        return
    warmup = float(getattr(environment.parsed_options, "croupier_warmup_seconds", 0.0) or 0.0)
    if warmup > 0 and type(environment.runner).__name__ == "LocalRunner":

        def restart() -> None:
            environment.runner.stats.reset_all()
            _LAGS.clear()

        gevent.spawn_later(warmup, restart)


@events.test_stopping.add_listener
def _stopping(environment: Any, **kwargs: Any) -> None:
    if getattr(environment.parsed_options, "croupier_untimed_stop", False):
        _STOPPING[0] = True


_ENVIRONMENT: list[Any] = [None]


@events.init.add_listener
def _keep_environment(environment: Any, **kwargs: Any) -> None:
    _ENVIRONMENT[0] = environment


def _own_lag() -> None:
    while True:
        due = time.perf_counter() + 0.01
        gevent.sleep(0.01)
        _LAGS.append(max(0.0, time.perf_counter() - due))


@events.test_stop.add_listener
def _report_own_lag(environment: Any, **kwargs: Any) -> None:
    lags = sorted(_LAGS)
    if lags:
        p50, p99 = lags[len(lags) // 2], lags[min(len(lags) - 1, int(len(lags) * 0.99))]
        print(
            f"locust loop lag: p50 {p50 * 1e3:.1f} ms, p99 {p99 * 1e3:.1f} ms, "
            f"max {lags[-1] * 1e3:.1f} ms ({len(lags)} wake-ups)",
            file=sys.stderr,
        )


def _url(environment: Any) -> str:
    host = (environment.host or "ws://127.0.0.1:8000/ws").rstrip("/")
    return host if host.endswith("/ws") else host + "/ws"


CHECKS_AT_ONCE = 32  # players the money check checks at once

# Operator mode: what tells this process's players from every other run's at the same
# operator (each new player is a new account there), and how many it made.
_RUN = os.urandom(4).hex()
_players = itertools.count(1)


def _read_secret(path: str) -> bytes:
    return Path(path).read_bytes().strip()


def _operator_token(environment: Any) -> str | None:
    """A new player's token as an operator's platform signs it (``sub``: a player of this
    run's own, ``exp`` a day on), or None when the run plays demo players."""
    options = environment.parsed_options
    path = getattr(options, "croupier_jwt_secret_file", "") or ""
    if not path:
        return None
    worker = getattr(environment.runner, "worker_index", 0) or 0
    player = f"locust-{_RUN}-{worker}-{next(_players)}"
    claims = {
        "sub": player,
        "name": player,
        "currency": getattr(options, "croupier_currency", "USD"),
        "exp": int(time.time()) + 86_400,
    }
    return jwt.encode(claims, _read_secret(path), algorithm="HS256")


def _wallet(environment: Any) -> OperatorWallet | None:
    """The operator's wallet the options name, for the money check."""
    options = environment.parsed_options
    url = getattr(options, "croupier_wallet", "") or ""
    if not url:
        return None
    secret = _read_secret(getattr(options, "croupier_wallet_secret_file", "") or "")
    return OperatorWallet(url, secret, getattr(options, "croupier_currency", "USD"))


def _check_books(environment: Any) -> list[str]:
    """This process's players checked; the mismatches (printed)."""
    settle = float(getattr(environment.parsed_options, "croupier_settle_seconds", 30.0))
    # Many players at once: each check waits on the server (and the operator's wallet).
    pool = gevent.pool.Pool(CHECKS_AT_ONCE)
    problems = check_money(
        _url(environment), list(BOOKS), settle, gevent.sleep, _wallet(environment), pool.map
    )
    for problem in problems:
        print(f"money check: {problem}", file=sys.stderr)
    return problems


def _verdict(environment: Any, players: int, problems: list[str], start: float) -> None:
    """The run's money check, with the ledger's: a failed request and exit status 1."""
    ledger = reconcile(environment.parsed_options)
    if ledger is not None:
        problems = [*problems, f"the ledger does not reconcile: {ledger}"]
        print(f"money check: {problems[-1]}", file=sys.stderr)
    print(f"money check: {players} players, {len(problems)} mismatches", file=sys.stderr)
    failed = AssertionError(f"{len(problems)} mismatches") if problems else None
    fire("money check", start, failed, always=True)
    if problems:
        environment.process_exit_code = 1


# A distributed run (--master, --worker, --processes): the master asks every worker to stop
# its users and check its own players, and waits for their answers before it quits, so a
# worker's mismatch fails the master's run.
_answers: list[dict[str, Any]] = []


@events.init.add_listener
def _quiet_collector(environment: Any, **kwargs: Any) -> None:
    """Keep Python's garbage collector out of the figures. With thousands of users in one
    Locust process a collection walks every user's objects and stops them all: full passes
    of 60-240 ms and, with those off, middle-generation passes of 58-162 ms (measured with
    ``gc.callbacks`` at 3,000 and 4,000 users): every bet in flight then reads as that much
    slower, and the server is blamed for the client's pause. So the load generator does
    not collect during a run: reference counting frees nearly everything, and what cycles
    a run leaves wait for the process to end — a run is minutes long, and the memory is
    the load generator's."""
    gc.collect()
    gc.freeze()
    gc.disable()


@events.init.add_listener
def _distributed(environment: Any, **kwargs: Any) -> None:
    runner = environment.runner
    kind = type(runner).__name__
    if kind == "WorkerRunner":

        def check(environment: Any, msg: Any, **kwargs: Any) -> None:
            def run() -> None:
                environment.runner.stop()  # no user bets while its player is checked
                problems = _check_books(environment)
                answer = {"players": len(BOOKS), "problems": problems}
                environment.runner.send_message("croupier_money", answer)

            gevent.spawn(run)

        runner.register_message("croupier_check", check)
    elif kind == "MasterRunner":
        runner.register_message(
            "croupier_money", lambda environment, msg, **kwargs: _answers.append(msg.data)
        )


@events.test_stop.add_listener
def _money_check(environment: Any, **kwargs: Any) -> None:
    runner = environment.runner
    kind = type(runner).__name__
    start = time.perf_counter()
    if kind == "WorkerRunner":
        return  # the master asks (above)
    if kind == "MasterRunner":
        workers = len(runner.clients)
        _answers.clear()
        runner.send_message("croupier_check", None)
        settle = float(getattr(environment.parsed_options, "croupier_settle_seconds", 30.0))
        deadline = time.monotonic() + settle * 2 + 60
        while len(_answers) < workers and time.monotonic() < deadline:
            gevent.sleep(0.2)
        problems = [p for answer in _answers for p in answer["problems"]]
        if len(_answers) < workers:
            problems.append(f"{workers - len(_answers)} workers never answered the money check")
        _verdict(environment, sum(a["players"] for a in _answers), problems, start)
        return
    if BOOKS:
        _verdict(environment, len(BOOKS), _check_books(environment), start)
    if FULL[0]:
        print(f"{FULL[0]} players found every table full and watched instead", file=sys.stderr)
