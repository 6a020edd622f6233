"""``croupier rng sample`` and ``croupier rng shoes``: exports for a lab's own batteries."""

import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from rng import ALL_CARDS, Card
from server.cli.main import main

CROUPIER = Path(sys.executable).with_name("croupier")


@pytest.mark.parametrize("source", ["hmac-drbg", "os"])
def test_sample_writes_exactly_n_raw_bytes(source: str) -> None:
    out = subprocess.run(
        [CROUPIER, "rng", "sample", "--source", source, "--bytes", "100000"],
        capture_output=True,
        check=True,
    ).stdout
    assert len(out) == 100_000
    assert len(set(out)) == 256  # every byte value appears in 100 kB of random data


def test_shoes_writes_whole_shoes_one_per_line() -> None:
    out = subprocess.run(
        [CROUPIER, "rng", "shoes", "--decks", "6", "--count", "5"],
        capture_output=True,
        check=True,
        text=True,
    ).stdout
    lines = out.splitlines()
    assert len(lines) == 5
    for line in lines:
        cards = [Card.parse(code) for code in line.split(" ")]
        assert Counter(cards) == {card: 6 for card in ALL_CARDS}
    assert len(set(lines)) == 5


@pytest.mark.parametrize(
    "argv",
    [
        ["rng", "sample", "--bytes", "-1"],
        ["rng", "sample", "--bytes", "lots"],
        ["rng", "sample", "--bytes", "10", "--source", "mt19937"],
        ["rng", "shoes", "--count", "0"],
        ["rng", "shoes", "--count", "1", "--decks", "17"],
    ],
)
def test_bad_arguments_get_a_clear_error(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    assert "error:" in capsys.readouterr().err


def test_a_reader_that_stops_early_is_not_an_error() -> None:
    """`croupier rng sample … | head -c 10` exits quietly with status 0."""
    with subprocess.Popen(
        [CROUPIER, "rng", "sample", "--bytes", "50000000"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        assert len(proc.stdout.read(10)) == 10
        proc.stdout.close()
        assert proc.wait(timeout=60) == 0
        assert proc.stderr.read() == b""
