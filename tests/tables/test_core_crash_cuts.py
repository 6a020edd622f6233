"""A crash at every step, deterministically (issue #15): rounds of every game are played
through the table core, every store write recorded in order; then, for each point of that
order, fresh stores receive exactly the writes made before it — the state a crash there
leaves on disk, including either half of a bet's debit-and-record pair — and crash
recovery (which replays the journal through the table core) runs on them. Every recovery
completes or voids each open round, returns every stake it does not settle, ends every
wager exactly once, and leaves a ledger that reconciles."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from rng import seeded_source
from server.config import load_config
from server.core import commands as cmd
from server.journal import SqliteJournal
from server.tables.games import build_game
from server.tables.recovery import recover_open_rounds
from server.wallet import HOUSE, OPEN_WAGERS, PLAY_MONEY_ISSUER, SqliteLedger
from tests.tables.core_driver import Driver, perform_write

# One table of each game (and the Lucky Nines table, whose wagers settle before the third card).
TABLES = {t.id: t for t in load_config(None).tables}
GAMES = ["baccarat", "lucky-nines", "21-baccarat", "casino-war", "down-under", "roulette-double",
         "big-six"]  # fmt: skip
PLAYERS = ("ann", "bob")
ROUNDS = 2


def _played(table_id: str) -> Driver:
    """Two rounds with bets (all in flight at once, answered in a random order), a cancel
    and random decisions; the writes recorded, in the order the stores took them."""
    rng = random.Random(table_id)
    d = Driver(TABLES[table_id], seed=11)
    for player in PLAYERS:
        d.fund(player, 100_000)
        d.seat(player)
    spots = d.game.sample_spots()
    for _ in range(ROUNDS):
        round_id = d.core.round_id or ""
        d.holding = True
        for n, player in enumerate(PLAYERS * 2):
            seat = d.core.seats.seat_of[player]
            spot = spots[0 if n < 2 else rng.randrange(len(spots))].format(seat=seat)
            d.play(cmd.Place, player, round_id=round_id, bet_id=f"b{n}", spot=spot, amount=500)
        d.play(cmd.Cancel, "bob", round_id=round_id, bet_id="b3")
        while d.held:  # the bets were all in flight at once; answered in any order
            d.complete(rng.choice(sorted(d.held)))
        d.holding = False
        d.run_until(d.now + TABLES[table_id].betting_seconds)
        while d.core.decisions:
            (player, spot), (request, _) = sorted(d.core.decisions.items())[0]
            choice = rng.choice(request.options)
            d.play(cmd.Decide, player, round_id=round_id, spot=spot, decision=choice)
        d.run_until(d.now + 30)
    return d


def _crash_states(writes: list[list[Any]]) -> Iterator[tuple[int, list[Any]]]:
    """Every prefix of the writes; for writes made together (a bet's record and debit), each
    one alone too: either may reach the disk first."""
    done: list[Any] = []
    yield 0, []
    for n, group in enumerate(writes, 1):
        if len(group) > 1:
            for alone in group:
                yield n, [*done, alone]
        done = [*done, *group]
        yield n, done


def _fresh_stores() -> tuple[SqliteLedger, SqliteJournal]:
    ledger = SqliteLedger(":memory:")
    for account, negative in ((PLAY_MONEY_ISSUER, True), (HOUSE, True), (OPEN_WAGERS, False)):
        ledger.open_account(account, may_go_negative=negative)
    return ledger, SqliteJournal(":memory:")


@pytest.mark.parametrize("table_id", GAMES)
def test_recovery_after_a_crash_at_every_step_loses_nothing(table_id: str) -> None:
    played = _played(table_id)
    settings = TABLES[table_id]
    grants = [("ann", 100_000), ("bob", 100_000)]
    stakes = [w for group in played.writes for w in group if type(w).__name__ == "Post"]
    assert any(w.key.startswith("bet:") for w in stakes), "the players did bet"
    cuts = 0
    for _, writes in _crash_states(played.writes):
        ledger, journal = _fresh_stores()
        for player, amount in grants:
            _grant(ledger, player, amount)
        for write in writes:
            perform_write(ledger, journal, settings.id, write)
        game = build_game(settings, seeded_source(99))  # recovery never draws
        saved = journal.load_state(settings.id, "meters")
        if saved is not None:  # as the server does before it recovers
            game.restore_meters(saved)
        recovered = recover_open_rounds(journal, ledger, {settings.id: game})
        for item in recovered:
            if item.outcome == "completed":
                # The meters move on as the live table moved them with that round.
                assert game.meter_state() == played.meters_after[item.round_id]
                assert journal.load_state(settings.id, "meters") == game.meter_state()
        assert journal.open_rounds() == []
        assert ledger.balance(OPEN_WAGERS) == 0, writes[-1:]
        assert ledger.reconcile() == {} and ledger.total() == 0
        endings: Counter[str] = Counter()
        debited = set()
        for key in _keys(ledger):
            kind, _, wager = key.partition(":")
            if kind == "bet":
                debited.add(wager)
            elif kind in ("settle", "void", "cancel"):
                endings[wager] += 1
        assert all(endings[w] == 1 for w in debited), (debited, endings)
        ledger.close()
        journal.close()
        cuts += 1
    assert cuts > 20
    played.close()


def _grant(ledger: SqliteLedger, player: str, amount: int) -> None:
    from server.wallet import Transfer
    from server.wallet.ledger import player_account

    ledger.open_account(player_account(player))
    ledger.post(
        f"grant:{player}", [Transfer(PLAY_MONEY_ISSUER, player_account(player), amount, "grant")]
    )


def _keys(ledger: SqliteLedger) -> set[str]:
    """Every batch key in the ledger (a lost wager's settlement touches no player's account)."""
    with ledger._lock:
        return {key for (key,) in ledger._db.execute("SELECT key FROM batches").fetchall()}


def test_a_round_completed_by_recovery_pays_its_progressive_award() -> None:
    """A Must-Hit-By Mystery Bonus hit (631b.6) in a round that a crash interrupted after its
    last card: recovery posts the award as the live table would have, exactly once, and the
    meter is reset as the live table reset it."""
    settings = TABLES["lucky-nines"]
    d = Driver(settings, seed=3)
    d.game._randbelow = lambda n: 0  # type: ignore[attr-defined]  # hit value: the lowest
    d.fund("ann", 100_000)
    d.seat("ann")
    round_id = d.core.round_id or ""
    for bet_id, spot in (("b1", "banker"), ("b2", "heavenly_9_progressive")):
        reply = d.play(cmd.Place, "ann", round_id=round_id, bet_id=bet_id, spot=spot, amount=500)
        assert reply is not None and reply.refusal is None, reply
    d.run_until(d.now + 30)
    awards = [e for e in d.emits if e.name == "progressive_awarded" and e.data["amount"] > 0]
    assert awards, "the scripted hit value was not reached"
    award_key = next(
        w.key for group in d.writes for w in group if getattr(w, "key", "").startswith("award:")
    )
    completed = 0
    for _, writes in _crash_states(d.writes):
        ledger, journal = _fresh_stores()
        _grant(ledger, "ann", 100_000)
        for write in writes:
            perform_write(ledger, journal, settings.id, write)
        game = build_game(settings, seeded_source(99))
        saved = journal.load_state(settings.id, "meters")
        if saved is not None:
            game.restore_meters(saved)
        for item in recover_open_rounds(journal, ledger, {settings.id: game}):
            if item.round_id == round_id and item.outcome == "completed":
                completed += 1
                assert award_key in _keys(ledger)
                assert game.meter_state() == d.meters_after[round_id]
        assert ledger.balance(OPEN_WAGERS) == 0 and ledger.reconcile() == {}
        ledger.close()
        journal.close()
    assert completed > 0
    d.close()
