"""Benchmark: a burst of bets at one table — every seated player betting in the same instant.

A croupier ``Service`` (its own process, CPU 0, real betting windows) runs one roulette table
with ``--players`` seated bettors and one more player (raw-protocol clients in this process,
CPU 1). Rounds alternate: in a *burst* round every bettor sends ``place_bet`` the moment
``betting_opened`` arrives; in a *lone* round only the extra player bets, for scale. Each
bet is timed from its ``place_bet`` being written to its ``bet_accepted`` (or the error that
answers it). Every bet is acknowledged only once its debit and its journal record are
durable, as in production.

The same run measures three deployments: the data directory on disk (``--disk``, fsyncs
cost), on ``/dev/shm`` (the same CPU work with writes almost free) and a one-node cluster
(PostgreSQL and Redis of the run's own, ``loadtests.clusterload``). What issue #31 asks of
it: the burst's p99 on disk ≤ 1.5× its p99 on ``/dev/shm``, on PostgreSQL ≤ 2×. While a table
takes one bet per durable write, the k-th bet of a burst waits k writes.

A fourth deployment, ``wallet`` (asked for by name: ``--deployments wallet``), plays with the
operator's wallet (docs/wallet.md): the data directory on ``/dev/shm``, JWT players, and the
reference operator wallet answering each call after ``--wallet-latency`` ms. Every bet is then
an HTTP debit at the operator; issue #32 asks the burst's p99 ≤ 3× that latency.

    .venv/bin/python -m loadtests.bench_burst                  # writes the burst section
    .venv/bin/python -m loadtests.bench_burst --players 20 --rounds 2 --no-write
"""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from loadtests.report import Option, command_line, machine_line, option_parser, write_section
from loadtests.wsload import (
    CLIENT_CPU,
    RawClient,
    _encode_client,
    connect_raw,
    loadavg,
    percentile,
    pin,
    raise_nofile,
    server_child,
)

TABLE = "burst"
DEPLOYMENTS = ("disk", "shm", "postgres")  # the default run
KNOWN = (*DEPLOYMENTS, "wallet")
JWT_SECRET = "bench-burst-jwt-secret-0123456789abcdef"
BETTING_SECONDS = 4.0
ANSWER_SECONDS = 30.0  # a bet not answered by then counts as unanswered


def config_text(seats: int, cluster: str = "", wallet: str = "") -> str:
    return (
        "[server]\nstarting_balance = 100000000\n\n" + wallet + "\n"
        f'[[tables]]\nid = "{TABLE}"\nname = "Burst"\ngame = "roulette"\n'
        f"betting_seconds = {BETTING_SECONDS:g}\npause_seconds = 1\nseats = {seats}\n"
        "minimum = 100\nmaximum = 100000\n" + cluster
    )


class Player:
    """One seated player on a raw connection: sends bets, times their answers."""

    def __init__(
        self, index: int, opened: asyncio.Queue[str] | None, token: str | None = None
    ) -> None:
        self.index = index
        self.token = token  # a JWT player's (the wallet deployment), else a demo player
        self.opened = opened  # the watcher's: each round's id as betting opens
        self.client: RawClient | None = None
        self.joined: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.refused = asyncio.Event()
        self.sent: dict[int, float] = {}
        self.answered: asyncio.Event = asyncio.Event()
        self.acks: list[float] = []
        self.errors: dict[str, int] = {}
        self.ref = 0

    def on_message(self, payload: bytes) -> None:
        from server.protocol.codec import decode_server
        from server.protocol.messages import BetAccepted, ErrorMessage, Joined, TableEvent

        now = time.perf_counter()
        message = decode_server(payload)
        if isinstance(message, BetAccepted | ErrorMessage) and message.ref in self.sent:
            started = self.sent.pop(message.ref)
            if isinstance(message, BetAccepted):
                self.acks.append((now - started) * 1e3)
            else:
                self.errors[message.code] = self.errors.get(message.code, 0) + 1
            if not self.sent:
                self.answered.set()
        elif isinstance(message, Joined) and not self.joined.done():
            self.joined.set_result(None)
        elif isinstance(message, ErrorMessage) and not self.joined.done():
            self.refused.set()  # a cluster node that has not taken the table yet
        elif (
            self.opened is not None
            and isinstance(message, TableEvent)
            and message.event == "betting_opened"
        ):
            self.opened.put_nowait(message.round)

    async def connect(self, port: int) -> None:
        from server.protocol.messages import PROTOCOL_VERSION, Hello, Join

        self.client = await connect_raw(port, 20_000 + self.index, self.on_message)
        hello = (
            Hello(version=PROTOCOL_VERSION, token=self.token)
            if self.token is not None
            else Hello(version=PROTOCOL_VERSION, name=f"p{self.index}")
        )
        self.client.send(_encode_client(hello))
        give_up = time.perf_counter() + 60
        while not self.joined.done():  # a cluster node takes its table within a lease time
            if time.perf_counter() > give_up:
                raise TimeoutError(f"player {self.index} was never seated at {TABLE}")
            self.refused.clear()
            self.client.send(_encode_client(Join(table=TABLE, role="player")))
            await asyncio.wait(
                [self.joined, asyncio.ensure_future(self.refused.wait())],
                timeout=5,
                return_when=asyncio.FIRST_COMPLETED,
            )
            if not self.joined.done():
                await asyncio.sleep(0.5)

    def bet(self, round_id: str) -> None:
        from server.protocol.messages import PlaceBet

        assert self.client is not None
        self.ref += 1
        self.answered.clear()
        frame = _encode_client(
            PlaceBet(
                table=TABLE,
                round=round_id,
                bet_id=f"p{self.index}-{self.ref}",
                spot="red",
                amount=100,
                ref=self.ref,
            )
        )
        self.sent[self.ref] = time.perf_counter()
        self.client.send(frame)

    def close(self) -> None:
        if self.client is not None and self.client.transport is not None:
            self.client.transport.close()


