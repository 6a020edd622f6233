"""TLS with client certificates on the device listener (docs/devices.md, "Transports"): a real
server with ``tls_cert``, ``tls_key`` and ``tls_client_ca``, certificates made in the test's
directory, simulated devices over TLS, and a WebSocket player at the table they serve."""

from __future__ import annotations

import asyncio
import ssl
from pathlib import Path

import pytest

from server.app.service import Service
from server.config import ConfigError, parse_config
from server.devices.simulator import DeviceRefused, SimulatedDevice
from server.devices.tls import client_context, common_name
from tests.devices.certificates import Authority, authority, issue
from tests.devices.test_device_tables import (
    assert_money_intact,
    play,
    records,
    running,
    synchronously,
    until,
)

KEY = "a7" * 16
CONFIG = """
[server]
starting_balance = 100000

[device_link]
port = 0
answer_seconds = 5
tls_cert = "server.crt"
tls_key = "server.key"
tls_client_ca = "ca.crt"

[[devices]]
id = "shoe-t"
role = "card_source"
key = "{key}"

[[tables]]
id = "bac"
name = "Baccarat with a shoe over TLS"
game = "baccarat"
betting_seconds = 0.6
pause_seconds = 0.2
[tables.options]
decks = 8
[tables.devices]
card_source = "shoe-t"
"""


def certificates(tmp: Path) -> Authority:
    """The CA (``ca.crt``) and the server's certificate (``server.crt``, ``server.key``)
    next to the configuration, as its relative paths name them."""
    ca = authority(tmp, "ca")
    server = issue(tmp, ca, "croupier-devices", server=True)
    server.cert.rename(tmp / "server.crt")
    server.key.rename(tmp / "server.key")
    return ca


def shoe(service: Service, tls: ssl.SSLContext | None, device: str = "shoe-t") -> SimulatedDevice:
    port = service.devices.port
    return SimulatedDevice(device, "shoe", bytes.fromhex(KEY), "127.0.0.1", port, seed=3, tls=tls)


@synchronously
async def test_a_shoe_with_its_certificate_deals_baccarat_over_tls(tmp_path: Path) -> None:
    ca = certificates(tmp_path)
    mine = issue(tmp_path, ca, "shoe-t")
    async with running(tmp_path, CONFIG.format(key=KEY)) as service:
        device = shoe(service, client_context(ca.cert, mine.cert, mine.key))
        stop = asyncio.Event()
        task = asyncio.create_task(device.run(stop))
        await asyncio.wait_for(device.connected.wait(), 5)
        channel = service.devices.channels["shoe-t"]
        assert channel.status()["transport"] == "tls" and channel.up
        report = await play(service, "bac", 3)
        stop.set()
        await task
    assert_money_intact(service, report)
    assert service.devices.refused == {}
    for played in report.played:
        assert not played.result.startswith("voided"), played
        cards = [p for kind, p in records(service, played.round) if kind == "card"]
        assert len(cards) >= 4 and all(c["device"] == "shoe-t" for c in cards)


@pytest.mark.parametrize("certificate", [None, "shoe-9"], ids=["no certificate", "another device's"])  # fmt: skip  # noqa: E501
@synchronously
async def test_a_device_without_its_own_certificate_is_refused(
    tmp_path: Path, certificate: str | None
) -> None:
    """The hello is answered ``unauthenticated``, counted and logged like any refusal — even
    with the device's right key: the certificate and the key are both required."""
    ca = certificates(tmp_path)
    tls = client_context(ca.cert)
    if certificate is not None:
        theirs = issue(tmp_path, ca, certificate)
        tls = client_context(ca.cert, theirs.cert, theirs.key)
    async with running(tmp_path, CONFIG.format(key=KEY)) as service:
        with pytest.raises(DeviceRefused) as refused:
            await asyncio.wait_for(shoe(service, tls).run(), 5)
        assert refused.value.code == "unauthenticated"
        assert service.devices.refused == {"unauthenticated": 1}
        assert not service.devices.channels["shoe-t"].up


async def assert_refused_while_it_retries(tmp_path: Path, tls: ssl.SSLContext | None) -> None:
    """The shoe connects with ``tls`` (None: plain TCP) and keeps trying (a TLS error is an
    OSError): each attempt is counted ``unauthenticated``, and none becomes a connection."""
    async with running(tmp_path, CONFIG.format(key=KEY)) as service:
        stop = asyncio.Event()
        task = asyncio.create_task(shoe(service, tls).run(stop))
        hub = service.devices
        await until(lambda: hub.refused.get("unauthenticated"))
        stop.set()
        await task
        assert hub.refused.get("unauthenticated", 0) >= 1
        assert hub.channels["shoe-t"].connections == 0


@synchronously
async def test_a_certificate_from_another_ca_fails_the_handshake_and_is_counted(
    tmp_path: Path,
) -> None:
    ca = certificates(tmp_path)
    stranger = authority(tmp_path, "stranger-ca")
    forged = issue(tmp_path, stranger, "shoe-t")
    await assert_refused_while_it_retries(tmp_path, client_context(ca.cert, forged.cert, forged.key))  # fmt: skip  # noqa: E501


@synchronously
async def test_a_plain_tcp_hello_on_the_tls_port_is_refused(tmp_path: Path) -> None:
    certificates(tmp_path)
    await assert_refused_while_it_retries(tmp_path, None)


def test_the_common_name_is_the_one_cn_of_the_subject() -> None:
    cert = {"subject": ((("countryName", "GB"),), (("commonName", "shoe-7"),))}
    assert common_name(cert) == "shoe-7"
    assert common_name(None) is None and common_name({}) is None
    two = {"subject": ((("commonName", "a"),), (("commonName", "b"),))}
    assert common_name(two) is None


def test_tls_files_are_read_next_to_the_configuration(tmp_path: Path) -> None:
    certificates(tmp_path)
    settings = parse_config(CONFIG.format(key=KEY), str(tmp_path / "croupier.toml"))
    link = settings.device_link
    assert link.tls_cert == tmp_path / "server.crt" and link.tls_client_ca == tmp_path / "ca.crt"
    context = link.tls_context()
    assert context is not None and context.verify_mode == ssl.CERT_OPTIONAL


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (('tls_client_ca = "ca.crt"\n', ""), "tls_client_ca missing"),
        (('tls_key = "server.key"\n', 'tls_key = "nowhere.key"\n'), "cannot read tls_key"),
        (
            ('tls_key = "server.key"\n', 'tls_key = "ca.key"\n'),
            "are not a PEM certificate and its private key",
        ),
        (('tls_client_ca = "ca.crt"\n', 'tls_client_ca = "server.key"\n'), "tls_client_ca"),
        (
            ('tls_cert = "server.crt"\n', "tls_cert = 7\n"),
            "tls_cert must be the path of a PEM file",
        ),
    ],
)
def test_a_wrong_tls_setting_is_refused_with_its_name(
    tmp_path: Path, change: tuple[str, str], message: str
) -> None:
    certificates(tmp_path)
    text = CONFIG.format(key=KEY).replace(*change)
    with pytest.raises(ConfigError) as refused:
        parse_config(text, str(tmp_path / "croupier.toml"))
    assert message in str(refused.value)
    assert "[device_link]" in str(refused.value)
