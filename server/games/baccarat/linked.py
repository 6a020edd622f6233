"""Linked progressives: one Heavenly 9 (631b.2), Harmony (631b.10(j)) or Must-Hit-By (631b.6)
meter shared by every table of a link, on any node of a cluster.

A round plays on its table's own copy of the meters (the engine stays sans-I/O), and what it
did to a linked meter is then applied once to the shared meter, in the store, by the round's
id: each contribution by its wager (the same exact arithmetic as a table's own meter, so no
fraction of a cent is lost), each jackpot hit paying what the shared meter holds at that
instant and resetting it. Two tables hitting at the same instant are two hits, one after the
other, each paying exactly one winner: the first the meter, the second the reset meter. The
Must-Hit-By decision is taken against the shared meter and its shared hit value, drawn by the
certified RNG of the table that reset it and kept in the store only (631b.6(c)(3): never sent).

This module is the arithmetic (no I/O): which operations a round's events ask for
(``link_ops``), how the shared meters take them (``apply_ops``) and the round's events with
the awards the shared meters paid (``relink``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from fractions import Fraction
from typing import Any

from server.games.baccarat.events import ProgressiveAwarded, ProgressiveContributed
from server.games.errors import InvariantViolation
from server.games.progressives import InMemoryMeter, MustHitByMeter

__all__ = ["LINKABLE", "MYSTERY", "UNREACHABLE", "apply_ops", "link_ops", "relink"]

MYSTERY = "mystery_bonus"
LINKABLE = ("heavenly_9_progressive", "harmony_progressive", MYSTERY)
# A linked table's own Must-Hit-By copy never hits (nor asks for a hit value): the shared
# meter decides. No meter of 631b.6(c)(4) comes near this many minor units.
UNREACHABLE = 10**15


def link_ops(
    events: Iterable[object], linked: Mapping[str, str], wagers: Mapping[tuple[str, str], int]
) -> list[dict[str, Any]]:
    """What a round step's events do to its linked meters (``linked``: meter name → key in
    the store), in order: ``add`` a wager's contribution, ``hit`` a jackpot. ``wagers``: each
    (player, bet id)'s amount."""
    ops: list[dict[str, Any]] = []
    for event in events:
        if isinstance(event, ProgressiveContributed) and event.meter in linked:
            wager = wagers.get((event.player_id, event.bet_id))
            if wager is None:
                raise InvariantViolation(f"no wager {event.bet_id} for {event.meter}")
            ops.append(_op("add", event, wager))
        elif isinstance(event, ProgressiveAwarded) and event.meter in linked:
            ops.append(_op("hit", event, None))
    return ops


def _op(
    kind: str, event: ProgressiveContributed | ProgressiveAwarded, wager: int | None
) -> dict[str, Any]:
    op = {"op": kind, "meter": event.meter, "player": event.player_id, "bet_id": event.bet_id}
    return op if wager is None else op | {"wager": wager}


def apply_ops(
    meters: Mapping[str, InMemoryMeter | MustHitByMeter],
    ops: Iterable[Mapping[str, Any]],
    hit_values: Iterator[int],
) -> dict[str, Any]:
    """Apply ``ops`` to the shared ``meters`` (restored from the store, changed in place);
    ``hit_values``: fresh Must-Hit-By hit values from the certified RNG, taken as a meter
    needs one. The result, kept in the store by round: every contribution (exact, as
    ``[numerator, denominator]``) and every award paid."""
    adds: list[dict[str, Any]] = []
    awards: list[dict[str, Any]] = []
    for meter in meters.values():
        if isinstance(meter, MustHitByMeter) and meter.pending() is not None:
            meter.set_hit_value(next(hit_values))  # a new link's meter
    for op in ops:
        meter = meters[op["meter"]]
        who = {"meter": op["meter"], "player": op["player"], "bet_id": op["bet_id"]}
        if op["op"] == "add":
            c = meter.contribute(int(op["wager"]))
            adds.append(who | {"to_meter": _exact(c.to_meter), "to_reserve": _exact(c.to_reserve)})
            if c.award is not None:  # the Must-Hit-By meter passed its hit value
                awards.append(who | {"amount": c.award})
                assert isinstance(meter, MustHitByMeter)
                meter.set_hit_value(next(hit_values))
        elif op["op"] == "hit":
            awards.append(who | {"amount": meter.pay_jackpot()})
        else:
            raise InvariantViolation(f"no such linked meter operation: {op!r}")
    return {"adds": adds, "awards": awards}


def _exact(amount: Fraction) -> list[int]:
    return [amount.numerator, amount.denominator]


def relink(
    events: Iterable[object], linked: Mapping[str, str], result: Mapping[str, Any]
) -> list[object]:
    """``events`` with the awards the shared meters paid: a jackpot hit pays what the linked
    meter held (not the table's copy), and a Must-Hit-By award follows the contribution that
    passed the shared meter's hit value."""
    paid = {(a["meter"], a["player"], a["bet_id"]): int(a["amount"]) for a in result["awards"]}
    out: list[object] = []
    for event in events:
        if isinstance(event, ProgressiveAwarded) and event.meter in linked:
            amount = paid[(event.meter, event.player_id, event.bet_id)]
            out.append(
                ProgressiveAwarded(
                    event.round_id, event.player_id, event.bet_id, event.meter, amount
                )
            )
            continue
        out.append(event)
        if isinstance(event, ProgressiveContributed) and event.meter == MYSTERY:
            won = paid.get((event.meter, event.player_id, event.bet_id))
            if event.meter in linked and won is not None:
                out.append(
                    ProgressiveAwarded(
                        event.round_id, event.player_id, event.bet_id, event.meter, won
                    )
                )
    return out