def _token(index: int) -> str:
    import jwt

    payload = {"sub": f"bench-p{index}", "exp": int(time.time()) + 3600}
    return jwt.encode(payload, JWT_SECRET, "HS256")


async def _play(port: int, players: int, rounds: int, jwt_players: bool = False) -> dict[str, Any]:
    """``rounds`` burst rounds and as many lone rounds, alternating: every answer's time."""
    opened: asyncio.Queue[str] = asyncio.Queue()

    def token(i: int) -> str | None:
        return _token(i) if jwt_players else None

    bettors = [Player(i, opened if i == 0 else None, token(i)) for i in range(players)]
    lone = Player(players, None, token(players))
    everyone = [*bettors, lone]
    try:
        await asyncio.gather(*(p.connect(port) for p in everyone))
        burst: list[float] = []
        alone: list[float] = []
        for n in range(2 * rounds):
            round_id = await asyncio.wait_for(opened.get(), 60)
            while not opened.empty():  # a round that opened while the last was answered
                round_id = opened.get_nowait()
            betting = bettors if n % 2 == 0 else [lone]
            before = [len(p.acks) for p in betting]
            for player in betting:  # the same instant: one loop turn, no await between
                player.bet(round_id)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(
                    asyncio.gather(*(p.answered.wait() for p in betting)), ANSWER_SECONDS
                )
            (burst if n % 2 == 0 else alone).extend(
                a for p, mark in zip(betting, before, strict=True) for a in p.acks[mark:]
            )
        errors: dict[str, int] = {}
        for p in everyone:
            for code, count in p.errors.items():
                errors[code] = errors.get(code, 0) + count
        return {
            "burst": burst,
            "lone": alone,
            "errors": errors,
            "unanswered": sum(len(p.sent) for p in everyone),
        }
    finally:
        for p in everyone:
            p.close()


@contextlib.contextmanager
def _deployment(
    kind: str, disk: str, players: int, wallet_latency: float = 150.0
) -> Iterator[tuple[Path, Path]]:
    """The config file and data directory of one deployment (and its PostgreSQL and Redis,
    or its operator wallet)."""
    parent = "/dev/shm" if kind in ("shm", "wallet") else disk
    with tempfile.TemporaryDirectory(dir=parent) as tmp:
        work = Path(tmp)
        cluster = ""
        with contextlib.ExitStack() as stack:
            if kind == "postgres":
                from loadtests.clusterload import database, redis_server

                redis = stack.enter_context(redis_server(work / "redis"))
                url = stack.enter_context(database())
                cluster = (
                    f'\n[cluster]\ndatabase_url = "{url}"\n'
                    f'redis_url = "redis://127.0.0.1:{redis.port}/0"\nnode_id = "burst"\n'
                )
            wallet = ""
            if kind == "wallet":
                from loadtests.bench_wallet import Operator

                operator = Operator(work)  # answers after the latency; opens players at once
                stack.callback(operator.stop)
                operator.knobs(latency_ms=wallet_latency)
                wallet = (
                    f'[auth]\nmode = "jwt"\njwt_secret = "{JWT_SECRET}"\n\n'
                    f'[wallet]\nmode = "seamless"\nurl = "{operator.url}"\n'
                    f'secret_file = "{work / "secret"}"\ncurrency = "USD"\n'
                    f"connections = {players + 8}\n"
                )
            config = work / "croupier.toml"
            config.write_text(config_text(players + 1, cluster, wallet))
            yield config, work / "data"


