"""Load-test capacity: each Locust scenario of loadtests/scenarios/ run as an operator runs
it, against one node and against one and three cluster nodes behind nginx; the capacity it
finds, what Locust itself costs, and CPU-seconds per user.

    .venv/bin/python -m loadtests.bench_loadtest [--scenarios peak_evening,...]
        [--deployments single,cluster-1,cluster-3] [--start 1000] [--steady 30] ...

**Capacity.** A trial is one headless Locust run of a scenario (``locust -f
loadtests/scenarios/S.py --headless -u N -r R -t T --reset-stats``, the scenario's own money
check at its end) against a fresh deployment (new data directory or database) at N users,
arriving over ten seconds or at 100 a second (``--rate``), whichever is slower, then held
``--steady`` seconds. It *held* when, over the steady part — from 5 s after every user has
started (Locust's statistics restart then: the ramp's logins leave a backlog the first
seconds still clear) until the run's time is up (steps that end while Locust then stops
every user at once, a mass disconnection the server also has to take, are not counted) —
at most 0.1% of its requests failed and the p99 of ``place_bet → bet_accepted`` stayed
within 50 ms; when every user was still running at the
end (Locust does not replace a user whose code failed, a login refused for instance); and
when the money check found no mismatch. The search doubles N from ``--start`` while trials
hold, then halves the gap between the last that held and the first that did not
``--refine`` times; the capacity is the largest N that held. Locust is pinned to CPU 1 and
the croupier nodes to CPU 0, as on a machine with one core for each; a cluster's Redis is
pinned with its nodes to CPU 0, and PostgreSQL and nginx are left to the scheduler.

**Tables.** A scenario's users spread over the tables it names; where its players would
outnumber the seats, the deployment serves copies of them (``baccarat``, ``baccarat_2``,
…: the demo lobby's thirteen tables, seven seats each, as many times as one copy per 85
players asks, with a decision timeout of 4 s instead of 12 so that the rounds a trial's
end leaves waiting on a player are over soon) and the trial passes them with
``--croupier-tables`` in the scenario's own proportions. ``hot_table`` is one baccarat
table with 100 seats; ``shoe_change_and_meter_hit`` is its own table file.

**CPU.** Sampled over the trial's steady part (from the end of the ramp plus 5 s to 2 s
before the end, as the server's own histograms): Locust's process (``/proc/<pid>/stat``),
the croupier nodes', and the whole machine's (``/proc/stat``); the server side is the
machine less Locust (nodes, Redis, PostgreSQL, nginx). *Users per Locust core* = users ÷
Locust's CPU share; *CPU-s per user* = server-side CPU-seconds per second per user, the
figure that carries to a bigger machine.

**Disk or CPU.** A bet is acknowledged once its group commit is durable, so a disk that
stalls holds every bet of the group with the node's core idle; each trial reports the
nodes' commit p99 and slowest commit beside its bet-ack figures. ``--data-under /dev/shm``
runs the same trials with the nodes' data on tmpfs — the same CPU work, the flushes almost
free — which tells a capacity set by this machine's disk from one set by its CPU.

**The operator's wallet.** ``wallet-L`` is ``single`` with the players' money at an
operator's wallet answering L ms after each call (``--deployments single,wallet-20``): the
reference operator wallet (docs/wallet.md) started for the trial, pinned beside Locust on
CPU 1: the operator's machines, like the players', are not the server's, and its CPU is
neither the server side's nor Locust's (each trial prints it); the server in ``[wallet]
mode = "seamless"`` with JWT players; Locust in operator mode
(``--croupier-jwt-secret-file``), its money check reading every player's balance in the
operator's books too. A bet's acknowledgement then includes
the operator's answer to its debit, so such a trial holds with a bet-ack p99 within 50 ms
*plus L*: the server's own share of it stays within the same 50 ms. Such a run writes its
own section (``loadtest-wallet``).

**Locust's own cost.** Runs of ``peak_evening`` with only its players and only its
spectators (Locust's positional user-class argument) at ``--cost-users`` users: users per
Locust core for each kind of user, and Locust's CPU against the server's.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from loadtests.clusterload import place
from loadtests.report import Option, command_line, machine_line, option_parser, write_section
from loadtests.scenarios.floors import PEAK_EVENING, RECONNECT_STORM
from loadtests.wsload import CLIENT_CPU, ROOT, SERVER_CPU, free_port, loadavg, proc_cpu

LOCUST = str(Path(sys.executable).with_name("locust"))
CROUPIER = str(Path(sys.executable).with_name("croupier"))
PYSPY = str(Path(sys.executable).with_name("py-spy"))
PROFILES = ROOT / "loadtests" / "profiles"
SAMPLE_RATE = 25  # py-spy samples per second: enough for where the time goes, cheap to take
SCENARIOS = ("peak_evening", "hot_table", "reconnect_storm", "shoe_change_and_meter_hit")
DEPLOYMENTS = ("single", "cluster-1", "cluster-3")
BET = "place_bet → bet_accepted"
MAX_ERROR_RATE, MAX_P99_MS = 0.001, 50.0
PLAYERS_PER_COPY = 85  # the demo lobby seats 91; a little room for churn
DECISION_SECONDS = 4.0  # the served lobby's decision timeout (the demo's is 12)
SETTLE_SECONDS = 60  # how long the money check waits for the rounds still in play
WARMUP = 5.0  # seconds after the ramp before anything is measured (the ramp's backlog)
_TICKS = os.sysconf("SC_CLK_TCK")


# --- what each scenario is served -------------------------------------------------------------


def _blocks(text: str) -> tuple[str, list[str]]:
    """A table file's head (everything before the first ``[[tables]]``) and its tables."""
    head, *tables = re.split(r"(?m)^\[\[tables\]\]\n", text)
    return head, tables


