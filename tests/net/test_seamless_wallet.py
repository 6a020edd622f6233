"""A server playing with the operator's wallet (``[wallet] mode = "seamless"``,
docs/wallet.md), through the wire, against the reference operator wallet as a real process:
the balance at ``hello`` is the operator's, each bet is debited there, each round's returns
are credited there, and the operator's refusals and silences reach the player as the
documented codes. Afterwards the operator's balance is start − stakes + returns, it saw no
anomaly, and nothing is left to send."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jwt
import pytest
from websockets.asyncio.client import connect

from server.config import parse_config
from server.games.table import ConfigError
from server.protocol.messages import (
    PROTOCOL_VERSION,
    BalanceChanged,
    BetAccepted,
    Decide,
    ErrorMessage,
    Hello,
    Join,
    Joined,
    PlaceBet,
    Welcome,
)
from server.wallet.ledger import player_account
from tests.net.live import Client, advance, live_service
from tests.net.test_card_games import script_shoe
from tests.operator_wallet import OperatorWallet, running

SECRET = "operator-shared-secret-for-tests-only-0123456789"


def config(wallet: OperatorWallet, **extra: str) -> str:
    lines = "".join(f"{k} = {v}\n" for k, v in extra.items())
    return f"""
[auth]
mode = "jwt"
jwt_secret = "{SECRET}"

