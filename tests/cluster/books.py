"""What every multi-node test checks at its end: the books of the shared database."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from fractions import Fraction

from server.journal.pg_journal import PgJournal
from server.pg_storage import connect
from server.wallet.ledger import OPEN_WAGERS
from server.wallet.pg_ledger import PgLedger
from tests.cluster.players import Acked

__all__ = ["check_books", "check_linked_meters"]


def check_books(database: str, acked: list[Acked]) -> None:
    """Nothing left in play; the ledger reconciles to the cent and sums to zero; no round
    finished twice; every acknowledged bet debited once and settled or returned once."""
    ledger, journal = PgLedger(database), PgJournal(database)
    try:
        assert journal.open_rounds() == []
        assert ledger.reconcile() == {}, "every balance equals its transfers"
        assert ledger.total() == 0, "the sum of all balances is zero"
        assert ledger.balance(OPEN_WAGERS) == 0, "no wager is left open"
        with connect(database) as conn:
            twice = conn.execute(
                "SELECT round_id FROM records WHERE kind IN ('settled', 'voided') "
                "GROUP BY round_id HAVING count(*) > 1"
            ).fetchall()
        assert twice == [], f"rounds finished twice: {twice}"
        by_round: dict[str, list[Acked]] = defaultdict(list)
        for bet in acked:
            by_round[bet.round_id].append(bet)
        for round_id, bets in by_round.items():
            staked: dict[tuple[str, str], int] = defaultdict(int)
            released: dict[str, int] = defaultdict(int)  # to the player or, lost, the house
            for _, t in ledger.round_transfers(round_id):
                if t.bet_id is None:
                    continue
                if t.destination == OPEN_WAGERS:
                    staked[(t.source, t.bet_id)] += t.amount
                elif t.source == OPEN_WAGERS:
                    released[t.bet_id] += t.amount
            for bet in bets:
                debited = staked[(f"player:{bet.player_id}", bet.bet_id)]
                assert debited >= bet.amount, f"acknowledged bet {bet} was never debited"
                # settled (won: back to the player; lost: to the house) or returned, once
                out = released[bet.bet_id]
                assert out == debited, f"bet {bet}: {debited} staked, {out} released"
    finally:
        ledger.close()
        journal.close()


def check_linked_meters(database: str, seeds: Mapping[str, int]) -> dict[str, int]:
    """Every linked meter (``seeds``: its key in the store → its seed) equals its seed
    and every contribution less what its hits paid (each hit reseeding it once), to the
    fraction of a cent; each round's awards are exactly its progressive transfers in the
    ledger. Returns the contributions counted per meter."""
    ledger, journal = PgLedger(database), PgJournal(database)
    try:
        results = journal.meter_settlements()
        states = journal.linked_meters(list(seeds))
        counted: dict[str, int] = {}
        for key, seed in seeds.items():
            meter = key.rpartition("/")[2]
            adds = [a for _, r in results for a in r["adds"] if a["meter"] == meter]
            paid = [a["amount"] for _, r in results for a in r["awards"] if a["meter"] == meter]
            added = sum(Fraction(*a["to_meter"]) + Fraction(*a["to_reserve"]) for a in adds)
            state = states[key]
            assert state is not None, f"linked meter {key} was never used"
            held = Fraction(state["meter"] + state.get("reserve", 0), state["denominator"])
            expected = seed * (1 + len(paid)) + added - sum(paid)
            assert held == expected, f"{key}: holds {held}, expected {expected}"
            counted[key] = len(adds)
        for round_id, result in results:
            awarded = sum(int(a["amount"]) for a in result["awards"])
            posted = sum(
                t.amount for _, t in ledger.round_transfers(round_id) if t.kind == "progressive"
            )
            assert posted == awarded, f"round {round_id}: awarded {awarded}, posted {posted}"
        return counted
    finally:
        ledger.close()
        journal.close()