def _copied(text: str, copies: int) -> str:
    """The table file with every table ``copies`` times: ``ID``, ``ID_2``, ``ID_3``…"""
    head, tables = _blocks(text)
    out = [head]
    for n in range(1, copies + 1):
        for block in tables:
            if n > 1:
                block = re.sub(r'(?m)^id = "([^"]+)"', rf'id = "\1_{n}"', block, count=1)
            out.append("[[tables]]\n" + block)
    return "".join(out)


def _floor(scenario: str) -> tuple[str, ...]:
    """The table ids the scenario's users choose from, with repeats as its weights."""
    return PEAK_EVENING if scenario == "peak_evening" else RECONNECT_STORM


def served(scenario: str, users: int, players: float = 0.8) -> tuple[str, list[str]]:
    """The table file for a trial of ``users`` users, and the ``--croupier-tables`` argument
    (empty: the scenario's own tables)."""
    from server.config import demo_config_text

    if scenario == "shoe_change_and_meter_hit":
        own = ROOT / "loadtests" / "scenarios" / f"{scenario}.toml"
        return own.read_text(), []
    if scenario == "hot_table":
        head, tables = _blocks(demo_config_text())
        baccarat = next(b for b in tables if re.search(r'(?m)^id = "baccarat"$', b))
        return head + "[[tables]]\n" + baccarat.replace(
            "[tables.options]", "seats = 100\n[tables.options]", 1
        ), []
    copies = max(1, math.ceil(users * players / PLAYERS_PER_COPY))
    # A player who leaves mid-round (a trial's end) is stood after the decision timeout:
    # a short one lets the money check find every round over soon after.
    text = re.sub(r"(?m)^decision_seconds = .*$", f"decision_seconds = {DECISION_SECONDS:g}",
                  _copied(demo_config_text(), copies))  # fmt: skip
    tables = [t if n == 1 else f"{t}_{n}" for n in range(1, copies + 1) for t in _floor(scenario)]
    return text, tables


# --- deployments ------------------------------------------------------------------------------


@dataclass
class Deployed:
    url: str  # the WebSocket URL Locust is given
    node_pids: list[int]
    metrics: list[str]  # each node's /metrics
    check: list[str]  # the money check's ledger argument (and, with a wallet, Locust's own)
    # The operator's wallet of a ``wallet-L`` deployment: outside the server, as Locust is.
    outside_pids: list[int] = field(default_factory=list)


def wallet_latency(deployment: str) -> float | None:
    """The operator wallet's latency in ms of a ``wallet-L`` deployment, else None."""
    found = re.fullmatch(r"wallet-(\d+)", deployment)
    return float(found[1]) if found else None


def max_p99_ms(deployment: str) -> float:
    """The bet-ack p99 a trial may reach: 50 ms, plus the operator's latency where each bet
    waits for the operator's answer."""
    return MAX_P99_MS + (wallet_latency(deployment) or 0.0)


JWT_SECRET = "bench-loadtest-platform-secret-0123456789"


def seamless(text: str, wallet: Any) -> str:
    """A served table file's tables, with JWT players and the operator's ``wallet`` (a
    ``tests.operator_wallet.OperatorWallet``), its calls timed out as the default's."""
    from tests.seamless_play import seamless_sections

    _, tables = _blocks(text)
    return seamless_sections(wallet, JWT_SECRET, timeout_ms=3000) + "".join(
        "[[tables]]\n" + block for block in tables
    )


@contextlib.contextmanager
def _operator_wallet(work: Path, latency_ms: float) -> Iterator[Any]:
    """The reference operator wallet for a trial, answering ``latency_ms`` after each call."""
    from tests.operator_wallet import OperatorWallet

    wallet = OperatorWallet(work, auto_create=10**9, options=("--latency-ms", f"{latency_ms:g}"))
    wallet.start()
    try:
        yield wallet
    finally:
        wallet.stop()


def _wait_ready(port: int, process: subprocess.Popen[bytes], log: Path) -> None:
    from tests.net.processes import http_get

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"croupier serve exited: {log.read_text()[-2000:]}")
        with contextlib.suppress(OSError):
            if http_get(f"http://127.0.0.1:{port}/readyz")[0] == 200:
                return
        time.sleep(0.1)
    raise RuntimeError(f"croupier serve on port {port} never became ready")


