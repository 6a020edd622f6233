"""``croupier rng …``: certify the generator, and export raw bytes and shoes for outside tests."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, BinaryIO

from rng.mode import is_production
from rng.shoe import BurnRule, ShoeRules, VirtualShoe
from rng.sources import HmacDrbgSource, OsSource, RandomSource

SOURCES = ("hmac-drbg", "os")
_CHUNK = 1 << 16
# Outside shuffle tests want whole shoes: no burn, any deck count.
_EXPORT_RULES = ShoeRules(chapter="export", decks_allowed=tuple(range(1, 17)), burn=BurnRule.NONE)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {value}")
    return value


def make_source(name: str, *, bulk: bool = False) -> RandomSource:
    """The named source; ``bulk`` uses the largest DRBG request SP 800-90A allows, for
    raw-byte export throughput (a shoe, reseeded every time, wants small requests)."""
    if name == "os":
        return OsSource()
    return HmacDrbgSource("croupier rng cli", buffer_size=(1 << 16) if bulk else 512)


def register(commands: Any) -> None:
    rng = commands.add_parser("rng", help="the certified random number generator")
    sub = rng.add_subparsers(dest="rng_command", metavar="RNG_COMMAND", required=True)

    certify = sub.add_parser(
        "certify", help="run the lab-style statistical certification and write a report"
    )
    size = certify.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="CI-sized samples (about two minutes)")
    size.add_argument("--full", action="store_true", help="lab-sized samples (can take hours)")
    certify.add_argument("--out", type=Path, required=True, help="directory for report.json/.md")
    certify.add_argument("--source", choices=SOURCES, default="hmac-drbg")
    certify.add_argument(
        "--seed",
        help="a reproducible TEST run with a seeded HMAC_DRBG (refused when "
        "CROUPIER_ENV=production); never for a certification submission",
    )
    certify.add_argument(
        "--no-samples",
        action="store_true",
        help="delete DIR/samples/ at the end of the run (80-100 MB at --quick, hundreds of "
        "MB at --full); the report keeps each file's size and SHA-256 and says they were not kept",
    )
    certify.add_argument(
        "--no-self-test",
        action="store_true",
        help="skip the broken-generator self-test (the exit status then ignores it)",
    )
    certify.set_defaults(handler=_certify)

    sample = sub.add_parser("sample", help="write raw generator bytes to standard output")
    sample.add_argument("--source", choices=SOURCES, default="hmac-drbg")
    sample.add_argument("--bytes", type=_positive, required=True, dest="nbytes")
    sample.set_defaults(handler=_sample)

    shoes = sub.add_parser(
        "shoes", help="write freshly shuffled shoes, one per line, cards in dealing order"
    )
    shoes.add_argument("--decks", type=int, choices=range(1, 17), default=8, metavar="1-16")
    shoes.add_argument("--count", type=_positive, required=True)
    shoes.add_argument("--source", choices=SOURCES, default="hmac-drbg")
    shoes.set_defaults(handler=_shoes)


def _stdout() -> BinaryIO:
    return sys.stdout.buffer


def _sample(args: argparse.Namespace) -> int:
    source = make_source(args.source, bulk=True)
    out = _stdout()
    left = args.nbytes
    while left:
        chunk = source.random_bytes(min(left, _CHUNK))
        out.write(chunk)
        left -= len(chunk)
    out.flush()
    return 0


def _shoes(args: argparse.Namespace) -> int:
    source = make_source(args.source)
    shoe = VirtualShoe(source, _EXPORT_RULES, args.decks)
    out = _stdout()
    for _ in range(args.count):
        if isinstance(source, HmacDrbgSource):
            source.reseed(b"new shoe")  # as a table does at every new shoe
        shoe.shuffle()
        out.write((" ".join(card.code for card in shoe.deal_all()) + "\n").encode())
    out.flush()
    return 0


def _certify(args: argparse.Namespace) -> int:
    from rng.certify import run_certification

    level = "full" if args.full else "quick"
    if args.seed is not None and (args.source != "hmac-drbg" or is_production()):
        print(
            "croupier rng certify: --seed is a test mode of the HMAC_DRBG, refused with "
            "--source os and in production (CROUPIER_ENV=production)",
            file=sys.stderr,
        )
        return 2
    return run_certification(
        out_dir=args.out,
        level=level,
        source_name=args.source,
        self_test=not args.no_self_test,
        seed=args.seed,
        keep_samples=not args.no_samples,
    )
