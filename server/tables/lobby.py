"""What players read of the tables besides playing them: the lobby's line of each table,
each table's rules and paytables (58 Pa. Code 810a.3) and a player's recall of their last
rounds (810a.11), wherever the table runs."""

from __future__ import annotations

import threading
from collections import OrderedDict, defaultdict
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

import msgspec

from server.core.replay import replay_round
from server.games.events import CardDealt, WagerSettled
from server.games.table import TableGame, TableSettings
from server.protocol.messages import RecalledRound, Rules, TableSummary
from server.stations.service import Stations
from server.tables.casino import Casino
from server.tables.runtime import TableRuntime
from server.wallet.ledger import player_account

__all__ = ["Lobby", "table_line", "table_rules"]


def table_line(
    table: TableRuntime, seated: int, phase: str, closes_in_ms: int | None, stations_only: bool
) -> TableSummary:
    """A table's lobby line, from what changes (given) and its configuration."""
    s = table.settings
    return TableSummary(
        table=s.id,
        name=s.name,
        game=table.game.game,
        variant=table.game.variant,
        minimum=s.minimum,
        maximum=s.maximum,
        seats=s.seats,
        seated=seated,
        phase=phase,
        closes_in_ms=closes_in_ms,
        last_results=list(table.last_results)[-10:],
        automated=table.game.automated,
        boxed=table.game.boxed,
        stations_only=stations_only,
    )


def table_rules(table_id: str, game: TableGame, settings: TableSettings) -> Rules:
    """A table's rules and paytables (58 Pa. Code 810a.3), built from its configuration."""
    info = game.rules()
    return Rules(
        table=table_id,
        game=game.game,
        variant=game.variant,
        summary=info["summary"],
        paytables=info["paytables"],
        limits={"minimum": settings.minimum, "maximum": settings.maximum},
        spots=game.sample_spots(),
        main_spots=info.get("main_spots", []),
        spot_limits=info.get("spot_limits", {}),
        boxed=game.boxed,
        seats=settings.seats,
    )