@contextlib.contextmanager
def deploy(kind: str, config: Path, work: Path) -> Iterator[Deployed]:
    """One node on SQLite (``single``), the same with the operator's wallet L ms away
    (``wallet-L``), or N cluster nodes on a Redis and a PostgreSQL database of the trial's
    own behind the nginx of deploy/ (``cluster-N``)."""
    latency = wallet_latency(kind)
    if latency is not None:
        with _operator_wallet(work, latency) as wallet:
            config.write_text(seamless(config.read_text(), wallet))
            jwt_secret = work / "jwt.secret"
            jwt_secret.write_text(JWT_SECRET)
            with deploy("single", config, work) as where:
                where.check += [
                    "--croupier-jwt-secret-file", str(jwt_secret),
                    "--croupier-wallet", wallet.url,
                    "--croupier-wallet-secret-file", str(wallet.secret_file),
                ]  # fmt: skip
                # The operator's machines are not the server's: its wallet runs beside the
                # players' (Locust's CPU), and its CPU is not counted the server side's.
                assert wallet.process is not None
                place(wallet.process.pid, CLIENT_CPU)
                where.outside_pids.append(wallet.process.pid)
                yield where
        return
    if kind == "single":
        port, data = free_port(), work / "data"
        log = work / "node.log"
        with log.open("wb") as out:
            process = subprocess.Popen(
                [CROUPIER, "serve", "--config", str(config), "--data-dir", str(data),
                 "--port", str(port), "--log-level", "warning"],
                stdout=out, stderr=out,
            )  # fmt: skip
        try:
            place(process.pid, SERVER_CPU)
            _wait_ready(port, process, log)
            yield Deployed(
                f"ws://127.0.0.1:{port}/ws",
                [process.pid],
                [f"http://127.0.0.1:{port}/metrics"],
                ["--croupier-data-dir", str(data)],
            )
        finally:
            process.terminate()
            process.wait(60)
        return
    count = int(kind.split("-", 1)[1])
    from loadtests.clusterload import database, redis_server
    from tests.cluster.nginx import start_nginx

    with redis_server(work / "redis", cpu=SERVER_CPU) as redis, database() as db:
        nodes: list[tuple[subprocess.Popen[bytes], int, Path]] = []
        nginx = None
        try:
            for n in range(1, count + 1):
                port, log = free_port(), work / f"node-{n}.log"
                with log.open("wb") as out:
                    process = subprocess.Popen(
                        [CROUPIER, "serve", "--config", str(config),
                         "--data-dir", str(work / f"node-{n}"), "--port", str(port),
                         "--redis", redis.url, "--database", db, "--node-id", f"node-{n}",
                         "--log-level", "warning"],
                        stdout=out, stderr=out,
                    )  # fmt: skip
                place(process.pid, SERVER_CPU)
                nodes.append((process, port, log))
            for process, port, log in nodes:
                _wait_ready(port, process, log)
            nginx = start_nginx([("127.0.0.1", port) for _, port, _ in nodes])
            yield Deployed(
                nginx.url,
                [process.pid for process, _, _ in nodes],
                [f"http://127.0.0.1:{port}/metrics" for _, port, _ in nodes],
                ["--croupier-database", db],
            )
        finally:
            if nginx is not None:
                nginx.stop()
            for process, _, _ in nodes:
                process.terminate()
            for process, _, _ in nodes:
                try:
                    process.wait(60)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()


# --- one trial --------------------------------------------------------------------------------


_BUCKET = re.compile(r'(croupier_\w+)_bucket\{le="([^"]+)"\} (\d+)')
LAG = "croupier_event_loop_lag_seconds"
ACK = "croupier_bet_ack_seconds"
COMMIT = "croupier_store_commit_seconds"
Buckets = dict[float, int]  # upper bound -> observations at most that (cumulative)


def _histograms(urls: list[str]) -> list[dict[str, Buckets]]:
    """Each node's histograms from its ``/metrics``: name -> buckets."""
    nodes = []
    for url in urls:
        histograms: dict[str, Buckets] = {}
        with contextlib.suppress(OSError), urllib.request.urlopen(url, timeout=5) as answer:
            for line in answer.read().decode().splitlines():
                found = _BUCKET.match(line)
                if found:  # "+Inf" reads as inf
                    histograms.setdefault(found[1], {})[float(found[2])] = int(found[3])
        nodes.append(histograms)
    return nodes


def _bucket_ms(before: Buckets, after: Buckets, share: float) -> float:
    """The upper bound, in ms, of the first bucket holding ``share`` of the observations
    counted between two readings of a histogram (inf: past the last bound; NaN when none
    were)."""
    bounds = sorted(after)
    counted = [after[b] - before.get(b, 0) for b in bounds]
    if not counted or counted[-1] <= 0:
        return math.nan
    return next(b for b, n in zip(bounds, counted, strict=True) if n >= share * counted[-1]) * 1000


def p99_ms(before: Buckets, after: Buckets) -> float:
    """The bucket holding the p99 (``_bucket_ms``)."""
    return _bucket_ms(before, after, 0.99)


def worst_ms(before: Buckets, after: Buckets) -> float:
    """The highest bucket holding any observation: the slowest (``_bucket_ms``)."""
    return _bucket_ms(before, after, 1.0)


def _summed(nodes: list[dict[str, Buckets]], name: str) -> Buckets:
    total: Buckets = {}
    for node in nodes:
        for bound, count in node.get(name, {}).items():
            total[bound] = total.get(bound, 0) + count
    return total


def _server_p99s(
    before: list[dict[str, Buckets]], after: list[dict[str, Buckets]]
) -> tuple[float, float, float, float]:
    """Between two scrapes: the nodes' bet acknowledgement p99 (their buckets summed), the
    worst node's event-loop lag p99, and the nodes' store commits' p99 and slowest, each in
    ms (the upper bound of its bucket)."""
    lags = [
        p99_ms(old.get(LAG, {}), new.get(LAG, {}))
        for old, new in zip(before, after, strict=True)
        if new.get(LAG)
    ]
    commits = _summed(before, COMMIT), _summed(after, COMMIT)
    return (
        p99_ms(_summed(before, ACK), _summed(after, ACK)),
        max(lags, default=math.nan),
        p99_ms(*commits),
        worst_ms(*commits),
    )


