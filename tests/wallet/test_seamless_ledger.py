"""The seamless ledger against the reference operator wallet as a real process, on the
embedded store (SQLite) and a cluster's (PostgreSQL): stakes debited at the operator, each
round's returns credited there in one credit per player, returned stakes and debits of
unknown outcome rolled back. After each test the operator's books and the local ones agree:
every player's operator balance is start − stakes + returns, the local books balance with
every player's transit account at 0, and the operator saw no anomaly."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from server.pg_storage import migrate
from server.wallet.ledger import HOUSE, OPEN_WAGERS, PostResult, Transfer, player_account
from server.wallet.operator import contract as c
from server.wallet.operator.client import OperatorWalletClient
from server.wallet.operator.seamless import (
    OPERATOR_WALLET,
    OperatorRefused,
    OperatorUnavailable,
    SeamlessLedger,
    SeamlessSqliteLedger,
    _intend,
)
from server.wallet.pg_ledger import PgLedger
from tests.operator_wallet import OperatorWallet, running

NS = "test"
ROUND = "t1.7"


@pytest.fixture
def wallet(tmp_path: Path) -> Iterator[OperatorWallet]:
    with running(tmp_path, "alice", "bob") as w:
        yield w


@pytest.fixture(params=["sqlite", "postgres"])
def local(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    """How to open the local store: a function, called once per Croupier process."""
    if request.param == "sqlite":
        path = tmp_path / "ledger.sqlite"
        return lambda: (SeamlessSqliteLedger(path), "?")
    url = request.getfixturevalue("postgres_url")
    migrate(url)
    return lambda: (PgLedger(url), "%s")


@contextlib.asynccontextmanager
async def seamless(
    wallet: OperatorWallet, local: Any, **options: Any
) -> AsyncIterator[SeamlessLedger]:
    store, ph = local()
    client = OperatorWalletClient(wallet.url, wallet.secret, timeout=options.pop("timeout", 2))
    ledger = SeamlessLedger(store, client, namespace=NS, currency="USD", ph=ph, first_pause=0.05)
    for p in ("alice", "bob"):
        ledger.open_account(player_account(p))
    ledger.open_account(HOUSE, may_go_negative=True)
    task = asyncio.create_task(ledger.run())
    try:
        yield ledger
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await client.close()
        ledger.close()


def stake(player: str, bet: str, amount: int, round_id: str = ROUND) -> tuple[str, list[Transfer]]:
    t = Transfer(player_account(player), OPEN_WAGERS, amount, "wager", round_id, bet)
    return f"bet:{round_id}:{player}:{bet}", [t]


def settle(player: str, bet: str, stake_: int, back: int) -> tuple[str, list[Transfer]]:
    """As ``server.core.money.settlement_transfers`` moves a settled wager."""
    to = player_account(player)
    out = []
    if back > 0:
        out.append(Transfer(OPEN_WAGERS, to, min(back, stake_), "win", ROUND, bet))
    if back < stake_:
        out.append(Transfer(OPEN_WAGERS, HOUSE, stake_ - back, "lose", ROUND, bet))
    if back > stake_:
        out.append(Transfer(HOUSE, to, back - stake_, "winnings", ROUND, bet))
    return f"settle:{ROUND}:{player}:{bet}", out


def agree(wallet: OperatorWallet, ledger: SeamlessLedger, expected: dict[str, int]) -> None:
    """The operator's balances are ``expected``, it saw no anomaly, and the local books
    balance with the players' transit accounts at 0 and nothing left at the operator."""
    state = wallet.state()
    assert {p: state["players"][p]["balance"] for p in expected} == expected
    assert state["anomalies"] == [] and state["open_debits"] == []
    assert ledger.reconcile() == {} and ledger.total() == 0
    for p in expected:
        assert ledger.local.balance(player_account(p)) == 0
    assert ledger.outbox.pending() == []


def test_a_round_debits_the_stakes_and_credits_the_returns(
    wallet: OperatorWallet, local: Any
) -> None:
    async def go() -> None:
        async with seamless(wallet, local) as ledger:
            a, *_ = await asyncio.gather(
                ledger.apost(*stake("alice", "a1", 500)),
                ledger.apost(*stake("bob", "b1", 300)),
                ledger.apost(*stake("bob", "b2", 200)),
            )
            assert a.balances == {player_account("alice"): 9_500}
            assert ledger.balance(player_account("alice")) == 9_500
            assert ledger.local.balance(OPEN_WAGERS) == 1_000
            # Alice's wager wins even money, Bob loses one and gets the other back.
            settled = await ledger.apost_many(
                [settle("alice", "a1", 500, 1_000), settle("bob", "b1", 300, 0),
                 settle("bob", "b2", 200, 200)]
            )  # fmt: skip
            # What a table shows each player after the settlement: the operator's balance
            # with the round's returns in transit, not the transit account alone.
            assert settled[0].balances[player_account("alice")] == 10_500
            assert settled[2].balances[player_account("bob")] == 9_700
            calls = await ledger.finish_round(ROUND)
            assert sorted((x.body["player_id"], x.body["amount"], len(x.body["debits"]))
                          for x in calls) == [("alice", 1_000, 1), ("bob", 200, 2)]  # fmt: skip
            await ledger.settled()
            assert ledger.balance(player_account("alice")) == 10_500
            agree(wallet, ledger, {"alice": 10_500, "bob": 9_700})
            assert await ledger.finish_round(ROUND) == []  # finished once

    asyncio.run(go())
    assert wallet.state()["debits"] == {"settled": 3}