class Lobby:
    def __init__(self, casino: Casino, stations: Stations | None = None) -> None:
        self.casino, self.stations = casino, stations
        self.ledger, self.journal = casino.ledger, casino.journal
        # Each table's last lobby line: (its settings, what the line showed, the line).
        self._lines: dict[str, tuple[TableSettings, tuple[int, int, str, bool], TableSummary]] = {}
        # Each table's rules: built from its configuration once (the roulette layout's
        # spots take milliseconds), shared by every reader — a reply is a copy with its ref.
        self._rules: dict[str, tuple[TableSettings, TableGame, Rules]] = {}
        self._finished_rounds: OrderedDict[str, _FinishedRound] = OrderedDict()
        self._finished_lock = threading.Lock()

    @property
    def games(self) -> dict[str, TableGame]:
        return self.casino.games

    def lines(self) -> list[TableSummary]:
        """The lobby: each table this process runs."""
        stations = self._station_tables
        return [self._line(table, stations) for table in self.casino.tables.values()]

    def summary(self, table: TableRuntime) -> TableSummary:
        """The table's lobby line."""
        return self._line(table, self._station_tables)

    @property
    def _station_tables(self) -> Collection[str]:
        """The tables that seat their player stations only (they have stations)."""
        return self.stations.tables if self.stations is not None else ()

    def _line(self, table: TableRuntime, stations: Collection[str]) -> TableSummary:
        """The table's lobby line (``stations``: the tables that seat their stations only).
        Every reader of the lobby asks it of every table, so a line is built again only
        when something it shows has changed — the table's settings, an event (``seq``: a
        result, a phase), a seat — and otherwise only its betting countdown is brought up
        to date."""
        s = table.settings
        seq, seated, phase, closes = table.lobby_state
        shows = (seq, seated, phase, s.id in stations)
        cached = self._lines.get(s.id)
        if cached is not None and cached[0] is s and cached[1] == shows:
            line = cached[2]
        else:
            line = table_line(table, seated, phase, None, shows[3])
            self._lines[s.id] = (s, shows, line)
        return line if closes is None else msgspec.structs.replace(line, closes_in_ms=closes)

    def stations_only(self, table_id: str) -> bool:
        """Whether the table seats its player stations only (it has stations)."""
        return table_id in self._station_tables

    def rules(self, table_id: str) -> Rules | None:
        """The table's rules and paytables: from its configuration, wherever it runs (the
        same object each time while the configuration is the same: copy it to change it)."""
        game = self.games.get(table_id)
        settings = self.casino.table_settings.get(table_id)
        if game is None or settings is None:
            return None
        cached = self._rules.get(table_id)
        if cached is not None and cached[0] is settings and cached[1] is game:
            return cached[2]
        rules = table_rules(table_id, game, settings)
        self._rules[table_id] = (settings, game, rules)
        return rules

    def recall(self, player_id: str, table_id: str | None = None) -> list[RecalledRound]:
        """The player's last 10 finished rounds, card by card (58 Pa. Code 810a.11). Reads
        the stores (blocking: call it off the event loop); a finished round's journal is
        replayed once for every reader (``_finished``)."""
        rounds = []
        for round_id in self.journal.player_rounds(player_id, limit=10 if table_id is None else 50):
            finished = self._finished(round_id)
            if finished is None or (table_id is not None and finished.table != table_id):
                continue
            wagers, wagered, returned = finished.players.get(player_id, ([], 0, 0))
            rounds.append(
                RecalledRound(
                    table=finished.table,
                    round=round_id,
                    game=finished.game,
                    result=finished.result,
                    cards=finished.cards,
                    wagers=wagers,
                    wagered=wagered,
                    returned=returned,
                    balance_after=None,
                    # what the ledger paid the player from the progressive meters (a linked
                    # meter's award is the shared meter's, which only the ledger knows); read
                    # each time: a round's payouts may reach the ledger after its journal
                    # is finished
                    awarded=sum(
                        t.amount
                        for _, t in self.ledger.round_transfers(round_id)
                        if t.kind == "progressive" and t.destination == player_account(player_id)
                    ),
                )
            )
            if len(rounds) == 10:
                break
        return rounds

    def _finished(self, round_id: str) -> _FinishedRound | None:
        """A finished round as recall shows it, replayed from its journal once: a settled
        or voided round's records never change, and every player who played it (and each
        of their recalls) reads the same replay. None: no records, or the table is gone."""
        with self._finished_lock:  # recalls run on worker threads
            kept = self._finished_rounds.get(round_id)
            if kept is not None:
                self._finished_rounds.move_to_end(round_id)
                return kept
        records = self.journal.records(round_id)
        if not records:
            return None
        game = self.games.get(records[0].table_id)
        if game is None:
            return None
        finished = _replayed(game, round_id, records)
        with self._finished_lock:
            self._finished_rounds[round_id] = finished
            if len(self._finished_rounds) > FINISHED_KEPT:
                self._finished_rounds.popitem(last=False)
        return finished


# Finished rounds whose replay recall keeps (a few kilobytes each): a floor's rounds of the
# last minutes, which is what its players' recalls ask for.
FINISHED_KEPT = 4096


@dataclass(frozen=True)
class _FinishedRound:
    """What recall shows of a finished round: the same for every player but their wagers
    (each player's wagers, amount wagered and amount returned)."""

    table: str
    game: str
    result: str
    cards: dict[str, list[str]]
    players: dict[str, tuple[list[dict[str, Any]], int, int]]


def _replayed(game: TableGame, round_id: str, records: Any) -> _FinishedRound:
    replayed = replay_round(game, round_id, records)
    cards: dict[str, list[str]] = defaultdict(list)
    players: dict[str, tuple[list[dict[str, Any]], int, int]] = {}
    for event in replayed.events:
        if isinstance(event, CardDealt):
            cards[event.target].append(event.card.code)
        elif isinstance(event, WagerSettled):
            s = event.settlement
            wagers, wagered, returned = players.get(s.wager.player_id, ([], 0, 0))
            wagers.append(
                {
                    "bet_id": s.wager.bet_id,
                    "spot": s.wager.spot,
                    "amount": s.wager.amount,
                    "result": s.outcome.result.value,
                    "returned": s.returned,
                }
            )
            players[s.wager.player_id] = (wagers, wagered + s.wager.amount, returned + s.returned)
    for record in records:
        if record.kind == "spin":
            cards["wheel"].append(str(record.payload.get("symbol", record.payload["result"])))
    finish = records[-1].payload if records[-1].kind in ("settled", "voided") else {}
    return _FinishedRound(
        table=records[0].table_id,
        game=game.game,
        result=str(finish.get("result") or finish.get("reason") or records[-1].kind),
        cards=dict(cards),
        players=players,
    )
