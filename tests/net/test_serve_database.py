"""``croupier serve`` on PostgreSQL (docs/operations.md, "Running a cluster"): the ledger and
journal in the shared database instead of the data directory's SQLite, the schema migrated
at start, one server per database while no Redis shares its tables out, and a wrong or
unreachable database refused at start naming the setting."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from server.app.service import Service
from server.cli.main import main
from server.config import parse_config
from server.journal.journal import RoundStatus
from server.journal.pg_journal import PgJournal
from server.net.bot import run_bot
from server.pg_storage import DatabaseInUse
from server.wallet.ledger import OPEN_WAGERS
from server.wallet.pg_ledger import PgLedger

TABLES = """
[[tables]]
id = "bac"
name = "Baccarat"
game = "baccarat"
betting_seconds = 0.6
pause_seconds = 0.2
"""


def test_a_server_plays_on_postgresql_and_keeps_it_to_itself(
    tmp_path: Path, postgres_url: str
) -> None:
    settings = parse_config(TABLES, str(tmp_path / "croupier.toml"))

    async def play() -> list[str]:
        service = Service(settings, tmp_path / "data", port=0, database_url=postgres_url)
        await service.start(stagger=False)
        try:
            with pytest.raises(DatabaseInUse):
                Service(settings, tmp_path / "other", port=0, database_url=postgres_url)
            report = await run_bot(f"ws://127.0.0.1:{service.port}/ws", "bac", 3, seed=5, timeout=60)  # fmt: skip  # noqa: E501
            assert report.errors == [] and report.arithmetic_ok and report.recall_matches
            return [played.round for played in report.played]
        finally:
            await service.stop()

    rounds = asyncio.run(play())
    assert len(rounds) == 3
    ledger, journal = PgLedger(postgres_url), PgJournal(postgres_url)
    try:
        assert ledger.reconcile() == {} and ledger.total() == 0
        assert ledger.balance(OPEN_WAGERS) == 0
        for round_id in rounds:
            assert journal.status(round_id) in (RoundStatus.SETTLED, RoundStatus.VOIDED)
            assert ledger.round_transfers(round_id)  # its bets are in the shared ledger
    finally:
        ledger.close()
        journal.close()
    assert not (tmp_path / "data" / "ledger.sqlite").exists()
    # The lock went with the server: another may start on the database now.
    asyncio.run(Service(settings, tmp_path / "third", port=0, database_url=postgres_url).stop())


def test_a_wrong_database_is_refused_at_start_naming_the_setting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = ["--port", "0", "--data-dir", str(tmp_path / "data")]
    assert main(["serve", "--database", "postgresql://nobody@127.0.0.1:1/none", *data]) == 2
    err = capsys.readouterr().err
    assert "--database" in err and "cannot connect" in err
    assert main(["serve", "--database", "mysql://x", *data]) == 2
    assert "--database: 'mysql://x' is not a postgresql://" in capsys.readouterr().err
    config = tmp_path / "croupier.toml"
    config.write_text('[cluster]\ndatabase_url = "sqlite:///x"\n' + TABLES)
    assert main(["serve", "--config", str(config), *data]) == 2
    assert "[cluster] database_url" in capsys.readouterr().err
    config.write_text('[cluster]\nredis_url = "redis://127.0.0.1:6379"\n' + TABLES)
    assert main(["serve", "--config", str(config), *data]) == 2
    assert "[cluster] redis_url" in capsys.readouterr().err
