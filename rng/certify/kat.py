"""Known-answer tests: the DRBG against NIST vectors, and scaling, dealing and wheel mapping
against hand-computed answers on scripted bytes.

A statistical battery shows that outputs look random; a known-answer test shows that the code
computes exactly what its specification says (SP 800-90A 11.3 asks for them at start-up).

- **HMAC_DRBG**: the CAVP vectors of ``rng.certify.kat_vectors`` replayed byte for byte, and
  the start-up self-test ``rng.hmac_drbg.known_answer_test``.
- **Scaling** (58 Pa. Code 810a.5(d)): ``randbelow`` on scripted bytes gives the values that
  bit-length rejection sampling documents (``rng.scaling``): e.g. for 52 it reads one byte,
  keeps its top 6 bits and rejects 52–63, so the bytes ``ff d0 cf`` give 51 after two
  rejections; a modulo reduction would give 255 % 52 = 47 from the first byte.
- **Lazy deal**: four items dealt by the take-one algorithm from bytes ``c0 80 00`` come out
  3, 2, 0, 1; a 52-card ``VirtualShoe`` on zero bytes deals AS then KC, QC, … down to 2S
  (each draw takes pool[0] and moves the last card into its place).
- **Wheels**: draw 1 on the single-zero wheel is 32 (617a.1(c)), draw 19 on the double-zero
  wheel is 00 (617a.1(d)), section 27 of the Big Six Wheel is the flag (619a.1(b)).

Each test runs a subject's own scaling and dealing code over the scripted bytes
(``Subject.over``), so the broken generators of the self-test are checked the same way.
"""

from __future__ import annotations

from collections.abc import Callable, MutableSequence, Sequence
from typing import TypeVar

from rng import scaling
from rng.cards import ALL_CARDS
from rng.certify.kat_vectors import CAVP_VECTORS, CavpVector
from rng.certify.results import Measurement
from rng.certify.subject import DOUBLE_ZERO_WHEEL, SINGLE_ZERO_WHEEL, Subject
from rng.errors import RngError
from rng.hmac_drbg import HmacDrbg, known_answer_test
from rng.wheels import BIG_SIX_WHEEL, BigSixSymbol

__all__ = [
    "ScriptExhausted",
    "ScriptedSource",
    "drbg_startup_self_test",
    "hmac_drbg_vectors",
    "lazy_deal",
    "replay",
    "scaling_kat",
    "wheel_mapping",
]

T = TypeVar("T")


class ScriptExhausted(Exception):
    """The code under test asked for more bytes than its known answer needs."""


class ScriptedSource:
    """A ``RandomSource`` whose bytes are a fixed script."""

    name = "scripted"

    def __init__(self, script: bytes) -> None:
        self.script = script
        self.position = 0

    @property
    def exhausted(self) -> bool:
        return self.position == len(self.script)

    def random_bytes(self, n: int) -> bytes:
        if self.position + n > len(self.script):
            raise ScriptExhausted(f"asked for byte {self.position + n} of {len(self.script)}")
        chunk = self.script[self.position : self.position + n]
        self.position += n
        return chunk

    def randbelow(self, n: int) -> int:
        return scaling.randbelow(self.random_bytes, n)

    def shuffle(self, items: MutableSequence[T]) -> None:
        scaling.shuffle(self.random_bytes, items)

    def choice(self, items: Sequence[T]) -> T:
        return scaling.choice(self.random_bytes, items)


def replay(vector: CavpVector) -> bytes:
    """Run one CAVP vector through ``HmacDrbg``: instantiate, (reseed), generate twice."""
    entropy = bytes.fromhex(vector.entropy_input)
    drbg = HmacDrbg(
        entropy,
        bytes.fromhex(vector.nonce),
        bytes.fromhex(vector.personalization),
        min_entropy_bytes=len(entropy),
    )
    if vector.entropy_input_reseed:
        drbg.reseed(
            bytes.fromhex(vector.entropy_input_reseed),
            bytes.fromhex(vector.additional_input_reseed),
        )
    expected_length = len(vector.returned_bits) // 2
    out = b""
    for extra in vector.additional_input:
        out = drbg.generate(expected_length, bytes.fromhex(extra))
    return out


def hmac_drbg_vectors(kind: str) -> Measurement:
    """Every embedded CAVP vector of ``kind`` ("no_reseed" or "pr_false")."""
    vectors = [v for v in CAVP_VECTORS if v.kind == kind]
    failed = [
        f"COUNT {v.count} [{v.parameters}]" for v in vectors if replay(v).hex() != v.returned_bits
    ]
    detail = f"{len(vectors) - len(failed)}/{len(vectors)} NIST CAVP vectors reproduced"
    if failed:
        detail += "; wrong output for " + "; ".join(failed)
    return Measurement(
        sample_size=len(vectors),
        unit="vectors",
        statistic=float(len(vectors) - len(failed)),
        statistic_name="matching",
        passed=not failed and bool(vectors),
        detail=detail,
    )


