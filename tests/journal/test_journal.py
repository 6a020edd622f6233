"""The round journal, embedded (SQLite) and shared (PostgreSQL), by one suite: ordered,
durable, and able to tell which rounds a crash left open."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from server.journal import RoundStatus, SqliteJournal
from server.journal.pg_journal import PgJournal

Opener = Callable[[], Any]


@pytest.fixture(params=["sqlite", "postgres"])
def journal_at(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opener]:
    """Opens a journal on the test's store (again and again: a restart, another node)."""
    opened: list[Any] = []

    def open_journal() -> Any:
        if request.param == "sqlite":
            journal: Any = SqliteJournal(tmp_path / "journal.sqlite")
        else:
            journal = PgJournal(request.getfixturevalue("postgres_url"))
        opened.append(journal)
        return journal

    yield open_journal
    for journal in opened:
        journal.close()


def test_a_round_is_recorded_in_order_and_finished(journal_at: Opener) -> None:
    journal = journal_at()
    journal.open_round("bac-1", "r1", {"game": "baccarat"})
    journal.append(
        "r1",
        "bet",
        {"player": "alice", "bet_id": "b1", "spot": "banker", "amount": 500},
        player="alice",
    )
    journal.append("r1", "closed", {})
    journal.append("r1", "card", {"card": "AS", "bound": 416, "value": 17})
    assert journal.open_rounds() == [("bac-1", "r1")]
    journal.finish_round("r1", RoundStatus.SETTLED, {"result": "banker 7-5"})
    kinds = [r.kind for r in journal.records("r1")]
    assert kinds == ["opened", "bet", "closed", "card", "settled"]
    assert journal.records("r1")[3].payload == {"card": "AS", "bound": 416, "value": 17}
    assert journal.open_rounds() == [] and journal.status("r1") is RoundStatus.SETTLED
    assert journal.player_rounds("alice") == ["r1"]
    assert journal.last_round("bac-1") == "r1"


def test_records_survive_a_reopen_and_open_rounds_are_found(journal_at: Opener) -> None:
    journal = journal_at()
    for n in range(3):
        journal.open_round("t", f"r{n}", {})
    journal.finish_round("r1", RoundStatus.VOIDED, {"reason": "device fault"})
    journal.close()
    again = journal_at()
    assert again.open_rounds() == [("t", "r0"), ("t", "r2")]
    assert again.status("r1") is RoundStatus.VOIDED and again.status("nope") is None


def test_nothing_is_appended_to_a_finished_or_unknown_round(journal_at: Opener) -> None:
    journal = journal_at()
    journal.open_round("t", "r1", {})
    journal.finish_round("r1", RoundStatus.SETTLED, {})
    with pytest.raises(ValueError, match="already settled"):
        journal.append("r1", "card", {"card": "KD"})
    with pytest.raises(ValueError, match="never opened"):
        journal.append("r9", "card", {"card": "KD"})
    with pytest.raises(ValueError, match="already journaled"):
        journal.open_round("t", "r1", {})
    with pytest.raises(ValueError):
        journal.finish_round("r1", RoundStatus.OPEN, {})
    with pytest.raises(ValueError, match="already settled"):
        journal.finish_round("r1", RoundStatus.VOIDED, {"reason": "again"})
    with pytest.raises(ValueError, match="never opened"):
        journal.finish_round("r9", RoundStatus.SETTLED, {})
    assert [r.kind for r in journal.records("r1")] == ["opened", "settled"]
    assert journal.status("r1") is RoundStatus.SETTLED and journal.status("r9") is None


def test_player_rounds_lists_the_last_ten_finished_newest_first(journal_at: Opener) -> None:
    journal = journal_at()
    for n in range(12):
        journal.open_round("t", f"r{n}", {})
        journal.append(f"r{n}", "bet", {"player": "bob"}, player="bob")
        journal.finish_round(f"r{n}", RoundStatus.SETTLED, {})
    journal.open_round("t", "r12", {})
    journal.append("r12", "bet", {"player": "bob"}, player="bob")  # open: not recallable yet
    assert journal.player_rounds("bob") == [f"r{n}" for n in range(11, 1, -1)]


def test_table_state_is_kept_and_replaced(journal_at: Opener) -> None:
    journal = journal_at()
    assert journal.load_state("t", "meters") is None
    journal.save_state("t", "meters", {"heavenly_9": "1000/1"})
    journal.save_state("t", "meters", {"heavenly_9": "1005/1"})
    assert journal_at().load_state("t", "meters") == {"heavenly_9": "1005/1"}