def test_a_refused_debit_moves_nothing(wallet: OperatorWallet, local: Any) -> None:
    wallet.knobs(refuse={"alice": "player_blocked"})

    async def go() -> None:
        async with seamless(wallet, local) as ledger:
            with pytest.raises(OperatorRefused) as refused:
                await ledger.apost(*stake("alice", "a1", 500))
            assert refused.value.code == "player_blocked"
            assert ledger.batch(f"bet:{ROUND}:alice:a1") == []
            assert await ledger.finish_round(ROUND) == []
            agree(wallet, ledger, {"alice": 10_000})

    asyncio.run(go())


def test_a_debit_of_unknown_outcome_is_rolled_back(wallet: OperatorWallet, local: Any) -> None:
    """The operator applies the debit but its answer never comes: the bet is refused, and
    the rollback — sent until answered ok — returns the stake."""
    wallet.knobs(timeout_after={"debit": 1}, hang_ms=2_000)

    async def go() -> None:
        async with seamless(wallet, local, timeout=0.3) as ledger:
            with pytest.raises(OperatorUnavailable):
                await ledger.apost(*stake("alice", "a1", 500))
            assert ledger.batch(f"bet:{ROUND}:alice:a1") == []
            await ledger.settled()
            agree(wallet, ledger, {"alice": 10_000})

    asyncio.run(go())
    assert wallet.state()["debits"] == {"rolled_back": 1}


def test_a_cancelled_stake_is_rolled_back(wallet: OperatorWallet, local: Any) -> None:
    async def go() -> None:
        async with seamless(wallet, local) as ledger:
            await ledger.apost(*stake("alice", "a1", 500))
            await ledger.apost(*stake("alice", "a2", 100))
            cancel = Transfer(OPEN_WAGERS, player_account("alice"), 500, "cancel", ROUND, "a1")
            result = await ledger.apost(f"cancel:{ROUND}:alice:a1", [cancel])
            assert isinstance(result, PostResult) and result.applied
            await ledger.apost_many([settle("alice", "a2", 100, 0)])
            calls = await ledger.finish_round(ROUND)
            assert [(x.body["amount"], len(x.body["debits"])) for x in calls] == [(0, 1)]
            await ledger.settled()
            agree(wallet, ledger, {"alice": 9_900})

    asyncio.run(go())
    assert wallet.state()["debits"] == {"rolled_back": 1, "settled": 1}


def test_a_void_returns_every_stake(wallet: OperatorWallet, local: Any) -> None:
    """Recovery voids a round (``server.tables.recovery.void_in_ledger``, a plain ``post``
    per stake still held): each one's debit is rolled back."""

    async def go() -> None:
        async with seamless(wallet, local) as ledger:
            await ledger.apost(*stake("alice", "a1", 500))
            await ledger.apost(*stake("bob", "b1", 300))
            for player, bet, amount in (("alice", "a1", 500), ("bob", "b1", 300)):
                void = Transfer(OPEN_WAGERS, player_account(player), amount, "void", ROUND, bet)
                await asyncio.to_thread(ledger.post, f"void:{ROUND}:{player}:{bet}", [void])
            assert await ledger.finish_round(ROUND) == []
            await ledger.settled()
            agree(wallet, ledger, {"alice": 10_000, "bob": 10_000})

    asyncio.run(go())


def test_recovery_rolls_back_a_debit_that_may_have_left(wallet: OperatorWallet, local: Any) -> None:
    """Croupier died between writing a debit's intent and recording its answer: the next
    start rolls it back — whether the operator applied it (here) or never saw it."""

    async def crash() -> None:
        async with seamless(wallet, local) as ledger:
            key, [t] = stake("alice", "a1", 500)
            d = ledger._debit_of(key, [t])
            assert d is not None
            await ledger._write(lambda conn: _intend(conn, ledger._ph, d, "USD", 0.0))
            body = c.debit_body(d.txid, "alice", "USD", 500, ROUND, "t1", "a1")
            assert isinstance(await ledger.client.call("debit", body), c.Ok)  # then it died

    async def restart() -> None:
        async with seamless(wallet, local) as ledger:
            assert await ledger.recover() == 1
            await ledger.settled()
            agree(wallet, ledger, {"alice": 10_000})
            assert await ledger.recover() == 0

    asyncio.run(crash())
    assert wallet.balance_of("alice") == 9_500
    asyncio.run(restart())


