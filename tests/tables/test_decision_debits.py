"""A decision's stakes are debited before the engine takes the decision (an operator's wallet
may refuse any of them, docs/wallet.md): refused, the decision is still awaited and the
engine is untouched; one of two refused, the other is returned and that option is spent.
Through the table core with the runtime's own stores, the refusals raised by the ledger as
an operator's wallet raises them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rng.cards import parse_cards
from server.config import load_config
from server.core import commands as cmd
from server.journal import SqliteJournal
from server.wallet import OPEN_WAGERS, SqliteLedger, Transfer
from server.wallet.ledger import OperatorRefused, PostResult
from tests.net.test_card_games import ScriptedShoe
from tests.tables.core_driver import Driver

TABLES = {t.id: t for t in load_config(None).tables}


class RefusingLedger(SqliteLedger):
    """The embedded ledger, but a debit whose key ends with one of ``refuse`` is refused as
    an operator refuses it (``limit_reached``)."""

    refuse: tuple[str, ...] = ()

    async def apost(self, key: str, transfers: Sequence[Transfer]) -> PostResult:
        if key.startswith("bet:") and key.endswith(self.refuse):
            raise OperatorRefused("limit_reached", "the player's wager limit is reached")
        return await super().apost(key, transfers)


def _tied(refuse: tuple[str, ...]) -> tuple[Driver, Any, str]:
    """A Casino War round whose one box ties the dealer; the driver, its ledger and the
    box's spot."""
    ledger = RefusingLedger(":memory:")
    ledger.refuse = refuse
    d = Driver(TABLES["casino-war"], seed=3, ledger=ledger, journal=SqliteJournal(":memory:"))
    d.fund("ann", 10_000)
    d.seat("ann")
    # The box ties the dealer's 9; at War three burns, the box's K, the dealer's 5.
    d.game.shoe = ScriptedShoe(parse_cards("9H 9S  2C 3C 4C  KH 5D"))
    seat = d.core.seats.seat_of["ann"]
    spot = f"initial:{seat}"
    reply = d.play(cmd.Place, "ann", round_id=d.core.round_id, bet_id="a", spot=spot, amount=1_000)
    assert reply is not None and reply.refusal is None, reply
    d.run_until(d.now + d.settings.betting_seconds)
    assert ("ann", spot) in d.core.decisions
    return d, ledger, spot


def _round_ends(d: Driver, ledger: SqliteLedger, **balances: int) -> None:
    """Play the round to its end: each player of ``balances`` holds that much, nothing is
    left in open wagers and the ledger reconciles; then close the driver and its stores."""
    d.run_until(d.now + 30)
    for player, balance in balances.items():
        assert ledger.balance(f"player:{player}") == balance
    assert ledger.balance(OPEN_WAGERS) == 0 and ledger.reconcile() == {}
    d.close()
    ledger.close()
    d.journal.close()


def _decide(d: Driver, spot: str, decision: str) -> Any:
    return d.play(cmd.Decide, "ann", round_id=d.core.round_id, spot=spot, decision=decision)


def _journaled_decisions(d: Driver) -> list[str]:
    round_id = d.core.round_id or ""
    return [r.payload["decision"] for r in d.journal.records(round_id) if r.kind == "decision"]


def test_a_refused_war_wager_leaves_the_decision_open() -> None:
    d, ledger, spot = _tied(refuse=("~war",))
    reply = _decide(d, spot, "war")
    assert reply is not None and reply.refusal is not None
    assert reply.refusal.code == "limit_reached"
    assert ("ann", spot) in d.core.decisions  # still awaited
    assert _journaled_decisions(d) == []  # nothing of it in the journal
    assert ledger.balance("player:ann") == 10_000 - 1_000  # only the Initial Wager taken
    ledger.refuse = ()
    reply = _decide(d, spot, "war")  # tried again, now taken
    assert reply is not None and reply.refusal is None, reply
    assert _journaled_decisions(d) == ["war"]
    # Initial 1,000 forfeited, War Wager 1,000 won 2 to 1 (docs/interpretations.md, 12).
    _round_ends(d, ledger, ann=10_000 - 1_000 + 2_000)


def test_a_refused_tie_wager_leaves_nothing_debited_and_war_alone_still_open() -> None:
    """The Tie Wager is debited first: refused, nothing was taken, and the War alone is
    still an option."""
    d, ledger, spot = _tied(refuse=("~war_tie",))
    reply = _decide(d, spot, "war+tie:500")
    assert reply is not None and reply.refusal is not None
    assert reply.refusal.code == "limit_reached"
    assert not [k for k, _ in ledger.history("player:ann") if "~" in k]  # nothing debited
    reply = _decide(d, spot, "war")
    assert reply is not None and reply.refusal is None, reply
    _round_ends(d, ledger, ann=10_000 - 1_000 + 2_000)


