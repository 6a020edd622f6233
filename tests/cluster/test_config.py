"""A cluster configured wrong stops at start with exit status 2 and a message naming the
setting (issue #18, "Bad input"), and nothing half-starts: no table taken, no lease in
Redis, no node announced."""

from __future__ import annotations

from pathlib import Path

import pytest
from redis import Redis

from server.cli.main import main
from tests.cluster.local import TABLES
from tests.redis_server import RedisServer


def test_a_wrong_cluster_setting_stops_the_node_at_start_naming_it(
    tmp_path: Path,
    redis_server: RedisServer,
    postgres_url: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    data = ["--port", "0", "--data-dir", str(tmp_path / "data")]
    db = ["--database", postgres_url]

    def refused(*args: str) -> str:
        assert main(["serve", *args, *data]) == 2
        return capsys.readouterr().err

    assert "--redis: cannot reach Redis" in refused("--redis", "redis://127.0.0.1:1", *db)
    assert "--redis: 'http://x' is not a redis://" in refused("--redis", "http://x", *db)
    err = refused("--redis", redis_server.url)
    assert "--redis needs a database too" in err
    err = refused("--redis", redis_server.url, "--database", "postgresql://nobody@127.0.0.1:1/x")
    assert "--database: cannot connect" in err
    config = tmp_path / "croupier.toml"
    config.write_text(f'[cluster]\nredis_url = "{redis_server.url}"\nlease_seconds = 0\n{TABLES}')
    assert "lease_seconds" in refused("--config", str(config), *db)
    config.write_text(f'[cluster]\nredis_url = "redis://127.0.0.1:1"\n{TABLES}')
    assert "[cluster] redis_url: cannot reach Redis" in refused("--config", str(config), *db)
    # None of them took a table or announced a node.
    redis = Redis.from_url(redis_server.url)
    try:
        assert redis.keys("croupier:*") == []
    finally:
        redis.close()
