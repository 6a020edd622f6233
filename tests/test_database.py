"""The shared PostgreSQL schema: made and upgraded by ``croupier db migrate`` (once, however
many times it runs), and refused — with the setting named and the command to run — when it
is missing, newer than the server, or the URL is wrong."""

from __future__ import annotations

import psycopg
import pytest

from server.cli.main import main
from server.pg_storage import MIGRATIONS, SchemaTooNew, migrate
from server.stores import StorageError
from server.wallet.pg_ledger import PgLedger
from tests.postgres import fresh_database


def test_migrate_makes_the_schema_once_and_refuses_a_newer_one(
    postgres_database: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with fresh_database() as url:
        with pytest.raises(StorageError, match="run croupier db migrate"):
            PgLedger(url)  # a server never starts on a database without its schema
        assert main(["db", "migrate", "--database", url]) == 0
        assert f"from version 0 to {len(MIGRATIONS)}" in capsys.readouterr().out
        assert main(["db", "migrate", "--database", url]) == 0
        assert "nothing to do" in capsys.readouterr().out
        assert migrate(url) == (len(MIGRATIONS), len(MIGRATIONS))
        PgLedger(url).close()
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("INSERT INTO croupier_schema(version) VALUES (%s)", (len(MIGRATIONS) + 1,))
        with pytest.raises(SchemaTooNew):
            PgLedger(url)
        assert main(["db", "migrate", "--database", url]) == 2
        assert "upgrade the server" in capsys.readouterr().err


def test_a_wrong_or_unreachable_url_is_refused_naming_the_setting(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["db", "migrate", "--database", "postgresql://nobody@127.0.0.1:1/none"]) == 2
    err = capsys.readouterr().err
    assert "--database" in err and "cannot connect" in err
    assert main(["db", "migrate", "--database", "mysql://x"]) == 2
    assert "--database" in capsys.readouterr().err
