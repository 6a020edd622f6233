"""The casino: every table, the players, the ledger and the journal of one server process.

It starts by recovering whatever a previous process left open (``recovery``), then runs one
task per table. Players arrive in one of two ways (docs/protocol.md, "Players"):

- **demo** (the embedded default): anyone may play with clearly labelled play money; a new
  demo player gets ``starting_balance`` and a token signed by this server so they come back
  as themselves after a reconnect;
- **jwt**: the operator's platform issues a signed JWT whose ``sub`` is the player id (and
  ``name`` the display name); this server verifies it (PyJWT) and never issues money itself.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections import defaultdict
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

import jwt

from rng.sources import HmacDrbgSource
from server.config import ServerSettings
from server.core import commands as cmd
from server.core.replay import replay_round
from server.datadir import load_key
from server.devices.dealing import DealerSettings
from server.devices.handshake import KnownDevice
from server.devices.hub import DeviceHub, SerialLine
from server.devices.table_devices import TableDevices, table_dealer
from server.games.events import CardDealt, WagerSettled
from server.games.table import ConfigError, TableGame, TableSettings
from server.journal.journal import Journal, RoundStatus
from server.protocol.codec import encode
from server.protocol.messages import Notice, RecalledRound, Rules, ServerMessage, TableSummary
from server.stations.meters import station_player
from server.stations.service import StationRefused, Stations
from server.stations.store import StationStore
from server.tables.clock import Clock
from server.tables.door import TableDoor
from server.tables.games import build_game
from server.tables.hooks import TableHooks
from server.tables.recovery import Recovered, recover_open_rounds
from server.tables.runtime import TableRuntime
from server.tables.viewers import Viewer
from server.wallet.ledger import (
    HOUSE,
    OPEN_WAGERS,
    PLAY_MONEY_ISSUER,
    Ledger,
    Transfer,
    player_account,
)

__all__ = ["AuthError", "Casino", "Player"]

log = logging.getLogger("croupier.casino")
_DEMO_AUDIENCE = "croupier-demo"


class AuthError(Exception):
    """A login that cannot be accepted; ``code`` goes to the client."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class Player:
    player_id: str
    name: str
    play_money: bool
    token: str
    station: str | None = None  # a player station's touchscreen (docs/electronic-tables.md)


def next_epoch(journal: Journal, table_id: str) -> int:
    """The epoch of the table's next run, durable before it returns (called once per table at
    start, before any event): one more than the last run's; 1 for a table whose journal
    predates epochs, 0 for a new one."""
    saved = journal.load_state(table_id, "epoch")
    if saved is not None:
        epoch = int(saved["epoch"]) + 1
    else:
        epoch = 0 if journal.last_round(table_id) is None else 1
    journal.save_state(table_id, "epoch", {"epoch": epoch})
    return epoch


def _load_meters(journal: Journal, table_id: str, game: TableGame) -> None:
    """The table's own meters as it saved them, and its link's as the store holds them now
    (players see the shared amounts from the first snapshot on)."""
    saved = journal.load_state(table_id, "meters")
    if saved is not None:
        game.restore_meters(saved)
    if game.linked:
        states = journal.linked_meters(list(game.linked.values()))
        game.restore_linked({name: states.get(key) for name, key in game.linked.items()})


def _check_links(games: Mapping[str, TableGame]) -> None:
    """Every table of one progressive link shares its meters, so they must offer the same
    ones, alike (a Harmony paytable, a Mystery Bonus configuration)."""
    first: dict[str, tuple[str, tuple[object, ...]]] = {}
    for table_id, game in games.items():
        if not game.linked:
            continue
        link = next(iter(game.linked.values())).rpartition("/")[0]
        seen = first.setdefault(link, (table_id, game.link_signature()))
        if seen[1] != game.link_signature():
            raise ConfigError(
                f"table {table_id}: progressive_link {link!r} is shared with table {seen[0]}, "
                "which offers other progressive meters; the tables of one link must offer "
                "the same ones (the same Harmony paytable and Mystery Bonus configuration)"
            )


