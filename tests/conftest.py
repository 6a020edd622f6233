"""Suite-wide test settings.

Under ``CI`` (``.ci/run`` exports it) a skipped test fails the run: a skip there means
coverage lost without anyone noticing. The only skips CI accepts are those on
``SKIPS_ALLOWED_IN_CI`` below, each with the reason it may be skipped; the browser,
PostgreSQL, Redis, nginx and the external RNG batteries may never be among them
(``scripts/test`` installs them all).

Hypothesis' per-example deadline is off: on a loaded 2-core CI machine a slow example is not
a failure (performance is measured by the benchmarks in loadtests/, never by timing tests).
The shared stores' tests get a real PostgreSQL database of their own (``postgres_url``), the
cluster's a real Redis server of their own (``redis_server``).
"""

import logging
import os
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import settings

from tests.postgres import empty, run_database
from tests.redis_server import RedisServer, run_redis

# Reason (a substring of the skip's message) -> why CI may skip it. Keep this short.
SKIPS_ALLOWED_IN_CI: dict[str, str] = {}


def _skip_reason(report: pytest.TestReport | pytest.CollectReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple):  # (file, line, "Skipped: reason")
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


def _fail_a_skip_in_ci(report: pytest.TestReport | pytest.CollectReport) -> None:
    if not (os.environ.get("CI") and report.skipped) or hasattr(report, "wasxfail"):
        return
    reason = _skip_reason(report)
    if any(allowed in reason for allowed in SKIPS_ALLOWED_IN_CI):
        return
    report.outcome = "failed"
    report.longrepr = (
        f"skipped under CI, which fails every skip not on SKIPS_ALLOWED_IN_CI "
        f"(tests/conftest.py): {reason}"
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    _fail_a_skip_in_ci(outcome.get_result())  # type: ignore[attr-defined]


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Iterator[None]:
    outcome = yield
    _fail_a_skip_in_ci(outcome.get_result())  # type: ignore[attr-defined]


# Modules whose tests share what a module-scoped fixture makes (a certification run, a
# benchmark run): each runs whole on one parallel worker, so that it is made once. And the
# load scenarios, one after the other: each is a Locust and a server busy for its whole run,
# and several at once starved the machine (a scenario's players then never got a round in).
# Every other test is scheduled on its own (pytest_xdist_make_scheduler below).
ONE_WORKER_MODULES = frozenset(
    {
        "tests/rng/test_certify_external.py",
        "tests/rng/test_certify_outcomes.py",
        "tests/rng/test_certify_raw.py",
        "tests/rng/test_certify_report.py",
        "tests/test_benchmarks_cluster.py",
        "tests/load/test_scenarios.py",
    }
)


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """pytest-xdist's scheduling by scope, where the scope is the module for the modules on
    ONE_WORKER_MODULES and the test itself for every other. (xdist's own ``loadgroup`` does
    not group with this pytest: it marks a node id through an attribute pytest 9.2 no longer
    reads.)"""
    from xdist.scheduler import LoadScopeScheduling

    class ModulesTogether(LoadScopeScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            return module if module in ONE_WORKER_MODULES else nodeid

    return ModulesTogether(config, log)


# The longest of all, first of the slow ones: the quick certification (minutes in one
# module's set-up) must not start late and finish alone after the rest.
FIRST = "tests/rng/test_certify_report.py"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests marked ``slow`` first (the order otherwise kept): parallel workers start the
    long ones at once instead of meeting one alone at the end of the run."""
    items.sort(
        key=lambda item: (
            item.get_closest_marker("slow") is None,
            not item.nodeid.startswith(FIRST),
        )
    )


settings.register_profile("croupier", deadline=None, print_blob=True)
settings.load_profile("croupier")


@pytest.fixture(scope="session")
def postgres_database() -> Iterator[str]:
    """The test run's own PostgreSQL database (tests/postgres.py)."""
    yield from run_database()


@pytest.fixture
def postgres_url(postgres_database: str) -> str:
    """The run's database, emptied for this test."""
    return empty(postgres_database)


@pytest.fixture(scope="session")
def redis_process(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """The test run's own redis-server (tests/redis_server.py)."""
    yield from run_redis(tmp_path_factory.mktemp("redis"))


@pytest.fixture
def redis_server(redis_process: RedisServer) -> RedisServer:
    """The run's Redis, running and emptied for this test."""
    if redis_process.process is None or redis_process.process.poll() is not None:
        redis_process.start()  # a test stopped it
    redis_process.flush()
    return redis_process


@pytest.fixture(autouse=True)
def _root_logger_kept() -> Iterator[None]:
    """The root logger as each test found it. ``croupier serve`` run in-process
    (``main(["serve", …])``) installs its own handler on the root logger, writing to the
    ``sys.stderr`` of that moment — pytest's capture of that test, closed after it: every
    later log line of the worker then printed "Logging error" into another test's stderr."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
