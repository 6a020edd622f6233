"""HMAC_DRBG with SHA-256, as specified in NIST SP 800-90A Rev. 1, section 10.1.2.

This module is the mechanism only: it takes its entropy input explicitly, so the NIST CAVP
known-answer vectors can drive it byte for byte. ``rng.sources.HmacDrbgSource`` wraps it with
OS seeding, a reseed policy and health tests for production use.

Limits (SP 800-90A Table 2, SHA-256): security strength 256 bits; at most 2**19 bits
(65,536 bytes) per request; reseed interval at most 2**48 requests; entropy input at least
256 bits. The continuous test compares every output block with the previous one and fails
on a repeat (the FIPS 140-2 4.9.2 conditional test, which labs still ask for).
"""

from __future__ import annotations

import hmac

from rng.errors import HealthTestFailure, ReseedRequired, RngError

__all__ = [
    "MAX_BYTES_PER_REQUEST",
    "MAX_RESEED_INTERVAL",
    "SECURITY_STRENGTH_BITS",
    "HmacDrbg",
    "known_answer_test",
]

SECURITY_STRENGTH_BITS = 256
MAX_BYTES_PER_REQUEST = 2**19 // 8
MAX_RESEED_INTERVAL = 2**48
_OUTLEN = 32  # SHA-256 output length in bytes
_MIN_ENTROPY_BYTES = SECURITY_STRENGTH_BITS // 8
_MAX_INPUT_BYTES = 2**35 // 8  # max_length of entropy, personalization and additional input


def _mac(key: bytes, data: bytes) -> bytes:
    return hmac.digest(key, data, "sha256")


class HmacDrbg:
    """The HMAC_DRBG mechanism (SHA-256) with explicit entropy input.

    ``instantiate`` runs at construction. ``generate`` raises ``ReseedRequired`` once
    ``reseed_interval`` requests have been served since the last (re)seed, exactly as
    SP 800-90A 10.1.2.5 step 1 prescribes; the caller then calls ``reseed``.
    """

    __slots__ = (
        "_continuous_test",
        "_key",
        "_last_block",
        "_value",
        "reseed_counter",
        "reseed_interval",
    )

    def __init__(
        self,
        entropy_input: bytes,
        nonce: bytes = b"",
        personalization: bytes = b"",
        *,
        reseed_interval: int = MAX_RESEED_INTERVAL,
        continuous_test: bool = True,
        min_entropy_bytes: int = _MIN_ENTROPY_BYTES,
    ) -> None:
        """Instantiate (10.1.2.3). ``min_entropy_bytes`` exists so CAVP vectors of other
        lengths can be replayed; production callers keep the default of 32 bytes."""
        if not 1 <= reseed_interval <= MAX_RESEED_INTERVAL:
            raise ValueError(f"reseed_interval must be in 1..2**48, got {reseed_interval}")
        if len(entropy_input) < min_entropy_bytes:
            raise ValueError(
                f"entropy input of {len(entropy_input)} bytes is below the {min_entropy_bytes} "
                "bytes that 256-bit security needs"
            )
        for name, value in (("entropy_input", entropy_input), ("personalization", personalization)):
            if len(value) > _MAX_INPUT_BYTES:
                raise ValueError(f"{name} is longer than SP 800-90A allows")
        self.reseed_interval = reseed_interval
        self._continuous_test = continuous_test
        self._last_block: bytes | None = None
        self._key = b"\x00" * _OUTLEN
        self._value = b"\x01" * _OUTLEN
        self._update(entropy_input + nonce + personalization)
        self.reseed_counter = 1

    def _update(self, provided: bytes) -> None:
        """HMAC_DRBG_Update (10.1.2.2)."""
        key = _mac(self._key, self._value + b"\x00" + provided)
        value = _mac(key, self._value)
        if provided:
            key = _mac(key, value + b"\x01" + provided)
            value = _mac(key, value)
        self._key, self._value = key, value

    def reseed(self, entropy_input: bytes, additional_input: bytes = b"") -> None:
        """Reseed (10.1.2.4)."""
        self._check_alive()
        if len(entropy_input) < 1:
            raise ValueError("reseed needs entropy input")
        if len(additional_input) > _MAX_INPUT_BYTES:
            raise ValueError("additional_input is longer than SP 800-90A allows")
        self._update(entropy_input + additional_input)
        self.reseed_counter = 1

    def generate(self, nbytes: int, additional_input: bytes = b"") -> bytes:
        """Generate (10.1.2.5): ``nbytes`` pseudorandom bytes (at most 65,536 per request)."""
        self._check_alive()
        if not 0 <= nbytes <= MAX_BYTES_PER_REQUEST:
            raise ValueError(f"a request is 0..{MAX_BYTES_PER_REQUEST} bytes, got {nbytes}")
        if self.reseed_counter > self.reseed_interval:
            raise ReseedRequired("reseed counter exceeded the reseed interval")
        if additional_input:
            self._update(additional_input)
        key, value = self._key, self._value
        blocks: list[bytes] = []
        produced = 0
        last = self._last_block
        check = self._continuous_test
        while produced < nbytes:
            value = _mac(key, value)
            if check:
                if value == last:
                    self._fail("continuous test: two consecutive output blocks are identical")
                last = value
            blocks.append(value)
            produced += _OUTLEN
        self._value = value
        self._last_block = last
        self._update(additional_input)
        self.reseed_counter += 1
        return b"".join(blocks)[:nbytes]

    def uninstantiate(self) -> None:
        """Uninstantiate (9.4): drop the working state. Python cannot scrub immutable bytes
        from memory; dropping every reference is the most this process can do."""
        self._key = b""
        self._value = b""
        self._last_block = None

    def _fail(self, reason: str) -> None:
        self.uninstantiate()
        raise HealthTestFailure(reason)

    def _check_alive(self) -> None:
        if not self._key:
            raise RngError(
                "the DRBG is uninstantiated (closed, or stopped by a failed health test)"
            )


# NIST CAVP HMAC_DRBG.rsp, [SHA-256] [PredictionResistance = False] [EntropyInputLen = 256]
# [NonceLen = 128] [PersonalizationStringLen = 0] [AdditionalInputLen = 0], COUNT = 0
# (no reseed): the known answer checked before any instance serves output (SP 800-90A 11.3).
_KAT_ENTROPY = bytes.fromhex("ca851911349384bffe89de1cbdc46e6831e44d34a4fb935ee285dd14b71a7488")
_KAT_NONCE = bytes.fromhex("659ba96c601dc69fc902940805ec0ca8")
_KAT_RETURNED = bytes.fromhex(
    "e528e9abf2dece54d47c7e75e5fe302149f817ea9fb4bee6f4199697d04d5b89"
    "d54fbb978a15b5c443c9ec21036d2460b6f73ebad0dc2aba6e624abf07745bc1"
    "07694bb7547bb0995f70de25d6b29e2d3011bb19d27676c07162c8b5ccde0668"
    "961df86803482cb37ed6d5c0bb8d50cf1f50d476aa0458bdaba806f48be9dcb8"
)


def known_answer_test() -> None:
    """Instantiate and generate with a CAVP vector; raise ``HealthTestFailure`` on a mismatch."""
    drbg = HmacDrbg(_KAT_ENTROPY, _KAT_NONCE)
    drbg.generate(len(_KAT_RETURNED))
    if drbg.generate(len(_KAT_RETURNED)) != _KAT_RETURNED:
        raise HealthTestFailure("HMAC_DRBG known-answer test failed")
    drbg.uninstantiate()
