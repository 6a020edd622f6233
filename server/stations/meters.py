"""A player station's meters, sans-I/O (docs/electronic-tables.md, "Meters").

The meters are folded from the station's ledger transfers, each counted once: a cash
movement (a bill, a ticket in or out, a handpay) when its batch is posted, a round's wagers
and payouts when the round has ended. They are kept in critical memory (``store``) and
always reconcile with the ledger:

    credits_in - credits_out - wagered + won - in play = the station's balance

where "in play" is what the station has staked in rounds not yet ended.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from server.wallet.ledger import Transfer

__all__ = [
    "CASH_KINDS",
    "COUNTERS",
    "CashKind",
    "add_meters",
    "empty_meters",
    "expected_balance",
    "fold_cash",
    "fold_round",
    "round_money",
    "station_account",
    "station_player",
]

# Every meter but ``bills_in`` (denomination -> bills), in the order they are shown.
COUNTERS: Final = (
    "credits_in",
    "credits_out",
    "wagered",
    "won",
    "games_played",
    "games_won",
    "bills_in_amount",
    "tickets_in",
    "tickets_in_amount",
    "tickets_out",
    "tickets_out_amount",
    "tickets_voided",
    "tickets_voided_amount",
    "handpays",
    "handpays_amount",
    "cancelled_credits",
    "cancelled_credits_amount",
)


class CashKind:
    """The ledger kinds of a station's cash movements."""

    BILL_IN: Final = "bill_in"  # a bill stacked: credits in
    TICKET_IN: Final = "ticket_in"  # a ticket redeemed at the station: credits in
    TICKET_OUT: Final = "ticket_out"  # a cash-out ticket issued: credits out
    TICKET_VOID: Final = "ticket_void"  # a ticket the printer could not print: back in
    HANDPAY: Final = "handpay"  # a win above the handpay limit, paid by an attendant
    CANCELLED_CREDITS: Final = "cancelled_credits"  # a cash-out paid by hand


# kind -> (credits meter and sign, count meter, amount meter)
CASH_KINDS: Final[dict[str, tuple[str, str, str]]] = {
    CashKind.BILL_IN: ("credits_in", "", "bills_in_amount"),
    CashKind.TICKET_IN: ("credits_in", "tickets_in", "tickets_in_amount"),
    CashKind.TICKET_OUT: ("credits_out", "tickets_out", "tickets_out_amount"),
    CashKind.TICKET_VOID: ("credits_in", "tickets_voided", "tickets_voided_amount"),
    CashKind.HANDPAY: ("credits_out", "handpays", "handpays_amount"),
    CashKind.CANCELLED_CREDITS: ("credits_out", "cancelled_credits", "cancelled_credits_amount"),
}
# A round's transfers back to the station that return a stake rather than pay it.
_RETURNED_STAKE: Final = frozenset({"cancel", "void"})


def station_player(station_id: str) -> str:
    """The player id a station's touchscreen bets as."""
    return f"station:{station_id}"


def station_account(station_id: str) -> str:
    return f"player:{station_player(station_id)}"


def empty_meters() -> dict[str, Any]:
    meters: dict[str, Any] = dict.fromkeys(COUNTERS, 0)
    meters["bills_in"] = {}
    return meters


def fold_cash(meters: dict[str, Any], transfer: Transfer) -> None:
    """Count one cash movement of the station (a transfer of a ``CASH_KINDS`` kind)."""
    credits, count, amount = CASH_KINDS[transfer.kind]
    meters[credits] += transfer.amount
    meters[amount] += transfer.amount
    if count:
        meters[count] += 1
    if transfer.kind == CashKind.BILL_IN:
        bills = meters["bills_in"]
        bills[str(transfer.amount)] = bills.get(str(transfer.amount), 0) + 1


def round_money(account: str, transfers: Iterable[Transfer]) -> tuple[int, int]:
    """(staked, paid) of ``account`` in one round: the stakes that stood (wagers less those
    cancelled or returned by a void) and everything paid back on them."""
    staked = paid = 0
    for t in transfers:
        if t.source == account:
            staked += t.amount
        elif t.destination == account:
            if t.kind in _RETURNED_STAKE:
                staked -= t.amount
            else:
                paid += t.amount
    return staked, paid


def fold_round(meters: dict[str, Any], staked: int, paid: int) -> None:
    """Count one ended round: a game played when a stake stood, won when it paid back more
    than was staked."""
    meters["wagered"] += staked
    meters["won"] += paid
    if staked > 0:
        meters["games_played"] += 1
        if paid > staked:
            meters["games_won"] += 1


def expected_balance(meters: dict[str, Any], in_play: int) -> int:
    """The balance the meters say the station's account holds (see the module's docstring)."""
    return int(
        meters["credits_in"] - meters["credits_out"] - meters["wagered"] + meters["won"] - in_play
    )


def add_meters(total: dict[str, Any], meters: dict[str, Any]) -> None:
    """Add one station's meters to a table's ``total``."""
    for name in COUNTERS:
        total[name] += meters.get(name, 0)
    for denomination, count in meters.get("bills_in", {}).items():
        total["bills_in"][denomination] = total["bills_in"].get(denomination, 0) + count
