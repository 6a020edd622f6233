"""TITO validation numbers, sans-I/O (docs/electronic-tables.md, "Tickets").

A validation number is 18 digits: 14 drawn from the operating system's CSPRNG and 4 that
are an HMAC-SHA256 of them under the server's ticket key. A number whose last four digits
do not match was not issued by this server (forged, or misread, or altered): it is refused
without a database lookup, and logged. A number that matches but is unknown is refused too;
one whose amount differs from the ticket issued under it was altered.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from typing import Final

__all__ = ["DIGITS", "check", "format_validation", "new_validation"]

DIGITS: Final = 18
_RANDOM: Final = 14


def _mac(key: bytes, body: str) -> str:
    digest = hmac.new(key, b"ticket:" + body.encode(), hashlib.sha256).digest()
    return f"{int.from_bytes(digest[:8], 'big') % 10_000:04d}"


def new_validation(key: bytes) -> str:
    body = f"{secrets.randbelow(10**_RANDOM):0{_RANDOM}d}"
    return body + _mac(key, body)


def check(key: bytes, validation: str) -> bool:
    """Whether ``validation`` has the form and the check digits of a number this server
    issued (constant-time comparison)."""
    if len(validation) != DIGITS or not validation.isdigit() or not validation.isascii():
        return False
    return hmac.compare_digest(validation[_RANDOM:], _mac(key, validation[:_RANDOM]))


def format_validation(validation: str) -> str:
    """As printed: ``12-3456-7890-1234-5678``."""
    v = validation
    return f"{v[:2]}-{v[2:6]}-{v[6:10]}-{v[10:14]}-{v[14:]}" if len(v) == DIGITS else v
