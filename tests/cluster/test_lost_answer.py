"""A bet placed through a node that does not run the table, whose answer does not come back
in time (the owner overloaded, Redis slow): the player is told the bet may stand and to send
it again as it was — and sending it again learns that it was placed, charged once
(docs/protocol.md, `table_unavailable`)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from server.cluster.rpc import RpcTimeout
from server.protocol.messages import BetAccepted, ErrorMessage, Join, Joined, PlaceBet
from server.wallet.ledger import player_account
from tests.cluster.local import PATIENCE, home_and_other, until
from tests.net.live import Client
from tests.redis_server import RedisServer


def test_a_bet_whose_answer_was_lost_is_learned_by_sending_it_again(
    tmp_path: Path, redis_server: RedisServer, postgres_url: str
) -> None:
    async def go() -> None:
        async with home_and_other(tmp_path, redis_server, postgres_url, "bac-1") as (owner, other):
            assert owner.cluster is not None and other.cluster is not None
            door, there = owner.cluster.doors["bac-1"], other.cluster
            await until(lambda: door.runtime() is not None, what="bac-1 runs at its home")
            await until(lambda: "bac-1" in there.owners, what="the other node knows bac-1's owner")
            rpc = other.cluster.rpc
            real = rpc.call

            async def answer_lost(*args: Any, **kwargs: Any) -> Any:
                await real(*args, **kwargs)  # carried out by the owner ...
                raise RpcTimeout("no answer from the owner: timed out")  # ... answer lost

            async with Client.connect(other, "ann") as ann:
                account = player_account(ann.welcome.player_id)
                await ann.send(Join(table="bac-1"))
                await ann.expect(Joined, PATIENCE)
                for _ in range(10):  # bet as a round opens (its window is 0.4 s)
                    round_id = (await ann.event("betting_opened", PATIENCE)).round
                    bet = PlaceBet(table="bac-1", round=round_id, bet_id=f"x-{round_id}", spot="banker", amount=100)  # fmt: skip  # noqa: E501
                    rpc.call = answer_lost  # type: ignore[method-assign]
                    await ann.send(bet)
                    lost = await ann.expect(ErrorMessage, PATIENCE)
                    rpc.call = real  # type: ignore[method-assign]
                    await ann.send(bet)  # the same bet again, as the error says
                    again = await ann.expect(BetAccepted | ErrorMessage, PATIENCE)
                    if isinstance(again, BetAccepted):
                        break
                assert isinstance(again, BetAccepted), again
                assert lost.code == "table_unavailable"
                assert "may have been carried out" in lost.message
                assert "same bet_id" in lost.message
                assert again.bet_id == bet.bet_id
                debits = [
                    t
                    for _, t in other.casino.ledger.history(account)
                    if t.source == account and t.bet_id == bet.bet_id
                ]
                assert [t.amount for t in debits] == [100]  # charged once

    asyncio.run(go())
