"""A Cammegh-style automated roulette wheel's ASCII lines ↔ the wheel role's messages,
sans-I/O: bytes in, messages out; commands in, bytes out; no I/O and no clock
(docs/devices.md, "Writing an adapter for a new vendor").

**Unverified.** Everything below comes from second-hand sources — a third party's
integration code that cites the vendor's "SS2 Series Developers Guide" and replays captured
logs, and its summary of the owner's handbook — never from the vendor's own manual. Check
every field, flag and command against the manual and a capture from the real wheel before a
table goes live on one.

From the wheel, one record per line (CR LF; a lone CR or LF is accepted too), the fields of
a status line separated by ``;`` (``:`` in some captures: both are accepted, one per line):

    *X;<state>;<game>;<last winning number>;<warning flags>;<rotor speed>;<direction>
    *W;<warning flags>        (also "*W <flags>")
    *P 0 | *P 1 | *P OK       power off, power on, the answer to a power command
    *R ok                     the answer to a restart

about every 0.5 s. States: 1 game start, 2 rotor rotating (a game starts), 3 ball in track,
4 no more bets, 5 winning number, 6 table closed. Warning flags, a hexadecimal sum: 1 the
ball removed or not sensed, 2 the ball travelling in the rotor's direction, 4 an in-rim
sensor, the motor or the encoder failed, 8 a void game (the ball launch failed; the wheel
launches again by itself). Other records (``*F`` errors, ``*M`` statistics …) are counted
and ignored. To the wheel: ``*u 1`` (start the next game: the wheel must be in its "user
game start" mode, so that it spins once per round of the table) and ``*R`` (restart the
game).

The line carries no checksum, so the adapter validates what it can: the syntax of every
record, the order of states within a game (forward, 1 → 2 → 3 → 4 → 5, lost lines allowed;
back to 1 or 2 only to spin a game again before its result; nothing but 1 after it), and
the game number's continuity (a new game is the last one + 1). A line out of order is
dropped (``out_of_order``); a game number that jumps is passed on with its number and
reported (``game_jump``), and the table holds on it as on any wheel's jump.

The wheel knows no round ids: a game that starts (state 2) after a ``StartSpin`` or
``Restart`` spins for that command's round, and its result is tagged with it; a re-launch of
the same game keeps its round; a game that started before any such command (or whose start
was never seen) gives its result with no round, which the table ignores — so a result that
was under way before betting closed never settles a round.
"""

from __future__ import annotations

import re
from typing import Any, Final, Literal

from server.devices.adapters.base import LineIssue, Received
from server.devices.messages import (
    DeviceFault,
    Restart,
    StartSpin,
    WheelPhase,
    WheelResult,
    WheelWarning,
)

__all__ = ["MAX_LINE", "PHASES", "WARNING_FLAGS", "CammeghWheel"]

MAX_LINE: Final = 120  # characters: a status line is about 30
GAME_START, SPINNING, BALL_IN_TRACK, NO_MORE_BETS, RESULT, CLOSED = 1, 2, 3, 4, 5, 6
Phase = Literal["idle", "spinning", "ball_launched", "no_more_bets", "result", "closed"]
Warning = Literal["no_spin", "ball_not_sensed", "ball_removed", "between_sections", "wheel_stopped"]
PHASES: Final[dict[int, Phase]] = {
    GAME_START: "idle",
    SPINNING: "spinning",
    BALL_IN_TRACK: "ball_launched",
    NO_MORE_BETS: "no_more_bets",
    RESULT: "result",
    CLOSED: "closed",
}
# Flag -> the warning it is (WheelWarning: the table restarts the spin) and its detail.
WARNING_FLAGS: Final[dict[int, tuple[Warning, str]]] = {
    1: ("ball_not_sensed", "the ball was removed or not sensed by the rim sensors"),
    2: ("no_spin", "the ball travelled in the direction of the rotor"),
    4: ("wheel_stopped", "an in-rim sensor, the motor or the encoder failed"),
    8: ("no_spin", "void game: the ball launch failed"),
}
START_GAME: Final = b"*u 1\r\n"
RESTART_GAME: Final = b"*R\r\n"

_STATUS = re.compile(
    r"\*X(?P<sep>[;:])(?P<state>\d)(?P=sep)(?P<game>\d{1,9})(?P=sep)(?P<last>\d{1,2})"
    r"(?P=sep)(?P<flags>[0-9A-Fa-f]{1,4})(?P=sep)(?P<speed>\d{1,5})(?P=sep)(?P<direction>[0-9A-Za-z]{1,3})"
)
_WARNINGS = re.compile(r"\*W[;: ]?(?P<flags>[0-9A-Fa-f]{1,4})")
_POWER = re.compile(r"\*P[;: ]?(?P<value>0|1|OK)", re.IGNORECASE)
_RESTARTED = re.compile(r"\*R[;: ]?OK", re.IGNORECASE)
_KNOWN = ("*X", "*W", "*P", "*R")  # a line of these that does not parse is malformed
_OTHER_RECORD = re.compile(r"\*[A-Za-z][\x20-\x7e]*")
_TERMINATOR = re.compile(rb"[\r\n]")


