"""A table core driven without an event loop: every effect performed at once, in order,
against in-memory stores — what the asyncio ``TableRuntime`` does, synchronously."""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from rng import seeded_source
from server.journal import SqliteJournal
from server.journal.records import payload_of
from server.tables.chance import answer_chance
from server.tables.core import TableCore
from server.tables.core import commands as cmd
from server.tables.core import effects as fx
from server.tables.games import TableSettings, build_game
from server.tables.waits import STATUS, failure
from server.wallet import HOUSE, OPEN_WAGERS, PLAY_MONEY_ISSUER, SqliteLedger, Transfer
from server.wallet.ledger import player_account

# Which journaled record makes each revealing event possible (a card, a wheel result, the
# reader's light): a viewer may never have seen more of them than the journal holds.
REVEALED_BY = {
    "card_dealt": "card",
    "card_burned": "card",
    "ball_landed": "spin",
    "wheel_stopped": "spin",
    "hole_card_range_read": "hole_range",
}


@dataclass
class Driver:
    settings: TableSettings
    seed: int = 1
    now: float = 0.0
    deadline: float | None = None
    replies: dict[int, fx.Reply] = field(default_factory=dict)
    emits: list[fx.Emit] = field(default_factory=list)
    # Every store write performed, in order; a ``Wait``'s writes as one group.
    writes: list[list[Any]] = field(default_factory=list)
    journaled: Counter[tuple[str, str]] = field(default_factory=Counter)  # (round, kind)
    revealed: Counter[tuple[str, str]] = field(default_factory=Counter)
    meters_after: dict[str, Any] = field(default_factory=dict)  # a round's id -> meter state

    def __post_init__(self) -> None:
        self.game = build_game(self.settings, seeded_source(self.seed))
        self.core = TableCore(self.settings, self.game)
        self.ledger = SqliteLedger(":memory:")
        for account, negative in ((PLAY_MONEY_ISSUER, True), (HOUSE, True), (OPEN_WAGERS, False)):
            self.ledger.open_account(account, may_go_negative=negative)
        self.journal = SqliteJournal(":memory:")
        self._cids = itertools.count(1)
        self.perform(self.core.start(self.now))

    def close(self) -> None:
        self.ledger.close()
        self.journal.close()

    # --- commands ------------------------------------------------------------------------------

    def fund(self, player: str, amount: int) -> None:
        self.ledger.open_account(player_account(player))
        self.ledger.post(
            f"grant:{player}",
            [Transfer(PLAY_MONEY_ISSUER, player_account(player), amount, "grant")],
        )

    def seat(self, player: str, role: str = "player") -> str | None:
        """Join; the refusal's code, if any."""
        from server.games.errors import IllegalAction

        try:
            self.core.handle(cmd.Join(player, role), self.now)
        except IllegalAction as exc:
            return exc.code
        return None

    def play(self, kind: type, player: str, **args: Any) -> fx.Reply | None:
        """A player's command; its reply once the table has handled it (None while queued)."""
        cid = next(self._cids)
        self.send(kind(cid, player, **args))
        return self.replies.pop(cid, None)

    def advance(self, seconds: float) -> None:
        self.now += seconds
        self.send(cmd.Tick())

    def run_until(self, when: float) -> None:
        """Tick at every deadline up to ``when``."""
        while self.deadline is not None and self.deadline <= when:
            self.now = max(self.now, self.deadline)
            self.send(cmd.Tick())
        self.now = max(self.now, when)
        self.send(cmd.Tick())

    def send(self, command: cmd.Command) -> None:
        self.perform(self.core.handle(command, self.now))

    # --- effects -------------------------------------------------------------------------------

    def perform(self, effects: list[Any]) -> None:
        while True:
            wait = None
            for effect in effects:
                if isinstance(effect, fx.Emit):
                    self.emits.append(effect)
                    kind = REVEALED_BY.get(effect.name)
                    if kind is not None:
                        self.revealed[(effect.round_id, kind)] += 1
                        assert (
                            self.revealed[(effect.round_id, kind)]
                            <= self.journaled[(effect.round_id, kind)]
                        ), f"{effect.name} sent before its {kind} record was journaled"
                elif isinstance(effect, fx.Reply):
                    self.replies[effect.cid] = effect
                elif isinstance(effect, fx.Deadline):
                    self.deadline = effect.at
                elif isinstance(effect, fx.Wait):
                    wait = effect
            if wait is None:
                return
            writes = [e for e in wait.effects if _is_write(e)]
            if writes:
                self.writes.append(writes)
            results = tuple(self._result(e) for e in wait.effects)
            effects = self.core.handle(cmd.Done(results), self.now)

    def _result(self, effect: Any) -> Any:
        try:
            result = self.do(effect)
        except Exception as exc:
            return failure(exc)
        if isinstance(effect, fx.AppendRecord):
            self.journaled[(effect.round_id, effect.record.kind)] += 1
        elif isinstance(effect, fx.FinishRound):
            self.meters_after[effect.round_id] = self.game.meter_state()
        return result

    def do(self, effect: Any) -> Any:
        return (
            perform_write(self.ledger, self.journal, self.settings.id, effect)
            if _is_write(effect)
            else self._query(effect)
        )

    def _query(self, effect: Any) -> Any:
        if isinstance(effect, fx.ReadAvailable):
            return self.ledger.available(effect.account)
        if isinstance(effect, fx.Chance):
            return answer_chance(self.game, effect.request, effect.hole)
        raise TypeError(effect)


def _is_write(effect: Any) -> bool:
    return isinstance(
        effect, fx.Post | fx.AppendRecord | fx.OpenRound | fx.FinishRound | fx.SaveState
    )


def perform_write(ledger: SqliteLedger, journal: SqliteJournal, table: str, effect: Any) -> Any:
    """One store write, synchronously (as the runtime's awaited twins do)."""
    match effect:
        case fx.Post(key=key, transfers=transfers):
            return ledger.post(key, transfers)
        case fx.AppendRecord(round_id=round_id, record=record, player=player):
            return journal.append(round_id, record.kind, payload_of(record), player=player)
        case fx.OpenRound(round_id=round_id, record=record):
            return journal.open_round(table, round_id, payload_of(record))
        case fx.FinishRound(round_id=round_id, record=record):
            return journal.finish_round(round_id, STATUS[record.kind], payload_of(record))
        case fx.SaveState(key=key, state=state):
            return journal.save_state(table, key, state)
    raise TypeError(effect)