def drbg_startup_self_test() -> Measurement:
    """The DRBG's own start-up known-answer test (SP 800-90A 11.3)."""
    try:
        known_answer_test()
    except RngError as exc:
        return Measurement(1, "vectors", passed=False, detail=f"failed: {exc}")
    return Measurement(1, "vectors", passed=True, detail="rng.hmac_drbg.known_answer_test passed")


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _run_cases(
    cases: Sequence[tuple[str, bytes, Callable[[Subject], object], object]], subject: Subject
) -> Measurement:
    wrong: list[str] = []
    for label, script, action, expected in cases:
        source = ScriptedSource(script)
        try:
            got: object = action(subject.over(source))
        except ScriptExhausted as exc:
            got = f"<needed more bytes: {exc}>"
        if got != expected or not source.exhausted:
            unread = "" if source.exhausted else f", {len(script) - source.position} bytes unread"
            wrong.append(f"{label}: expected {_short(expected)}, got {_short(got)}{unread}")
    detail = f"{len(cases) - len(wrong)}/{len(cases)} known answers"
    if wrong:
        detail += "; " + "; ".join(wrong)
    return Measurement(
        sample_size=len(cases),
        unit="cases",
        statistic=float(len(cases) - len(wrong)),
        statistic_name="matching",
        passed=not wrong,
        detail=detail,
    )


def _randbelow(bound: int) -> Callable[[Subject], object]:
    return lambda subject: subject.source.randbelow(bound)


# (label, scripted bytes, what to compute, the documented answer)
_SCALING_CASES: tuple[tuple[str, bytes, Callable[[Subject], object], object], ...] = (
    ("randbelow(52) ff d0 cf", bytes.fromhex("ffd0cf"), _randbelow(52), 51),
    ("randbelow(52) 00", bytes.fromhex("00"), _randbelow(52), 0),
    ("randbelow(37) 94 90", bytes.fromhex("9490"), _randbelow(37), 36),
    ("randbelow(38) 98 97", bytes.fromhex("9897"), _randbelow(38), 37),
    ("randbelow(54) d8 04", bytes.fromhex("d804"), _randbelow(54), 1),
    ("randbelow(416) ffff cfff", bytes.fromhex("ffffcfff"), _randbelow(416), 415),
    ("randbelow(2) 80", bytes.fromhex("80"), _randbelow(2), 1),
    ("randbelow(1) reads nothing", b"", _randbelow(1), 0),
)


def scaling_kat(subject: Subject) -> Measurement:
    """``randbelow`` on scripted bytes against bit-length rejection sampling."""
    return _run_cases(_SCALING_CASES, subject)


_SHOE_ORDER = [ALL_CARDS[0].index, *range(51, 0, -1)]  # AS, KC, QC, ..., 2S
_DEAL_CASES: tuple[tuple[str, bytes, Callable[[Subject], object], object], ...] = (
    (
        "4 items from c0 80 00",
        bytes.fromhex("c08000"),
        lambda s: list(s.deal_items(4)),
        [3, 2, 0, 1],
    ),
    ("52-card shoe from zero bytes", bytes(51), lambda s: list(s.deal_shoe(1)), _SHOE_ORDER),
)


def lazy_deal(subject: Subject) -> Measurement:
    """The take-one deal and the ``VirtualShoe`` on scripted bytes."""
    return _run_cases(_DEAL_CASES, subject)


_WHEEL_CASES: tuple[tuple[str, bytes, Callable[[Subject], object], object], ...] = (
    (
        "single-zero draw 1",
        bytes.fromhex("04"),
        lambda s: SINGLE_ZERO_WHEEL.spin(s.source).pocket.label,
        "32",
    ),
    (
        "double-zero draw 19",
        bytes.fromhex("4c"),
        lambda s: DOUBLE_ZERO_WHEEL.spin(s.source).pocket.label,
        "00",
    ),
    (
        "Big Six section 27",
        bytes.fromhex("6c"),
        lambda s: BIG_SIX_WHEEL.spin(s.source).symbol,
        BigSixSymbol.FLAG,
    ),
)


def wheel_mapping(subject: Subject) -> Measurement:
    """Draw → pocket and draw → section through the production wheels."""
    return _run_cases(_WHEEL_CASES, subject)