class Casino:
    def __init__(
        self,
        settings: ServerSettings,
        ledger: Ledger,
        journal: Journal,
        clock: Clock,
        *,
        secret_file: Path | None = None,
        token_key: bytes | None = None,
        stations_store: StationStore | None = None,
        ticket_key: bytes | None = None,
        clustered: bool = False,
        hooks: Callable[[TableSettings], TableHooks] = lambda table: TableHooks(),
    ) -> None:
        """``hooks``: each table's lifecycle hooks as the edge wants them (its fan-out, its
        round counter); the casino adds the player stations' (server.tables.hooks)."""
        self.settings = settings
        self.hooks = hooks
        self.ledger = ledger
        self.journal = journal
        self.clock = clock
        for account, negative in ((PLAY_MONEY_ISSUER, True), (HOUSE, True), (OPEN_WAGERS, False)):
            ledger.open_account(account, may_go_negative=negative)
        # A cluster's nodes share one key (kept in the database), so a demo player's token
        # is good on any of them.
        self._demo_secret = token_key or self._load_secret(secret_file)
        self.table_settings = {t.id: t for t in settings.tables}
        self.games: dict[str, TableGame] = {
            t.id: build_game(t, HmacDrbgSource(f"table:{t.id}")) for t in settings.tables
        }
        _check_links(self.games)
        for table_id, game in self.games.items():
            _load_meters(journal, table_id, game)  # the jackpots carry on across restarts
        # Devices (docs/devices.md): one hub for the whole server, and each table with devices
        # answers its chance requests from them.
        link = settings.device_link
        self.devices = DeviceHub(
            [KnownDevice(d.id, d.role, d.key) for d in settings.devices],
            journal,
            host=link.host,
            port=link.port,
            # docs/devices.md, "Transports": the serial lines it opens, TLS on its listener
            lines=[
                SerialLine(d.id, d.serial, d.baudrate, d.protocol)
                for d in settings.devices
                if d.serial is not None
            ],
            tls=link.tls_context(),
        )
        dealer_settings = DealerSettings(link.answer_seconds, link.hold_seconds, link.max_restarts)
        self.table_devices: dict[str, TableDevices] = {
            t.id: TableDevices(
                table_dealer(t, self.games[t.id], dealer_settings), self.devices, clock
            )
            for t in settings.tables
            if t.devices
        }
        self.tables: dict[str, TableRuntime] = {}
        self.stations = self._stations(stations_store, ticket_key)
        # A cluster node (docs/operations.md, "Running a cluster") runs only the tables whose
        # lease it holds, each taken with ``take`` on its fenced stores; one process alone
        # runs every table from the start.
        self.clustered = clustered
        if clustered and settings.devices:
            raise ConfigError(
                "devices and player stations connect to one node: a configuration with "
                "[[devices]] runs on a single croupier serve, not in a cluster"
            )
        for table in () if clustered else settings.tables:
            self.tables[table.id] = self._runtime(table, ledger, journal)
        # A cluster node's doors to every table, wherever it runs (server.cluster.tables),
        # and the lobby as the node sees it.
        self.doors: dict[str, TableDoor] = {}
        self.cluster_lobby: Callable[[], list[TableSummary]] | None = None
        # A cluster keeps recovery's notices where any node finds them (Redis).
        self.shared_notices: Callable[[str], Awaitable[list[Notice]]] | None = None
        self.notices: dict[str, list[Notice]] = defaultdict(list)
        self._names: dict[str, str] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._running: dict[str, asyncio.Task[None]] = {}
        self.recovered: list[Recovered] = []

    def _runtime(
        self,
        table: TableSettings,
        ledger: Ledger,
        journal: Journal,
        *,
        published: Callable[[int | None, str | None, bytes], object] | None = None,
        viewers: dict[Viewer, str] | None = None,
    ) -> TableRuntime:
        """The table's runtime, numbering its rounds after the journal's last and starting a
        new epoch (a durable write), with its hooks: the edge's, the player stations' and —
        on a cluster node — ``published`` (its events to the other nodes) and ``viewers``
        (the node's door's)."""
        last = journal.last_round(table.id)
        first = int(last.rsplit(".", 1)[1]) + 1 if last else 1
        hooks = self.hooks(table)
        stations = self.stations
        if stations is not None:  # a station bets at its own tables only
            hooks = replace(hooks, gate=partial(stations.gate, table.id))
            if table.id in stations.tables:
                hooks = replace(hooks, round_ended=partial(stations.round_ended, table.id))
        if published is not None:
            hooks = replace(hooks, published=published)
        runtime = TableRuntime(
            table,
            self.games[table.id],
            ledger,
            journal,
            self.clock,
            first_round=first,
            epoch=next_epoch(journal, table.id),
            devices=self.table_devices.get(table.id),
            hooks=hooks,
            viewers=viewers,
        )
        if stations is not None and table.id in stations.tables:
            stations.on_table(table.id, self._broadcaster(runtime))
            for station_id in stations.tables[table.id]:  # each station sits at its own seat
                seat = stations.stations[station_id].settings.seat
                runtime.seat(cmd.Reserve(station_player(station_id), seat))
        return runtime

    def _stations(self, store: StationStore | None, ticket_key: bytes | None) -> Stations | None:
        """The player stations of the electronic tables, if any is configured
        (docs/electronic-tables.md); each of their tables refuses other players' bets and
        tells its stations when a round ends."""
        if not any(d.role == "station" for d in self.settings.devices):
            return None
        if store is None:  # tests: critical memory in memory
            store = StationStore(":memory:", secrets.token_bytes(32))
        stations = Stations(
            self.settings,
            self.ledger,
            self.journal,
            store,
            self.devices,
            token_key=self._demo_secret,
            ticket_key=ticket_key or secrets.token_bytes(32),
        )
        for table_id in stations.tables:
            if self.games[table_id].boxed:
                raise ConfigError(
                    f"table {table_id}: player stations play tables without betting boxes; "
                    "a station's seat is not a box"
                )
        return stations

    @staticmethod
    def _broadcaster(table: TableRuntime) -> Any:
        def broadcast(message: ServerMessage) -> None:
            table.hooks.fanout(list(table.viewers), encode(message))

        return broadcast

    @staticmethod
    def _load_secret(path: Path | None) -> bytes:
        """The key that signs demo players' tokens: kept in the data directory so a restart
        does not log everyone out; never logged."""
        return secrets.token_bytes(32) if path is None else load_key(path)

    # --- lifecycle ---------------------------------------------------------------------------

    def recover(self) -> list[Recovered]:
        if self.clustered:  # each table's, when this node takes it
            return []
        self.recovered = recover_open_rounds(self.journal, self.ledger, self.games, self._announce)
        return self.recovered

    def _announce(self, item: Recovered) -> None:
        if item.outcome == "voided":
            text = (
                f"Round {item.round_id} was interrupted by a server restart and voided; "
                "every wager was returned."
            )
        else:
            text = f"Round {item.round_id} was completed after a server restart."
        for player in item.players:
            self.notices[player].append(
                Notice(
                    code=f"round_{item.outcome}",
                    message=text,
                    table=item.table_id,
                    round=item.round_id,
                )
            )

    def start(self, *, stagger: bool = True) -> None:
        """Recover, then run every table. Tables start spread over one round's length so
        that hundreds of tables never open, close and deal in the same instant."""
        self.recover()
        if self.stations is not None:  # a round recovery completed may call for a handpay
            for item in self.recovered:
                status = RoundStatus.SETTLED if item.outcome == "completed" else RoundStatus.VOIDED
                self.stations.round_ended(item.table_id, item.round_id, status)
        count = len(self.tables)
        for n, table in enumerate(self.tables.values()):
            cycle = table.settings.betting_seconds + table.settings.pause_seconds
            offset = cycle * n / count if stagger and count > 1 else 0.0
            self._run(table, offset)

    def _run(self, table: TableRuntime, start_after: float) -> None:
        task = asyncio.create_task(table.run(start_after=start_after), name=f"table:{table.id}")
        self._tasks.append(task)
        self._running[table.id] = task

    # --- a cluster node's tables (server.cluster.node) -----------------------------------------

    async def take(
        self,
        table_id: str,
        ledger: Ledger,
        journal: Journal,
        *,
        published: Callable[[int | None, str | None, bytes], object] | None = None,
        viewers: dict[Viewer, str] | None = None,
        start_after: float = 0.0,
    ) -> list[Recovered]:
        """Run ``table_id`` here on ``ledger`` and ``journal`` (the node's fenced views of the
        shared stores): first recover its rounds left open by the node that ran it before
        — completed or voided exactly as after a crash — then play on from its next round
        number in a new epoch, the first after ``start_after`` seconds. The blocking reads
        and writes run off the event loop. ``prepare`` sees the runtime before its first
        step. ``published`` and ``viewers``: the node's hooks for it (``_runtime``)."""
        settings = self.table_settings[table_id]

        def recover() -> tuple[list[Recovered], TableRuntime]:
            game = build_game(settings, HmacDrbgSource(f"table:{table_id}"))
            _load_meters(journal, table_id, game)
            recovered = recover_open_rounds(
                journal, ledger, {table_id: game}, self._announce, tables={table_id}
            )
            self.games[table_id] = game
            runtime = self._runtime(settings, ledger, journal, published=published, viewers=viewers)
            return recovered, runtime

        recovered, table = await asyncio.to_thread(recover)
        self.recovered.extend(recovered)
        self.tables[table_id] = table
        self._run(table, start_after)
        return recovered

    async def drain(self, table_id: str) -> None:
        """Hand the table over: its round in play finishes, no next one opens; returns when
        its task has ended."""
        table, task = self.tables.get(table_id), self._running.get(table_id)
        if table is None or task is None:
            return
        table.drain()
        await asyncio.gather(task, return_exceptions=True)
        self._forget(table_id)

    async def abandon(self, table_id: str) -> None:
        """Stop running the table at once, writing nothing more (its lease was lost: another
        node recovers its round)."""
        task = self._running.get(table_id)
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        self._forget(table_id)

    def _forget(self, table_id: str) -> None:
        task = self._running.pop(table_id, None)
        if task in self._tasks:
            self._tasks.remove(task)
        self.tables.pop(table_id, None)

    async def stop(self) -> None:
        for table in self.tables.values():
            table.stop()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks.clear()

    @property
    def ready(self) -> bool:
        if self.clustered:  # a node with no table yet is ready for players all the same
            return all(not t.done() for t in self._tasks)
        return bool(self._tasks) and all(not t.done() for t in self._tasks)

    # --- players -----------------------------------------------------------------------------

    def login(self, name: str | None, token: str | None) -> Player:
        if token is not None and self.stations is not None:
            try:
                station = self.stations.login(token)
            except StationRefused as exc:
                raise AuthError(exc.code, str(exc)) from None
            if station is not None:
                return Player(
                    station_player(station),
                    self.stations.name(station),
                    self.stations.play_money,
                    token,
                    station,
                )
        if token is not None:
            return self._login_token(token)
        if self.settings.auth.mode != "demo":
            raise AuthError("token_required", "this server admits players with a token only")
        return self._new_demo_player(name or "Player")

    def _new_demo_player(self, name: str) -> Player:
        player_id = "demo-" + secrets.token_hex(6)
        account = player_account(player_id)
        self.ledger.open_account(account)
        if self.settings.starting_balance:
            self.ledger.post(
                f"grant:{player_id}",
                [Transfer(PLAY_MONEY_ISSUER, account, self.settings.starting_balance, "grant")],
            )
        token = jwt.encode(
            {"sub": player_id, "name": name, "aud": _DEMO_AUDIENCE}, self._demo_secret, "HS256"
        )
        self._names[player_id] = name
        return Player(player_id, name, True, token)

    def _login_token(self, token: str) -> Player:
        auth = self.settings.auth
        try:
            claims = jwt.decode(
                token, self._demo_secret, algorithms=["HS256"], audience=_DEMO_AUDIENCE
            )
            play_money = True
        except jwt.InvalidTokenError:
            if auth.mode != "jwt":
                raise AuthError("bad_token", "this token was not issued by this server") from None
            key = auth.jwt_public_key or auth.jwt_secret or ""
            try:
                claims = jwt.decode(
                    token,
                    key,
                    algorithms=list(auth.jwt_algorithms),
                    audience=auth.jwt_audience,
                    issuer=auth.jwt_issuer,
                    options={"require": ["sub", "exp"]},
                )
            except jwt.InvalidTokenError as exc:
                raise AuthError("bad_token", f"the token was refused: {exc}") from None
            play_money = False
        player_id = str(claims["sub"])
        if not player_id or len(player_id) > 64:
            raise AuthError("bad_token", "the token's subject is not a valid player id")
        if player_id.startswith("station:"):  # the player stations' own ids
            raise AuthError("bad_token", "a player id may not begin with 'station:'")
        name = str(claims.get("name") or self._names.get(player_id) or player_id)[:32]
        self._names[player_id] = name
        self.ledger.open_account(player_account(player_id))
        return Player(player_id, name, play_money, token)

    def balance(self, player_id: str) -> int:
        return self.ledger.balance(player_account(player_id))

    # --- what players ask for ----------------------------------------------------------------

    def door(self, table_id: str) -> TableDoor | None:
        """The table as a player's connection uses it (None: no such table)."""
        if self.clustered:
            return self.doors.get(table_id)
        return self.tables.get(table_id)

    def lobby(self) -> list[TableSummary]:
        if self.cluster_lobby is not None:
            return self.cluster_lobby()
        return [self.summary(table) for table in self.tables.values()]

    def summary(self, table: TableRuntime) -> TableSummary:
        s = table.settings
        return TableSummary(
            table=s.id,
            name=s.name,
            game=table.game.game,
            variant=table.game.variant,
            minimum=s.minimum,
            maximum=s.maximum,
            seats=s.seats,
            seated=len(table.seated),
            phase=table.phase,
            closes_in_ms=table.closes_in_ms,
            last_results=list(table.last_results)[-10:],
            automated=table.game.automated,
            boxed=table.game.boxed,
            stations_only=self.stations_only(s.id),
        )

    def stations_only(self, table_id: str) -> bool:
        """Whether the table seats its player stations only (it has stations)."""
        return self.stations is not None and table_id in self.stations.tables

    def rules(self, table_id: str) -> Rules | None:
        """The table's rules and paytables: from its configuration, wherever it runs."""
        game = self.games.get(table_id)
        settings = self.table_settings.get(table_id)
        if game is None or settings is None:
            return None
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

    def recall(self, player_id: str, table_id: str | None = None) -> list[RecalledRound]:
        """The player's last 10 finished rounds, card by card (58 Pa. Code 810a.11)."""
        rounds = []
        for round_id in self.journal.player_rounds(player_id, limit=10 if table_id is None else 50):
            records = self.journal.records(round_id)
            if not records or (table_id is not None and records[0].table_id != table_id):
                continue
            game = self.games.get(records[0].table_id)
            if game is None:
                continue
            rounds.append(self._recalled(game, round_id, records, player_id))
            if len(rounds) == 10:
                break
        return rounds

    def _recalled(
        self, game: TableGame, round_id: str, records: Any, player_id: str
    ) -> RecalledRound:
        replayed = replay_round(game, round_id, records)
        cards: dict[str, list[str]] = defaultdict(list)
        wagers = []
        wagered = returned = 0
        for event in replayed.events:
            if isinstance(event, CardDealt):
                cards[event.target].append(event.card.code)
            elif isinstance(event, WagerSettled) and event.settlement.wager.player_id == player_id:
                s = event.settlement
                wagers.append(
                    {
                        "bet_id": s.wager.bet_id,
                        "spot": s.wager.spot,
                        "amount": s.wager.amount,
                        "result": s.outcome.result.value,
                        "returned": s.returned,
                    }
                )
                wagered += s.wager.amount
                returned += s.returned
        for record in records:
            if record.kind == "spin":
                cards["wheel"].append(str(record.payload.get("symbol", record.payload["result"])))
        finish = records[-1].payload if records[-1].kind in ("settled", "voided") else {}
        result = str(finish.get("result") or finish.get("reason") or records[-1].kind)
        return RecalledRound(
            table=records[0].table_id,
            round=round_id,
            game=game.game,
            result=result,
            cards=dict(cards),
            wagers=wagers,
            wagered=wagered,
            returned=returned,
            balance_after=None,
            # what the ledger paid the player from the progressive meters (a linked meter's
            # award is the shared meter's, which only the ledger and its store know)
            awarded=sum(
                t.amount
                for _, t in self.ledger.round_transfers(round_id)
                if t.kind == "progressive" and t.destination == player_account(player_id)
            ),
        )
