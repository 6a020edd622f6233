"""Suite-wide test settings.

Hypothesis' per-example deadline is off: on a loaded 2-core CI machine a slow example is not
a failure (performance is measured by the benchmarks in loadtests/, never by timing tests).
The shared stores' tests get a real PostgreSQL database of their own (``postgres_url``), the
cluster's a real Redis server of their own (``redis_server``).
"""

from collections.abc import Iterator

import pytest
from hypothesis import settings

from tests.postgres import empty, run_database
from tests.redis_server import RedisServer, run_redis

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
