"""Random sources: the operating system's CSPRNG and an SP 800-90A HMAC_DRBG.

Every source offers the same small interface (``RandomSource``): ``random_bytes(n)`` and the
unbiased scaling of ``rng.scaling`` on top (``randbelow``, ``shuffle``, ``choice``).

- ``OsSource`` reads ``secrets.token_bytes`` (Linux ``getrandom``), which the kernel reseeds
  continuously.
- ``HmacDrbgSource`` is the SP 800-90A HMAC_DRBG (SHA-256) seeded from the OS with a
  personalization string per instance, reseeded by policy (every ``reseed_interval``
  requests, on demand — a table reseeds at every new shoe and at "no more bets" — or before
  every request with prediction resistance), with a start-up known-answer test and the
  continuous tests of the DRBG output and of every entropy input.
- ``seeded_source(seed)`` is a reproducible HMAC_DRBG for tests only; it is refused in
  production mode (``rng.mode``).

Seeds and DRBG state are never logged, printed or serialised by this module.
"""

from __future__ import annotations

import itertools
import os
import secrets
from collections.abc import MutableSequence, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar, runtime_checkable

from rng import scaling
from rng.errors import HealthTestFailure, ProductionModeError, ReseedRequired
from rng.hmac_drbg import MAX_BYTES_PER_REQUEST, HmacDrbg, known_answer_test
from rng.mode import is_production

__all__ = [
    "HmacDrbgSource",
    "OsSource",
    "RandomSource",
    "ReseedPolicy",
    "default_source",
    "seeded_source",
]

T = TypeVar("T")


@runtime_checkable
class RandomSource(Protocol):
    """What games, shoes and wheels draw from."""

    name: str

    def random_bytes(self, n: int) -> bytes: ...

    def randbelow(self, n: int) -> int: ...

    def shuffle(self, items: MutableSequence[T]) -> None: ...

    def choice(self, items: Sequence[T]) -> T: ...


class _Scaled:
    """Unbiased scaling on top of ``random_bytes`` (see ``rng.scaling``)."""

    name = "abstract"

    def random_bytes(self, n: int) -> bytes:  # pragma: no cover - overridden
        raise NotImplementedError

    def randbelow(self, n: int) -> int:
        return scaling.randbelow(self.random_bytes, n)

    def shuffle(self, items: MutableSequence[T]) -> None:
        scaling.shuffle(self.random_bytes, items)

    def choice(self, items: Sequence[T]) -> T:
        return scaling.choice(self.random_bytes, items)


class OsSource(_Scaled):
    """The operating system's CSPRNG (``getrandom`` through ``secrets``)."""

    name = "os"

    def random_bytes(self, n: int) -> bytes:
        return secrets.token_bytes(n)


@dataclass(frozen=True, slots=True)
class ReseedPolicy:
    """When an ``HmacDrbgSource`` reseeds from the OS on its own.

    ``reseed_interval``: generate requests between reseeds (SP 800-90A allows up to 2**48;
    we reseed far more often). ``prediction_resistance``: reseed before every request.
    Callers also reseed explicitly with ``HmacDrbgSource.reseed`` (every new shoe, every round).
    """

    reseed_interval: int = 1 << 16
    prediction_resistance: bool = False

    def __post_init__(self) -> None:
        if not 1 <= self.reseed_interval <= 2**48:
            raise ValueError(f"reseed_interval must be in 1..2**48, got {self.reseed_interval}")


_ENTROPY_BYTES = 32  # 256 bits of entropy input, the DRBG's security strength
_NONCE_BYTES = 16  # half the security strength (SP 800-90A 8.6.7)
# SP 800-90B 4.4.1 repetition count test on entropy bytes: cutoff C = 1 + ceil(40 / H) with
# H = 8 bits per byte from getrandom, i.e. a false alarm probability of about 2**-40.
_REPETITION_CUTOFF = 6
_instance_counter = itertools.count(1)
_known_answer_passed = False


def _power_on_self_test() -> None:
    """The start-up known-answer test, once per process before the first instance."""
    global _known_answer_passed
    if not _known_answer_passed:
        known_answer_test()
        _known_answer_passed = True


def _repetition_count_ok(data: bytes) -> bool:
    run = 1
    for previous, current in itertools.pairwise(data):
        run = run + 1 if current == previous else 1
        if run >= _REPETITION_CUTOFF:
            return False
    return True