def test_a_tie_wager_taken_beside_a_refused_war_wager_is_returned() -> None:
    """The Tie Wager taken, then the War Wager refused: the Tie Wager comes back and its id
    is spent — ``war+tie`` is refused from then on, before anything is debited."""
    d, ledger, spot = _tied(refuse=(":a~war",))
    reply = _decide(d, spot, "war+tie:500")
    assert reply is not None and reply.refusal is not None
    assert reply.refusal.code == "limit_reached"
    keys = [key for key, _ in ledger.history("player:ann")]
    assert any(k.startswith("bet:") and k.endswith(":a~war_tie") for k in keys)
    assert any(k.startswith("cancel:") and k.endswith(":a~war_tie") for k in keys)
    assert ledger.balance("player:ann") == 10_000 - 1_000  # the Tie Wager came back
    again = _decide(d, spot, "war+tie:500")
    assert again is not None and again.refusal is not None
    assert again.refusal.code == "not_an_option"
    assert _journaled_decisions(d) == []
    reply = _decide(d, spot, "surrender")
    assert reply is not None and reply.refusal is None, reply
    _round_ends(d, ledger, ann=10_000 - 500)  # half the Initial Wager back


class SlowLedger(SqliteLedger):
    """The embedded ledger, but the first War Wager's debit runs ``during`` first: what
    happens while an operator's wallet takes its time to answer it."""

    during: Any = None

    async def apost(self, key: str, transfers: Sequence[Transfer]) -> PostResult:
        if key.startswith("bet:") and key.endswith("~war") and self.during is not None:
            during, self.during = self.during, None
            during()
        return await super().apost(key, transfers)


def _both_tied(bob_funds: int) -> tuple[Driver, SlowLedger, dict[str, str]]:
    """A Casino War round where Ann's and Bob's boxes both tie the dealer's 9, both asked
    to decide (at War three burns, Ann's K, Bob's Q, the dealer's 5); Bob funded with
    ``bob_funds``. The driver, its ledger and each player's spot."""
    ledger = SlowLedger(":memory:")
    d = Driver(TABLES["casino-war"], seed=3, ledger=ledger, journal=SqliteJournal(":memory:"))
    for player, funds in (("ann", 10_000), ("bob", bob_funds)):
        d.fund(player, funds)
        d.seat(player)
    d.game.shoe = ScriptedShoe(parse_cards("9H 9S 9D  2C 3C 4C  KH QH 5D"))
    spots = {p: f"initial:{d.core.seats.seat_of[p]}" for p in ("ann", "bob")}
    for player, amount in (("ann", 1_000), ("bob", 600)):
        reply = d.play(
            cmd.Place, player, round_id=d.core.round_id, bet_id="a", spot=spots[player],
            amount=amount,
        )  # fmt: skip
        assert reply is not None and reply.refusal is None, reply
    d.run_until(d.now + d.settings.betting_seconds)
    assert set(d.core.decisions) == {("ann", spots["ann"]), ("bob", spots["bob"])}
    return d, ledger, spots


def _bob_decides_while_ann_is_debited(d: Driver, ledger: SlowLedger, spot: str, cid: int) -> None:
    """While Ann's War Wager is debited, Bob sends his decision (a second after hers, long
    before his deadline) and the debit takes past his deadline to answer."""

    def meanwhile() -> None:
        d.now += 1
        bob = cmd.Decide("bob", d.core.round_id or "", spot, "war", cid=cid)
        assert d.core.handle(bob, d.now) == []  # queued: Ann's decision runs alone
        d.now += d.settings.decision_seconds

    ledger.during = meanwhile


def test_a_decision_sent_in_time_is_taken_though_another_s_debit_held_the_table() -> None:
    """Ann's War Wager is debited slowly — past Bob's deadline — while Bob's own decision,
    sent a second after hers and well before his deadline, waits its turn (a decision runs
    alone): Bob goes to War too, not timed out into a surrender."""
    d, ledger, spots = _both_tied(10_000)
    round_id = d.core.round_id
    bob_cid = 990
    _bob_decides_while_ann_is_debited(d, ledger, spots["bob"], bob_cid)
    reply = _decide_as(d, "ann", spots["ann"], "war")
    assert reply is not None and reply.refusal is None, reply
    assert d.replies[bob_cid].refusal is None, d.replies[bob_cid]
    records = [r.kind for r in d.journal.records(round_id or "")]
    assert "timeout" not in records
    assert _journaled_decisions(d) == ["war", "war"]
    _round_ends(d, ledger)


def _decide_as(d: Driver, player: str, spot: str, decision: str) -> Any:
    return d.play(cmd.Decide, player, round_id=d.core.round_id, spot=spot, decision=decision)


def test_a_decision_sent_in_time_and_refused_times_out_at_once() -> None:
    """Bob's decision, sent in time while Ann's debit held the table, is refused when its
    turn comes after his deadline: he is timed out then, not a whole window later."""
    d, ledger, spots = _both_tied(600)  # his Initial Wager only: his War Wager is refused
    round_id = d.core.round_id
    _bob_decides_while_ann_is_debited(d, ledger, spots["bob"], 991)
    reply = _decide_as(d, "ann", spots["ann"], "war")
    assert reply is not None and reply.refusal is None, reply
    assert d.replies[991].refusal is not None
    assert d.replies[991].refusal.code == "insufficient_funds"
    # Timed out now: no time has passed since his refusal.
    records = [r.kind for r in d.journal.records(round_id or "")]
    assert "timeout" in records
    _round_ends(d, ledger, bob=300)  # surrendered: half his Initial Wager back
