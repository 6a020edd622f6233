"""Linked progressives at live tables (server.games.baccarat.linked): two tables naming one
link share its Heavenly 9 and Must-Hit-By meters — both tables' wagers grow one meter, a
Mystery Bonus hit at one table is paid from the shared meter and resets it for both — and
the books show exactly where every cent went. The same code runs a cluster's tables, on the
shared database (tests/cluster)."""

from __future__ import annotations

import asyncio
import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from server.cli.main import main
from server.games.table import ConfigError
from server.protocol.messages import BetAccepted, Join, Joined, PlaceBet
from server.wallet.ledger import OPEN_WAGERS
from tests.net.live import Client, advance, live_service


def linked_tables(link_b: str = "floor", harmony_b: str = "B") -> str:
    return "".join(
        f"""
[[tables]]
id = "{table}"
name = "{table}"
game = "baccarat"
betting_seconds = 10
pause_seconds = 1
[tables.options]
progressive_link = "{link}"
mystery_bonus = "A-$1"
[tables.options.side_wagers]
heavenly_9_progressive = ""
harmony_progressive = "{harmony}"
"""
        for table, link, harmony in (("a", "floor", "B"), ("b", link_b, harmony_b))
    )


H9, MYSTERY = "floor/heavenly_9_progressive", "floor/mystery_bonus"
HIT = 15_000  # the shared Mystery Bonus hit value the test sets: $150, in ($100, $200]


def test_two_tables_grow_one_meter_and_a_hit_at_one_resets_it_for_both(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async def play() -> str:
        async with live_service(tmp_path, linked_tables()) as service:
            journal, ledger = service.casino.journal, service.casino.ledger
            game = service.casino.games["a"]
            # The shared Must-Hit-By meter exactly at its hit value: the next qualifying
            # contribution, at either table, passes it (631b.6(c)(3)).
            journal.settle_meters(
                "setup",
                game.linked,
                lambda states: (
                    {"mystery_bonus": {"meter": HIT * 50, "denominator": 50, "hit_value": HIT}},
                    {"adds": [], "awards": []},
                ),
            )
            async with Client.connect(service, "ann") as ann, Client.connect(service, "bob") as bob:  # fmt: skip  # noqa: E501
                for client, table in ((ann, "a"), (bob, "b")):
                    await client.send(Join(table=table))
                    joined = await client.expect(Joined)
                    r = joined.snapshot.round
                    for n, spot in enumerate(("banker", "heavenly_9_progressive")):
                        bet = PlaceBet(table=table, round=r, bet_id=f"{table}{n}", spot=spot, amount=500)  # fmt: skip  # noqa: E501
                        await client.send(bet)
                        await client.expect(BetAccepted)
                await advance(service, 10)
                for _ in range(20):  # both rounds settled and their meters shown
                    if journal.open_rounds() == [] and len(journal.meter_settlements()) == 3:
                        break
                    await advance(service, 0.5)
                results = dict(journal.meter_settlements())
                awards = [a for r in ("a.1", "b.1") for a in results[r]["awards"]]
                mystery = [a for a in awards if a["meter"] == "mystery_bonus"]
                # Exactly one table's wager passed the shared hit value: that player won the
                # shared meter (the hit value plus that $5 wager's 10 cents), the other table's
                # wager went to the reset meter.
                assert len(mystery) == 1 and mystery[0]["amount"] == HIT + 10
                winner = mystery[0]["player"]
                winner_round = next(r for r in ("a.1", "b.1") if mystery[0] in results[r]["awards"])  # fmt: skip  # noqa: E501
                progressive = [
                    t
                    for r in ("a.1", "b.1")
                    for _, t in ledger.round_transfers(r)
                    if t.kind == "progressive"
                ]
                assert sum(t.amount for t in progressive) == sum(a["amount"] for a in awards)
                assert {t.destination for t in progressive if t.amount == HIT + 10} == {
                    f"player:{winner}"
                }
                states = journal.linked_meters([H9, MYSTERY])
                h9 = states[H9]
                assert h9 is not None
                if not any(a["meter"] == "heavenly_9_progressive" for a in awards):
                    # 631b.2(i): the $10,000 seed plus 10% of each table's $5 wager
                    assert Fraction(h9["meter"], h9["denominator"]) == 1_000_100
                m = states[MYSTERY]
                assert m is not None and 10_000 < m["hit_value"] <= 20_000
                assert Fraction(m["meter"], m["denominator"]) == 10_000 + Fraction(10)
                # Each table shows the shared meters after its next round, whoever moved them.
                # (After the first, the table that hit first may show its reset meter
                # without the other's share, had it read the link before the other
                # settled; after the next round both show the same.)
                await advance(service, 12)
                for client, table in ((ann, "a"), (bob, "b")):
                    later: list[Any] = []
                    for _ in range(120):  # the next round's end (dealt card by card)
                        await client.drain(0.05)
                        later = [e for e in client.events("meters") if e.round != f"{table}.1"]
                        if later:
                            break
                        await advance(service, 0.25)
                    assert later, f"table {table} never ended its next round"
                    shown = later[0].data
                    assert shown["mystery_bonus"] == 10_010
                    assert "hit_value" not in str(shown)
                for table in ("a", "b"):  # the table keeps no copy of a linked meter
                    assert service.casino.journal.load_state(table, "meters") is None
            assert ledger.reconcile() == {} and ledger.balance(OPEN_WAGERS) == 0
            return winner_round

    winner_round = asyncio.run(play())

    async def restart() -> dict[str, int]:
        async with (
            live_service(tmp_path, linked_tables()) as service,
            Client.connect(service, "cleo") as cleo,
        ):
            await cleo.send(Join(table="b"))
            joined = await cleo.expect(Joined)
            return dict(joined.snapshot.meters)

    # After a restart a table shows its link's meters from the first snapshot on.
    shown = asyncio.run(restart())
    assert shown["mystery_bonus"] == 10_010 and "hit_value" not in str(shown)
    # croupier replay shows what the shared meter paid, not the table's own copy of it.
    config = tmp_path / "tables.toml"
    config.write_text(linked_tables())
    args = ["replay", winner_round, "--data-dir", str(tmp_path), "--config", str(config)]
    assert main([*args, "--json"]) == 0
    events = json.loads(capsys.readouterr().out)["events"]
    paid = [e["amount"] for e in events if e["event"] == "progressive_awarded"]
    assert HIT + 10 in paid


def test_tables_of_one_link_must_offer_the_same_meters(tmp_path: Path) -> None:
    async def start() -> Any:
        async with live_service(tmp_path, linked_tables(harmony_b="A")):
            pass

    with pytest.raises(ConfigError, match="progressive_link 'floor' is shared with table a"):
        asyncio.run(start())
