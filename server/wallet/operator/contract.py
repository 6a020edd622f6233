"""The operator's wallet contract (docs/wallet.md) without I/O: the transaction ids, each
call's body, its signature, and what an answer means.

An answer is ``Ok`` (the call was applied: the player's balance after it), ``Refused`` (a
debit the operator declined: nothing was taken) or ``Unknown`` — everything else: a timeout,
a connection error, an HTTP status other than 200, a missing or wrong signature, a body
that is not the contract's. An unknown debit must be rolled back and its bet never
acknowledged; an unknown credit or rollback is sent again, with the same transaction id,
until it is answered ok. Reading an answer never raises: whatever the operator sends is one
of the three.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass
from typing import Any, Final

__all__ = [
    "OPERATIONS",
    "REFUSAL_CODES",
    "SIGNATURE_HEADER",
    "Answer",
    "Ok",
    "Refused",
    "Unknown",
    "balance_body",
    "credit_body",
    "credit_id",
    "debit_body",
    "debit_id",
    "encode",
    "read_answer",
    "rollback_body",
    "rollback_id",
    "sign",
    "url_problem",
]

SIGNATURE_HEADER: Final = "X-Croupier-Signature"
OPERATIONS: Final = ("balance", "debit", "credit", "rollback")
REFUSAL_CODES: Final = ("insufficient_funds", "player_blocked", "limit_reached", "session_expired")


@dataclass(frozen=True, slots=True)
class Ok:
    """Applied; ``balance`` is the player's balance just after the call."""

    balance: int


@dataclass(frozen=True, slots=True)
class Refused:
    """A debit the operator declined: nothing was taken."""

    code: str
    message: str


@dataclass(frozen=True, slots=True)
class Unknown:
    """Whether the call was applied cannot be known; ``reason`` says what came back."""

    reason: str


Answer = Ok | Refused | Unknown


_SAFE = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~:/[]%@!$&'()*+,;="
)


def url_problem(url: str) -> str | None:
    """What is wrong with an operator wallet's base URL (None: nothing): it must be a plain
    ``http(s)://HOST[:PORT][/PATH]``, the calls going to ``{url}/{operation}``."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises for a port that is not a number
    except ValueError as exc:
        return f"{url!r} is not a URL: {exc}"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"{url!r} is not an http:// or https://HOST… URL"
    if not set(parts.netloc) | set(parts.path) <= _SAFE or parts.query or parts.fragment:
        return f"{url!r} must be a plain http(s)://HOST[:PORT][/PATH], without query or spaces"
    return None


# --- transaction ids ----------------------------------------------------------------------------


def _derived(kind: str, *parts: str) -> str:
    """``kind`` and a digest of ``parts``: the same parts always give the same id (a retry
    after a crash repeats it), and two different tuples never share one (the parts are
    JSON-encoded, so no separator inside a part can make them collide)."""
    digest = hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:40]
    return f"{kind}-{digest}"


def debit_id(namespace: str, round_id: str, player_id: str, bet_id: str) -> str:
    """The debit of ``bet_id``, ``player_id``'s bet in ``round_id``. ``namespace`` tells
    apart the installations (and the test runs) that call one operator: round ids start
    again at 1 with a fresh journal, transaction ids must not."""
    return _derived("debit", namespace, round_id, player_id, bet_id)


def credit_id(namespace: str, round_id: str, player_id: str) -> str:
    """The one credit of ``player_id`` for ``round_id``, at its settlement."""
    return _derived("credit", namespace, round_id, player_id)


def rollback_id(debit: str) -> str:
    """The rollback of the debit ``debit`` (one per debit: sent again, it is the same)."""
    return _derived("rollback", debit)


# --- bodies -------------------------------------------------------------------------------------


def balance_body(player_id: str, currency: str) -> dict[str, Any]:
    return {"player_id": player_id, "currency": currency}


def debit_body(
    transaction_id: str,
    player_id: str,
    currency: str,
    amount: int,
    round_id: str,
    table: str,
    bet_id: str,
) -> dict[str, Any]:
    _positive(amount)
    return {
        "transaction_id": transaction_id,
        "player_id": player_id,
        "currency": currency,
        "amount": amount,
        "round_id": round_id,
        "table": table,
        "bet_id": bet_id,
    }


def credit_body(
    transaction_id: str,
    player_id: str,
    currency: str,
    amount: int,
    round_id: str,
    table: str,
    debits: list[str],
) -> dict[str, Any]:
    if isinstance(amount, bool) or not isinstance(amount, int) or amount < 0:
        raise ValueError(f"a credit is an int of minor units >= 0, not {amount!r}")
    return {
        "transaction_id": transaction_id,
        "player_id": player_id,
        "currency": currency,
        "amount": amount,
        "round_id": round_id,
        "table": table,
        "debits": list(debits),
    }


def rollback_body(
    transaction_id: str,
    rollback_of: str,
    player_id: str,
    currency: str,
    amount: int,
    round_id: str,
    table: str,
) -> dict[str, Any]:
    _positive(amount)
    return {
        "transaction_id": transaction_id,
        "rollback_of": rollback_of,
        "player_id": player_id,
        "currency": currency,
        "amount": amount,
        "round_id": round_id,
        "table": table,
    }


def _positive(amount: int) -> None:
    if isinstance(amount, bool) or not isinstance(amount, int) or amount <= 0:
        raise ValueError(f"an amount is an int of minor units > 0, not {amount!r}")


# --- the wire -----------------------------------------------------------------------------------


def encode(body: dict[str, Any]) -> bytes:
    """A call's raw body: compact JSON, UTF-8 (the signature is over these bytes)."""
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()


def sign(secret: bytes, raw: bytes) -> str:
    """The ``X-Croupier-Signature`` value for ``raw``."""
    return "sha256=" + hmac.new(secret, raw, hashlib.sha256).hexdigest()


def read_answer(
    operation: str, status: int, signature: str | None, raw: bytes, secret: bytes
) -> Answer:
    """What the operator's HTTP answer to ``operation`` means (module docstring)."""
    if status != 200:
        return Unknown(f"HTTP {status}")
    if signature is None:
        return Unknown(f"no {SIGNATURE_HEADER} on the answer")
    if not hmac.compare_digest(signature.encode(), sign(secret, raw).encode()):
        return Unknown(f"the answer's {SIGNATURE_HEADER} does not match its body")
    try:
        body = json.loads(raw)
    except ValueError:
        return Unknown("the answer is not JSON")
    if not isinstance(body, dict):
        return Unknown("the answer is not a JSON object")
    state = body.get("status")
    if state == "ok":
        balance = body.get("balance")
        if isinstance(balance, int) and not isinstance(balance, bool):
            return Ok(balance)
        return Unknown("an ok answer without an integer balance")
    if state == "refused" and operation == "debit":
        code, message = body.get("code"), body.get("message")
        if code in REFUSAL_CODES and isinstance(message, str):
            return Refused(code, message)
        return Unknown(f"a refusal with code {code!r} (not one of {', '.join(REFUSAL_CODES)})")
    return Unknown(f"status {state!r} is not an answer to {operation}")