[wallet]
mode = "seamless"
url = "{wallet.url}"
secret_file = "{wallet.secret_file}"
currency = "USD"
timeout_ms = 1000
{lines}
[[tables]]
id = "rt"
name = "Roulette"
game = "roulette"
betting_seconds = 10
pause_seconds = 1
"""


def token(player: str, **claims: Any) -> str:
    payload = {"sub": player, "name": player, "exp": int(time.time()) + 600, **claims}
    return jwt.encode(payload, SECRET, "HS256")


@pytest.fixture
def wallet(tmp_path: Path) -> Iterator[OperatorWallet]:
    with running(tmp_path / "operator", "p-1", "p-2") as w:
        w.player("p-eu", 5_000, currency="EUR")
        yield w


async def hello(client: Client, player: str, **claims: Any) -> Any:
    await client.send(Hello(version=PROTOCOL_VERSION, token=token(player, **claims)))
    return await client.expect(Welcome | ErrorMessage)


async def round_at_rt(client: Client) -> str:
    """Join the roulette table ``rt``: the round in play."""
    await client.send(Join(table="rt"))
    round_id: str = (await client.expect(Joined)).snapshot.round
    return round_id


def moved(service: Any, player: str, kind: str) -> int:
    """What the local record shows moved for ``player`` by transfers of ``kind``."""
    return sum(
        t.amount for _, t in service.ledger.history(player_account(player)) if t.kind == kind
    )


@pytest.mark.parametrize("store", ["sqlite", "postgres"])
def test_a_round_with_the_operator_s_money(
    tmp_path: Path, wallet: OperatorWallet, store: str, request: pytest.FixtureRequest
) -> None:
    """On the embedded files, and on one PostgreSQL database (where the ledger and the
    journal share a writer: the seamless ledger must still ask the operator first)."""
    text = config(wallet)
    if store == "postgres":
        url = request.getfixturevalue("postgres_url")
        text = f'[cluster]\ndatabase_url = "{url}"\n' + text

    async def scenario() -> None:
        async with (
            live_service(tmp_path, text) as service,
            connect(f"ws://127.0.0.1:{service.port}/ws") as ws,
        ):
            pat = Client(ws)
            welcome = await hello(pat, "p-1")
            assert isinstance(welcome, Welcome)
            assert (welcome.balance, welcome.currency, welcome.play_money) == (10_000, "USD", False)
            r = await round_at_rt(pat)
            await pat.send(PlaceBet(table="rt", round=r, bet_id="a", spot="red", amount=1_000))
            await pat.send(PlaceBet(table="rt", round=r, bet_id="b", spot="black", amount=500))
            first, second = await pat.expect(BetAccepted), await pat.expect(BetAccepted)
            # Both debits are in flight at once: the operator applies them in either order,
            # and each acknowledgement shows its answer.
            assert sorted([first.balance, second.balance]) in ([8_500, 9_000], [8_500, 9_500])
            assert wallet.balance_of("p-1") == 8_500  # debited at the operator, not here
            await advance(service, 10)
            await pat.event("round_settled")
            await asyncio.sleep(0.1)  # the round's end queues its credit
            await service.ledger.settled(10)
            stakes = moved(service, "p-1", "wallet-debit")
            returns = moved(service, "p-1", "wallet-credit")
            assert stakes == 1_500 and returns in (0, 1_000, 2_000)  # zero, black, red
            assert wallet.balance_of("p-1") == 10_000 - stakes + returns
            assert service.ledger.balance(player_account("p-1")) == 10_000 - stakes + returns
            assert service.ledger.local.balance(player_account("p-1")) == 0
            assert service.ledger.outbox.pending() == []

    asyncio.run(scenario())
    state = wallet.state()
    assert state["anomalies"] == [] and state["open_debits"] == []
    assert state["calls"]["credit"] == 1 and state["debits"] == {"settled": 2}


def test_refusals_and_silences_reach_the_player(tmp_path: Path, wallet: OperatorWallet) -> None:
    async def scenario() -> None:
        async with (
            live_service(tmp_path, config(wallet)) as service,
            connect(f"ws://127.0.0.1:{service.port}/ws") as ws,
        ):
            pat = Client(ws)
            wallet.knobs(down=True)
            refused = await hello(pat, "p-2")
            assert isinstance(refused, ErrorMessage) and refused.code == "wallet_unavailable"
            wallet.knobs(down=False)
            assert isinstance(await hello(pat, "p-2"), Welcome)
            r = await round_at_rt(pat)
            wallet.knobs(refuse={"p-2": "limit_reached"})
            await pat.send(PlaceBet(table="rt", round=r, bet_id="a", spot="red", amount=1_000))
            error = await pat.expect(ErrorMessage)
            assert error.code == "limit_reached" and "limit_reached" in error.message
            wallet.knobs(refuse={}, timeout_after={"debit": 1}, hang_ms=3_000)
            await pat.send(PlaceBet(table="rt", round=r, bet_id="b", spot="red", amount=700))
            error = await pat.expect(ErrorMessage)
            assert error.code == "wallet_unavailable"
            await pat.send(PlaceBet(table="rt", round=r, bet_id="c", spot="red", amount=300))
            assert (await pat.expect(BetAccepted)).balance == 9_700
            await advance(service, 10)
            await pat.event("round_settled")
            await asyncio.sleep(0.1)
            await service.ledger.settled(10)
            returns = moved(service, "p-2", "wallet-credit")
            # The unanswered debit of 700 was applied at the operator, then rolled back.
            assert wallet.balance_of("p-2") == 10_000 - 300 + returns

    asyncio.run(scenario())
    state = wallet.state()
    assert state["anomalies"] == [] and state["open_debits"] == []
    assert state["debits"] == {"refused": 1, "rolled_back": 1, "settled": 1}


def test_a_token_s_currency_is_the_player_s(tmp_path: Path, wallet: OperatorWallet) -> None:
    async def scenario() -> None:
        async with (
            live_service(tmp_path, config(wallet)) as service,
            connect(f"ws://127.0.0.1:{service.port}/ws") as ws,
        ):
            eu = Client(ws)
            welcome = await hello(eu, "p-eu", currency="EUR")
            assert isinstance(welcome, Welcome) and (welcome.balance, welcome.currency) == (
                5_000,
                "EUR",
            )
            r = await round_at_rt(eu)
            await eu.send(PlaceBet(table="rt", round=r, bet_id="a", spot="red", amount=1_000))
            assert (await eu.expect(BetAccepted)).balance == 4_000
            await advance(service, 10)
            await eu.event("round_settled")
            await asyncio.sleep(0.1)
            await service.ledger.settled(10)

    asyncio.run(scenario())
    assert wallet.state()["anomalies"] == []


WAR = """
[[tables]]
id = "war"
name = "Casino War"
game = "casino_war"
betting_seconds = 10
pause_seconds = 1
decision_seconds = 5
"""


def test_a_war_decision_s_stake_is_the_operator_s_to_take_or_refuse(
    tmp_path: Path, wallet: OperatorWallet
) -> None:
    """Going to War debits the War Wager at the operator *before* the decision is taken:
    refused, the player is told the operator's code and still decides (here: surrenders);
    taken, the War is dealt. Both ties settle at the operator as start − stakes + returns."""
    text = config(wallet).split("[[tables]]")[0] + WAR

    async def scenario() -> None:
        async with (
            live_service(tmp_path, text) as service,
            connect(f"ws://127.0.0.1:{service.port}/ws") as ws1,
            connect(f"ws://127.0.0.1:{service.port}/ws") as ws2,
        ):
            ann, bob = Client(ws1), Client(ws2)
            assert isinstance(await hello(ann, "p-1"), Welcome)
            assert isinstance(await hello(bob, "p-2"), Welcome)
            await ann.send(Join(table="war"))
            seat_a = (await ann.expect(Joined)).snapshot.seat
            await bob.send(Join(table="war"))
            joined = await bob.expect(Joined)
            seat_b, r = joined.snapshot.seat, joined.snapshot.round
            # Both boxes tie the dealer's 9; at War, three burns, Ann's K, the dealer's 5.
            script_shoe(service, "war", "9H 9S 9D  2C 3C 4C  KH 5D")
            for client, seat, amount in ((ann, seat_a, 1_000), (bob, seat_b, 600)):
                spot = f"initial:{seat}"
                await client.send(
                    PlaceBet(table="war", round=r, bet_id="a", spot=spot, amount=amount)
                )
                await client.expect(BetAccepted)
            await advance(service, 10)
            await ann.event("decision_requested")
            asked = {ann: f"initial:{seat_a}", bob: f"initial:{seat_b}"}
            wallet.knobs(refuse={"p-2": "limit_reached"})
            for _ in range(2):  # the same decision again: the operator answers it as before
                await bob.send(Decide(table="war", round=r, spot=asked[bob], decision="war"))
                error = await bob.expect(ErrorMessage)
                assert error.code == "limit_reached", error
            assert wallet.balance_of("p-2") == 10_000 - 600  # nothing more was taken
            await bob.send(Decide(table="war", round=r, spot=asked[bob], decision="surrender"))
            await ann.send(Decide(table="war", round=r, spot=asked[ann], decision="war"))
            await ann.expect(BalanceChanged)  # the War Wager was debited at the operator
            assert wallet.balance_of("p-1") == 10_000 - 2_000
            await ann.event("round_settled")
            await asyncio.sleep(0.1)
            await service.ledger.settled(10)
            assert service.ledger.outbox.pending() == []
            assert service.ledger.balance("wagers:open") == 0
            assert service.ledger.reconcile() == {} and service.ledger.total() == 0

    asyncio.run(scenario())
    # Ann: Initial 1,000 forfeited, War Wager 1,000 won 2 to 1; Bob surrendered half of 600.
    assert wallet.balance_of("p-1") == 10_000 - 1_000 + 2_000
    assert wallet.balance_of("p-2") == 10_000 - 300
    state = wallet.state()
    assert state["anomalies"] == [] and state["open_debits"] == []
    assert state["debits"] == {"settled": 3, "refused": 1}


@pytest.mark.parametrize(
    "change, problem",
    [
        ({"auth": 'mode = "demo"'}, "needs [auth] mode 'jwt'"),
        ({"wallet_url": '"ftp://x"'}, "is not an http:// or https://HOST"),
        ({"wallet_url": '"http://wallet/a b?x=1"'}, "without query or spaces"),
        ({"wallet_currency": '"dollars"'}, "ISO 4217"),
        ({"wallet_extra": 'colour = "red"'}, "unknown setting"),
    ],
)
def test_the_wallet_section_is_checked(
    tmp_path: Path, change: dict[str, str], problem: str
) -> None:
    secret = tmp_path / "secret"
    secret.write_text("s" * 32)
    auth = change.get("auth", f'mode = "jwt"\njwt_secret = "{SECRET}"')
    text = f"""
