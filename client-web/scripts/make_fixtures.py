"""Write the codec fixtures the client's Vitest tests read: the server's own encoding of
representative messages, so the browser client and the server cannot drift apart.

    .venv/bin/python client-web/scripts/make_fixtures.py [OUT_DIR]

For every message below it writes ``OUT_DIR/<direction>/<name>.msgpack`` (the bytes
``server.protocol.codec.encode`` produces) and ``<name>.json`` (what the message means, with
every field present, defaults included). ``test/codec.test.ts`` decodes the server messages
with the client codec and compares them with the JSON, and encodes the client messages with
the client codec and compares the bytes. ``tests/e2e/test_codec_fixtures.py`` checks that the
committed fixtures are what this script writes today (run it again after a protocol change)
and that the server decodes every client fixture.

OUT_DIR defaults to ``client-web/test/fixtures``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import msgspec

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from server.protocol.codec import decode_client, encode  # noqa: E402
from server.protocol.messages import (  # noqa: E402
    AttendantAction,
    BalanceChanged,
    BetAccepted,
    BetCancelled,
    CallAttendant,
    CancelBet,
    CashedOut,
    CashOut,
    Decide,
    ErrorMessage,
    GetRecall,
    GetRules,
    Hello,
    Join,
    Joined,
    Leave,
    Left,
    ListTables,
    Lobby,
    Notice,
    Ping,
    PlaceBet,
    Pong,
    Recall,
    RecalledRound,
    RepeatBets,
    Resume,
    Rules,
    StationLock,
    StationStatus,
    TableEvent,
    TableSnapshot,
    TableSummary,
    Welcome,
    Winners,
)

TOKEN = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJkZW1vLTEyMyJ9.c2lnbmF0dXJl"

SERVER: dict[str, Any] = {
    "welcome": Welcome(
        version=1,
        player_id="demo-426be7c3b79a",
        name="Ann",
        balance=100000,
        currency="PLAY",
        play_money=True,
        token=TOKEN,
    ),
    "welcome_ref": Welcome(
        version=1,
        player_id="p-1",
        name="Zoë ♠",
        balance=10**12,
        currency="USD",
        play_money=False,
        token=TOKEN,
        ref=2**31,
    ),
    "welcome_station": Welcome(
        version=1,
        player_id="station:st-3",
        name="Station st-3",
        balance=12550,
        currency="PLAY",
        play_money=True,
        token=TOKEN,
        station="st-3",
    ),
    "notice": Notice(
        code="round_voided",
        message="A round of yours was voided by a restart; wagers returned.",
        table="baccarat",
        round="baccarat.7",
    ),
    "notice_minimal": Notice(code="round_completed", message="done"),
    "lobby": Lobby(
        tables=[
            TableSummary(
                table="baccarat",
                name="Baccarat — Punto Banco",
                game="baccarat",
                variant="standard",
                minimum=100,
                maximum=500000,
                seats=7,
                seated=2,
                phase="betting",
                closes_in_ms=11234,
                last_results=["player 8-5", "banker 9-8", "tie 8-8"],
            ),
            TableSummary(
                table="lucky-nines",
                name="Lucky Nines",
                game="baccarat",
                variant="standard",
                minimum=100,
                maximum=500000,
                seats=7,
                seated=0,
                phase="settled",
                closes_in_ms=None,
                last_results=[],
                automated=True,
                stations_only=True,
            ),
            TableSummary(
                table="casino-war",
                name="Casino War",
                game="casino_war",
                variant="6_decks",
                minimum=100,
                maximum=100000,
                seats=7,
                seated=3,
                phase="betting",
                closes_in_ms=5000,
                last_results=[],
                boxed=True,
            ),
        ],
        ref=3,
    ),
    "event_card_dealt": TableEvent(
        table="baccarat",
        seq=44,
        round="baccarat.2",
        event="card_dealt",
        data={"target": "player", "card": "10H", "seq": 0, "face_up": True},
    ),
    "event_hole_card": TableEvent(
        table="down-under",
        seq=48,
        round="down-under.14",
        event="card_dealt",
        data={"target": "dealer", "seq": 3, "face_up": False},
    ),
    "event_wager_settled": TableEvent(
        table="baccarat",
        seq=25,
        round="baccarat.2",
        event="wager_settled",
        data={
            "settlement": {
                "wager": {
                    "bet_id": "b10",
                    "player_id": "demo-426be7c3b79a",
                    "spot": "banker",
                    "amount": 500,
                },
                "outcome": {"result": "win", "net": "19/20"},
                "returned": 975,
            }
        },
    ),
    "event_betting_opened": TableEvent(
        table="roulette-single", seq=53, round="roulette-single.14", event="betting_opened", data={}
    ),
    "event_ball_landed": TableEvent(
        table="roulette-double",
        seq=61,
        round="roulette-double.3",
        event="ball_landed",
        data={"spin": 0, "label": "00"},
    ),
    "event_decision_requested": TableEvent(
        table="casino-war",
        seq=12,
        round="casino-war.4",
        event="decision_requested",
        data={
            "player_id": "demo-1",
            "spot": "initial:3",
            "options": ["war", "war+tie", "surrender"],
            "default": "surrender",
        },
    ),
    "event_reader_light": TableEvent(
        table="down-under",
        seq=50,
        round="down-under.14",
        event="hole_card_range_read",
        data={"range": "large", "light": "yellow"},
    ),
    "joined": Joined(
        table="down-under",
        role="player",
        snapshot=TableSnapshot(
            table="down-under",
            seq=40,
            round="down-under.13",
            phase="deciding",
            closes_in_ms=None,
            cards={"bet:2": ["AC", "5S"], "dealer": ["JC"]},
            my_bets=[{"bet_id": "b1", "spot": "bet:2", "amount": 500}],
            pending_decision={
                "spot": "bet:2",
                "options": ["hit", "stand", "double"],
                "default": "stand",
                "closes_in_ms": 9000,
            },
            meters={},
            last_results=["dealer 19", "dealer 22"],
            seat=2,
        ),
        resumed=True,
        ref=9,
    ),
    "joined_minimal": Joined(
        table="baccarat",
        role="spectator",
        snapshot=TableSnapshot(
            table="baccarat",
            seq=0,
            round=None,
            phase="waiting",
            closes_in_ms=None,
            cards={},
            my_bets=[],
            pending_decision=None,
            meters={"heavenly_9_progressive": 1000000},
            last_results=[],
        ),
    ),
    "left": Left(table="baccarat"),
    "bet_accepted": BetAccepted(
        table="roulette-single",
        round="roulette-single.14",
        bet_id="r14-3",
        spot="split:17-20",
        amount=500,
        balance=99500,
        ref=7,
    ),
    "bet_cancelled": BetCancelled(
        table="baccarat", round="baccarat.2", bet_id="b1", balance=100000, ref=8
    ),
    "balance": BalanceChanged(balance=100475, reason="settlement"),
    "recall": Recall(
        rounds=[
            RecalledRound(
                table="baccarat",
                round="baccarat.3",
                game="baccarat",
                result="banker 6-5",
                cards={"player": ["KC", "5H", "10H"], "banker": ["3S", "10D", "3D"]},
                wagers=[
                    {
                        "bet_id": "b20",
                        "spot": "banker",
                        "amount": 500,
                        "result": "win",
                        "returned": 975,
                    }
                ],
                wagered=500,
                returned=975,
                balance_after=None,
                awarded=0,
            )
        ]
    ),
    "rules": Rules(
        table="casino-war",
        game="casino_war",
        variant="6_decks",
        summary="Casino War (58 Pa. Code 651a): your card against the dealer's, ace high.",
        paytables={"initial": "1 to 1", "tie": "10 to 1"},
        limits={"minimum": 100, "maximum": 100000},
        spots=["initial:{seat}", "tie:{seat}"],
        main_spots=["initial:{seat}"],
        boxed=True,
        seats=7,
    ),
    "rules_spot_limits": Rules(
        table="baccarat",
        game="baccarat",
        variant="standard",
        summary="Baccarat",
        paytables={"player": {"section": "631a.13(a)", "letter": None, "pays": {"tie": "0 to 1"}}},
        limits={"minimum": 100, "maximum": 500000},
        spots=["player", "banker", "tie", "heavenly_9_progressive"],
        main_spots=["player", "banker"],
        spot_limits={"heavenly_9_progressive": {"minimum": 500, "maximum": 500000}},
        ref=4,
    ),
    "pong": Pong(nonce=2**53, ref=1),
    "station": StationStatus(
        station="st-3",
        seat=3,
        tables=["lucky-nines", "baccarat-ez"],
        credits=12550,
        enabled=False,
        locks=[
            StationLock(cause="door_open", since="2025-05-02T18:04:11Z", present=True),
            StationLock(cause="printer", since="2025-05-02T18:05:00Z", detail="paper out"),
        ],
        handpay={"amount": 250000, "kind": "jackpot", "round": "lucky-nines.41"},
        attendant="att-17",
        meters={
            "credits_in": 50000,
            "credits_out": 20000,
            "wagered": 120000,
            "won": 102550,
            "games_played": 41,
            "games_won": 19,
            "bills_in": {"2000": 2, "10000": 1},
            "tickets_out": 1,
            "tickets_out_amount": 20000,
        },
        called=True,
        player_card="4000123412341234",
        last_ticket={
            "validation": "001234567890123456",
            "amount": 20000,
            "expires_at": "2025-08-01T00:00:00Z",
        },
        ref=5,
    ),
    "station_minimal": StationStatus(
        station="st-1", seat=1, tables=["lucky-nines"], credits=0, enabled=True
    ),
    "cashed_out": CashedOut(
        validation="001234567890123456", amount=20000, expires_at="2025-08-01T00:00:00Z", ref=6
    ),
    "winners": Winners(
        table="lucky-nines",
        round="lucky-nines.41",
        wins=[{"seat": 3, "amount": 45000}, {"seat": 1, "amount": 1000}],
    ),
    "error": ErrorMessage(
        code="five_adjacent_amount",
        message="a Five Adjacent Numbers wager is five equal straight wagers",
        value=7,
        ref=12,
    ),
    "error_minimal": ErrorMessage(code="hello_first", message="send hello first"),
}

CLIENT: dict[str, Any] = {
    "hello_name": Hello(version=1, name="Ann"),
    "hello_token": Hello(version=1, token=TOKEN, ref=1),
    "list_tables": ListTables(ref=2),
    "join": Join(table="baccarat"),
    "join_spectator": Join(table="roulette-single", role="spectator", ref=3),
    "resume": Resume(table="down-under", last_seq=41, ref=4),
    "leave": Leave(table="baccarat"),
    "place_bet": PlaceBet(
        table="roulette-single",
        round="roulette-single.14",
        bet_id="r14-1",
        spot="five_adjacent:17",
        amount=500,
        ref=5,
    ),
    "place_bet_large": PlaceBet(
        table="baccarat", round="baccarat.2", bet_id="b1", spot="banker", amount=10**12
    ),
    "cancel_bet": CancelBet(table="baccarat", round="baccarat.2", bet_id="b1", ref=6),
    "repeat_bets": RepeatBets(table="baccarat", round="baccarat.3", bet_id_prefix="rep3", ref=7),
    "decide": Decide(
        table="casino-war", round="casino-war.4", spot="initial:3", decision="war+tie:100"
    ),
    "get_recall": GetRecall(table="baccarat"),
    "get_recall_all": GetRecall(),
    "get_rules": GetRules(table="down-under", ref=8),
    "ping": Ping(nonce=1732270000123, ref=9),
    "cash_out": CashOut(ref=10),
    "call_attendant": CallAttendant(on=False, ref=11),
    "call_attendant_on": CallAttendant(),
    "attendant_action": AttendantAction(action="clear", ref=12),
    "attendant_action_handpay": AttendantAction(action="handpay"),
}


def full(message: Any) -> dict[str, Any]:
    """The message as JSON with every field, defaults included (what the client decodes)."""
    out: dict[str, Any] = {"type": type(message).__struct_config__.tag}
    for name in message.__struct_fields__:
        out[name] = msgspec.to_builtins(getattr(message, name))
    return out


def sent(message: Any) -> dict[str, Any]:
    """The message as the client builds it: defaults left out, as on the wire."""
    return msgspec.json.decode(msgspec.json.encode(message))  # omit_defaults applies


def write(out: Path) -> None:
    for direction, messages in (("server", SERVER), ("client", CLIENT)):
        folder = out / direction
        folder.mkdir(parents=True, exist_ok=True)
        for stale in folder.glob("*"):
            stale.unlink()
        for name, message in messages.items():
            frame = encode(message)
            (folder / f"{name}.msgpack").write_bytes(frame)
            if direction == "client":
                assert decode_client(frame) == message
                meaning = {"type": type(message).__struct_config__.tag, **sent(message)}
            else:
                meaning = full(message)
            (folder / f"{name}.json").write_text(
                json.dumps(meaning, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
            )


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "client-web" / "test" / "fixtures"
    write(target)
    print(f"wrote {len(SERVER)} server and {len(CLIENT)} client fixtures to {target}")
