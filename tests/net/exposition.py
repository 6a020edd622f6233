"""A strict reader of the Prometheus text exposition format (version 0.0.4), for tests.

``parse`` checks what a scraper and an operator rely on and returns every sample's value:
each sample belongs to a metric with exactly one ``# HELP`` and one ``# TYPE`` line before
its samples; a HELP text says something (not the metric's own name); names are
lower_snake; counters end in ``_total``; no sample appears twice; a histogram's buckets are
cumulative, ascending, end with ``le="+Inf"`` equal to ``_count``, and ``_sum`` is there.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from dataclasses import dataclass, field

NAME = re.compile(r"[a-z_][a-z0-9_]*\Z")
SAMPLE = re.compile(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)\Z")
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(?:,|\Z)')
TYPES = {"counter", "gauge", "histogram"}

Labels = tuple[tuple[str, str], ...]


@dataclass
class Exposition:
    help: dict[str, str] = field(default_factory=dict)
    type: dict[str, str] = field(default_factory=dict)
    samples: dict[tuple[str, Labels], float] = field(default_factory=dict)

    def value(self, name: str, **labels: str) -> float:
        return self.samples[(name, tuple(sorted(labels.items())))]

    def series(self, name: str) -> dict[Labels, float]:
        return {labels: v for (n, labels), v in self.samples.items() if n == name}


def _labels(text: str | None) -> Labels:
    if not text:
        return ()
    pairs, pos = [], 0
    while pos < len(text):
        match = LABEL.match(text, pos)
        assert match, f"bad labels {text!r}"
        pairs.append((match[1], match[2]))
        pos = match.end()
    names = [k for k, _ in pairs]
    assert len(set(names)) == len(names), f"a label twice in {text!r}"
    return tuple(sorted(pairs))


def _family(name: str, types: dict[str, str]) -> str:
    for suffix in ("_bucket", "_sum", "_count"):
        base = name.removesuffix(suffix)
        if base != name and types.get(base) == "histogram":
            return base
    return name


def parse(text: str) -> Exposition:
    out = Exposition()
    assert text.endswith("\n"), "the exposition ends with a line feed"
    for line in text.splitlines():
        assert line, "no empty lines"
        if line.startswith("# HELP "):
            name, _, help_text = line[7:].partition(" ")
            assert name not in out.help, f"HELP twice for {name}"
            assert name not in {_family(n, out.type) for n, _ in out.samples}, f"{name}: late HELP"
            assert help_text.strip() and help_text != name, f"{name}: HELP says nothing"
            out.help[name] = help_text
        elif line.startswith("# TYPE "):
            name, _, kind = line[7:].partition(" ")
            assert name not in out.type, f"TYPE twice for {name}"
            assert name in out.help, f"{name}: TYPE before its HELP"
            assert kind in TYPES, f"{name}: unknown type {kind}"
            assert NAME.match(name), f"{name} is not lower_snake"
            if kind == "counter":
                assert name.endswith("_total"), f"counter {name} does not end in _total"
            out.type[name] = kind
        else:
            assert not line.startswith("#"), f"unknown comment {line!r}"
            match = SAMPLE.match(line)
            assert match, f"bad sample line {line!r}"
            name, labels, value = match[1], _labels(match[2]), float(match[3])
            family = _family(name, out.type)
            assert family in out.type and family in out.help, f"{name}: no HELP or TYPE before"
            for label, _ in labels:
                assert NAME.match(label), f"{name}: label {label} is not lower_snake"
            assert (name, labels) not in out.samples, f"{name}{labels} twice"
            out.samples[(name, labels)] = value
    for name, kind in out.type.items():
        if kind == "histogram":
            _check_histogram(out, name)
    return out


def _check_histogram(out: Exposition, name: str) -> None:
    buckets: dict[Labels, list[tuple[float, float]]] = defaultdict(list)
    for labels, value in out.series(name + "_bucket").items():
        le = dict(labels)["le"]
        rest = tuple(p for p in labels if p[0] != "le")
        buckets[rest].append((math.inf if le == "+Inf" else float(le), value))
    for rest, pairs in buckets.items():
        pairs.sort()
        counts = [c for _, c in pairs]
        assert pairs[-1][0] == math.inf, f"{name}{rest}: no +Inf bucket"
        assert counts == sorted(counts), f"{name}{rest}: buckets not cumulative"
        assert out.samples[(name + "_count", rest)] == counts[-1], f"{name}{rest}: +Inf != count"
        assert (name + "_sum", rest) in out.samples, f"{name}{rest}: no _sum"
