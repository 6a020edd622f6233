"""Tickets (TITO) and the stations' critical memory, without a server: validation numbers,
redemption once only, forged, altered, expired and voided tickets refused and logged, and
meters that fail their check (docs/electronic-tables.md, "Tickets", "Meters")."""

from __future__ import annotations

import random
import secrets
import sqlite3
import threading
from dataclasses import replace
from functools import partial
from pathlib import Path

import pytest

from server.cli.main import main
from server.stations import cashier, tickets
from server.stations.meters import (
    CashKind,
    empty_meters,
    expected_balance,
    fold_round,
    round_money,
    station_account,
)
from server.stations.store import CriticalMemoryError, StationStore, open_station_store
from server.wallet.ledger import OPEN_WAGERS, Transfer
from server.wallet.sqlite_ledger import SqliteLedger

KEY = bytes(range(32))
DAY = 86_400.0


def test_validation_numbers_are_18_digits_with_check_digits() -> None:
    numbers = {tickets.new_validation(KEY) for _ in range(2000)}
    assert len(numbers) == 2000  # 14 random digits: no repeats in a few thousand
    for number in numbers:
        assert len(number) == 18 and number.isdigit()
        assert tickets.check(KEY, number)
    # Another casino's key: its check digits match one number in 10,000 by chance (such a
    # number is still refused: it was never issued). Counted on seeded numbers, so the
    # count is the same every run.
    seeded = random.Random(17)
    bodies = [f"{seeded.randrange(10**14):014d}" for _ in range(20_000)]
    ours = [body + tickets._mac(KEY, body) for body in bodies]
    assert all(tickets.check(KEY, n) for n in ours)
    theirs = sum(tickets.check(bytes(32), n) for n in ours)
    assert theirs <= 8, theirs  # about 2 expected of 20,000
    number = ours[0]
    # Altering any one digit breaks the check digits, except when the altered digit happens
    # to give the same four check digits (1 in 10,000): count how many of 18 × 9 do.
    altered = [
        number[:i] + d + number[i + 1 :] for i in range(18) for d in "0123456789" if d != number[i]
    ]
    assert sum(tickets.check(KEY, a) for a in altered) <= 1
    assert tickets.format_validation(number).count("-") == 4
    for bad in ("", "12345", "x" * 18, number + "0", "١" * 18):
        assert not tickets.check(KEY, bad)


class Floor:
    """A ledger and a station store in ``tmp_path``, with one station holding credits."""

    def __init__(self, tmp_path: Path) -> None:
        self.store, self.key = open_station_store(tmp_path)
        self.ledger = SqliteLedger(tmp_path / "ledger.sqlite")
        cashier.open_accounts(self.ledger)
        self.account = station_account("s1")
        self.ledger.open_account(self.account)
        self.ledger.post(
            "bill:s1:1:1", [Transfer(cashier.CASH_BILLS, self.account, 10_000, CashKind.BILL_IN)]
        )

    def close(self) -> None:
        self.ledger.close()
        self.store.close()

    def events(self) -> list[str]:
        return [e["event"] for e in self.store.logged()]


@pytest.fixture
def floor(tmp_path: Path):  # type: ignore[no-untyped-def]
    f = Floor(tmp_path)
    yield f
    f.close()


def test_a_ticket_moves_credits_out_and_in_once(floor: Floor) -> None:
    ticket = cashier.issue(floor.store, floor.ledger, floor.key, "s1", 10_000, 30 * DAY)
    assert floor.ledger.balance(floor.account) == 0
    assert floor.ledger.balance(cashier.TICKETS_OUTSTANDING) == 10_000
    floor.ledger.open_account(station_account("s2"))
    got = cashier.redeem(
        floor.store, floor.ledger, floor.key, ticket.validation,
        destination=station_account("s2"), by="s2", amount=10_000,
    )  # fmt: skip
    assert not isinstance(got, cashier.Refusal) and got.amount == 10_000
    assert floor.ledger.balance(station_account("s2")) == 10_000
    assert floor.ledger.balance(cashier.TICKETS_OUTSTANDING) == 0
    # Again at the same station, then at the cashier: refused, logged, nothing moves.
    for destination, by in ((station_account("s2"), "s2"), (cashier.CASHIER, "cashier")):
        again = cashier.redeem(
            floor.store, floor.ledger, floor.key, ticket.validation, destination=destination, by=by
        )
        assert isinstance(again, cashier.Refusal) and again.code == "redeemed"
    assert floor.ledger.balance(station_account("s2")) == 10_000
    assert floor.ledger.balance(cashier.CASHIER) == 0
    assert floor.events().count("ticket_refused:redeemed") == 2
    stored = floor.store.ticket(ticket.validation)
    assert stored is not None and stored.status == "redeemed" and stored.closed_by == "s2"
    assert floor.ledger.total() == 0 and floor.ledger.reconcile() == {}


