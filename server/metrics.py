"""Metrics in the Prometheus text exposition format (version 0.0.4): counters, gauges and
histograms, and the registry that renders them.

``Registry`` is the renderer: every metric is declared once with the text its ``# HELP``
line shows (what it measures, in which unit) and its label names, so nothing is ever
exposed without HELP and TYPE. Hot paths count in plain ``Cell`` objects fetched once, so
counting costs an attribute increment, never a label lookup. It imports nothing of the
server: the edge (``server/net/metrics.py``, what ``croupier serve`` exposes) and the
cluster (``server/cluster/metrics.py``) both declare their metrics on it.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Callable, Iterable
from typing import TypeVar

__all__ = ["LATENCY_BUCKETS", "Cell", "CounterFamily", "Histogram", "Registry"]

# Seconds: the buckets of every latency histogram (0.5 ms to 1 s), so they compare.
LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0)


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

    def include(self, metric: Histogram) -> None:
        """A histogram made by a layer below the one that renders it (the stores' commit
        times, ``server.group_commit``)."""
        self._declare(metric)

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
