"""What players read of the tables besides playing them: the lobby's line of each table,
each table's rules and paytables (58 Pa. Code 810a.3) and a player's recall of their last
rounds (810a.11), wherever the table runs."""

from __future__ import annotations

import dataclasses
import threading
from collections import OrderedDict, defaultdict
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

import msgspec

from server.core.replay import replay_round
from server.core.table import TableCore
from server.games.events import CardDealt, WagerSettled
from server.games.table import TableGame, TableSettings
from server.protocol.messages import Lobby as LobbyMessage
from server.protocol.messages import RecalledRound, Rules, TableSummary
from server.stations.service import Stations
from server.tables.casino import Casino
from server.tables.runtime import TableRuntime
from server.wallet.ledger import player_account

__all__ = ["Lobby", "lobby_answer", "table_line", "table_rules"]

_encode = msgspec.msgpack.Encoder().encode
_NIL = b"\xc0"  # MessagePack's nil: a line with no countdown
# Where a line's countdown is in its MessagePack encoding: its key, then nil when it has none.
# Found once per line built (``_around``); the bytes appear nowhere else in a line, for a
# string's bytes are UTF-8, in which 0xc0 never occurs, and no other field may be nil.
_COUNTDOWN_KEY = b"\xaccloses_in_ms"


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


def lobby_answer(lines: list[bytes], count: int, ref: int | None) -> bytes:
    """The ``lobby`` message, encoded, from ``count`` lines already encoded (``lines``: their
    bytes in order, a line in one or several pieces): what ``encode(Lobby(...))`` gives,
    without decoding or encoding any line again."""
    empty = _encode(LobbyMessage(tables=[], ref=ref))
    at = empty.index(b"\xa6tables\x90") + 7  # the empty list of tables
    if count < 16:
        header = bytes((0x90 | count,))
    elif count < 1 << 16:
        header = b"\xdc" + count.to_bytes(2, "big")
    else:
        header = b"\xdd" + count.to_bytes(4, "big")
    return b"".join((empty[:at], header, *lines, empty[at + 1 :]))


def _around(line: TableSummary) -> tuple[bytes, bytes]:
    """``line`` encoded around its countdown, which it must not have (None): ``head`` and
    ``tail`` such that ``head + encode(n) + tail`` is the line with ``closes_in_ms=n``."""
    encoded = _encode(line)
    at = encoded.index(_COUNTDOWN_KEY + _NIL) + len(_COUNTDOWN_KEY)
    return encoded[:at], encoded[at + 1 :]


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
        # Each table's last lobby line, as it was built (``_Kept``).
        self._lines: dict[str, _Kept] = {}
        self._answer: _Answer | None = None  # the lobby's answer as last read
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

    def answer(self, ref: int | None) -> bytes:
        """The ``lobby`` message for a reader, encoded: ``encode(Lobby(tables=self.lines(),
        ref=ref))``. Every reader asks it, of every table, so the answer is kept (``_Answer``)
        and a read builds again only the lines of the tables that did something since the
        last read (their ``lobby_mark`` moved) or whose held seat ended, and brings the
        betting countdowns up to date (docs/architecture.md, "The lobby")."""
        now = self.casino.clock.now()
        tables = list(self.casino.tables.values())
        stations = frozenset(self._station_tables)
        kept = self._answer
        if kept is None or kept.tables != tables or kept.stations != stations:
            kept = self._answer = _Answer(tables, stations)
        marks = kept.marks
        changed = [
            i
            for i, table in enumerate(tables)
            if table.core.lobby_mark != marks[i] or table.settings is not kept.settings[i]
        ]
        if kept.holds_end <= now:  # a held seat ended: the number seated went down
            changed += [i for i, end in enumerate(kept.ends) if end <= now]
        for i in changed:
            kept.keep(i, self._kept(tables[i], stations, now))
        pieces = kept.pieces.copy()
        for at, closes_at in kept.closing.items():
            pieces[at] = _encode(_countdown(closes_at, now))
        return lobby_answer(pieces, len(tables), ref)

    def encoded(self, table: TableRuntime) -> bytes:
        """The table's lobby line, encoded (what a cluster node shares of it)."""
        now = table.clock.now()
        kept = self._kept(table, self._station_tables, now)
        return b"".join((kept.head, kept.countdown(now), kept.tail))

    def summary(self, table: TableRuntime) -> TableSummary:
        """The table's lobby line."""
        return self._line(table, self._station_tables)

    @property
    def _station_tables(self) -> Collection[str]:
        """The tables that seat their player stations only (they have stations)."""
        return self.stations.tables if self.stations is not None else ()

    def _line(self, table: TableRuntime, stations: Collection[str]) -> TableSummary:
        """The table's lobby line (``stations``: the tables that seat their stations only)."""
        now = table.clock.now()
        kept = self._kept(table, stations, now)
        if kept.closes_at is None:
            return kept.line
        return msgspec.structs.replace(kept.line, closes_in_ms=_countdown(kept.closes_at, now))

    def _kept(self, table: TableRuntime, stations: Collection[str], now: float) -> _Kept:
        """The table's kept line as it stands at ``now``. A line is built (and encoded) again
        only when something it shows has changed — the table's settings, an event (``seq``:
        a result, a phase), a seat; otherwise only its countdown is (``_Kept.countdown``)."""
        s = table.settings
        mark = table.core.lobby_mark
        station = s.id in stations
        kept = self._lines.get(s.id)
        if (
            kept is not None
            and kept.core is table.core  # a table taken again (a cluster's) has a new core
            and kept.mark == mark
            and kept.settings is s
            and now < kept.holds_end
            and kept.shows[3] == station
        ):
            return kept  # the table did nothing since: its line stands
        seq, seated, phase, closes_at, holds_end = table.core.lobby_line(now)
        shows = (seq, seated, phase, station)
        if kept is None or kept.settings is not s or kept.shows != shows:
            line = table_line(table, seated, phase, None, shows[3])
            kept = _Kept(s, shows, line, *_around(line), table.core, mark, closes_at, holds_end)
        elif (
            kept.core is not table.core
            or kept.mark != mark
            or kept.closes_at != closes_at
            or kept.holds_end != holds_end
        ):
            kept = dataclasses.replace(
                kept, core=table.core, mark=mark, closes_at=closes_at, holds_end=holds_end
            )
        self._lines[s.id] = kept
        return kept

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