def test_forged_altered_expired_and_voided_tickets_are_refused_and_logged(floor: Floor) -> None:
    ticket = cashier.issue(floor.store, floor.ledger, floor.key, "s1", 4_000, 30 * DAY)
    v = ticket.validation
    at = cashier.CASHIER

    def redeem(validation: str, **kw: object) -> object:
        return cashier.redeem(
            floor.store, floor.ledger, floor.key, validation, destination=at, by="cashier", **kw
        )  # type: ignore[arg-type]

    forged = tickets.new_validation(bytes(32))  # made with another key
    unknown = tickets.new_validation(floor.key)  # well formed, never issued
    digit = str((int(v[3]) + 1) % 10)
    for number in (forged, unknown, v[:3] + digit + v[4:]):
        refusal = redeem(number)
        assert isinstance(refusal, cashier.Refusal) and refusal.code == "forged"
    altered = redeem(v, amount=40_000)
    assert isinstance(altered, cashier.Refusal) and altered.code == "altered"
    expired = redeem(v, now=ticket.expires_at + 1)
    assert isinstance(expired, cashier.Refusal) and expired.code == "expired"
    assert floor.store.tickets("expired", now=ticket.expires_at + 1)[0].validation == v
    voided = cashier.void(floor.store, floor.ledger, v, by="cashier-2", reason="damaged")
    assert not isinstance(voided, cashier.Refusal)
    refusal = redeem(v)
    assert isinstance(refusal, cashier.Refusal) and refusal.code == "voided"
    assert floor.ledger.balance(cashier.TICKETS_VOIDED) == 4_000
    assert floor.ledger.balance(at) == 0
    logged = floor.events()
    assert logged.count("ticket_refused:forged") == 3
    for code in ("altered", "expired", "voided"):
        assert f"ticket_refused:{code}" in logged
    assert "ticket_voided" in logged


