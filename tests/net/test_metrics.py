"""``/metrics`` as an operator reads it (issue #14): every metric says what it measures, and
bets, refusals, bet-ack latency, rounds settled and voided, connections, fan-out frames and
shed frames are counted from real WebSocket traffic, in valid Prometheus text."""

from __future__ import annotations

import asyncio
import urllib.request
from pathlib import Path

import pytest
from websockets.exceptions import ConnectionClosed

from server.app.service import Service
from server.journal.journal import RoundStatus
from server.journal.sqlite_journal import SqliteJournal
from server.metrics import Registry
from server.net.metrics import Metrics
from server.protocol.messages import BetAccepted, ErrorMessage, Join, Joined, PlaceBet
from server.tables.recovery import Recovered
from tests.net import exposition
from tests.net.live import Client, advance, live_service


def _fetch(url: str) -> tuple[int, str, str]:
    with urllib.request.urlopen(url, timeout=5) as response:
        return response.status, response.headers["Content-Type"], response.read().decode()


async def scrape(service: Service) -> exposition.Exposition:
    """GET /metrics over HTTP, as Prometheus does, and check the exposition is valid."""
    url = f"http://127.0.0.1:{service.port}/metrics"
    status, content_type, text = await asyncio.to_thread(_fetch, url)
    assert status == 200 and content_type.startswith("text/plain; version=0.0.4")
    return exposition.parse(text)


async def _bet(client: Client, table: str, round_id: str, bet_id: str, spot: str, amount: int):
    await client.send(
        PlaceBet(table=table, round=round_id, bet_id=bet_id, spot=spot, amount=amount, ref=9)
    )
    return await client.expect((BetAccepted, ErrorMessage))


def test_an_operator_sees_bets_latency_rounds_connections_and_frames(tmp_path: Path) -> None:
    # A previous process died with round rt.7 open: this start's recovery voids it.
    journal = SqliteJournal(tmp_path / "journal.sqlite")
    journal.open_round("rt", "rt.7", {"game": "roulette", "variant": "double_zero", "shoe": None})
    journal.close()

    async def scenario() -> None:
        async with (
            live_service(tmp_path) as service,
            Client.connect(service, "ann") as ann,
            Client.connect(service, "bob") as bob,
        ):
            before = await scrape(service)
            assert before.value("croupier_connections_open") == 2
            commits = before.value("croupier_store_commit_seconds_count")
            settled, voided = "croupier_rounds_settled_total", "croupier_rounds_voided_total"
            assert before.value(voided, game="roulette", recovered="true") == 1
            assert before.value(settled, game="big_six", recovered="false") == 0

            await ann.send(Join(table="rt", role="player"))
            round_id = (await ann.expect(Joined)).snapshot.round
            await bob.send(Join(table="rt", role="spectator"))
            await bob.expect(Joined)
            await bob.send(Join(table="b6", role="spectator"))
            await bob.expect(Joined)

            assert isinstance(await _bet(ann, "rt", round_id, "a", "red", 1_000), BetAccepted)
            assert isinstance(await _bet(ann, "rt", round_id, "b", "black", 2_000), BetAccepted)
            low = await _bet(ann, "rt", round_id, "c", "red", 50)
            seatless = await _bet(bob, "rt", round_id, "d", "red", 1_000)
            nowhere = await _bet(ann, "zz", round_id, "e", "red", 1_000)
            assert (low.code, seatless.code, nowhere.code) == (
                "below_minimum", "not_seated", "unknown_table"
            )  # fmt: skip

            await advance(service, 10)  # both tables deal and settle their first round
            await ann.event("round_settled")
            await advance(service, 1)  # the pause: both open their second round
            await bob.event("betting_opened")
            service.casino.tables["b6"].stop()  # the operator stops one table: round voided
            await advance(service, 0)
            assert (await bob.event("round_voided")).table == "b6"

            after = await scrape(service)

        assert after.value("croupier_bets_accepted_total", game="roulette") == 2
        assert after.value("croupier_bets_accepted_total", game="big_six") == 0
        refused = after.series("croupier_bets_refused_total")
        assert refused == {
            (("code", "below_minimum"),): 1,
            (("code", "not_seated"),): 1,
            (("code", "unknown_table"),): 1,
        }
        assert after.value("croupier_bet_ack_seconds_count") == 2
        assert 0 < after.value("croupier_bet_ack_seconds_sum") < 2
        assert after.value("croupier_bet_ack_seconds_bucket", le="+Inf") == 2
        # Each bet's debit and record, and each round's, were made durable by a group commit
        # (the histogram is the process's: other tests' commits count in it too).
        assert after.value("croupier_store_commit_seconds_count") >= commits + 2
        assert after.value("croupier_store_commit_seconds_bucket", le="+Inf") == after.value(
            "croupier_store_commit_seconds_count"
        )
        assert after.value(settled, game="roulette", recovered="false") == 1
        assert after.value(settled, game="big_six", recovered="false") == 1
        assert after.value(voided, game="big_six", recovered="false") == 1
        assert after.value(voided, game="roulette", recovered="false") == 0
        assert after.value(voided, game="roulette", recovered="true") == 1
        assert after.value("croupier_connections_open") == 2
        assert after.value("croupier_connections_total") == 2
        # Each of ann's and bob's table events went through the fan-out; replies went direct.
        fanned = after.value("croupier_frames_sent_total", path="fanout")
        assert fanned >= len(ann.events()) + len(bob.events())
        assert after.value("croupier_frames_sent_total", path="direct") >= 10
        assert after.value("croupier_frames_shed_total", reason="too_slow") == 0

    asyncio.run(scenario())


