"""``python -m rng.certify.stream SOURCE``: raw generator bytes to standard output, forever.

The full dieharder battery reads far more than any sample file holds, so in ``--full`` it
reads a live stream from this child process (a fresh instance of the same source, in bulk
64 KiB DRBG requests) until dieharder closes the pipe.
"""

from __future__ import annotations

import sys

from rng.sources import HmacDrbgSource, OsSource, RandomSource

__all__ = ["make_stream_source", "stream_command"]


def make_stream_source(name: str) -> RandomSource:
    """A fresh instance of the named source, tuned for bulk output."""
    if name == "os":
        return OsSource()
    if name == "hmac-drbg":
        return HmacDrbgSource("croupier rng certify stream", buffer_size=1 << 16)
    raise ValueError(f"unknown source {name!r}")


def stream_command(name: str) -> list[str]:
    """The command line of the producer for ``name``."""
    return [sys.executable, "-m", "rng.certify.stream", name]


def _main(argv: list[str]) -> int:
    source = make_stream_source(argv[0])
    out = sys.stdout.buffer
    try:
        while True:
            out.write(source.random_bytes(1 << 16))
    except (BrokenPipeError, KeyboardInterrupt):
        return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
