"""Suite-wide test settings.

Hypothesis' per-example deadline is off: on a loaded 2-core CI machine a slow example is not
a failure (performance is measured by the benchmarks in loadtests/, never by timing tests).
The shared stores' tests get a real PostgreSQL database of their own (``postgres_url``).
"""

from collections.abc import Iterator

import pytest
from hypothesis import settings

from tests.postgres import empty, run_database

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
