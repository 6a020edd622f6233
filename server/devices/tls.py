"""TLS with client certificates on the device listener (docs/devices.md, "Transports").

The server presents ``tls_cert`` and asks every device for a certificate signed by
``tls_client_ca``; the certificate's common name must be the device id its hello claims
(``DeviceHub`` checks it after the hello). The per-frame key stays: TLS authenticates the
connection, the key every frame, so a stolen certificate alone opens no device's link.

The server asks for a certificate without requiring one during the handshake
(``CERT_OPTIONAL``: one that is offered is still verified, and a bad one fails the
handshake): a device that offers none completes the handshake, sends its hello and is
answered ``refused`` with ``unauthenticated``, so it learns why instead of seeing a TLS alert.
"""

from __future__ import annotations

import ssl
from pathlib import Path
from typing import Any

__all__ = ["client_context", "common_name", "server_context"]


def server_context(cert: Path, key: Path, client_ca: Path) -> ssl.SSLContext:
    """The listener's context; ``ValueError`` naming the setting whose file is wrong."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        context.load_cert_chain(cert, key)
    except ssl.SSLError as exc:
        raise ValueError(
            f"tls_cert {cert} and tls_key {key} are not a PEM certificate and its private key "
            f"({exc.reason or exc})"
        ) from None
    try:
        context.load_verify_locations(cafile=client_ca)
    except ssl.SSLError as exc:
        raise ValueError(
            f"tls_client_ca {client_ca} is not a PEM CA certificate ({exc.reason or exc})"
        ) from None
    context.verify_mode = ssl.CERT_OPTIONAL
    return context


def client_context(ca: Path, cert: Path | None = None, key: Path | None = None) -> ssl.SSLContext:
    """A device's context: trusts ``ca`` for the server's certificate (whose name must be the
    host the device connects to) and presents ``cert`` when given."""
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=ca)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    if cert is not None:
        context.load_cert_chain(cert, key)
    return context


def common_name(peercert: Any) -> str | None:
    """The subject's one common name in ``getpeercert()``'s answer; None when the peer sent
    no certificate, or a subject with no common name or several."""
    if not isinstance(peercert, dict):
        return None
    names = [
        value for rdn in peercert.get("subject", ()) for name, value in rdn if name == "commonName"
    ]
    return names[0] if len(names) == 1 else None
