"""Where one ``croupier serve`` keeps its money and its rounds: the embedded SQLite files in
the data directory (the default), or PostgreSQL shared with a cluster's other nodes
(docs/operations.md, "Running a cluster") — chosen here and nowhere else.

PostgreSQL and Redis (psycopg, redis-py and the cluster) are imported only where they are
used: the embedded default starts without loading them (a third faster).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from server.config.settings import WalletSettings
from server.datadir import DataDirLock, load_key
from server.journal.journal import Journal
from server.journal.sqlite_journal import SqliteJournal
from server.stations.store import StationStore, open_station_store
from server.stores import StorageError
from server.wallet.ledger import HOUSE, OPEN_WAGERS, PLAY_MONEY_ISSUER, Ledger
from server.wallet.sqlite_ledger import SqliteLedger

if TYPE_CHECKING:
    from server.pg_storage import DatabaseLock

__all__ = ["Stores", "open_stores"]


@dataclass
class Stores:
    ledger: Ledger
    journal: Journal
    stations: StationStore  # the player stations' critical memory and tickets
    ticket_key: bytes  # signs the stations' ticket validation numbers
    demo_key: bytes  # signs demo players' tokens (a cluster's nodes share it)
    lock: DataDirLock  # one server per data directory
    database_lock: DatabaseLock | None  # one server per database, when not a cluster

    def close(self) -> None:
        self.ledger.close()
        self.journal.close()
        self.stations.close()
        self.release()

    def release(self) -> None:
        """Give the locks back (also when the server never started)."""
        if self.database_lock is not None:
            self.database_lock.release()
        self.lock.release()


def open_stores(
    data_dir: Path,
    database_url: str | None,
    redis_url: str | None,
    wallet: WalletSettings | None = None,
) -> Stores:
    """The stores, the data directory locked first: a second server on the same directory
    would run crash recovery on this one's live rounds (``DataDirInUse``). With
    ``redis_url`` the node shares the tables out with others (its stores must be shared,
    and Redis must answer before anything is opened: ``RedisUnreachable``). With a
    seamless ``wallet`` the ledger is the operator's wallet with the local books beside it
    (docs/wallet.md)."""
    seamless = wallet is not None and wallet.seamless
    lock = DataDirLock(data_dir)
    database_lock: DatabaseLock | None = None
    try:
        ledger: Ledger
        journal: Journal
        demo_key: bytes | None = None
        if redis_url:  # several nodes share the tables out (leases in Redis)
            if not database_url:
                raise StorageError(
                    "a cluster keeps its ledger and journal in PostgreSQL: "
                    "give the database URL too"
                )
            from server.cluster.node import check_redis

            check_redis(redis_url)
            from server.pg_storage import migrate, shared_key

            migrate(database_url)
            demo_key = shared_key(database_url, "demo-token")  # a demo player may meet any node
            ledger, journal = _pg_stores(database_url)
        elif database_url:  # the shared PostgreSQL store (docs/operations.md)
            from server.pg_storage import DatabaseLock, migrate

            migrate(database_url)
            database_lock = DatabaseLock(database_url)
            ledger, journal = _pg_stores(database_url)
        elif seamless:
            from server.wallet.operator.seamless import SeamlessSqliteLedger

            ledger = SeamlessSqliteLedger(data_dir / "ledger.sqlite")
            journal = SqliteJournal(data_dir / "journal.sqlite")
        else:
            ledger = SqliteLedger(data_dir / "ledger.sqlite")
            journal = SqliteJournal(data_dir / "journal.sqlite")
        if seamless:
            assert wallet is not None
            ledger = _seamless(ledger, wallet, data_dir, database_url, clustered=bool(redis_url))
        for account, negative in ((PLAY_MONEY_ISSUER, True), (HOUSE, True), (OPEN_WAGERS, False)):
            ledger.open_account(account, may_go_negative=negative)
        stations, ticket_key = open_station_store(data_dir)
        # Kept in the data directory so a restart does not log everyone out; never logged.
        demo_key = demo_key or load_key(data_dir / "token-key")
    except BaseException:
        if database_lock is not None:
            database_lock.release()
        lock.release()
        raise
    return Stores(ledger, journal, stations, ticket_key, demo_key, lock, database_lock)


def _seamless(
    local: Ledger,
    wallet: WalletSettings,
    data_dir: Path,
    database_url: str | None,
    *,
    clustered: bool,
) -> Ledger:
    """The operator's wallet in front of the local ledger ``local`` (docs/wallet.md). Its
    transaction ids' namespace, unless the file names one, is drawn once and kept with the
    store: the data directory's, or the shared database's."""
    from server.wallet.operator.client import OperatorWalletClient
    from server.wallet.operator.seamless import SeamlessLedger

    namespace = wallet.namespace
    if namespace is None:
        if database_url:
            from server.pg_storage import shared_key

            namespace = shared_key(database_url, "wallet-namespace").hex()[:16]
        else:
            namespace = load_key(data_dir / "wallet-namespace").hex()[:16]
    assert wallet.url is not None and wallet.secret is not None
    client = OperatorWalletClient(
        wallet.url,
        wallet.secret,
        timeout=wallet.timeout_ms / 1000,
        connections=wallet.connections,
    )
    return SeamlessLedger(
        local,
        client,
        namespace=namespace,
        currency=wallet.currency,
        ph="%s" if database_url else "?",
        # A token's currency is known to the node the player said hello to only.
        per_player_currency=not clustered,
    )


def _pg_stores(url: str) -> tuple[Ledger, Journal]:
    """The ledger and the journal in one PostgreSQL database, writing through one writer:
    a bet's debit and its journal record commit in the same transaction."""
    from server.journal.pg_journal import PgJournal
    from server.pg_storage import PgWriter
    from server.wallet.pg_ledger import PgLedger

    writer = PgWriter(url, "store")
    return PgLedger(url, writer=writer), PgJournal(url, writer=writer.shared())