class HmacDrbgSource(_Scaled):
    """SP 800-90A HMAC_DRBG (SHA-256) seeded and reseeded from the OS.

    Output is generated in requests of ``buffer_size`` bytes (512 by default; up to 65,536
    for bulk export) and served from that buffer so a card draw does not cost a full DRBG
    request; ``reseed`` discards whatever is buffered, so
    after a reseed at "no more bets" every byte used in the round was generated after it.
    """

    name = "hmac-drbg"

    def __init__(
        self,
        personalization: str | bytes = "",
        *,
        policy: ReseedPolicy | None = None,
        buffer_size: int = 512,
        _seed: bytes | None = None,
    ) -> None:
        if not 1 <= buffer_size <= MAX_BYTES_PER_REQUEST:
            raise ValueError(f"buffer_size must be in 1..{MAX_BYTES_PER_REQUEST}")
        _power_on_self_test()
        self.policy = policy or ReseedPolicy()
        self._buffer_size = buffer_size
        self._buffer = b""
        self._pos = 0
        self._seed = _seed
        self._seed_counter = 0
        self._last_entropy: bytes | None = None
        self.reseeds = 0
        if isinstance(personalization, str):
            personalization = personalization.encode()
        # A unique prefix per instance: two instances never run in step, even with the same
        # caller-chosen personalization (NJAC 13:69E-1.28G(b)5; UKGC RTS 7 2.1(d)).
        if _seed is None:
            instance = f"croupier-rng/{os.getpid()}/{next(_instance_counter)}/".encode()
            instance += secrets.token_bytes(8)
        else:
            instance = b"croupier-rng/seeded/"  # reproducible by design
        self._drbg = HmacDrbg(
            self._entropy(_ENTROPY_BYTES),
            self._entropy(_NONCE_BYTES, check=False),
            instance + personalization,
            reseed_interval=self.policy.reseed_interval,
        )

    @property
    def deterministic(self) -> bool:
        """True for a reproducible, test-only source made by ``seeded_source``."""
        return self._seed is not None

    def _entropy(self, n: int, *, check: bool = True) -> bytes:
        if self._seed is not None:
            # Test mode: a reproducible stream of "entropy" derived from the seed.
            self._seed_counter += 1
            block = HmacDrbg(
                self._seed + self._seed_counter.to_bytes(8, "big"), min_entropy_bytes=1
            )
            return block.generate(n)
        data = os.urandom(n)
        if check:
            if data == self._last_entropy or not _repetition_count_ok(data):
                raise HealthTestFailure("entropy input failed its repetition test")
            self._last_entropy = data
        return data

    def reseed(self, additional_input: bytes | str = b"") -> None:
        """Reseed from fresh OS entropy (SP 800-90A 9.2) and discard any buffered output.

        ``additional_input`` may carry context such as the round id; it adds no entropy and
        needs none.
        """
        if isinstance(additional_input, str):
            additional_input = additional_input.encode()
        self._drbg.reseed(self._entropy(_ENTROPY_BYTES), additional_input)
        self._buffer = b""
        self._pos = 0
        self.reseeds += 1

    def _generate(self, n: int) -> bytes:
        if self.policy.prediction_resistance:
            self.reseed()
        try:
            return self._drbg.generate(n)
        except ReseedRequired:
            self.reseed()
            return self._drbg.generate(n)

    def random_bytes(self, n: int) -> bytes:
        if n < 0:
            raise ValueError(f"cannot draw {n} bytes")
        pos = self._pos
        end = pos + n
        if end <= len(self._buffer):
            self._pos = end
            return self._buffer[pos:end]
        # Always generate whole buffers, so the byte stream does not depend on how callers
        # slice it (a seeded replay gives the same cards whatever the request sizes).
        out = [self._buffer[pos:]]
        need = n - (len(self._buffer) - pos)
        while need > self._buffer_size:
            out.append(self._generate(self._buffer_size))
            need -= self._buffer_size
        self._buffer = self._generate(self._buffer_size)
        self._pos = need
        out.append(self._buffer[:need])
        return b"".join(out)

    def close(self) -> None:
        """Uninstantiate the DRBG and drop buffered output; further draws raise."""
        self._drbg.uninstantiate()
        self._buffer = b""
        self._pos = 0


def seeded_source(seed: bytes | str | int) -> HmacDrbgSource:
    """A reproducible HMAC_DRBG for tests and scripted demos. Refused in production mode."""
    if is_production():
        raise ProductionModeError(
            "a seeded (reproducible) random source is not allowed in production"
        )
    if isinstance(seed, int):
        seed = seed.to_bytes(max(1, (seed.bit_length() + 7) // 8), "big", signed=False)
    elif isinstance(seed, str):
        seed = seed.encode()
    return HmacDrbgSource(b"seeded", _seed=b"croupier-test-seed/" + seed)


def default_source(personalization: str = "") -> HmacDrbgSource:
    """The production source: an OS-seeded HMAC_DRBG."""
    return HmacDrbgSource(personalization)