def test_a_viewer_too_slow_to_follow_is_shed_and_counted(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with (
            live_service(tmp_path) as service,
            Client.connect(service, "ann") as ann,
            Client.connect(service, "sam") as sam,
        ):
            for client in (ann, sam):
                await client.send(Join(table="rt", role="spectator"))
                await client.expect(Joined)
            assert service.server is not None
            (slow,) = [
                c for c in service.server.connections if c.remote_address == sam.ws.local_address
            ]
            # sam stops reading: its outgoing buffer is backed up past max_backlog.
            slow.transport.get_write_buffer_size = lambda: 1 << 30  # type: ignore[method-assign]
            await advance(service, 10)
            await ann.event("round_settled")
            with pytest.raises(ConnectionClosed):
                await sam.drain()
            assert sam.ws.close_code == 4009
            metrics = await scrape(service)
        assert metrics.value("croupier_frames_shed_total", reason="too_slow") == 1
        assert metrics.value("croupier_slow_viewers_disconnected_total") == 1
        assert metrics.value("croupier_connections_open") == 1

    asyncio.run(scenario())


def test_histogram_buckets_are_cumulative_with_sum_and_count() -> None:
    registry = Registry()
    latency = registry.histogram("x_seconds", "Seconds it took", (0.001, 0.01, 0.1))
    for seconds in (0.0005, 0.001, 0.002, 0.05, 0.05, 3.0):
        latency.observe(seconds)
    text = registry.render()
    lines = text.splitlines()
    assert lines[:2] == ["# HELP x_seconds Seconds it took", "# TYPE x_seconds histogram"]
    assert lines[2:] == [
        'x_seconds_bucket{le="0.001"} 2',  # le is "less than or equal"
        'x_seconds_bucket{le="0.01"} 3',
        'x_seconds_bucket{le="0.1"} 5',
        'x_seconds_bucket{le="+Inf"} 6',
        "x_seconds_sum 3.1035",
        "x_seconds_count 6",
    ]
    exposition.parse(text)


def test_values_keep_every_digit_and_text_is_escaped() -> None:
    registry = Registry()
    registry.gauge("money_minor_units", "Money held, in minor units", lambda: 123_456_789)
    registry.gauge("ratio", "A ratio", lambda: 0.25)
    errors = registry.counter("errors_total", 'Errors\\ by "code"\nsecond line', "code")
    errors.labels('we"ird\\').value += 2
    text = registry.render()
    assert "money_minor_units 123456789\n" in text and "ratio 0.25\n" in text
    assert '# HELP errors_total Errors\\\\ by "code"\\nsecond line\n' in text
    assert 'errors_total{code="we\\"ird\\\\"} 2\n' in text
    assert exposition.parse(text).value("errors_total", code='we\\"ird\\\\') == 2


def test_only_declared_metrics_are_counted() -> None:
    registry = Registry()
    registry.counter("a_total", "As seen", "kind")
    with pytest.raises(KeyError):
        registry.inc("b_total")
    with pytest.raises(ValueError, match="labels"):
        registry.inc("a_total", colour="red")
    with pytest.raises(ValueError, match="_total"):
        registry.counter("c", "Cs")


def test_every_metric_of_a_fresh_server_has_help_that_says_something() -> None:
    parsed = exposition.parse(Metrics().render())
    assert set(parsed.type) >= {
        "croupier_bets_accepted_total",
        "croupier_bets_refused_total",
        "croupier_bet_ack_seconds",
        "croupier_event_loop_lag_seconds",
        "croupier_rounds_settled_total",
        "croupier_rounds_voided_total",
        "croupier_frames_sent_total",
        "croupier_frames_shed_total",
    }
    assert parsed.value("croupier_bet_ack_seconds_count") == 0
    for name, text in parsed.help.items():
        assert text[0].isupper() and len(text.split()) >= 4, (name, text)


def test_recovered_rounds_count_as_settled_or_voided_with_recovered_true() -> None:
    metrics = Metrics()
    metrics.count_recovered(
        [
            Recovered("bac", "bac.3", "completed", ("p1",)),
            Recovered("bac", "bac.4", "voided", ()),
            Recovered("gone", "gone.9", "voided", ()),
        ],
        {"bac": "baccarat"},
    )
    metrics.round_counter("baccarat")(RoundStatus.SETTLED)
    parsed = exposition.parse(metrics.render())
    settled, voided = "croupier_rounds_settled_total", "croupier_rounds_voided_total"
    assert parsed.value(settled, game="baccarat", recovered="true") == 1
    assert parsed.value(settled, game="baccarat", recovered="false") == 1
    assert parsed.value(voided, game="baccarat", recovered="true") == 1
    assert parsed.value(voided, game="unconfigured", recovered="true") == 1
