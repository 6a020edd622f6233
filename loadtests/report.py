"""Write a benchmark's results into its own section of BENCHMARKS.md; as a command
(``python -m loadtests.report RUN_DIR``), write a load-test run's report (``run_report``).

Each benchmark owns the text between ``<!-- bench:NAME -->`` and ``<!-- /bench:NAME -->``
and replaces only that, so benchmarks run separately keep each other's figures.
"""

from __future__ import annotations

import argparse
import platform
import re
import time
from pathlib import Path
from typing import Any

BENCHMARKS = Path(__file__).resolve().parents[1] / "BENCHMARKS.md"
_HEADER = """# Benchmarks

Figures on a 2-core machine are noisy, so every benchmark reports **ratios against a
baseline measured in the same run**, and CPU-seconds, next to the command that produced
it. Re-run the command to refresh a section; each benchmark rewrites only its own section.
"""


# A benchmark's option: flag, type, default, help.
Option = tuple[str, type, Any, str]


def option_parser(description: str, options: list[Option]) -> argparse.ArgumentParser:
    """A benchmark's command-line parser: its options, each help saying its default."""
    parser = argparse.ArgumentParser(description=description)
    for flag, kind, default, text in options:
        parser.add_argument(flag, type=kind, default=default, help=f"{text} ({default})")
    return parser


def command_line(module: str, args: argparse.Namespace, options: list[Option]) -> str:
    """The command that reproduces a run: the module and every option not at its default."""
    parts = [f".venv/bin/python -m {module}"]
    for flag, _, default, _ in options:
        value = getattr(args, flag[2:].replace("-", "_"))
        if value != default:
            parts.append(f"{flag} {value:g}" if isinstance(value, float) else f"{flag} {value}")
    return " ".join(parts)


def machine_line() -> str:
    return (
        f"{time.strftime('%Y-%m-%d', time.gmtime())}, Python {platform.python_version()}, "
        f"{platform.machine()}, {platform.system()} {platform.release()}"
    )


def write_section(name: str, body: str, path: Path = BENCHMARKS) -> None:
    start, end = f"<!-- bench:{name} -->", f"<!-- /bench:{name} -->"
    block = f"{start}\n{body.rstrip()}\n{end}"
    text = path.read_text() if path.exists() else _HEADER
    pattern = re.compile(re.escape(start) + r".*?" + re.escape(end), re.DOTALL)
    if pattern.search(text):
        text = pattern.sub(lambda _: block, text)
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    path.write_text(text)


def main(argv: list[str] | None = None) -> int:
    """``python -m loadtests.report RUN_DIR``: a load-test run's report (``run_report``)."""
    import argparse

    from loadtests.run_report import report

    parser = argparse.ArgumentParser(prog="python -m loadtests.report")
    parser.add_argument("run_dir", type=Path, help="the folder of a run's --csv files")
    args = parser.parse_args(argv)
    try:
        print(report(args.run_dir))
    except FileNotFoundError as exc:
        parser.exit(2, f"{parser.prog}: {exc}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
