"""The capacity benchmark's own parts (loadtests/bench_loadtest.py): the table files it
serves each scenario are valid and seat the players it sends, and it reads py-spy's
collapsed stacks right."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from loadtests.bench_loadtest import PLAYERS_PER_COPY, _users_at_end, served, summarize
from loadtests.scenarios.floors import PEAK_EVENING, RECONNECT_STORM
from server.config import parse_config


def test_the_peak_evening_lobby_has_a_seat_for_every_player_and_keeps_the_mix() -> None:
    text, tables = served("peak_evening", 1000, players=0.8)
    settings = parse_config(text, "bench")
    ids = {t.id for t in settings.tables}
    assert set(tables) <= ids  # every table a user may choose is served
    seats = sum(t.seats for t in settings.tables)
    assert seats >= 800  # the players: 0.8 of the users
    copies = -(-800 // PLAYERS_PER_COPY)
    assert len(tables) == copies * len(PEAK_EVENING)
    # each copy in the floor's proportions: four baccarat tables in thirteen choices
    counts = Counter(t.split("_")[0] for t in tables)
    assert counts["baccarat"] == 4 * copies


def test_the_storm_floor_and_the_other_scenarios_tables() -> None:
    _, tables = served("reconnect_storm", 100)
    assert tables == list(RECONNECT_STORM)  # one copy is enough for 80 players
    hot, none = served("hot_table", 3000)
    (table,) = parse_config(hot, "bench").tables
    assert (table.id, table.seats, none) == ("baccarat", 100, [])
    meter, none = served("shoe_change_and_meter_hit", 500)
    assert [t.id for t in parse_config(meter, "bench").tables] == ["meter-1", "meter-2"]
    assert none == []


def test_summarize_ranks_functions_by_their_own_samples(tmp_path: Path) -> None:
    collapsed = tmp_path / "node.txt"
    collapsed.write_text(
        "<module> (serve.py:1);run (loop.py:10);select (selectors.py:451) 50\n"
        "<module> (serve.py:1);run (loop.py:10);deliver (fanout.py:20) 30\n"
        "<module> (serve.py:1);run (loop.py:10);deliver (fanout.py:24) 25\n"
        "<module> (serve.py:1);run (loop.py:12) 10\n"
    )
    top = summarize(collapsed, seconds=4.0)  # 25 a second: 100 samples if busy all along
    assert top[:2] == [("deliver (fanout.py)", 0.55), ("select (selectors.py)", 0.5)]
    assert dict(top)["run (loop.py)"] == 0.1


def test_render_compares_the_deployments_and_says_when_none_held() -> None:
    from dataclasses import asdict

    from loadtests.bench_loadtest import Trial, render

    def held(deployment: str, users: int, server: float) -> Trial:
        return Trial(
            "peak_evening", deployment, users, held=True, bet_p50_ms=3.0, bet_p99_ms=15.0,
            locust_cores=0.06, node_cores=0.1, server_cores=server,
        )  # fmt: skip

    single, cluster = held("single", 800, 0.16), held("cluster-1", 200, 0.1)
    failed = Trial("reconnect_storm", "cluster-1", 37, why="bet-ack p99 110 ms")
    rows = [
        {"scenario": t.scenario, "deployment": t.deployment, "best": asdict(t),
         "trials": [asdict(t)], "bottleneck": None}
        for t in (single, cluster)
    ] + [{"scenario": "reconnect_storm", "deployment": "cluster-1", "best": None,
          "trials": [asdict(failed)], "bottleneck": None}]  # fmt: skip
    text = render({"capacity": rows, "cost": [], "load": "0 0 0"}, "cmd")
    assert "| `peak_evening` | single | 800 |" in text
    assert "| `peak_evening` | 800 (0.20) | 200 (0.50) | 0.25 |" in text  # 200 ÷ 800
    assert "| `reconnect_storm` | single | none held |" not in text
    assert "| `reconnect_storm` | cluster-1 | none held |" in text
    assert "| `reconnect_storm` | — | none held | — |" in text  # single: not tried
    assert "| 3 / 15 | — / — / — / — / — |" in text  # no figures of where the p99 went: dashes


def test_the_server_side_p99s_come_from_the_nodes_histograms_between_two_scrapes() -> None:
    """Between two scrapes of every node's /metrics: the acknowledgements' p99 over the
    nodes' buckets summed, the worst node's loop lag p99, and the store commits' p99 and
    slowest over the nodes — each the upper bound of the bucket that holds it."""
    import math

    from loadtests.bench_loadtest import COMMIT, LAG, _server_p99s, p99_ms, worst_ms

    inf = math.inf
    before = {0.01: 100, 0.025: 100, 0.05: 100, inf: 100}
    # 1,000 more: 980 within 10 ms, 15 within 25 ms, 5 within 50 ms: the 990th is in 25 ms
    assert p99_ms(before, {0.01: 1080, 0.025: 1095, 0.05: 1100, inf: 1100}) == 25.0
    assert p99_ms(before, {0.01: 1090, 0.025: 1095, 0.05: 1100, inf: 1100}) == 10.0
    assert math.isnan(p99_ms(before, before))  # nothing counted between the scrapes
    # the slowest: the 5 in the 50 ms bucket; then one past the last bound
    assert worst_ms(before, {0.01: 1080, 0.025: 1095, 0.05: 1100, inf: 1100}) == 50.0
    assert worst_ms(before, {0.01: 1080, 0.025: 1095, 0.05: 1100, inf: 1101}) == inf
    assert math.isnan(worst_ms(before, before))

    ack = "croupier_bet_ack_seconds"
    nothing = {0.01: 0, inf: 0}
    first = [{ack: nothing, LAG: nothing, COMMIT: nothing}, {ack: nothing, LAG: nothing}]
    second = [
        # lag all within 10 ms; 200 commits, 1 of them past 10 ms
        {ack: {0.01: 100, inf: 100}, LAG: {0.01: 100, inf: 100}, COMMIT: {0.01: 199, inf: 200}},
        {ack: {0.01: 0, inf: 1}, LAG: {0.01: 0, inf: 5}},  # acks and lag beyond the buckets
    ]
    acks, lag, commits, slowest = _server_p99s(first, second)
    assert acks == 10.0  # 100 of 101 acknowledgements within 10 ms over both nodes
    assert lag == inf  # the worst node's
    assert (commits, slowest) == (10.0, inf)


def test_the_trial_line_says_where_the_p99_went() -> None:
    import math
    from dataclasses import asdict

    from loadtests.bench_loadtest import Trial, render

    trial = Trial(
        "peak_evening", "single", 4000, held=False, bet_p50_ms=3.0, bet_p99_ms=91.0,
        locust_cores=0.2, node_cores=0.5, server_cores=0.55,
        server_p99_ms=50.0, loop_lag_p99_ms=25.0, locust_lag_p99_ms=2.5,
        commit_p99_ms=5.0, commit_worst_ms=math.inf,
    )  # fmt: skip
    row = {"scenario": "peak_evening", "deployment": "single", "best": asdict(trial),
           "trials": [asdict(trial)], "bottleneck": None}  # fmt: skip
    text = render({"capacity": [row], "cost": [], "load": "0 0 0"}, "cmd")
    assert "| 3 / 91 | 50 / 25 / 2.5 / 5 / > 1000 |" in text


def test_users_at_end_are_counted_before_locust_stops_them() -> None:
    """A user lost mid-run counts; the users Locust is stopping after its time is up do not
    (a trial of 3,000 once read 1,557 there and failed for it)."""

    def line(t: float, users: int) -> dict[str, str]:
        return {"Timestamp": f"{t:.0f}", "User Count": str(users), "Name": "Aggregated"}

    history = [line(100, 1000), line(130, 3000), line(150, 3000), line(160, 1557), line(161, 0)]
    assert _users_at_end(history, until=159) == 3000
    lost = [*history[:2], line(150, 2990), *history[3:]]
    assert _users_at_end(lost, until=159) == 2990
    assert _users_at_end([line(100, 0)], until=159) == 0


def test_the_command_written_says_where_the_data_lived(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run on tmpfs, or on another PostgreSQL, is reproduced only with those settings."""
    import argparse

    from loadtests.bench_loadtest import OPTIONS, _command

    args = argparse.Namespace(**{o[0][2:].replace("-", "_"): o[2] for o in OPTIONS})
    args.data_under = None
    monkeypatch.delenv("CROUPIER_TEST_POSTGRES", raising=False)
    assert _command(args) == ".venv/bin/python -m loadtests.bench_loadtest"
    args.data_under, args.deployments = Path("/dev/shm"), "single,cluster-1"
    monkeypatch.setenv("CROUPIER_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5439/postgres")
    assert _command(args) == (
        "CROUPIER_TEST_POSTGRES=postgresql://postgres@127.0.0.1:5439/postgres "
        ".venv/bin/python -m loadtests.bench_loadtest --deployments single,cluster-1 "
        "--data-under /dev/shm"
    )
