"""Counters and gauges in the Prometheus text exposition format (``/metrics``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

__all__ = ["Metrics"]


class Metrics:
    def __init__(self) -> None:
        self.counters: Counter[tuple[str, tuple[tuple[str, str], ...]]] = Counter()
        self.gauges: dict[str, Callable[[], float]] = {}
        self.help: dict[str, str] = {}

    def inc(self, name: str, amount: int = 1, **labels: str) -> None:
        self.counters[(name, tuple(sorted(labels.items())))] += amount

    def gauge(self, name: str, help_text: str, read: Callable[[], float]) -> None:
        self.gauges[name] = read
        self.help[name] = help_text

    def describe(self, name: str, help_text: str) -> None:
        self.help[name] = help_text

    def render(self) -> str:
        lines: list[str] = []
        names = sorted({name for name, _ in self.counters})
        for name in names:
            lines.append(f"# HELP {name} {self.help.get(name, name)}")
            lines.append(f"# TYPE {name} counter")
            for (n, labels), value in sorted(self.counters.items()):
                if n == name:
                    text = ",".join(f'{k}="{v}"' for k, v in labels)
                    lines.append(f"{name}{{{text}}} {value}" if text else f"{name} {value}")
        for name, read in sorted(self.gauges.items()):
            lines.append(f"# HELP {name} {self.help.get(name, name)}")
            lines.append(f"# TYPE {name} gauge")
            lines.append(f"{name} {read():g}")
        return "\n".join(lines) + "\n"