def test_the_awaitable_writes_are_the_same_writes(journal_at: Opener) -> None:
    import asyncio

    journal = journal_at()

    async def play() -> None:
        await journal.aopen_round("t", "r1", {})
        await journal.aappend("r1", "bet", {"player": "ann"}, player="ann")
        await journal.asave_state("t", "epoch", {"epoch": 3})
        await journal.afinish_round("r1", RoundStatus.VOIDED, {"reason": "test"})

    asyncio.run(play())
    again = journal_at()
    assert [r.kind for r in again.records("r1")] == ["opened", "bet", "voided"]
    assert again.player_rounds("ann") == ["r1"] and again.load_state("t", "epoch") == {"epoch": 3}


# --- linked progressive meters (server.games.baccarat.linked) ---------------------------------


def _linked_game(link: str = "floor") -> Any:
    from rng.sources import HmacDrbgSource
    from server.games.table import TableSettings
    from server.tables.games import build_game

    settings = TableSettings(
        "t",
        "t",
        "baccarat",
        options={
            "progressive_link": link,
            "mystery_bonus": "A-$1",
            "side_wagers": {"heavenly_9_progressive": "", "harmony_progressive": "B"},
        },
    )
    return build_game(settings, HmacDrbgSource("table:t"))


def _op(kind: str, meter: str, n: int, wager: int = 0) -> dict[str, Any]:
    op = {"op": kind, "meter": meter, "player": f"p{n}", "bet_id": f"b{n}"}
    return op | {"wager": wager} if kind == "add" else op


def test_a_round_settles_the_linked_meters_once(journal_at: Opener) -> None:
    """The same round asked twice (recovery after a crash) gets its first result back."""
    journal, game = journal_at(), _linked_game()
    ops = [_op("add", "heavenly_9_progressive", 1, 105), _op("hit", "heavenly_9_progressive", 1)]
    settle = lambda: journal.settle_meters(  # noqa: E731
        "t.1", game.linked, lambda states: game.settle_linked(ops, game.hit_values_for(ops), states)
    )
    first = settle()
    # 631b.2(i): the $10,000 seed plus 10% of 105 cents: 1,000,010.5, of which 1,000,010 paid
    assert first["awards"] == [
        {"meter": "heavenly_9_progressive", "player": "p1", "bet_id": "b1", "amount": 1_000_010}
    ]
    assert first["adds"][0]["to_meter"] == [21, 2]
    assert settle() == first
    state = journal.linked_meters(["floor/heavenly_9_progressive"])["floor/heavenly_9_progressive"]
    assert state is not None and state["meter"] * 2 == (1_000_000 * 2 + 1) * state["denominator"]
    assert [r for r, _ in journal.meter_settlements()] == ["t.1"]


def test_a_round_asked_again_shows_the_meters_as_another_table_left_them(
    journal_at: Opener,
) -> None:
    """Recovery asks the store again for a round it settled before a crash; another table of
    the link has since moved the meter. The round's awards come back unchanged, and the meter
    its table shows is the one the link holds now, not the one of that round's time."""
    journal, game = journal_at(), _linked_game()
    key = "floor/heavenly_9_progressive"

    def settle(round_id: str, wager: int) -> dict[str, Any]:
        ops = [_op("add", "heavenly_9_progressive", 1, wager)]
        apply = lambda states: game.settle_linked(ops, game.hit_values_for(ops), states)  # noqa: E731
        return journal.settle_meters(round_id, game.linked, apply)

    first = settle("t.1", 1_000)  # 631b.2(i): 10% of $10 to the meter
    settle("u.1", 2_000)  # the other table's round, after it
    again = settle("t.1", 5_000)  # the same round: nothing is applied twice
    assert {k: v for k, v in again.items() if k != "states"} == {
        k: v for k, v in first.items() if k != "states"
    }
    now = journal.linked_meters([key])[key]
    assert now is not None and again["states"]["heavenly_9_progressive"] == now
    assert Fraction(now["meter"], now["denominator"]) == 1_000_000 + 100 + 200
    assert [r for r, _ in journal.meter_settlements()] == ["t.1", "u.1"]


