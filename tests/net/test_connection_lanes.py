"""A connection reads on while a bet is written (issue #31; docs/protocol.md, "Order"): one
bet's writes hold up neither a ping nor another table's commands, and one table's answers
keep the order they were asked in — over a real WebSocket connection, with the bet's debit
held back until the test lets it through."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from server.protocol.messages import (
    BetAccepted,
    BetCancelled,
    CancelBet,
    ErrorMessage,
    Join,
    Joined,
    ListTables,
    Lobby,
    Ping,
    PlaceBet,
    Pong,
)
from tests.net.live import Client, live_service


def _hold_debits(service: Any, table: str) -> asyncio.Event:
    """The writes of ``table``'s bets (a bet's journal record and its debit, written
    together) wait until the returned event is set; every other table writes as usual."""
    stores = service.casino.tables[table].stores
    one, several = stores.result, stores.results
    let_through = asyncio.Event()

    def a_bet(effects: Any) -> bool:
        return any(getattr(e, "key", "").startswith(f"bet:{table}.") for e in effects)

    async def result(effect: Any) -> Any:
        if a_bet([effect]):
            await let_through.wait()
        return await one(effect)

    async def results(effects: Any) -> Any:
        if a_bet(effects):
            await let_through.wait()
        return await several(effects)

    stores.result, stores.results = result, results
    return let_through


def test_a_bet_being_written_holds_up_no_other_answer(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with live_service(tmp_path) as service, Client.connect(service, "ann") as ann:
            for ref, table in ((1, "rt"), (2, "b6")):
                await ann.send(Join(table=table, ref=ref))
            rt = (await ann.expect(Joined)).snapshot.round
            b6 = (await ann.expect(Joined)).snapshot.round
            let_through = _hold_debits(service, "rt")
            try:
                bet = {"spot": "red", "amount": 500}
                await ann.send(PlaceBet(table="rt", round=rt, bet_id="b1", ref=10, **bet))
                await ann.send(CancelBet(table="rt", round=rt, bet_id="b1", ref=11))
                await ann.send(Ping(nonce=7, ref=12))
                await ann.send(ListTables(ref=13))
                assert (await ann.expect(Pong)).ref == 12
                assert (await ann.expect(Lobby)).ref == 13
                # Another table's bet is answered while rt's debit is held back.
                await ann.send(
                    PlaceBet(table="b6", round=b6, bet_id="c1", spot="two", amount=100, ref=14)
                )
                assert (await ann.expect(BetAccepted)).ref == 14
                # The ping, the lobby and b6 were answered while the bet's debit was held.
                assert not [m for m in ann.inbox if isinstance(m, BetCancelled)]
                assert [m.ref for m in ann.inbox if isinstance(m, BetAccepted)] == [14]
                let_through.set()
                answers: list[Any] = []
                while len(answers) < 2:
                    message = await ann.next()
                    if isinstance(message, BetAccepted | BetCancelled):
                        answers.append(message)
                rt_answers = [(type(m).__name__, m.ref) for m in answers]
                assert rt_answers == [("BetAccepted", 10), ("BetCancelled", 11)]  # in order asked
            finally:  # a failure above must not leave the table waiting for ever
                let_through.set()
            assert service.players.balance(ann.welcome.player_id) == 100_000 - 100

    asyncio.run(scenario())


class _RemoteWithTimeout:
    """A door to a table on another node as the cluster's is: its command a round trip
    whose read is timed with ``asyncio.timeout`` (redis-py's, bound to the current task),
    here one that expires."""

    in_process = False

    def __init__(self, table: Any) -> None:
        self.table, self.id = table, table.id

    def __getattr__(self, name: str) -> Any:
        return getattr(self.table, name)

    async def submit(self, command: Any) -> Any:
        async with asyncio.timeout(0.05):
            await asyncio.sleep(1)  # no answer in time


def test_a_timeout_in_a_remote_tables_command_ends_that_command_not_the_connection(
    tmp_path: Path,
) -> None:
    """A lane starts at once only for a table in this process (server/tables/eager.py): a
    remote door's timeout, bound to the task current when it began, must cancel the
    command's own task — never the connection's reader."""

    async def scenario() -> None:
        async with live_service(tmp_path) as service, Client.connect(service, "ann") as ann:
            await ann.send(Join(table="rt", ref=1))
            round_id = (await ann.expect(Joined)).snapshot.round
            assert service.floor is not None
            service.floor._doors = {
                **service.casino.tables,
                "rt": _RemoteWithTimeout(service.casino.tables["rt"]),
            }
            await ann.send(
                PlaceBet(table="rt", round=round_id, bet_id="x", spot="red", amount=500, ref=2)
            )
            refused = await ann.expect(ErrorMessage)
            assert (refused.code, refused.ref) == ("internal_error", 2)
            await ann.send(Ping(nonce=7, ref=3))  # the connection still reads
            assert (await ann.expect(Pong)).nonce == 7

    asyncio.run(scenario())