[auth]
{auth}

[wallet]
mode = "seamless"
url = {change.get("wallet_url", '"http://127.0.0.1:9/w"')}
secret_file = "{secret}"
currency = {change.get("wallet_currency", '"USD"')}
{change.get("wallet_extra", "")}

[[tables]]
id = "t"
name = "T"
game = {change.get("game", '"roulette"')}
"""
    with pytest.raises(ConfigError, match=problem.replace("[", r"\[").replace("]", r"\]")):
        parse_config(text, "test.toml")


def test_wallet_pending_lists_what_the_operator_has_not_answered(
    tmp_path: Path, wallet: OperatorWallet, capsys: pytest.CaptureFixture[str]
) -> None:
    """The operator goes down before a round's credit: ``croupier wallet pending`` lists it,
    with its age, attempts and last error; once the operator is back and the server has
    sent it (the next start, here), nothing is pending."""
    from server.cli.main import main

    data = ["--data-dir", str(tmp_path)]
    assert main(["wallet", "pending", *data]) == 0
    assert "never played with an operator's wallet" in capsys.readouterr().out

    async def round_then_down() -> None:
        async with (
            live_service(tmp_path, config(wallet)) as service,
            connect(f"ws://127.0.0.1:{service.port}/ws") as ws,
        ):
            pat = Client(ws)
            assert isinstance(await hello(pat, "p-1"), Welcome)
            r = await round_at_rt(pat)
            await pat.send(PlaceBet(table="rt", round=r, bet_id="a", spot="red", amount=1_000))
            await pat.expect(BetAccepted)
            wallet.knobs(down=True)
            await advance(service, 10)
            await pat.event("round_settled")
            await asyncio.sleep(0.6)  # the credit queued, and sent (503) at least once

    asyncio.run(round_then_down())
    # Players' money here is the operator's: the transfer-wallet commands refuse.
    assert main(["wallet", "credit", "p-1", "500", "--reference", "r1", *data]) == 2
    assert main(["wallet", "balance", "p-1", *data]) == 2
    assert "plays with the operator's wallet" in capsys.readouterr().err
    assert main(["wallet", "pending", *data]) == 0
    out = capsys.readouterr().out
    assert "1 pending" in out and "credit" in out and "to p-1 (round rt." in out
    assert "last: HTTP 503" in out
    wallet.knobs(down=False)

    async def restart() -> None:
        async with live_service(tmp_path, config(wallet)) as service:
            await service.ledger.settled(10)

    asyncio.run(restart())
    assert main(["wallet", "pending", *data]) == 0
    assert "nothing pending" in capsys.readouterr().out
    state = wallet.state()
    assert state["anomalies"] == [] and state["open_debits"] == []
    assert state["debits"] == {"settled": 1}


def test_reconcile_against_the_operator_s_statement(
    tmp_path: Path, wallet: OperatorWallet, capsys: pytest.CaptureFixture[str]
) -> None:
    """A round's calls, then the operator's statement: as exported it agrees; with a line
    dropped, an amount changed or a transaction Croupier never made, each difference is
    printed and the command exits 1."""
    import json

    from server.cli.main import main

    async def a_round() -> None:
        async with (
            live_service(tmp_path, config(wallet)) as service,
            connect(f"ws://127.0.0.1:{service.port}/ws") as ws,
        ):
            pat = Client(ws)
            assert isinstance(await hello(pat, "p-1"), Welcome)
            r = await round_at_rt(pat)
            for bet, amount in (("a", 1_000), ("b", 300)):
                await pat.send(PlaceBet(table="rt", round=r, bet_id=bet, spot="red", amount=amount))
                await pat.expect(BetAccepted)
            await advance(service, 10)
            await pat.event("round_settled")
            await asyncio.sleep(0.1)
            await service.ledger.settled(10)

    asyncio.run(a_round())
    lines = wallet.get("/_reference/statement").raw.decode().splitlines()
    assert [json.loads(line)["operation"] for line in lines] == ["debit", "debit", "credit"]
    data = ["wallet", "reconcile", "--data-dir", str(tmp_path), "--operator-statement"]

    def reconcile(text: list[str]) -> tuple[int, str]:
        statement = tmp_path / "statement.jsonl"
        statement.write_text("\n".join(text) + "\n")
        code = main([*data, str(statement)])
        return code, capsys.readouterr().out

    code, out = reconcile(lines)
    assert code == 0 and "the operator's statement agrees (3 transactions)" in out
    changed = json.loads(lines[0]) | {"amount": 999}
    stranger = json.loads(lines[2]) | {"transaction_id": "credit-from-nowhere", "amount": 5}
    code, out = reconcile([json.dumps(changed), lines[2], json.dumps(stranger)])
    assert code == 1 and "3 differences" in out, out
    assert "Croupier has debit of 1000 for p-1, the operator debit of 999 for p-1" in out
    assert "statement lacks it" in out  # the dropped debit of 300
    assert "credit-from-nowhere: the operator applied credit of 5 for p-1, unknown to" in out
    code, out = reconcile(["not json"])
    assert code == 2


def test_the_round_history_api(
    tmp_path: Path, wallet: OperatorWallet, capsys: pytest.CaptureFixture[str]
) -> None:
    """``GET /operator/rounds/{id}`` tells a round's whole story with each wallet call and its
    answer; ``GET /operator/players/{id}/rounds`` pages through a player's rounds; both want
    the configured bearer token."""
    import json
    import urllib.error
    import urllib.request

    token_file = tmp_path / "api.token"
    token_file.write_text("t" * 40)
    text = config(wallet) + f'\n[operator_api]\ntoken_file = "{token_file}"\n'

    def get(port: int, path: str, token: str | None = "t" * 40) -> tuple[int, Any]:
        request = urllib.request.Request(f"http://127.0.0.1:{port}{path}")
        if token is not None:
            request.add_header("Authorization", f"Bearer {token}")
        try:
            with urllib.request.urlopen(request, timeout=5) as answer:
                return answer.status, json.loads(answer.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())

    async def scenario() -> None:
        async with (
            live_service(tmp_path, text) as service,
            connect(f"ws://127.0.0.1:{service.port}/ws") as ws,
        ):
            pat = Client(ws)
            assert isinstance(await hello(pat, "p-1"), Welcome)
            r = await round_at_rt(pat)
            await pat.send(PlaceBet(table="rt", round=r, bet_id="a", spot="red", amount=1_000))
            await pat.expect(BetAccepted)
            await advance(service, 10)
            await pat.event("round_settled")
            await asyncio.sleep(0.1)
            await service.ledger.settled(10)
            port = service.port

            def calls() -> None:
                assert get(port, f"/operator/rounds/{r}", token=None)[0] == 401
                assert get(port, f"/operator/rounds/{r}", token="wrong" * 8)[0] == 401
                status, story = get(port, f"/operator/rounds/{r}")
                assert status == 200 and story["round"] == r and story["status"] == "settled"
                assert [j["kind"] for j in story["journal"]][:2] == ["opened", "bet"]
                names = [e["event"] for e in story["events"]]
                assert "wager_settled" in names and names[-1] == "round_settled", names
                assert {m["kind"] for m in story["money"]} >= {"wallet-debit", "wager"}
                wallet_calls = [(c["operation"], c["outcome"]) for c in story["wallet"]]
                assert wallet_calls == [("debit", "ok"), ("credit", "ok")]
                assert story["wallet"][0]["bet_id"] == "a"
                assert story["wallet"][0]["debit_state"] == "settled"
                assert get(port, "/operator/rounds/rt.99999")[0] == 404
                status, mine = get(port, "/operator/players/p-1/rounds")
                assert status == 200 and mine["rounds"] == [r]
                assert get(port, f"/operator/players/p-1/rounds?since={r}")[1]["rounds"] == []
                assert get(port, "/operator/players/p-1/rounds?limit=0")[0] == 400
                assert get(port, "/operator/players/p-1/rounds?since=rt.99999")[0] == 400

            await asyncio.to_thread(calls)
            played.append(r)

    played: list[str] = []
    asyncio.run(scenario())
    # ``croupier replay`` tells the same story, the operator's calls included.
    from server.cli.main import main

    config_file = tmp_path / "croupier.toml"
    config_file.write_text(text)
    args = ["replay", played[0], "--data-dir", str(tmp_path), "--config", str(config_file)]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "the operator's wallet (each call and its answer):" in out
    assert "debit" in out and "credit" in out and "#1 ok: balance" in out


def test_the_operator_routes_are_not_found_without_the_api(tmp_path: Path) -> None:
    """Without ``[operator_api]`` an ``/operator/…`` path is a 404, never the browser
    client's page."""
    import urllib.error
    import urllib.request

    async def scenario() -> int:
        async with live_service(tmp_path) as service:

            def get() -> int:
                try:
                    url = f"http://127.0.0.1:{service.port}/operator/rounds/rt.1"
                    with urllib.request.urlopen(url, timeout=5) as answer:
                        return int(answer.status)
                except urllib.error.HTTPError as exc:
                    return exc.code

            return await asyncio.to_thread(get)

    assert asyncio.run(scenario()) == 404