class CammeghWheel:
    """One wheel's line: ``receive`` its bytes, ``command`` the table's commands to it."""

    role = "wheel"

    def __init__(self) -> None:
        self.state: int | None = None
        self.game: int | None = None
        self.flags = 0
        self.power_off = False
        self._partial = b""
        self._too_long = False  # inside a line longer than MAX_LINE: dropped to its end
        self._armed = ""  # the round of the last StartSpin or Restart, for the next game
        self._spinning_for = ""  # the round of the game under way
        self._decided: tuple[int, str] | None = None  # the last game given a result, and it

    # --- to the wheel -------------------------------------------------------------------------

    def command(self, message: Any) -> bytes:
        if isinstance(message, StartSpin):
            self._armed = message.round
            return START_GAME
        if isinstance(message, Restart):
            self._armed = message.round
            return RESTART_GAME
        return b""  # the wheel has nothing to do with anything else

    def line_opened(self) -> None:
        self._partial, self._too_long = b"", False

    # --- from the wheel -----------------------------------------------------------------------

    def receive(self, data: bytes) -> Received:
        out = Received()
        for raw in self._lines(data, out):
            self._line(raw, out)
        return out

    def _lines(self, data: bytes, out: Received) -> list[bytes]:
        *complete, rest = _TERMINATOR.split(self._partial + data)
        if complete and self._too_long:
            complete = complete[1:]  # the end of the over-long line, reported already
            self._too_long = False
        if len(rest) > MAX_LINE:
            if not self._too_long:
                out.issues.append(LineIssue("too_long", _shown(rest[:40]) + "…"))
            self._too_long, rest = True, b""
        self._partial = rest
        return [line for line in complete if line.strip()]

    def _line(self, raw: bytes, out: Received) -> None:
        if len(raw) > MAX_LINE:
            out.issues.append(LineIssue("too_long", _shown(raw[:40]) + "…"))
            return
        try:
            line = raw.decode("ascii").strip()
        except UnicodeDecodeError:
            out.issues.append(LineIssue("malformed", _shown(raw)))
            return
        if (status := _STATUS.fullmatch(line)) and 1 <= int(status["state"]) <= 6:
            out.heard += 1
            self._status(status, line, out)
        elif warnings := _WARNINGS.fullmatch(line):
            out.heard += 1
            self._warnings(int(warnings["flags"], 16), out)
        elif power := _POWER.fullmatch(line):
            out.heard += 1
            self._power(power["value"].upper(), out)
        elif _RESTARTED.fullmatch(line):
            out.heard += 1  # the wheel took the restart: its status lines say what follows
        elif line[:2].upper() not in _KNOWN and _OTHER_RECORD.fullmatch(line):
            out.heard += 1
            out.issues.append(LineIssue("unknown_record", line))
        else:
            out.issues.append(LineIssue("malformed", _shown(raw)))

    def _status(self, m: re.Match[str], line: str, out: Received) -> None:
        state, game, last = int(m["state"]), int(m["game"]), _label(m["last"])
        previous_state, previous_game = self.state, self.game
        new_game = previous_game is not None and game != previous_game
        if not new_game and previous_state is not None:
            why = self._out_of_order(previous_state, state, game, last)
            if why:
                out.issues.append(LineIssue(why, line))
                return
        if new_game and previous_game is not None and game != previous_game + 1:
            out.issues.append(LineIssue("game_jump", line, dropped=False))
        changed = new_game or state != previous_state
        self.state, self.game = state, game
        if new_game:
            self._spinning_for = ""  # the game before's round is over
        if state == CLOSED:
            if previous_state != CLOSED:
                out.messages.append(WheelPhase(phase="closed", game=game))
                out.messages.append(DeviceFault(code="closed", detail="the wheel reports the table closed"))  # fmt: skip  # noqa: E501
        else:
            if previous_state == CLOSED:
                out.messages.append(DeviceFault(code="closed", cleared=True))
            if changed:
                out.messages.append(WheelPhase(phase=PHASES[state], game=game))
            if changed and state == SPINNING and self._armed:
                # A game starts after a StartSpin or Restart: it spins for that round. A
                # re-launch of the same game with nothing armed keeps the round it had.
                self._spinning_for, self._armed = self._armed, ""
            if changed and state == RESULT:
                out.messages.append(WheelResult(round=self._spinning_for, game=game, result=last))
                self._decided, self._spinning_for = (game, last), ""
        self._warnings(int(m["flags"], 16), out)

    def _out_of_order(self, previous: int, state: int, game: int, last: str) -> str | None:
        """Why a line of the same game as the one before cannot follow it (None: it can)."""
        if CLOSED in (previous, state):
            return None  # the table closes at any time, and opens in any state
        if self._decided is not None and self._decided[0] == game:
            # A game has one result: the next spin is the next game, with the next number.
            if state in (SPINNING, BALL_IN_TRACK, NO_MORE_BETS):
                return "out_of_order"
            if state == RESULT and previous != RESULT:
                return "out_of_order"
            if state == RESULT and self._decided != (game, last):
                return "result_changed"
        if state >= previous or state == GAME_START:
            return None
        if state == SPINNING and previous != RESULT:
            return None  # spun again before its result (a restart, a re-launch)
        return "out_of_order"

    def _warnings(self, flags: int, out: Received) -> None:
        """A warning for each flag newly raised (a flag stays raised over many lines)."""
        raised, self.flags = flags & ~self.flags, flags
        round_id = self._spinning_for or self._armed
        for flag, (warning, detail) in WARNING_FLAGS.items():
            if raised & flag:
                out.messages.append(WheelWarning(round=round_id, warning=warning, detail=detail))

    def _power(self, value: str, out: Received) -> None:
        if value == "0" and not self.power_off:
            self.power_off = True
            out.messages.append(DeviceFault(code="power", detail="the wheel reports power off"))
        elif value == "1" and self.power_off:
            self.power_off = False
            out.messages.append(DeviceFault(code="power", cleared=True))


def _label(number: str) -> str:
    """The pocket's label: ``"05"`` is ``"5"``; ``"0"`` and ``"00"`` stay as they are (a
    single-zero table holds on ``"00"`` as out of range: the safe reading of an unverified
    field)."""
    return number if number in ("0", "00") else str(int(number))


def _shown(raw: bytes) -> str:
    return raw.decode("ascii", "backslashreplace")[:MAX_LINE]
