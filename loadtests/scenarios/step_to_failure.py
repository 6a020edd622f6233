"""Step to failure: raise the load step by step until the server stops keeping up, and report
the last step that held — the **capacity** for this mix of players and spectators.

The users are ``peak_evening``'s (seven players in ten, on a floor mix, with churn). Every
``--croupier-step-seconds`` (default 30) the shape adds ``--croupier-step-users`` users
(default 50); after each step it judges that step alone: it held if at most
``--croupier-max-error-rate`` of its requests failed (default 0.001, i.e. 0.1%) and the p99
of its ``place_bet → bet_accepted`` stayed within ``--croupier-max-p99-ms`` (default 50). The
first step that did not hold ends the run; the capacity is the user count of the step
before it. ``-u``/``-r`` are not used (the shape decides; each step's users arrive within
its first fifth); ``-t`` still bounds the run.

    locust -f loadtests/scenarios/step_to_failure.py --headless --host ws://127.0.0.1:8000/ws \\
        --croupier-step-users 100 --croupier-step-seconds 30 -t 30m --csv runs/step/run

The verdict is printed (``capacity: N users``) and, with ``--csv PREFIX``, written to
``PREFIX_capacity.json`` with every step's figures. The money check runs at the end as in
every scenario.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from locust import LoadTestShape, events

from loadtests.scenarios.croupier import WS
from loadtests.scenarios.peak_evening import Player, Spectator

__all__ = ["Player", "Spectator", "StepToFailure"]

BET = "place_bet → bet_accepted"


class StepToFailure(LoadTestShape):
    use_common_options = False

    def __init__(self) -> None:
        super().__init__()
        self.steps: list[dict[str, Any]] = []
        self.capacity = 0
        self._mark: tuple[int, int, dict[int, int]] | None = None
        self._judged = 0
        self.verdict = ""

    def _options(self) -> Any:
        return self.runner.environment.parsed_options if self.runner is not None else None

    def tick(self) -> tuple[int, float] | None:
        options = self._options()
        users = int(getattr(options, "croupier_step_users", 50))
        seconds = float(getattr(options, "croupier_step_seconds", 30.0))
        run_time = self.get_run_time()
        limit = getattr(options, "run_time", None)  # -t (the shape reads it itself)
        if limit and run_time >= float(limit):
            return None
        step = int(run_time // seconds)
        if self._mark is None:
            self._mark = self._snapshot()
        if step > self._judged:  # a step ended: judge it
            held = self._judge(users * self._judged + users, options)
            self._judged = step
            if not held:
                return None
        return users * (step + 1), max(1.0, users * 5 / seconds)  # a fifth of the step ramps

    def _snapshot(self) -> tuple[int, int, dict[int, int]]:
        assert self.runner is not None
        stats = self.runner.stats
        bet = stats.get(BET, WS)
        return stats.total.num_requests, stats.total.num_failures, dict(bet.response_times)

    def _judge(self, users: int, options: Any) -> bool:
        assert self._mark is not None
        requests, failures, times = self._snapshot()
        before_requests, before_failures, before_times = self._mark
        self._mark = (requests, failures, times)
        done = requests - before_requests
        failed = failures - before_failures
        step_times = {ms: n - before_times.get(ms, 0) for ms, n in times.items()}
        p99 = _percentile(step_times, 0.99)
        rate = failed / done if done else 0.0
        limit_rate = float(getattr(options, "croupier_max_error_rate", 0.001))
        limit_p99 = float(getattr(options, "croupier_max_p99_ms", 50.0))
        held = done > 0 and rate <= limit_rate and (p99 is None or p99 <= limit_p99)
        self.steps.append(
            {
                "users": users,
                "requests": done,
                "failures": failed,
                "error_rate": rate,
                "bet_ack_p99_ms": p99,
                "held": held,
            }
        )
        print(
            f"step to failure: {users} users: {done} requests, error rate {rate:.4%}, "
            f"bet-ack p99 {p99} ms: {'held' if held else 'did not hold'}",
            file=sys.stderr,
        )
        if held:
            self.capacity = users
        return held


def _percentile(times: dict[int, int], q: float) -> float | None:
    """The ``q`` quantile of Locust's rounded response times (ms → count)."""
    total = sum(n for n in times.values() if n > 0)
    if not total:
        return None
    seen = 0
    for ms in sorted(times):
        seen += max(0, times[ms])
        if seen >= q * total:
            return float(ms)
    return float(max(times))


@events.quitting.add_listener
def _report(environment: Any, **kwargs: Any) -> None:
    shape = environment.shape_class
    if not isinstance(shape, StepToFailure):
        return
    print(f"capacity: {shape.capacity} users (the last step that held)", file=sys.stderr)
    prefix = getattr(environment.parsed_options, "csv_prefix", None)
    if prefix:
        report = {"capacity_users": shape.capacity, "steps": shape.steps}
        Path(f"{prefix}_capacity.json").write_text(json.dumps(report, indent=2))
