"""What ``/metrics`` shows: counters, gauges and a histogram in the Prometheus text
exposition format (version 0.0.4).

``Registry`` is the renderer: every metric is declared once with the text its ``# HELP``
line shows (what it measures, in which unit) and its label names, so nothing is ever
exposed without HELP and TYPE. ``Metrics`` declares everything ``croupier serve`` exposes
(docs/operations.md, "HTTP endpoints") and keeps the counts of the hot paths — the fan-out,
each frame written, each bet acknowledged, each round — in plain ``Cell`` objects fetched
once, so counting costs an attribute increment, never a label lookup per frame.
"""

from __future__ import annotations

import math
import time
from bisect import bisect_left
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from server.journal.journal import RoundStatus
    from server.tables.casino import Casino
    from server.tables.recovery import Recovered

__all__ = ["BET_ACK_BUCKETS", "Cell", "CounterFamily", "Histogram", "Metrics", "Registry"]

# Seconds. The target is p99 <= 10 ms (docs/architecture.md, "Performance targets"); the
# buckets resolve it finely and still show a stall of a second.
BET_ACK_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0)


class Cell:
    """One counted value (one label set of a counter)."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0


class CounterFamily:
    """A counter and its label sets; ``labels(...)`` gets (or starts at 0) one of them."""

    def __init__(self, name: str, help_text: str, labelnames: tuple[str, ...]) -> None:
        self.name, self.help, self.labelnames = name, help_text, labelnames
        self.children: dict[tuple[str, ...], Cell] = {}
        if not labelnames:
            self.labels()  # one series, shown from 0

    def labels(self, *values: str) -> Cell:
        cell = self.children.get(values)
        if cell is None:
            if len(values) != len(self.labelnames):
                raise ValueError(f"{self.name} takes labels {self.labelnames}, not {values}")
            cell = self.children[values] = Cell()
        return cell

    def samples(self) -> Iterable[str]:
        for values, cell in sorted(self.children.items()):
            yield f"{self.name}{_labels(zip(self.labelnames, values, strict=True))} {cell.value}"


class Histogram:
    """Observations counted in buckets (upper bounds, ascending), with their sum."""

    def __init__(self, name: str, help_text: str, bounds: tuple[float, ...]) -> None:
        if list(bounds) != sorted(set(bounds)) or not bounds or math.isinf(bounds[-1]):
            raise ValueError("bucket bounds must be finite, distinct and ascending")
        self.name, self.help, self.bounds = name, help_text, bounds
        self.counts = [0] * (len(bounds) + 1)  # per bucket, not cumulative; the last is +Inf
        self.sum = 0.0

    def observe(self, value: float) -> None:
        self.counts[bisect_left(self.bounds, value)] += 1
        self.sum += value

    def samples(self) -> Iterable[str]:
        total = 0
        for bound, count in zip((*self.bounds, math.inf), self.counts, strict=True):
            total += count
            le = "+Inf" if math.isinf(bound) else repr(bound)
            yield f'{self.name}_bucket{{le="{le}"}} {total}'
        yield f"{self.name}_sum {self.sum!r}"
        yield f"{self.name}_count {total}"


_M = TypeVar("_M", "CounterFamily", "Histogram", "_Gauge")


class _Gauge:
    def __init__(self, name: str, help_text: str, read: Callable[[], float]) -> None:
        self.name, self.help, self.read = name, help_text, read

    def samples(self) -> Iterable[str]:
        yield f"{self.name} {_number(self.read())}"


class _ReadCounter(_Gauge):
    """A count kept elsewhere (the cluster node's), read when ``/metrics`` is fetched."""


_TYPES = {
    CounterFamily: "counter",
    Histogram: "histogram",
    _Gauge: "gauge",
    _ReadCounter: "counter",
}


class Registry:
    """Declared metrics, rendered in the Prometheus text format."""

    def __init__(self) -> None:
        self._metrics: dict[str, CounterFamily | Histogram | _Gauge] = {}  # _ReadCounter too

    def _declare(self, metric: _M) -> _M:
        if metric.name in self._metrics:
            raise ValueError(f"metric {metric.name} is declared twice")
        self._metrics[metric.name] = metric
        return metric

    def counter(self, name: str, help_text: str, *labelnames: str) -> CounterFamily:
        if not name.endswith("_total"):
            raise ValueError(f"a counter's name ends in _total: {name}")
        return self._declare(CounterFamily(name, help_text, labelnames))

    def histogram(self, name: str, help_text: str, bounds: tuple[float, ...]) -> Histogram:
        return self._declare(Histogram(name, help_text, bounds))

    def gauge(self, name: str, help_text: str, read: Callable[[], float]) -> None:
        """A value read when ``/metrics`` is fetched."""
        self._declare(_Gauge(name, help_text, read))

    def counted(self, name: str, help_text: str, read: Callable[[], float]) -> None:
        """A counter whose value is read when ``/metrics`` is fetched."""
        if not name.endswith("_total"):
            raise ValueError(f"a counter's name ends in _total: {name}")
        self._declare(_ReadCounter(name, help_text, read))

    def inc(self, name: str, amount: int = 1, **labels: str) -> None:
        """Count on a declared counter, labels by name (for paths that are not hot)."""
        family = self._metrics[name]
        if not isinstance(family, CounterFamily) or labels.keys() != set(family.labelnames):
            raise ValueError(f"{name} is not a counter with labels {sorted(labels)}")
        family.labels(*(labels[n] for n in family.labelnames)).value += amount

    def render(self) -> str:
        lines: list[str] = []
        for name, metric in sorted(self._metrics.items()):
            lines.append(f"# HELP {name} {_escape_help(metric.help)}")
            lines.append(f"# TYPE {name} {_TYPES[type(metric)]}")
            lines.extend(metric.samples())
        return "\n".join(lines) + "\n"


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


def _number(value: float) -> str:
    """Every digit of an integer (never ``1.23457e+07``); Prometheus' names for the rest."""
    if isinstance(value, int):
        return str(int(value))
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return str(int(value)) if value.is_integer() else repr(value)


def _escape_help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def _escape_label(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _labels(pairs: Iterable[tuple[str, str]]) -> str:
    text = ",".join(f'{k}="{_escape_label(v)}"' for k, v in pairs)
    return f"{{{text}}}" if text else ""