def test_an_operator_down_at_settlement_is_credited_when_it_is_back(
    wallet: OperatorWallet, local: Any
) -> None:
    async def go() -> None:
        async with seamless(wallet, local) as ledger:
            await ledger.apost(*stake("alice", "a1", 500))
            wallet.knobs(down=True)
            await ledger.apost_many([settle("alice", "a1", 500, 1_750)])
            await ledger.finish_round(ROUND)
            await asyncio.sleep(0.3)
            [pending] = ledger.outbox.pending()
            assert (pending.operation, pending.amount, pending.last_error) == (
                "credit",
                1_750,
                "HTTP 503",
            )
            wallet.knobs(down=False)
            await ledger.settled()
            agree(wallet, ledger, {"alice": 11_250})

    asyncio.run(go())


def test_a_table_cannot_queue_a_stake_beside_its_record(tmp_path: Path) -> None:
    """A table's stores queue a bet's debit and its record together where the ledger shows a
    writer they can queue on (``server.tables.waits``): a seamless ledger shows none, so its
    stakes go through ``apost``, which asks the operator first."""
    from server.tables.waits import _own_writers, _shared_writer

    store = SeamlessSqliteLedger(tmp_path / "ledger.sqlite")
    client = OperatorWalletClient("http://127.0.0.1:9", b"s")
    ledger = SeamlessLedger(store, client, namespace=NS, currency="USD", ph="?")
    try:
        journal = type("Journal", (), {"writer": store._writer, "append_write": None})()
        assert _shared_writer(ledger, journal) is None
        assert _own_writers(ledger, journal) is None
        assert _shared_writer(store, journal) is not None  # the check can fail
    finally:
        ledger.close()


def test_a_debit_is_only_posted_alone() -> None:
    ledger = SeamlessLedger.__new__(SeamlessLedger)
    ledger.namespace = NS
    with pytest.raises(Exception, match="one stake"):
        ledger._debit_of("k", [*stake("alice", "a", 5)[1], *stake("alice", "b", 5)[1]])
    with pytest.raises(Exception, match=r"TABLE\.NUMBER"):
        ledger._debit_of("k", stake("alice", "a", 5, round_id="no-number")[1])
    assert OPERATOR_WALLET.startswith("issuer:")


def test_a_player_s_currency_outlives_a_restart(wallet: OperatorWallet, local: Any) -> None:
    """A player who plays in EUR (a token's claim) bets; after a restart — the claim is
    not known yet — the void of one stake and the credit of the other are in EUR too, the
    debits' currency: the operator, which keeps the player in EUR, answers both ok."""
    wallet.player("eve", 5_000, currency="EUR")

    async def before() -> None:
        async with seamless(wallet, local) as ledger:
            ledger.open_account(player_account("eve"))
            ledger.set_currency("eve", "EUR")
            await ledger.apost(*stake("eve", "e1", 500))
            await ledger.apost(*stake("eve", "e2", 200))

    async def after() -> None:
        async with seamless(wallet, local) as ledger:
            void = Transfer(OPEN_WAGERS, player_account("eve"), 500, "void", ROUND, "e1")
            await asyncio.to_thread(ledger.post, f"void:{ROUND}:eve:e1", [void])
            await ledger.apost_many([settle("eve", "e2", 200, 400)])
            [credit] = await ledger.finish_round(ROUND)
            assert credit.body["currency"] == "EUR" and credit.body["amount"] == 400
            await ledger.settled()
            agree(wallet, ledger, {"eve": 5_200})

    asyncio.run(before())
    asyncio.run(after())


def test_a_void_returns_each_stake_under_its_own_bet_id(wallet: OperatorWallet, local: Any) -> None:
    """Recovery's void (``void_in_ledger``) with bet ids that hold a colon: each stake is
    returned under its own bet id, so the rollback names the debit that was taken."""
    from server.tables.recovery import void_in_ledger

    async def go() -> None:
        async with seamless(wallet, local) as ledger:
            await ledger.apost(*stake("alice", "x:1", 500))
            await ledger.apost(*stake("alice", "1", 300))
            paid = await asyncio.to_thread(void_in_ledger, ledger, ROUND)
            assert paid == {"alice"}
            assert await ledger.finish_round(ROUND) == []
            await ledger.settled()
            agree(wallet, ledger, {"alice": 10_000})

    asyncio.run(go())
    assert wallet.state()["debits"] == {"rolled_back": 2}