def run(
    players: int, rounds: int, deployments: list[str], disk: str, wallet_latency: float = 150.0
) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for kind in deployments:
        with _deployment(kind, disk, players, wallet_latency) as (config, data_dir):
            data_dir.mkdir()
            with server_child("croupier", config, data_dir) as server:
                port = server.hello["port"]
                results[kind] = asyncio.run(_play(port, players, rounds, kind == "wallet"))
    return {"deployments": results, "loadavg": loadavg(), "wallet_latency": wallet_latency}


def _row(kind: str, what: str, times: list[float], base: list[float] | None) -> str:
    p50, p99 = percentile(times, 0.5), percentile(times, 0.99)
    ratio = f"{p99 / percentile(base, 0.99):.2f}×" if base else "—"
    return f"| {kind} | {what} | {len(times)} | {p50:.1f} | {p99:.1f} | {ratio} |"


def render(result: dict[str, Any], command: str) -> str:
    runs = result["deployments"]
    shm = runs.get("shm")
    title = "Burst at one table: every seated player bets at once"
    if "wallet" in runs:
        title = "Burst at one table with the operator's wallet"
    lines = [
        f"## {title}",
        "",
        f"Command: `{command}` ({machine_line()}; load average at the end {result['loadavg']}).",
        "One roulette table; in a burst round every seated bettor sends `place_bet` in the "
        "same instant as betting opens, in a lone round one player bets alone; each bet "
        "timed `place_bet` → `bet_accepted` by its client (module docstring of "
        "`loadtests/bench_burst.py`). *p99 ÷ /dev/shm* is the burst's p99 against the same "
        "burst with the data directory on `/dev/shm`, same run: issue #31's targets are "
        "≤ 1.5× on disk and ≤ 2× on PostgreSQL.",
        "",
        "| deployment | bets | answered | p50 ms | p99 ms | p99 ÷ /dev/shm |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for kind, run_ in runs.items():
        base = shm["burst"] if shm is not None and kind != "shm" else None
        lines.append(_row(kind, "burst", run_["burst"], base))
        lines.append(_row(kind, "lone", run_["lone"], None))
    problems = {
        kind: (r["errors"], r["unanswered"])
        for kind, r in runs.items()
        if r["errors"] or r["unanswered"]
    }
    wallet = runs.get("wallet")
    if wallet is not None:
        latency = result["wallet_latency"]
        p99 = percentile(wallet["burst"], 0.99)
        verdict = (
            f"**{p99 / latency:.2f}×** that latency; issue #32's target is ≤ 3×"
            if latency > 0
            else f"{p99:.1f} ms: what the calls themselves cost, the operator answering at once"
        )
        lines += [
            "",
            f"*wallet*: the operator's wallet (the reference one) answering each call after "
            f"{latency:g} ms, JWT players, data on `/dev/shm`. The burst's p99 is {verdict}.",
        ]
    if problems:
        lines += ["", f"Refused or unanswered (code: count; unanswered): {problems}"]
    return "\n".join(lines)


OPTIONS: list[Option] = [
    ("--players", int, 80, "seated bettors in a burst"),
    ("--rounds", int, 4, "burst rounds (and as many lone rounds)"),
    ("--deployments", str, ",".join(DEPLOYMENTS), "which of disk, shm, postgres, wallet"),
    ("--wallet-latency", float, 150.0, "the wallet deployment's operator latency, ms"),
    ("--disk", str, tempfile.gettempdir(), "the disk deployment's parent folder"),
]


def main() -> int:
    parser = option_parser(__doc__.splitlines()[0], OPTIONS)
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    deployments = [d for d in args.deployments.split(",") if d]
    unknown = sorted(set(deployments) - set(KNOWN))
    if unknown:
        parser.error(f"unknown deployment {', '.join(unknown)}; choose from {KNOWN}")
    if args.wallet_latency < 0:
        parser.error("--wallet-latency: 0 or more milliseconds")
    if not 1 <= args.players <= 99:
        parser.error("--players: 1 to 99 (a roulette table seats at most 100)")
    pin(CLIENT_CPU)
    raise_nofile()
    result = run(args.players, args.rounds, deployments, args.disk, args.wallet_latency)
    text = render(result, command_line("loadtests.bench_burst", args, OPTIONS))
    print(text)
    if not args.no_write:  # a run with the operator's wallet has its own section
        write_section("burst-wallet" if "wallet" in deployments else "burst", text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
