"""What ``/metrics`` shows (docs/operations.md, "HTTP endpoints"): ``Metrics`` declares
everything ``croupier serve`` exposes on the generic registry (``server/metrics.py``) and
keeps the counts of the hot paths — the fan-out, each frame written, each bet acknowledged,
each round — in plain ``Cell`` objects fetched once, so counting costs an attribute
increment, never a label lookup per frame.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING

from server.group_commit import COMMIT_SECONDS
from server.metrics import LATENCY_BUCKETS, Registry

if TYPE_CHECKING:
    from server.journal.journal import RoundStatus
    from server.tables.casino import Casino
    from server.tables.recovery import Recovered

__all__ = ["BET_ACK_BUCKETS", "Metrics"]

# Seconds. The target is p99 <= 10 ms (docs/architecture.md, "Performance targets"); the
# buckets resolve it finely and still show a stall of a second.
BET_ACK_BUCKETS = LATENCY_BUCKETS


class Metrics(Registry):
    """Everything ``croupier serve`` exposes; the Service wires it to the casino (``watch``)."""

    def __init__(self) -> None:
        super().__init__()
        self.connections = self.counter(
            "croupier_connections_total", "WebSocket connections accepted (handshake completed)"
        )
        self.logins = self.counter(
            "croupier_logins_total",
            "Players welcomed after hello, by mode (demo: play money, token: a platform JWT)",
            "mode",
        )
        self.connections_closed = self.counter(
            "croupier_connections_closed_total",
            "Connections the server closed for misbehaving, by reason (flood: 4008)",
            "reason",
        )
        self.slow_viewers = self.counter(
            "croupier_slow_viewers_disconnected_total",
            "Connections closed with 4009 because their outgoing buffer passed max_backlog bytes",
        )
        self.errors = self.counter(
            "croupier_errors_total",
            "Error replies sent to clients, by error code (docs/protocol.md)",
            "code",
        )
        frames = self.counter(
            "croupier_frames_sent_total",
            "WebSocket frames written to connections, by path (fanout: a table event "
            "framed once for all its viewers; direct: a reply, replay, notice or balance "
            "sent to one connection)",
            "path",
        )
        self.frames_fanout, self.frames_direct = frames.labels("fanout"), frames.labels("direct")
        shed = self.counter(
            "croupier_frames_shed_total",
            "WebSocket frames not delivered, by reason (too_slow: the viewer's outgoing "
            "buffer passed max_backlog and it is disconnected; closing: the connection was "
            "already closing or closed)",
            "reason",
        )
        self.shed_too_slow, self.shed_closing = shed.labels("too_slow"), shed.labels("closing")
        self.bets_accepted = self.counter(
            "croupier_bets_accepted_total",
            "Bets acknowledged to players (one per bet_accepted sent, from place_bet and "
            "repeat_bets), per game",
            "game",
        )
        self.bets_refused = self.counter(
            "croupier_bets_refused_total",
            "Bet requests (place_bet) refused, by the error code the player got",
            "code",
        )
        self.bet_ack = self.histogram(
            "croupier_bet_ack_seconds",
            "Seconds from receiving a place_bet frame (before decoding) to writing its "
            "bet_accepted",
            BET_ACK_BUCKETS,
        )
        self.loop_lag = self.histogram(
            "croupier_event_loop_lag_seconds",
            "Seconds the event loop woke late from a timer (20 wake-ups a second): how long "
            "a turn held everything else, a received frame's wait before it is read included",
            BET_ACK_BUCKETS,
        )
        self.include(COMMIT_SECONDS)  # the stores' writer threads observe it
        self.rounds_settled = self.counter(
            "croupier_rounds_settled_total",
            "Rounds settled and journaled, per game; recovered=true: completed at start-up "
            "by crash recovery",
            "game",
            "recovered",
        )
        self.rounds_voided = self.counter(
            "croupier_rounds_voided_total",
            "Rounds voided with every wager returned (table stopped, irregularity, RNG "
            "failure), per game; recovered=true: voided at start-up by crash recovery",
            "game",
            "recovered",
        )

    # --- counting ------------------------------------------------------------------------------

    def bet_accepted(self, game: str, count: int = 1) -> None:
        self.bets_accepted.labels(game).value += count

    def bet_refused(self, code: str) -> None:
        self.bets_refused.labels(code).value += 1

    def bet_acked(self, received_at: float) -> None:
        """A bet_accepted was written for a place_bet frame received at ``received_at``
        (``time.perf_counter()``)."""
        self.bet_ack.observe(time.perf_counter() - received_at)

    def round_counter(self, game: str) -> Callable[[RoundStatus], None]:
        """What a table calls when one of its rounds is settled or voided."""
        settled = self.rounds_settled.labels(game, "false")
        voided = self.rounds_voided.labels(game, "false")

        def finished(status: RoundStatus) -> None:
            cell = settled if status.value == "settled" else voided
            cell.value += 1

        return finished

    def count_recovered(self, recovered: Iterable[Recovered], games: Mapping[str, str]) -> None:
        """Rounds crash recovery completed or voided; ``games``: table id -> game."""
        for item in recovered:
            game = games.get(item.table_id, "unconfigured")
            family = self.rounds_settled if item.outcome == "completed" else self.rounds_voided
            family.labels(game, "true").value += 1

    def watch(self, casino: Casino) -> None:
        """Declare the casino's round counters (call after ``casino.start``, which recovers;
        each table counts its own rounds, ``round_counter``): every configured game's
        series start at 0, so rates and alerts work from the first scrape."""
        games = {table_id: game.game for table_id, game in casino.games.items()}
        for game in set(games.values()):
            self.bets_accepted.labels(game)
            for family in (self.rounds_settled, self.rounds_voided):
                family.labels(game, "false")
                family.labels(game, "true")
        self.count_recovered(casino.recovered, games)
