"""A connection reads on while a bet is written (issue #31; docs/protocol.md, "Order"): one
bet's writes hold up neither a ping nor another table's commands, and one table's answers
keep the order they were asked in — over a real WebSocket connection, with the bet's debit
held back until the test lets it through."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from server import group_commit
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
from server.tables import waits
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


def test_a_bet_is_answered_in_the_turn_that_learns_its_writes_are_durable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The writers hand their outcomes to the event loop in one callback (``_Wakeups``); in
    that same turn the bet's coroutine has them, the table's core takes them and the player
    has the answer — no turn of the loop in between, each as long as everything else a busy
    node runs in it (``server.prompt``). Before, two hand-overs through futures (the writes'
    outcome to the table's task, the table's answer to the connection's) made it two turns
    later."""
    turn = 0
    delivered: list[int] = []  # the turns in which the writers' outcomes reached the loop
    learnt: list[int] = []  # the turn in which each bet's coroutine had them
    answered: list[int] = []  # the turn in which each bet_accepted was written
    hand_over = group_commit._Wakeups._run

    def counted_hand_over(self: Any) -> None:
        delivered.append(turn)
        hand_over(self)

    monkeypatch.setattr(group_commit._Wakeups, "_run", counted_hand_over)
    outcomes_of = waits.joined

    async def joined(futures: Any) -> Any:
        outcomes = await outcomes_of(futures)
        learnt.append(turn)
        return outcomes

    monkeypatch.setattr(waits, "joined", joined)

    async def scenario() -> None:
        loop: Any = asyncio.get_running_loop()
        run_once = loop._run_once

        def counted_turn() -> None:
            nonlocal turn
            turn += 1
            run_once()

        loop._run_once = counted_turn
        async with live_service(tmp_path) as service, Client.connect(service, "ann") as ann:
            await ann.send(Join(table="rt", ref=1))
            rt = (await ann.expect(Joined)).snapshot.round
            acked = service.metrics.bet_acked
            service.metrics.bet_acked = lambda at: (answered.append(turn), acked(at))
            for ref, spot in enumerate(("red", "odd", "black", "even", "low"), 10):
                bet = PlaceBet(table="rt", round=rt, bet_id=spot, spot=spot, amount=100, ref=ref)
                await ann.send(bet)
                assert (await ann.expect(BetAccepted)).ref == ref

    asyncio.run(scenario())
    assert len(answered) == len(learnt) == 5
    assert answered == learnt  # the table stepped and the player answered in that turn
    assert set(learnt) <= set(delivered)  # the turn in which the writers handed them over


class _Held(list[tuple[str, asyncio.Event]]):
    """(a bet's ledger key, the event its writes wait for), in the order asked for."""

    released = False

    def release(self) -> None:
        """Let every write through, those asked for from now on too."""
        self.released = True
        for _, event in self:
            event.set()


def _hold_each_bet(service: Any, table: str) -> _Held:
    """The writes of each of ``table``'s bets wait for an event of their own."""
    stores = service.casino.tables[table].stores
    several = stores.results
    held = _Held()

    async def results(effects: Any) -> Any:
        keys = [getattr(e, "key", "") for e in effects]
        key = next((k for k in keys if k.startswith(f"bet:{table}.")), None)
        if key is not None and not held.released:
            event = asyncio.Event()
            held.append((key, event))
            await event.wait()
        return await several(effects)

    stores.results = results
    return held


def test_a_players_bets_are_written_together_and_answered_in_the_order_sent(
    tmp_path: Path,
) -> None:
    """Three bets sent at once are all being written at the same time — the second does
    not wait for the first's answer — and their answers come in the order sent, though
    their writes finish last first; each answer's balance is the one its debit left."""

    async def scenario() -> None:
        async with live_service(tmp_path) as service, Client.connect(service, "ann") as ann:
            await ann.send(Join(table="rt", ref=1))
            rt = (await ann.expect(Joined)).snapshot.round
            held = _hold_each_bet(service, "rt")
            try:
                await ann.send(Join(table="rt", ref=2))  # answered at once: no wait behind it
                for ref, (bet_id, spot) in enumerate(
                    (("b1", "red"), ("b2", "odd"), ("b3", "black")), 10
                ):
                    await ann.send(
                        PlaceBet(
                            table="rt", round=rt, bet_id=bet_id, spot=spot, amount=100, ref=ref
                        )
                    )
                for _ in range(200):  # all three reach the stores while none is answered
                    if len(held) == 3:
                        break
                    await asyncio.sleep(0.01)
                assert [key.rsplit(":", 1)[-1] for key, _ in held] == ["b1", "b2", "b3"], held
                assert not [m for m in ann.inbox if isinstance(m, BetAccepted)]
                for _, event in reversed(held):
                    event.set()
                    await asyncio.sleep(0.02)  # the later bets' writes finish first
                answers = [await ann.expect(BetAccepted) for _ in range(3)]
                assert [(m.ref, m.bet_id) for m in answers] == [(10, "b1"), (11, "b2"), (12, "b3")]
                # Each shows the balance just after its own debit (here applied last first).
                assert [m.balance for m in answers] == [100_000 - 300, 100_000 - 200, 100_000 - 100]
            finally:  # a failure above must not leave the table waiting for ever
                held.release()

    asyncio.run(scenario())


def test_a_bet_the_table_fails_to_take_is_answered_internal_error_in_its_turn(
    tmp_path: Path,
) -> None:
    """A bug where a bet is queued at the table answers that bet ``internal_error`` — after
    the answer to the bet before it, still being written — and the connection goes on."""

    async def scenario() -> None:
        async with live_service(tmp_path) as service, Client.connect(service, "ann") as ann:
            await ann.send(Join(table="rt", ref=1))
            rt = (await ann.expect(Joined)).snapshot.round
            held = _hold_each_bet(service, "rt")
            table = service.casino.tables["rt"]
            try:
                await ann.send(
                    PlaceBet(table="rt", round=rt, bet_id="b1", spot="red", amount=100, ref=10)
                )
                for _ in range(200):
                    if held:
                        break
                    await asyncio.sleep(0.01)

                def broken(command: Any) -> Any:
                    raise RuntimeError("a bug")

                table.queue = broken
                await ann.send(
                    PlaceBet(table="rt", round=rt, bet_id="b2", spot="odd", amount=100, ref=11)
                )
                await ann.send(Ping(nonce=1, ref=12))
                assert (await ann.expect(Pong)).ref == 12  # the connection reads on
                assert not [m for m in ann.inbox if isinstance(m, ErrorMessage)]  # b1 first
                del table.queue
                for _, event in held:
                    event.set()
                first = await ann.expect(BetAccepted)
                error = await ann.expect(ErrorMessage)
                assert (first.ref, error.ref, error.code) == (10, 11, "internal_error")
            finally:
                held.release()

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
