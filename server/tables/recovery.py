"""After a crash or restart: finish every round the journal shows as still open.

A round whose outcome was fully journaled (every card or wheel result the engine needed)
is **completed**: replayed, and every settlement posted (the ledger's batch keys make posts
that already happened no-ops). Any other round is **voided**: every wager still open in the
ledger for that round is returned — including one debited an instant before the crash and
never journaled. Either way the journal records it and the players concerned are told.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from functools import partial

from server.core.replay import Replayed, replay_round
from server.core.rounds import money_posts
from server.games.round import Phase
from server.games.table import TableGame
from server.journal.journal import Journal, RoundStatus
from server.wallet.ledger import OPEN_WAGERS, Ledger, Transfer

__all__ = ["Recovered", "recover_open_rounds", "void_in_ledger"]

log = logging.getLogger("croupier.recovery")


@dataclass(frozen=True)
class Recovered:
    table_id: str
    round_id: str
    outcome: str  # "completed" or "voided"
    players: tuple[str, ...]


def void_in_ledger(ledger: Ledger, round_id: str) -> set[str]:
    """Return every wager of ``round_id`` still held in ``wagers:open``; the players paid.

    Every batch that moves a wager's money is keyed ``<kind>:<round>:<player>:<bet>``
    (``server.core.money``) and its transfers carry the bet id: the player is what lies
    between the round and the bet id in the key. (Read so, not by splitting the key at a
    colon: a player id or a bet id may hold one, and each wager must be returned under its
    own bet id — an operator's wallet rolls back the debit that bet id names.)
    """
    held: dict[tuple[str, str], int] = defaultdict(int)
    payer: dict[tuple[str, str], str] = {}
    prefix_length = len(round_id) + 1
    for key, t in ledger.round_transfers(round_id):
        if OPEN_WAGERS not in (t.source, t.destination) or t.bet_id is None:
            continue
        after_round = key.partition(":")[2][prefix_length:]  # "<player>:<bet>"
        suffix = f":{t.bet_id}"
        if not after_round.endswith(suffix):  # pragma: no cover - not a wager's batch
            continue
        wager = (after_round[: -len(suffix)], t.bet_id)
        if t.destination == OPEN_WAGERS:
            held[wager] += t.amount
            payer[wager] = t.source
        else:
            held[wager] -= t.amount
    paid = set()
    for (player, bet_id), amount in held.items():
        if amount > 0:
            account = payer[(player, bet_id)]
            ledger.post(
                f"void:{round_id}:{player}:{bet_id}",
                [Transfer(OPEN_WAGERS, account, amount, "void", round_id, bet_id)],
            )
            paid.add(account.removeprefix("player:"))
    return paid


def _carry_meters_forward(
    journal: Journal, game: TableGame, table_id: str, replayed: Replayed
) -> None:
    """A completed round's progressive meters (its contributions, a hit and its reset) become
    the table's: the replay ran on a copy of the meters as they were saved before the round,
    which is how the live table would have left them."""
    meters = getattr(replayed.engine, "meters", None)  # games with progressive meters
    state = meters.state() if meters is not None else None
    if state:
        game.restore_meters(dict(state))
        own = game.meter_state()  # a linked meter is the link's store's, settled apart
        if own:
            journal.save_state(table_id, "meters", own)


def settle_linked(
    journal: Journal, game: TableGame, round_id: str, replayed: Replayed
) -> list[object]:
    """The replayed round's events with what its link's shared meters paid: settled now if
    the table never got that far, else the result the store kept (nothing moves twice)."""
    if not game.linked:
        return replayed.events
    records = journal.records(round_id)
    wagers = {
        (r.payload["player"], r.payload["bet_id"]): int(r.payload["amount"])
        for r in records
        if r.kind == "bet"
    }
    ops = game.linked_ops(replayed.events, wagers)
    if not ops:
        return replayed.events
    apply = partial(game.settle_linked, ops, game.hit_values_for(ops))
    result = journal.settle_meters(round_id, game.linked, apply)
    game.restore_linked(result["states"])
    return game.relinked(replayed.events, result)


def recover_open_rounds(
    journal: Journal,
    ledger: Ledger,
    games: Mapping[str, TableGame],
    announce: Callable[[Recovered], None] | None = None,
    *,
    tables: Collection[str] | None = None,
) -> list[Recovered]:
    """Complete or void every open round (of ``tables`` only, when given: a cluster node
    recovers a table it takes, and no other's)."""
    done: list[Recovered] = []
    for table_id, round_id in journal.open_rounds():
        if tables is not None and table_id not in tables:
            continue
        records = journal.records(round_id)
        game = games.get(table_id)
        players: set[str] = {r.payload["player"] for r in records if r.kind == "bet"}
        outcome = "voided"
        if game is not None:
            try:
                replayed = replay_round(game, round_id, records)
            except Exception:  # a journal the engine cannot replay: void, never guess
                log.exception("round %s cannot be replayed; voiding it", round_id)
            else:
                if replayed.engine.phase is Phase.SETTLED:
                    # Every settlement and progressive award, as the live table posts them
                    # (the keys make those already posted before the crash no-ops).
                    # (a linked meter's share: settled with the link, after the table's own)
                    _carry_meters_forward(journal, game, table_id, replayed)
                    events = settle_linked(journal, game, round_id, replayed)
                    for post in money_posts(round_id, events):
                        ledger.post(post.key, post.transfers)
                    outcome = "completed"
        players |= void_in_ledger(ledger, round_id)
        if outcome == "completed":
            journal.finish_round(round_id, RoundStatus.SETTLED, {"recovered": True})
        else:
            journal.finish_round(
                round_id,
                RoundStatus.VOIDED,
                {"reason": "interrupted by a restart", "recovered": True},
            )
        item = Recovered(table_id, round_id, outcome, tuple(sorted(players)))
        log.warning("recovered round %s of table %s: %s", round_id, table_id, outcome)
        if announce is not None:
            announce(item)
        done.append(item)
    return done