def test_only_the_operator_s_players_and_currencies_are_admitted(
    tmp_path: Path, wallet: OperatorWallet
) -> None:
    """A play-money token this server signed (a demo player of an earlier run on the same
    data directory) is not the operator's player; and where the server cannot keep a
    player's own currency (a cluster: the node running the table never hears the token),
    a token in another currency than the configuration's is refused, not debited in the
    wrong one."""
    from server.tables import players as players_module

    async def scenario() -> None:
        async with (
            live_service(tmp_path, config(wallet)) as service,
            connect(f"ws://127.0.0.1:{service.port}/ws") as ws,
        ):
            client = Client(ws)
            demo = jwt.encode(
                {"sub": "demo-1", "name": "d", "aud": players_module._DEMO_AUDIENCE},
                service.players._demo_secret,
                "HS256",
            )
            await client.send(Hello(version=PROTOCOL_VERSION, token=demo))
            refused = await client.expect(ErrorMessage)
            assert refused.code == "bad_token" and "operator's players" in refused.message
            service.ledger.per_player_currency = False  # as on a cluster's node
            refused = await hello(client, "p-eu", currency="EUR")
            assert isinstance(refused, ErrorMessage) and refused.code == "bad_token"
            assert "plays in USD only" in refused.message
            assert isinstance(await hello(client, "p-1", currency="USD"), Welcome)

    asyncio.run(scenario())