def _countdown(closes_at: float, now: float) -> int:
    """Milliseconds until the betting window ends (``TableCore.lobby_state``'s)."""
    countdown = int((closes_at - now) * 1000)
    return countdown if countdown > 0 else 0


@dataclass(frozen=True, slots=True)
class _Kept:
    """A table's lobby line as last built: the settings and what it showed then (``shows``:
    seq, seated, phase, stations only), the line without a countdown, and its encoding
    around the countdown (``_around``); and, as of the table's ``lobby_mark`` then, when
    its betting window ends (None: not betting) and its first held seat (``lobby_line``)."""

    settings: TableSettings
    shows: tuple[int, int, str, bool]
    line: TableSummary
    head: bytes
    tail: bytes
    core: TableCore  # whose ``lobby_mark`` ``mark`` is
    mark: int
    closes_at: float | None
    holds_end: float

    def countdown(self, now: float) -> bytes:
        """The line's countdown at ``now``, encoded."""
        return _NIL if self.closes_at is None else _encode(_countdown(self.closes_at, now))


class _Answer:
    """The lobby's answer as last read, kept for the next read (``Lobby.answer``): the
    tables in order, each one's line as three pieces of the encoded answer — head,
    countdown, tail — and what tells whether the line still stands."""

    def __init__(self, tables: list[TableRuntime], stations: frozenset[str]) -> None:
        self.tables, self.stations = tables, stations
        count = len(tables)
        self.marks: list[int | None] = [None] * count  # each table's lobby_mark when kept
        self.settings: list[TableSettings | None] = [None] * count
        self.ends = [float("inf")] * count  # each table's first held seat's end
        self.holds_end = float("inf")  # the first of those
        self.pieces: list[bytes] = [b""] * (3 * count)
        self.closing: dict[int, float] = {}  # a betting table's countdown piece: its end

    def keep(self, i: int, kept: _Kept) -> None:
        """Table ``i``'s line is ``kept`` from now on."""
        self.marks[i], self.settings[i] = kept.mark, kept.settings
        self.pieces[3 * i : 3 * i + 3] = (kept.head, _NIL, kept.tail)
        if kept.closes_at is None:
            self.closing.pop(3 * i + 1, None)
        else:
            self.closing[3 * i + 1] = kept.closes_at
        if self.ends[i] != kept.holds_end:
            self.ends[i] = kept.holds_end
            self.holds_end = min(self.ends)


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
