"""``[[devices]]``, ``[device_link]`` and ``[tables.devices]``: what an operator may write, and
the clear error for everything else (docs/devices.md, "Configuration")."""

from __future__ import annotations

from pathlib import Path

import pytest

from rng.sources import HmacDrbgSource
from server.config import ConfigError, parse_config
from server.devices.dealing import DealerSettings
from server.devices.table_devices import table_dealer
from server.tables.games import build_game

KEY = "ab" * 16


def config(devices: str, table_devices: str, game: str = "baccarat", link: str = "") -> str:
    return f"""
{link}
{devices}

[[tables]]
id = "t1"
name = "T"
game = "{game}"
[tables.devices]
{table_devices}
"""


SHOE = f'[[devices]]\nid = "shoe-1"\nrole = "card_source"\nkey = "{KEY}"\n'


def test_a_table_names_its_devices() -> None:
    settings = parse_config(config(SHOE, 'card_source = "shoe-1"'), "c.toml")
    assert settings.tables[0].devices == {"card_source": "shoe-1"}
    assert settings.devices[0].key == bytes.fromhex(KEY)
    assert settings.device_link.port == 8100


def test_a_key_file_is_read_next_to_the_configuration(tmp_path: Path) -> None:
    (tmp_path / "shoe.key").write_text(KEY + "\n")
    devices = '[[devices]]\nid = "shoe-1"\nrole = "card_source"\nkey_file = "shoe.key"\n'
    settings = parse_config(config(devices, 'card_source = "shoe-1"'), str(tmp_path / "c.toml"))
    assert settings.devices[0].key == bytes.fromhex(KEY)


@pytest.mark.parametrize(
    ("devices", "table_devices", "link", "message"),
    [
        (SHOE, 'card_source = "shoe-2"', "", "no [[devices]] entry has id 'shoe-2'"),
        (SHOE, 'wheel = "shoe-1"', "", "shoe-1 is a card_source, not a wheel"),
        (SHOE, 'printer = "shoe-1"', "", "unknown role(s) printer"),
        (SHOE.replace(KEY, "abcd"), "", "", "at least 16 bytes"),
        (SHOE.replace(KEY, "zz" * 16), "", "", "hexadecimal"),
        (SHOE.replace("card_source", "toaster"), "", "", "role must be one of"),
        (SHOE.replace('id = "shoe-1"', 'id = "shoe 1"'), "", "", "id must be 1-64"),
        (SHOE + SHOE, "", "", "device ids must be unique: shoe-1"),
        (SHOE, "", "[device_link]\nport = 70000", "port must be at most 65535"),
        (SHOE, "", "[device_link]\nanswer_seconds = 0", "answer_seconds must be a number"),
        (SHOE, "", "[device_link]\nspeed = 1", "unknown setting(s) speed"),
        (
            SHOE.replace(f'key = "{KEY}"', f'key = "{KEY}"\nkey_file = "k"'),
            "",
            "",
            "one of them",
        ),
    ],
)
def test_a_wrong_device_setting_is_refused_with_its_name(
    devices: str, table_devices: str, link: str, message: str
) -> None:
    with pytest.raises(ConfigError, match=None) as refused:
        parse_config(config(devices, table_devices, link=link), "c.toml")
    assert message in str(refused.value)


@pytest.mark.parametrize(
    ("game", "role", "message"),
    [
        ("roulette", "card_source", "a card_source deals cards"),
        ("baccarat", "wheel", "a wheel spins"),
        ("baccarat", "hole_card_reader", "serves Down Under Blackjack only"),
        ("baccarat", "dealer_console", "serves a table with another device"),
    ],
)
def test_a_device_its_game_cannot_use_is_refused(game: str, role: str, message: str) -> None:
    devices = f'[[devices]]\nid = "d1"\nrole = "{role}"\nkey = "{KEY}"\n'
    settings = parse_config(config(devices, f'{role} = "d1"', game=game), "c.toml")
    table = settings.tables[0]
    with pytest.raises(ConfigError) as refused:
        table_dealer(table, build_game(table, HmacDrbgSource("t")), DealerSettings())
    assert message in str(refused.value)