def test_two_redemptions_at_the_same_instant_pay_once(floor: Floor, tmp_path: Path) -> None:
    """A station and the cashier's command (another process, another connection) at once:
    the ledger's key lets one through."""
    ticket = cashier.issue(floor.store, floor.ledger, floor.key, "s1", 10_000, DAY)
    other_store, _ = open_station_store(tmp_path)
    other_ledger = SqliteLedger(tmp_path / "ledger.sqlite")
    floor.ledger.open_account(station_account("s2"))
    results: list[object] = []
    start = threading.Barrier(2)

    def attempt(store: StationStore, ledger: SqliteLedger, destination: str) -> None:
        start.wait()
        v = ticket.validation
        results.append(
            cashier.redeem(store, ledger, floor.key, v, destination=destination, by=destination)
        )

    threads = [
        threading.Thread(target=attempt, args=(floor.store, floor.ledger, station_account("s2"))),
        threading.Thread(target=attempt, args=(other_store, other_ledger, cashier.CASHIER)),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not any(t.is_alive() for t in threads), "a redemption did not return within 30 s"
    other_ledger.close()
    other_store.close()
    # Both returned (a thread that raised would leave one result, paid or not).
    assert len(results) == 2, results
    paid = [r for r in results if not isinstance(r, cashier.Refusal)]
    assert len(paid) == 1
    assert [r.code for r in results if isinstance(r, cashier.Refusal)] == ["redeemed"], results
    paid_out = floor.ledger.balance(station_account("s2")) + floor.ledger.balance(cashier.CASHIER)
    assert paid_out == 10_000


def test_recovery_voids_a_ticket_never_debited(floor: Floor) -> None:
    """A crash between the ticket's row and its debit: the ticket is voided at start."""
    ticket = cashier.issue(floor.store, floor.ledger, floor.key, "s1", 1_000, DAY)
    ghost = tickets.new_validation(floor.key)
    floor.store.write(floor.store.issue(replace(ticket, validation=ghost, amount=500)))
    assert cashier.reconcile_tickets(floor.store, floor.ledger) == [ghost]
    stored = floor.store.ticket(ghost)
    assert stored is not None and stored.status == "voided"
    assert floor.store.ticket(ticket.validation).status == "issued"  # type: ignore[union-attr]


def test_a_ticket_the_printer_could_not_print_goes_back_to_the_credits(floor: Floor) -> None:
    ticket = cashier.issue(floor.store, floor.ledger, floor.key, "s1", 10_000, DAY)
    assert cashier.return_unprinted(floor.store, floor.ledger, ticket.validation, reason="jam")
    assert floor.ledger.balance(floor.account) == 10_000
    refusal = cashier.redeem(
        floor.store, floor.ledger, floor.key, ticket.validation, destination=cashier.CASHIER, by="c"
    )
    assert isinstance(refusal, cashier.Refusal) and refusal.code == "voided"


def test_meters_count_each_movement_once_and_reconcile(floor: Floor) -> None:
    account = floor.account
    ended = {"t.1"}
    floor.ledger.open_account(OPEN_WAGERS)
    floor.ledger.open_account("house", may_go_negative=True)
    floor.ledger.post("bet:t.1:s1:b1", [Transfer(account, OPEN_WAGERS, 2_000, "wager", "t.1", "b1")])  # fmt: skip  # noqa: E501
    floor.ledger.post("settle:t.1:s1:b1", [
        Transfer(OPEN_WAGERS, account, 2_000, "win", "t.1", "b1"),
        Transfer("house", account, 1_900, "winnings", "t.1", "b1"),
    ])  # fmt: skip
    floor.ledger.post("bet:t.2:s1:b1", [Transfer(account, OPEN_WAGERS, 500, "wager", "t.2", "b1")])  # fmt: skip  # noqa: E501
    read = partial(floor.ledger.history_after, account)
    for _ in range(2):  # read twice: counted once
        synced = floor.store.write(floor.store.sync("s1", read, ended.__contains__))
    m = synced.row.meters
    assert (m["credits_in"], m["bills_in"], m["wagered"], m["won"]) == (10_000, {"10000": 1}, 2_000, 3_900)  # fmt: skip  # noqa: E501
    assert (m["games_played"], m["games_won"]) == (1, 1)
    assert synced.in_play == floor.store.in_play("s1", read) == 500  # t.2 has not ended
    balance = floor.ledger.balance(account)
    assert synced.balance == balance == 10_000 - 2_000 + 3_900 - 500
    assert expected_balance(m, synced.in_play) == balance


def test_a_round_that_ends_while_the_meters_are_read_is_counted_whole(floor: Floor) -> None:
    """The ledger is read before a round settles, and the journal after it ended (the
    server plays on beside ``croupier meters``): its payout is counted with its stake."""
    account = floor.account
    floor.ledger.open_account(OPEN_WAGERS)
    floor.ledger.open_account("house", may_go_negative=True)
    floor.ledger.post("bet:r:s1:b", [Transfer(account, OPEN_WAGERS, 2_000, "wager", "r", "b")])
    before = floor.ledger.history_after(account, 0)  # the bet only
    floor.ledger.post("settle:r:s1:b", [
        Transfer(OPEN_WAGERS, account, 2_000, "win", "r", "b"),
        Transfer("house", account, 2_000, "winnings", "r", "b"),
    ])  # fmt: skip
    reads = iter([before, floor.ledger.history_after(account, 0)])
    synced = floor.store.write(floor.store.sync("s1", lambda after: next(reads), lambda r: True))
    m = synced.row.meters
    assert (m["wagered"], m["won"], m["games_won"]) == (2_000, 4_000, 1)
    assert synced.in_play == 0
    assert expected_balance(m, 0) == synced.balance == floor.ledger.balance(account)


def test_each_count_reads_only_what_is_new_since_the_last(floor: Floor, tmp_path: Path) -> None:
    """The row's cursor: a count reads the ledger after the last batch it read, keeps the
    rounds not ended with what they staked and paid so far, and is signed with the row."""
    account = floor.account
    floor.ledger.open_account(OPEN_WAGERS)
    asked: list[int] = []

    def read(after: int) -> list[tuple[int, str, Transfer]]:
        asked.append(after)
        return floor.ledger.history_after(account, after)

    floor.ledger.post("bet:t.1:s1:b", [Transfer(account, OPEN_WAGERS, 700, "wager", "t.1", "b")])
    synced = floor.store.write(floor.store.sync("s1", read, lambda r: False))
    cursor = floor.store.load("s1").cursor
    assert cursor == {"seq": 2, "balance": 9_300, "open": {"t.1": [700, 0]}}
    assert asked == [0, 0] and synced.in_play == 700
    asked.clear()
    floor.ledger.post("void:t.1:s1:b", [Transfer(OPEN_WAGERS, account, 700, "void", "t.1", "b")])
    synced = floor.store.write(floor.store.sync("s1", read, lambda r: True))
    assert asked == [2, 2]  # the cursor's batch on: the bill and the bet are not read again
    assert floor.store.load("s1").cursor == {"seq": 3, "balance": 10_000, "open": {}}
    assert (synced.in_play, synced.balance) == (0, floor.ledger.balance(account))
    assert synced.row.meters["games_played"] == 0  # a void is no game
    with sqlite3.connect(tmp_path / "stations.sqlite") as db:  # the cursor moved by hand
        db.execute("UPDATE stations SET cursor = replace(cursor, '\"seq\":3', '\"seq\":9')")
    with pytest.raises(CriticalMemoryError):
        floor.store.load("s1")


def test_a_row_counted_before_cursors_is_not_counted_again(floor: Floor) -> None:
    """A store from an older version: its meters were counted, its row has no cursor. The
    first count reads the whole history once, and what the metered keys say was counted is
    not counted twice."""
    read = partial(floor.ledger.history_after, floor.account)
    first = floor.store.write(floor.store.sync("s1", read, lambda r: True)).row.meters
    assert first["credits_in"] == 10_000

    def forget(db: sqlite3.Connection) -> None:  # as an older version left the row
        row = floor.store._get(db, "s1")
        row.cursor = None
        floor.store._put(db, row)

    floor.store.write(forget)
    assert floor.store.load("s1").cursor is None
    again = floor.store.write(floor.store.sync("s1", read, lambda r: True))
    assert again.row.meters == first and again.balance == 10_000
    assert floor.store.load("s1").cursor == {"seq": 1, "balance": 10_000, "open": {}}


def test_a_void_returns_stakes_without_counting_a_game() -> None:
    account = station_account("s1")
    staked, paid = round_money(account, [
        Transfer(account, OPEN_WAGERS, 1_000, "wager", "r", "b"),
        Transfer(OPEN_WAGERS, account, 1_000, "void", "r", "b"),
    ])  # fmt: skip
    meters = empty_meters()
    fold_round(meters, staked, paid)
    assert (meters["wagered"], meters["won"], meters["games_played"]) == (0, 0, 0)


def test_a_changed_row_fails_its_check(floor: Floor, tmp_path: Path) -> None:
    read = partial(floor.ledger.history_after, floor.account)
    floor.store.write(floor.store.sync("s1", read, lambda r: True))
    assert floor.store.load("s1").meters["credits_in"] == 10_000
    with sqlite3.connect(tmp_path / "stations.sqlite") as db:  # a disk fault, a hand edit
        db.execute("UPDATE stations SET meters = replace(meters, '10000', '90000')")
    with pytest.raises(CriticalMemoryError):
        floor.store.load("s1")
    with pytest.raises(CriticalMemoryError):
        floor.store.write(floor.store.sync("s1", lambda after: [], lambda r: True))
    # Another key (another server's file) fails too.
    other = StationStore(tmp_path / "stations.sqlite", secrets.token_bytes(32))
    try:
        with pytest.raises(CriticalMemoryError):
            other.load("s1")
    finally:
        other.close()


def test_the_operator_commands_never_make_a_key_up(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A data directory restored without its keys: croupier tickets and croupier meters say
    so (exit 2) rather than make new keys, under which every ticket would look forged and
    every meter fail its check."""
    data = str(tmp_path)
    assert main(["tickets", "list", "--data-dir", data]) == 2  # no ledger at all
    floor = Floor(tmp_path)  # a ledger, the stations' store and both keys
    floor.close()
    assert main(["tickets", "list", "--data-dir", data]) == 0
    (tmp_path / "ticket.key").unlink()
    capsys.readouterr()
    assert main(["tickets", "list", "--data-dir", data]) == 2
    assert main(["meters", "--all", "--data-dir", data]) == 2
    assert "ticket.key is missing" in capsys.readouterr().err
    assert not (tmp_path / "ticket.key").exists()