def _machine_busy() -> float:
    """CPU-seconds the whole machine has spent busy (``/proc/stat``, every CPU)."""
    fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(f) for f in fields[:8])
    return (user + nice + system + irq + softirq + steal) / _TICKS


@dataclass
class Trial:
    scenario: str
    deployment: str
    users: int
    held: bool = False
    why: str = ""
    requests: int = 0
    failures: int = 0
    bet_acks: int = 0
    bet_p50_ms: float = math.nan
    bet_p99_ms: float = math.nan
    # the nodes' own croupier_bet_ack_seconds over the steady part: the bucket holding its
    # p99 (frame read to bet_accepted written), which tells the server's time from the
    # time spent in Locust and on the wire
    server_p99_ms: float = math.nan
    # and the nodes' croupier_event_loop_lag_seconds: how late the busiest node's loop woke
    # (p99 bucket), the wait a frame has before the server reads it and starts timing it
    loop_lag_p99_ms: float = math.nan
    # Locust's own: how late its gevent loop woke (p99), the part of its timing that is the
    # load generator's, not the server's ("locust loop lag" in its output)
    locust_lag_p99_ms: float = math.nan
    # and the nodes' croupier_store_commit_seconds: their group commits' p99 and the slowest
    # (the upper bound of the highest bucket any reached; inf past 1 s) — a disk that stalls
    # holds every bet of its group with the node's CPU idle
    commit_p99_ms: float = math.nan
    commit_worst_ms: float = math.nan
    players_checked: int = 0
    locust_cores: float = math.nan  # Locust's CPU share over the steady part
    node_cores: float = math.nan  # the croupier nodes'
    server_cores: float = math.nan  # the machine's less Locust's (and the wallet's)
    wallet_cores: float = 0.0  # the operator's wallet's (``wallet-L``)
    seconds: float = 0.0
    errors: list[str] = field(default_factory=list)  # Locust's error report, most first
    extra: dict[str, Any] = field(default_factory=dict)
    # py-spy of each node and of Locust over the steady part: the process's busiest
    # functions (own samples ÷ samples a busy process would give), and its flame graph
    profiles: dict[str, dict[str, Any]] = field(default_factory=dict)