def test_tables_racing_on_one_link_lose_nothing_and_pay_each_hit_once(
    journal_at: Opener,
) -> None:
    """Many tables (each its own store connection, as on several nodes) settle rounds on one
    link at the same instant, every fourth round a Heavenly 9 jackpot: every contribution is
    on the meter to the fraction of a cent, each hit pays exactly one winner and resets the
    meter once, and the meter equals seed + contributions - what the hits paid."""
    import threading
    from fractions import Fraction

    tables, rounds = 6, 12
    journals = [journal_at() for _ in range(tables)]
    games = [_linked_game() for _ in range(tables)]
    barrier = threading.Barrier(tables)
    errors: list[BaseException] = []

    def play(n: int) -> None:
        try:
            barrier.wait()
            for r in range(rounds):
                ops = [_op("add", "heavenly_9_progressive", n, 101 + n + r)]
                ops.append(_op("add", "mystery_bonus", n, 250_000 + r))  # $50 to the meter
                if r % 4 == 3:
                    ops.append(_op("hit", "heavenly_9_progressive", n))
                game = games[n]
                hits = game.hit_values_for(ops)
                journals[n].settle_meters(
                    f"t{n}.{r}",
                    game.linked,
                    lambda states, ops=ops, hits=hits, game=game: game.settle_linked(
                        ops, hits, states
                    ),
                )
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=play, args=(n,)) for n in range(tables)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    results = journals[0].meter_settlements()
    assert len(results) == tables * rounds
    states = journals[0].linked_meters(
        ["floor/heavenly_9_progressive", "floor/mystery_bonus", "floor/harmony_progressive"]
    )
    assert states["floor/harmony_progressive"] is not None  # offered, untouched: its seed
    seeds = {"heavenly_9_progressive": 1_000_000, "mystery_bonus": 10_000}
    for meter, seed in seeds.items():
        added = sum(
            (Fraction(*a["to_meter"]) + Fraction(*a["to_reserve"]))
            for _, result in results
            for a in result["adds"]
            if a["meter"] == meter
        )
        paid = [a["amount"] for _, result in results for a in result["awards"] if a["meter"] == meter]  # fmt: skip  # noqa: E501
        state = states[f"floor/{meter}"]
        assert state is not None
        held = Fraction(state["meter"] + state.get("reserve", 0), state["denominator"])
        assert held == seed * (1 + len(paid)) + added - sum(paid), meter
    h9_paid = [
        a["amount"]
        for _, result in results
        for a in result["awards"]
        if a["meter"] == "heavenly_9_progressive"
    ]
    assert len(h9_paid) == tables * (rounds // 4)  # one award per hit, never two
    assert max(h9_paid) > 1_000_000 and min(h9_paid) >= 1_000_000
    # 631b.6(c)(4) A-$1: a hit value in ($100, $200]; each award passed the value then held
    mystery_paid = [
        a["amount"]
        for _, result in results
        for a in result["awards"]
        if a["meter"] == "mystery_bonus"
    ]
    assert len(mystery_paid) >= tables * rounds * 50 // 200 and all(10_000 < a <= 25_000 for a in mystery_paid)  # fmt: skip  # noqa: E501
    mystery = states["floor/mystery_bonus"]
    assert mystery is not None and 10_000 < mystery["hit_value"] <= 20_000


@pytest.mark.parametrize("store", ["sqlite", "postgres"])
def test_records_written_together_are_each_answered_in_order(
    store: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Bets' records of several tables queued behind a busy writer are one group (on
    PostgreSQL one set-based insert): they keep the order they were made in, each players'
    round is noted for recall, and a record for a round already finished is refused alone."""
    import asyncio
    import threading

    if store == "sqlite":
        journal: Any = SqliteJournal(tmp_path / "journal.sqlite")
    else:
        journal = PgJournal(request.getfixturevalue("postgres_url"))
    journal.open_round("t1", "a1", {})
    journal.open_round("t2", "b1", {})
    journal.open_round("t3", "c1", {})
    journal.finish_round("c1", RoundStatus.VOIDED, {"reason": "test"})
    release = threading.Event()

    async def together() -> list[Any]:
        started = threading.Event()
        blocker = journal._writer.submit(lambda conn: started.set() or release.wait(10))
        assert started.wait(10)  # the writer is busy: what comes next queues behind it
        writes = [
            asyncio.ensure_future(journal.aappend(round_id, "bet", {"n": n}, player=f"p{n}"))
            for n, round_id in enumerate(["a1", "b1", "c1", "a1", "b1", "a1"])
        ]
        # A round opened between them and its first record: the runs of records on either
        # side of the opening are written apart, in order.
        opened = asyncio.ensure_future(journal.aopen_round("t4", "d1", {}))
        await asyncio.sleep(0)
        first = asyncio.ensure_future(journal.aappend("d1", "bet", {"n": 6}, player="p6"))
        await asyncio.sleep(0.1)
        release.set()
        results = await asyncio.gather(*writes, return_exceptions=True)
        await opened
        results.append(await first)
        assert blocker.result() is True
        return results

    groups = journal._writer.groups
    results = asyncio.run(together())
    assert journal._writer.groups - groups == 2  # the blocker, then all eight together
    assert isinstance(results[2], ValueError) and "already voided" in str(results[2])
    seqs = [r for n, r in enumerate(results) if n != 2]
    assert seqs == sorted(seqs) and len(set(seqs)) == 6
    assert [r.kind for r in journal.records("d1")] == ["opened", "bet"]
    assert [r.payload["n"] for r in journal.records("a1") if r.kind == "bet"] == [0, 3, 5]
    assert [r.payload["n"] for r in journal.records("b1") if r.kind == "bet"] == [1, 4]
    assert [r.kind for r in journal.records("c1")] == ["opened", "voided"]
    journal.finish_round("a1", RoundStatus.SETTLED, {})
    assert journal.player_rounds("p3") == ["a1"] and journal.player_rounds("p2") == []
    journal.close()
