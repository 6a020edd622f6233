"""Turning wagers and settlements into ledger batches (docs/architecture.md, "Money").

A wager is debited to ``wagers:open`` when accepted and settled from there: the stake back to
the player (or to the house when lost) and any winnings from the house. Every batch key names
the round, the player and the bet id, so a retried or replayed post is a no-op and a crash
between two posts never pays twice.
"""

from __future__ import annotations

from server.games.wagers import Settlement, Wager
from server.wallet.ledger import HOUSE, OPEN_WAGERS, Ledger, Transfer, player_account

__all__ = [
    "bet_key",
    "bet_transfer",
    "cancel_key",
    "cancel_transfer",
    "post_bet",
    "settle_key",
    "settlement_transfers",
]


def bet_key(round_id: str, wager: Wager) -> str:
    return f"bet:{round_id}:{wager.player_id}:{wager.bet_id}"


def cancel_key(round_id: str, wager: Wager) -> str:
    return f"cancel:{round_id}:{wager.player_id}:{wager.bet_id}"


def settle_key(round_id: str, wager: Wager) -> str:
    return f"settle:{round_id}:{wager.player_id}:{wager.bet_id}"


def bet_transfer(round_id: str, wager: Wager) -> Transfer:
    """A wager's stake, from the player to ``wagers:open``."""
    return Transfer(
        player_account(wager.player_id), OPEN_WAGERS, wager.amount, "wager", round_id, wager.bet_id
    )


def cancel_transfer(round_id: str, wager: Wager) -> Transfer:
    """A cancelled wager's stake, back to the player."""
    return Transfer(
        OPEN_WAGERS, player_account(wager.player_id), wager.amount, "cancel", round_id, wager.bet_id
    )


def post_bet(ledger: Ledger, round_id: str, wager: Wager) -> bool:
    """Debit an accepted wager; False if this exact bet was already debited (a retry)."""
    return ledger.post(bet_key(round_id, wager), [bet_transfer(round_id, wager)]).applied


def settlement_transfers(round_id: str, settlement: Settlement) -> list[Transfer]:
    wager = settlement.wager
    player = player_account(wager.player_id)
    stake, back = wager.amount, settlement.returned
    kind = settlement.outcome.result.value
    transfers: list[Transfer] = []
    if back > 0:
        transfers.append(
            Transfer(OPEN_WAGERS, player, min(back, stake), kind, round_id, wager.bet_id)
        )
    if back < stake:
        transfers.append(Transfer(OPEN_WAGERS, HOUSE, stake - back, kind, round_id, wager.bet_id))
    if back > stake:
        transfers.append(Transfer(HOUSE, player, back - stake, "winnings", round_id, wager.bet_id))
    return transfers