def _profile(pid: int, seconds: float, out: Path) -> list[subprocess.Popen[bytes]]:
    """py-spy recording ``pid`` for ``seconds`` without pausing it: collapsed stacks
    (``out``.txt) and a flame graph (``out``.svg)."""
    common = [PYSPY, "record", "--pid", str(pid), "--duration", f"{max(1, int(seconds))}",
              "--rate", str(SAMPLE_RATE), "--nonblocking"]  # fmt: skip
    return [
        subprocess.Popen(
            [*common, "--format", fmt, "-o", str(out.with_suffix(suffix))],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for fmt, suffix in (("raw", ".txt"), ("flamegraph", ".svg"))
    ]


def _reap(spy: subprocess.Popen[bytes], timeout: float = 30.0) -> float:
    """Wait for a py-spy to end (killed after ``timeout``): the CPU-seconds it used."""
    deadline = time.monotonic() + timeout
    while True:
        flags = os.WNOHANG if time.monotonic() < deadline else 0
        if not flags:
            spy.kill()
        pid, status, usage = os.wait4(spy.pid, flags)
        if pid:
            spy.returncode = os.waitstatus_to_exitcode(status)
            return float(usage.ru_utime + usage.ru_stime)
        time.sleep(0.1)


def summarize(collapsed: Path, seconds: float, top: int = 6) -> list[tuple[str, float]]:
    """The functions with the most own samples in py-spy's collapsed stacks, each as a
    share of the samples a process busy all along would have given."""
    own: dict[str, int] = {}
    for line in collapsed.read_text(errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        leaf = stack.rsplit(";", 1)[-1]
        name = re.sub(r":\d+\)$", ")", leaf)  # one entry per function, not per line
        own[name] = own.get(name, 0) + int(count)
    expected = max(1.0, seconds * SAMPLE_RATE)
    ranked = sorted(own.items(), key=lambda item: -item[1])[:top]
    return [(name, samples / expected) for name, samples in ranked]


def _errors(output: str) -> list[str]:
    """The lines of Locust's error report (``COUNT  TYPE NAME: ERROR``), most first."""
    if "Error report" not in output:
        return []
    report = output.rsplit("Error report", 1)[1].splitlines()
    lines = [" ".join(line.split()) for line in report if re.match(r"\s*\d+\s+\S", line)]
    return lines[:5]


def _history(path: Path) -> list[dict[str, str]]:
    with contextlib.suppress(OSError), path.open(encoding="utf-8") as f:
        return [row for row in csv.DictReader(f) if row["Name"] == "Aggregated"]
    return []


def _ms(cell: str) -> float:
    """A percentile of Locust's statistics, NaN where it has none (``N/A``)."""
    try:
        return float(cell)
    except ValueError:
        return math.nan


def _users_at_end(history: list[dict[str, str]], until: float) -> int:
    """Locust's running users in its last line before the run's time was up (``until``, a
    Unix time): a user whose code raised is gone for good (Locust does not start another).
    Lines written after it show Locust stopping its users, some already gone: not a
    failure (a trial once read 1,557 of 3,000 users there)."""
    running = [
        int(row["User Count"])
        for row in history
        if int(row["User Count"] or 0) > 0 and float(row["Timestamp"]) <= until
    ]
    return running[-1] if running else 0


def _stats(path: Path) -> dict[str, dict[str, str]]:
    with path.open(encoding="utf-8") as f:
        return {row["Name"]: row for row in csv.DictReader(f)}


def trial(
    scenario: str,
    deployment: str,
    users: int,
    args: argparse.Namespace,
    classes: tuple[str, ...] = (),
) -> Trial:
    """One Locust run of ``scenario`` at ``users`` users against a fresh ``deployment``."""
    result = Trial(scenario, deployment, users)
    rate = min(args.rate, max(10.0, users / 10))  # ten seconds of ramp, or --rate a second
    ramp = users / rate
    run_time = ramp + args.steady
    with tempfile.TemporaryDirectory(prefix="croupier-bench-", dir=args.data_under) as tmp:
        work = Path(tmp)
        text, tables = served(
            scenario, users, 0.0 if "Spectator" in classes else 1.0 if classes else 0.8
        )
        config = work / "tables.toml"
        config.write_text(text)
        with deploy(deployment, config, work) as where:
            argv = [
                LOCUST, "-f", f"loadtests/scenarios/{scenario}.py", "--headless",
                "--host", where.url, "-u", str(users), "-r", f"{rate:g}",
                "-t", f"{math.ceil(run_time)}s", "--csv", str(work / "run"), "--only-summary",
                "--reset-stats", "--croupier-warmup-seconds", f"{WARMUP:g}",
                "--croupier-untimed-stop",
                "--loglevel", "WARNING", "--croupier-settle-seconds", str(SETTLE_SECONDS),
                "--croupier-metrics", ",".join(where.metrics),
                "--croupier-storm-seconds", f"{ramp + args.steady / 2:.0f}",
                *where.check,
            ]  # fmt: skip
            if tables:
                argv += ["--croupier-tables", ",".join(tables)]
            argv += list(classes)
            log = (work / "locust.log").open("wb")
            started, began = time.monotonic(), time.time()
            locust = subprocess.Popen(
                argv, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                env={**os.environ, "PYTHONPATH": str(ROOT)},
            )  # fmt: skip
            place(locust.pid, CLIENT_CPU)
            samples: list[tuple[float, float, float, float, float]] = []
            scraped: list[list[dict[str, Buckets]]] = []

            def sample() -> None:
                scraped.append(_histograms(where.metrics))
                with contextlib.suppress(OSError):
                    nodes = sum(proc_cpu(pid) for pid in where.node_pids)
                    outside = sum(proc_cpu(pid) for pid in where.outside_pids)
                    samples.append(
                        (time.monotonic(), proc_cpu(locust.pid), nodes, _machine_busy(), outside)
                    )

            profiled = max(1.0, min(30.0, args.steady - 8))
            spies: list[subprocess.Popen[bytes]] = []
            named = {f"node-{n}": pid for n, pid in enumerate(where.node_pids, 1)}
            named["locust"] = locust.pid

            def profile() -> None:
                for name, pid in named.items():
                    spies.extend(_profile(pid, profiled, work / f"profile-{name}"))

            timers = [
                threading.Timer(ramp + WARMUP, sample),
                threading.Timer(max(ramp + 6, run_time - 2), sample),
            ]
            if args.profile:
                timers.append(threading.Timer(ramp + WARMUP, profile))
            for timer in timers:
                timer.start()
            try:
                locust.wait(run_time + 300)
            except subprocess.TimeoutExpired:
                locust.kill()
                locust.wait()
            finally:
                for timer in timers:
                    timer.cancel()
                log.close()
            result.seconds = time.monotonic() - started
            spied = sum(_reap(spy) for spy in spies)
        for name in named:
            raw = work / f"profile-{name}.txt"
            if raw.exists():
                kept = args.profile_dir / f"{scenario}-{deployment}-{users}-{name}"
                kept.parent.mkdir(parents=True, exist_ok=True)
                for suffix in (".txt", ".svg"):
                    # (a move, not a rename: with --data-under /dev/shm the work folder is
                    # on another file system than the profiles' folder)
                    with contextlib.suppress(OSError):
                        shutil.move(work / f"profile-{name}{suffix}", kept.with_suffix(suffix))
                result.profiles[name] = {
                    "top": summarize(kept.with_suffix(".txt"), profiled),
                    "svg": str(kept.with_suffix(".svg")),
                }
        output = (work / "locust.log").read_text(errors="replace")
        if len(samples) == 2:
            (t0, l0, n0, m0, o0), (t1, l1, n1, m1, o1) = samples
            span = t1 - t0
            result.locust_cores = (l1 - l0) / span
            result.node_cores = (n1 - n0) / span
            result.wallet_cores = (o1 - o0) / span
            # the server side: the machine less Locust, the operator's wallet and py-spy (all
            # within the span)
            result.server_cores = (m1 - m0 - (l1 - l0) - (o1 - o0) - spied) / span
        if len(scraped) == 2:
            (
                result.server_p99_ms,
                result.loop_lag_p99_ms,
                result.commit_p99_ms,
                result.commit_worst_ms,
            ) = _server_p99s(*scraped)
        work_history = _history(work / "run_stats_history.csv")
        try:
            stats = _stats(work / "run_stats.csv")
        except OSError:
            result.why = "no statistics: " + output[-400:]
            return result
    total = stats.get("Aggregated", {})
    result.requests = int(total.get("Request Count") or 0)
    result.failures = int(total.get("Failure Count") or 0)
    bet = stats.get(BET)
    if bet is not None:
        result.bet_acks = int(bet["Request Count"])
        # Locust writes N/A for a percentile of a trial too short to count a bet
        result.bet_p50_ms = _ms(bet["50%"])
        result.bet_p99_ms = _ms(bet["99%"])
    alive = _users_at_end(work_history, began + run_time - 1)
    lagged = re.search(r"locust loop lag: p50 [\d.]+ ms, p99 ([\d.]+) ms", output)
    if lagged is not None:
        result.locust_lag_p99_ms = float(lagged[1])
    checked = re.search(r"money check: (\d+) players, (\d+) mismatches", output)
    if checked is not None:
        result.players_checked = int(checked[1])
    reasons = []
    if alive != users:
        reasons.append(f"{users - alive} users stopped on an error")
    result.errors = _errors(output)
    if checked is None or int(checked[2]) != 0:
        reasons.append("money check: " + (checked[0] if checked else "did not run"))
    if not result.requests or result.failures / result.requests > MAX_ERROR_RATE:
        reasons.append(f"{result.failures} of {result.requests} requests failed")
    if bet is None and not classes:
        reasons.append("no bet acknowledged")
    elif bet is not None and math.isnan(result.bet_p99_ms):
        reasons.append("too few bets for a bet-ack p99")
    elif bet is not None and result.bet_p99_ms > max_p99_ms(deployment):
        reasons.append(f"bet-ack p99 {result.bet_p99_ms:g} ms")
    result.held = not reasons
    result.why = "; ".join(reasons)
    for line in result.errors:
        print(f"    {line}", file=sys.stderr)
    print(
        f"  {scenario} / {deployment} / {users} users{' ' + ','.join(classes) if classes else ''}:"
        f" {'held' if result.held else 'did not hold (' + result.why + ')'}; bet-ack p99 "
        f"{result.bet_p99_ms:g} ms (in the server ≤ {result.server_p99_ms:g} ms, loop lag p99 ≤ "
        f"{result.loop_lag_p99_ms:g} ms; Locust's loop lag p99 {result.locust_lag_p99_ms:g} "
        f"ms; store commits p99 ≤ {result.commit_p99_ms:g} ms, slowest ≤ "
        f"{result.commit_worst_ms:g} ms); Locust "
        f"{result.locust_cores:.0%}, server side "
        f"{result.server_cores:.0%} of a core (the nodes {result.node_cores:.0%})"
        + (f", the operator's wallet {result.wallet_cores:.0%}" if result.wallet_cores else ""),
        file=sys.stderr,
        flush=True,
    )
    return result


def search(scenario: str, deployment: str, args: argparse.Namespace, start: int) -> list[Trial]:
    """Double from ``start`` while trials hold, then halve the gap ``--refine`` times."""
    trials: list[Trial] = []
    held, failed = 0, 0
    users = start
    while users <= args.most:
        done = trial(scenario, deployment, users, args)
        trials.append(done)
        if not done.held:
            failed = users
            break
        held = users
        users *= 2
    if held == 0 and failed:  # the first did not hold: look below it
        low = start // 4
        while low >= 10:
            done = trial(scenario, deployment, low, args)
            trials.append(done)
            if done.held:
                held = low
                break
            failed, low = low, low // 4
    for _ in range(args.refine if held and failed else 0):
        users = _round((held + failed) // 2)
        if users in (held, failed):
            break
        done = trial(scenario, deployment, users, args)
        trials.append(done)
        if done.held:
            held = users
        else:
            failed = users
    return trials


def _round(users: int) -> int:
    step = 50 if users >= 200 else 10
    return max(step, users // step * step)


def capacity(trials: list[Trial]) -> Trial | None:
    held = [t for t in trials if t.held]
    return max(held, key=lambda t: t.users) if held else None


def bottleneck(
    trials: list[Trial], best: Trial | None, name: str, keep: bool = True
) -> dict[str, Any] | None:
    """Where the time went in the trial that decided the capacity — the smallest that did
    not hold, else the largest that did: its busiest process and that process's flame graph,
    copied to loadtests/profiles/NAME.svg with ``keep`` (else linked where it is)."""
    failed = [t for t in trials if not t.held]
    deciding = min(failed, key=lambda t: t.users) if failed else best
    if deciding is None or not deciding.profiles:
        return None
    shares = {"locust": deciding.locust_cores}
    nodes = [n for n in deciding.profiles if n != "locust"]
    for n in nodes:  # the nodes' CPU is measured together: each gets its samples' share
        shares[n] = sum(share for _, share in deciding.profiles[n]["top"])
    busiest = "locust" if deciding.locust_cores >= 0.9 else max(nodes, key=lambda n: shares[n])
    svg = Path(deciding.profiles[busiest]["svg"])
    link = None
    if svg.exists() and not keep:
        link = str(svg)
    elif svg.exists():
        PROFILES.mkdir(parents=True, exist_ok=True)
        target = PROFILES / f"{name}.svg"
        target.write_bytes(svg.read_bytes())
        link = str(target.relative_to(ROOT))
    return {
        "users": deciding.users,
        "held": deciding.held,
        "process": busiest,
        "top": deciding.profiles[busiest]["top"],
        "svg": link,
    }


# --- the report -------------------------------------------------------------------------------


def _cores(value: float) -> str:
    return "—" if math.isnan(value) else f"{value:.0%}"


def _where(trial: dict[str, Any]) -> str:
    """Where a trial's p99 went (results of older runs have no such figures: —)."""
    keys = ("server_p99_ms", "loop_lag_p99_ms", "locust_lag_p99_ms", "commit_p99_ms", "commit_worst_ms")  # fmt: skip  # noqa: E501
    figures = [trial.get(key, math.nan) for key in keys]
    return " / ".join("—" if math.isnan(f) else "> 1000" if math.isinf(f) else f"{f:g}" for f in figures)  # fmt: skip  # noqa: E501


def render(result: dict[str, Any], command: str) -> str:
    lines = [
        (
            "## Load testing with the operator's wallet: capacity against the embedded wallet's"
            if any(wallet_latency(row["deployment"]) is not None for row in result["capacity"])
            else "## Load testing: capacity per scenario, Locust's own cost, CPU-seconds per user"
        ),
        "",
        f"Command: `{command}` ({machine_line()}; load average at the end {result['load']}). "
        "Locust pinned to CPU 1, the croupier nodes (and a cluster's Redis) to CPU 0; "
        "PostgreSQL and nginx where the scheduler puts them. The module docstring of "
        "`loadtests/bench_loadtest.py` gives the method; each figure comes from the same run "
        "as the others in its table.",
        "",
        "A trial *held* when at most 0.1% of its requests failed, the p99 of "
        "`place_bet → bet_accepted` stayed within 50 ms over the steady part (within 50 ms "
        "plus L for `wallet-L`, where each bet waits for the operator's answer to its debit, "
        "given L ms after each call; the reference operator wallet pinned beside Locust, "
        "outside the server side's CPU), every user was "
        "still running at the end and the money check found no mismatch. "
        "*Capacity*: the most users a trial held with. *Users per Locust core*: the users ÷ "
        "Locust's CPU share in that trial. *CPU-s per user*: the server side's CPU-seconds "
        "per second (the machine's less Locust's and the operator wallet's) per user, ×1000 "
        "(milli-cores per user). "
        "*Where the p99 went*: the nodes' own `croupier_bet_ack_seconds` p99 (frame read to "
        "`bet_accepted` written) and the busiest node's `croupier_event_loop_lag_seconds` p99 "
        "(a frame's wait to be read), each the upper bound of its bucket, then Locust's own "
        "loop lag p99 (a reply's wait to be read by its user), then the nodes' "
        "`croupier_store_commit_seconds` p99 and slowest (the bucket of the slowest group "
        "commit: a disk that stalls holds every bet of its group while the CPU idles).",
        "",
        "| Scenario | deployment | capacity, users | bet-ack p50 / p99 ms | where the p99 went: "
        "server ≤ / its loop lag ≤ / Locust's lag / commits p99 ≤ / slowest commit ≤, ms | "
        "Locust CPU | server-side CPU (nodes) | Locust ÷ server | users per Locust core | "
        "server milli-cores per user | trials (users: held?) |",
        "|---|---|---:|---|---|---:|---|---:|---:|---:|---|",
    ]
    for row in result["capacity"]:
        best = row["best"]
        tried = ", ".join(
            f"{t['users']}: {'yes' if t['held'] else 'no (' + t['why'] + ')'}"
            for t in row["trials"]
        )
        if best is None:
            lines.append(
                f"| `{row['scenario']}` | {row['deployment']} | none held | — | — | — | — | — "
                f"| — | — | {tried} |"
            )
            continue
        users = best["users"]
        lines.append(
            f"| `{row['scenario']}` | {row['deployment']} | {users:,} | "
            f"{best['bet_p50_ms']:g} / {best['bet_p99_ms']:g} | {_where(best)} | "
            f"{_cores(best['locust_cores'])} | "
            f"{_cores(best['server_cores'])} ({_cores(best['node_cores'])}) | "
            f"{best['locust_cores'] / best['server_cores']:.2f} | "
            f"{users / best['locust_cores']:,.0f} | "
            f"{best['server_cores'] / users * 1000:.3f} | {tried} |"
        )
    deployments = list(dict.fromkeys(row["deployment"] for row in result["capacity"]))
    if len(deployments) > 1:
        lines += [
            "",
            "Capacity by deployment, users (server milli-cores per user), and each "
            f"deployment's capacity against {deployments[0]}'s:",
            "",
            "| Scenario | "
            + " | ".join(deployments)
            + " | "
            + " | ".join(f"{d} ÷ {deployments[0]}" for d in deployments[1:])
            + " |",
            "|---|" + "---:|" * (2 * len(deployments) - 1),
        ]
        for scenario in dict.fromkeys(row["scenario"] for row in result["capacity"]):
            found = {
                row["deployment"]: row["best"]
                for row in result["capacity"]
                if row["scenario"] == scenario
            }
            cells, first = [], found.get(deployments[0])
            for d in deployments:
                best = found.get(d)
                cells.append(
                    "—" if d not in found else "none held" if best is None else
                    f"{best['users']:,} ({best['server_cores'] / best['users'] * 1000:.2f})"
                )  # fmt: skip
            for d in deployments[1:]:
                best = found.get(d)
                cells.append(f"{best['users'] / first['users']:.2f}" if best and first else "—")
            lines.append(f"| `{scenario}` | " + " | ".join(cells) + " |")
    profiled = any(row.get("bottleneck") for row in result["capacity"])
    lines += (
        []
        if not profiled
        else [
            "",
            "**Where the time went** in the trial that decided each capacity (the smallest that "
            "did not hold): py-spy on every node and on Locust over the steady part "
            f"({SAMPLE_RATE} samples a second); the busiest process (Locust when it used 90% of "
            "its core or more), its functions with the most samples of their own as a share of "
            "the samples a process busy all along gives, and its flame graph.",
            "",
            "| Scenario | deployment | users | process | busiest functions (own time) "
            "| flame graph |",
            "|---|---|---:|---|---|---|",
        ]
    )
    for row in result["capacity"]:
        where = row.get("bottleneck")
        if not where:
            continue
        top = "; ".join(f"`{name}` {share:.0%}" for name, share in where["top"][:4])
        svg = f"[{Path(where['svg']).name}]({where['svg']})" if where["svg"] else "—"
        lines.append(
            f"| `{row['scenario']}` | {row['deployment']} | {where['users']:,}"
            f"{'' if not where['held'] else ' (held)'} | {where['process']} | {top} | {svg} |"
        )
    cost = result.get("cost") or []
    if cost:
        lines += [
            "",
            f"**Locust's own cost.** `peak_evening` with one kind of user only, "
            f"{cost[0]['users']:,} users, on a single node:",
            "",
            "| Users | Locust CPU | users per Locust core | server-side CPU | Locust ÷ server |",
            "|---|---:|---:|---:|---:|",
        ]
        for t in cost:
            lines.append(
                f"| {t['extra']['kind']} | {_cores(t['locust_cores'])} | "
                f"{t['users'] / t['locust_cores']:,.0f} | {_cores(t['server_cores'])} | "
                f"{t['locust_cores'] / t['server_cores']:.2f} |"
            )
    return "\n".join(lines) + "\n"


# --- main -------------------------------------------------------------------------------------


OPTIONS: list[Option] = [
    ("--scenarios", str, ",".join(SCENARIOS), "scenarios to measure"),
    ("--deployments", str, ",".join(DEPLOYMENTS), "single, cluster-N, wallet-L (L ms away)"),
    ("--start", int, 1000, "users of the first trial"),
    ("--most", int, 16000, "no trial above this many users"),
    ("--refine", int, 2, "bisections after the first trial that did not hold"),
    ("--steady", float, 30.0, "seconds of each trial after its ramp"),
    ("--rate", float, 100.0, "most users a second the ramp starts"),
    ("--cost-users", int, 1000, "users of the runs measuring Locust's own cost (0: none)"),
]


def _command(args: argparse.Namespace) -> str:
    """The command that reproduces the run, with where its data lived: ``--data-under`` and
    the PostgreSQL server the cluster's databases were made on, when not the default."""
    command = command_line("loadtests.bench_loadtest", args, OPTIONS)
    if args.data_under is not None:
        command += f" --data-under {args.data_under}"
    if getattr(args, "no_profile", False):
        command += " --no-profile"
    server = os.environ.get("CROUPIER_TEST_POSTGRES")
    if server and any(d.startswith("cluster") for d in args.deployments.split(",")):
        command = f"CROUPIER_TEST_POSTGRES={server} {command}"
    return command


def main() -> int:
    parser = option_parser(__doc__.splitlines()[0], OPTIONS)
    parser.add_argument(
        "--no-write",
        action="store_true",
        help="print only (BENCHMARKS.md and loadtests/profiles/ untouched)",
    )
    parser.add_argument("--no-profile", action="store_true", help="no py-spy sampling")
    parser.add_argument(
        "--data-under",
        type=Path,
        default=None,
        help="where each trial's work folder goes, the nodes' SQLite data with it (default: "
        "the system's temporary folder). /dev/shm measures the same CPU work with the "
        "disk's flushes almost free: a trial that fails on disk but holds there failed on "
        "the disk, not on the node (a cluster's PostgreSQL stays where it runs)",
    )
    parser.add_argument(
        "--profile-dir",
        type=Path,
        default=Path(tempfile.gettempdir()) / "croupier-profiles",
        help="where every trial's profiles go (the deciding ones are copied to "
        "loadtests/profiles/)",
    )
    args = parser.parse_args()
    args.profile = not args.no_profile
    scenarios = [s for s in args.scenarios.split(",") if s]
    deployments = [d for d in args.deployments.split(",") if d]
    for name in scenarios:
        if name not in SCENARIOS:
            parser.error(f"unknown scenario {name!r} (one of {', '.join(SCENARIOS)})")
    for name in deployments:
        if name != "single" and not re.fullmatch(r"cluster-[1-9]|wallet-\d+", name):
            parser.error(f"unknown deployment {name!r} (single, cluster-N or wallet-L)")
    result: dict[str, Any] = {"capacity": [], "cost": []}
    if args.cost_users:
        for kind in ("Player", "Spectator"):
            done = trial("peak_evening", "single", args.cost_users, args, classes=(kind,))
            done.extra["kind"] = f"{kind.lower()}s"
            result["cost"].append(asdict(done))
    for scenario in scenarios:
        start = args.start
        for deployment in deployments:
            trials = search(scenario, deployment, args, start)
            best = capacity(trials)
            result["capacity"].append(
                {
                    "scenario": scenario,
                    "deployment": deployment,
                    "best": asdict(best) if best else None,
                    "trials": [asdict(t) for t in trials],
                    "bottleneck": bottleneck(
                        trials, best, f"{scenario}-{deployment}", keep=not args.no_write
                    ),
                }
            )
            if best is not None:  # the next deployment starts a step below this one
                start = max(10, _round(best.users // 2))
    result["load"] = loadavg()
    args.profile_dir.mkdir(parents=True, exist_ok=True)
    (args.profile_dir / "results.json").write_text(json.dumps(result, indent=1, default=str))
    text = render(result, _command(args))
    print(text)
    if not args.no_write:
        walleted = any(wallet_latency(d) is not None for d in deployments)
        write_section("loadtest-wallet" if walleted else "loadtest", text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
