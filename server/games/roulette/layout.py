"""The Roulette layout as data: which wagers exist, what numbers each covers, what it pays.

A roulette wager is a kind (617a.3(e)(1)–(14)) plus the set of numbers its chips cover
(617a.3(d): "settled in accordance with its position on the layout"). This module knows the
geometry of the three-column layout and the zero boxes, and turns a wager's spot text into a
validated ``Placement`` or rejects it with an ``IllegalAction`` whose code and message give the
reason.

**Spot syntax** (the ``spot`` of a ``Wager``; numbers are the printed labels "0", "00", "1"…"36")::

    straight:17              split:17-20            split:0-00
    three_numbers:1-2-3      three_numbers:0-2-00   four_numbers:1-2-4-5
    first_five               six_numbers:1-2-3-4-5-6
    column:1 … column:3      dozen:1 … dozen:3      (column 1 is 1, 4, … 34; dozen 1 is 1–12)
    red  black  odd  even  low  high                (low is 1–18, high is 19–36)
    five_adjacent:17         (the centre number, chosen on the wheel replica, 617a.3(e)(1)(ii))

Inside-wager numbers may be given in any order; ``Placement.spot`` is the canonical form
(layout order: 0, 00, then ascending).

**Layout geometry.** Numbers 1–36 sit in twelve rows of three (row r holds 3r−2, 3r−1, 3r) and
three columns. On the double-zero layout the 0 box borders 1 and 2, the 00 box borders 2 and 3,
and 0 borders 00 — hence the splits 0-1, 0-2, 00-2, 00-3, 0-00 and the three-number groups of
617a.3(e)(3)(i). On the single-zero layout the 0 box borders 1, 2 and 3. On a double-zero
layout used as single zero the 00 box is covered (617a.1(e)(1)): nothing may include 00 and
First Five Numbers does not exist (docs/interpretations.md, 13). The three-number groups that
include a zero are exactly the three that 617a.3(e)(3)(i) lists (0-1-2 being the only one
without 00); a four-number wager is four boxes with a common corner, so it never includes a zero.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum
from fractions import Fraction
from typing import Final

from rng.wheel_layouts import RED_NUMBERS, WheelType, neighbours, wheel_order
from server.games.errors import UNKNOWN_WAGER, WAGER_NOT_OFFERED, IllegalAction
from server.games.money import to_odds

__all__ = [
    "DOUBLE_ZERO",
    "FIVE_ADJACENT_AMOUNT",
    "FIVE_ADJACENT_NET",
    "ILLEGAL_PLACEMENT",
    "MALFORMED_SPOT",
    "NUMBER_NOT_ON_LAYOUT",
    "PAYOUT_ODDS",
    "ZERO",
    "Placement",
    "WagerKind",
    "layout_numbers",
    "parse_spot",
    "placements",
]

ZERO: Final = "0"
DOUBLE_ZERO: Final = "00"

# Rejection codes of roulette placements (stable: the wire protocol repeats them verbatim).
MALFORMED_SPOT: Final = "malformed_spot"  # the spot text cannot be read
NUMBER_NOT_ON_LAYOUT: Final = "number_not_on_layout"  # e.g. 37, or 00 on a single-zero table
ILLEGAL_PLACEMENT: Final = "illegal_placement"  # numbers no chip position covers together
FIVE_ADJACENT_AMOUNT: Final = "five_adjacent_amount"  # not five equal straights, 617a.3(e)(1)(iii)


class WagerKind(Enum):
    """The wagers of 617a.3(e); the values are the spot prefixes and par-sheet wager ids."""

    STRAIGHT = "straight"  # 617a.3(e)(1)
    SPLIT = "split"  # 617a.3(e)(2)
    THREE_NUMBERS = "three_numbers"  # 617a.3(e)(3)
    FOUR_NUMBERS = "four_numbers"  # 617a.3(e)(4)
    FIRST_FIVE = "first_five"  # 617a.3(e)(5)
    SIX_NUMBERS = "six_numbers"  # 617a.3(e)(6)
    COLUMN = "column"  # 617a.3(e)(7)
    DOZEN = "dozen"  # 617a.3(e)(8)
    RED = "red"  # 617a.3(e)(9)
    BLACK = "black"  # 617a.3(e)(10)
    ODD = "odd"  # 617a.3(e)(11)
    EVEN = "even"  # 617a.3(e)(12)
    LOW = "low"  # 1–18, 617a.3(e)(13)
    HIGH = "high"  # 19–36, 617a.3(e)(14)
    FIVE_ADJACENT = "five_adjacent"  # five Straight Wagers, 617a.3(e)(1)(i)–(iii)


# 617a.4(a): payout odds, "X to 1" (net X per unit). A Five Adjacent Numbers wager is five
# Straight Wagers (617a.3(e)(1)(iii)) and is priced from the Straight odds below.
PAYOUT_ODDS: Final[dict[WagerKind, Fraction]] = {
    WagerKind.STRAIGHT: to_odds(35),
    WagerKind.SPLIT: to_odds(17),
    WagerKind.THREE_NUMBERS: to_odds(11),
    WagerKind.FOUR_NUMBERS: to_odds(8),
    WagerKind.FIRST_FIVE: to_odds(6),
    WagerKind.SIX_NUMBERS: to_odds(5),
    WagerKind.COLUMN: to_odds(2),
    WagerKind.DOZEN: to_odds(2),
    WagerKind.RED: to_odds(1),
    WagerKind.BLACK: to_odds(1),
    WagerKind.ODD: to_odds(1),
    WagerKind.EVEN: to_odds(1),
    WagerKind.LOW: to_odds(1),
    WagerKind.HIGH: to_odds(1),
}

FIVE_ADJACENT_NET: Final = (1 + PAYOUT_ODDS[WagerKind.STRAIGHT]) / 5 - 1
"""Net odds of a winning Five Adjacent Numbers wager per unit of its whole amount: the one
winning fifth is returned with 35 to 1 and the other four fifths lose (617a.3(e)(1)(iii),
617a.5(d)) — 36/5 − 1 = 31/5."""

_INSIDE_SIZES: Final = {
    WagerKind.STRAIGHT: 1,
    WagerKind.SPLIT: 2,
    WagerKind.THREE_NUMBERS: 3,
    WagerKind.FOUR_NUMBERS: 4,
    WagerKind.SIX_NUMBERS: 6,
}
_INDEXED: Final = (WagerKind.COLUMN, WagerKind.DOZEN, WagerKind.FIVE_ADJACENT)
_NO_ARGUMENT: Final = (
    WagerKind.FIRST_FIVE,
    WagerKind.RED,
    WagerKind.BLACK,
    WagerKind.ODD,
    WagerKind.EVEN,
    WagerKind.LOW,
    WagerKind.HIGH,
)

# --- geometry of the 1–36 grid -------------------------------------------------------------


def _label_set(*numbers: int | str) -> frozenset[str]:
    return frozenset(str(n) for n in numbers)


def _grid_splits() -> frozenset[frozenset[str]]:
    splits = {_label_set(n, n + 3) for n in range(1, 34)}  # same column, adjacent rows
    splits |= {_label_set(n, n + 1) for n in range(1, 37) if n % 3 != 0}  # same row
    return frozenset(splits)


_ROWS: Final = tuple(_label_set(3 * r - 2, 3 * r - 1, 3 * r) for r in range(1, 13))
_GRID_SPLITS: Final = _grid_splits()
_CORNERS: Final = frozenset(_label_set(n, n + 1, n + 3, n + 4) for n in range(1, 33) if n % 3 != 0)
_SIX_LINES: Final = frozenset(_ROWS[r] | _ROWS[r + 1] for r in range(11))
_COLUMNS: Final = tuple(_label_set(*range(c, 37, 3)) for c in (1, 2, 3))
_DOZENS: Final = tuple(_label_set(*range(12 * d + 1, 12 * d + 13)) for d in range(3))
_OUTSIDE: Final = {
    WagerKind.RED: _label_set(*RED_NUMBERS),
    WagerKind.BLACK: _label_set(*(n for n in range(1, 37) if n not in RED_NUMBERS)),
    WagerKind.ODD: _label_set(*range(1, 37, 2)),
    WagerKind.EVEN: _label_set(*range(2, 37, 2)),
    WagerKind.LOW: _label_set(*range(1, 19)),
    WagerKind.HIGH: _label_set(*range(19, 37)),
}

# --- the zero boxes, per table ---------------------------------------------------------------

# 617a.3(e)(2): splits with a zero box (the line between the boxes; 0-00 also on the line
# between the 2nd 12 and 3rd 12 boxes).
_ZERO_SPLITS: Final = {
    WheelType.SINGLE_ZERO: frozenset({_label_set(0, 1), _label_set(0, 2), _label_set(0, 3)}),
    WheelType.DOUBLE_ZERO: frozenset(
        {
            _label_set(0, 1),
            _label_set(0, 2),
            _label_set("00", 2),
            _label_set("00", 3),
            _label_set(0, "00"),
        }
    ),
    WheelType.DOUBLE_ZERO_AS_SINGLE: frozenset({_label_set(0, 1), _label_set(0, 2)}),
}
# 617a.3(e)(3)(i): the three-number groups with a zero.
_ZERO_GROUPS: Final = {
    WheelType.SINGLE_ZERO: frozenset({_label_set(0, 1, 2)}),
    WheelType.DOUBLE_ZERO: frozenset(
        {_label_set(0, 1, 2), _label_set(0, 2, "00"), _label_set("00", 2, 3)}
    ),
    WheelType.DOUBLE_ZERO_AS_SINGLE: frozenset({_label_set(0, 1, 2)}),
}
# 617a.3(e)(5): 0, 00, 1, 2, 3 — only where 00 is a wager (docs/interpretations.md, 13).
_FIRST_FIVE: Final = _label_set(0, "00", 1, 2, 3)


def layout_numbers(wheel: WheelType) -> tuple[str, ...]:
    """The numbers that can be wagered on at this table, in layout order (0, 00, 1…36).

    On a double-zero wheel used as single zero the 00 area is covered (617a.1(e)(1))."""
    zeros = (ZERO, DOUBLE_ZERO) if wheel is WheelType.DOUBLE_ZERO else (ZERO,)
    return zeros + tuple(str(n) for n in range(1, 37))


def _layout_key(label: str) -> int:
    """Layout order: 0, 00, 1, 2, … 36."""
    return 1 if label == DOUBLE_ZERO else 0 if label == ZERO else int(label) + 1


def _number(text: str, wheel: WheelType) -> str:
    """``text`` as a number of this table's layout, or the reason it is not one."""
    if text in layout_numbers(wheel):
        return text
    if text == DOUBLE_ZERO or (text.isdigit() and text == str(int(text))):
        where = (
            "the 00 area is covered on a double zero wheel used as a single zero wheel "
            "(617a.1(e)(1))"
            if text == DOUBLE_ZERO and wheel is WheelType.DOUBLE_ZERO_AS_SINGLE
            else f"this {wheel.value} table has no number {text}"
        )
        raise IllegalAction(NUMBER_NOT_ON_LAYOUT, where, text)
    raise IllegalAction(MALFORMED_SPOT, f"{text!r} is not a roulette number", text)


def _sorted(numbers: frozenset[str]) -> tuple[str, ...]:
    return tuple(sorted(numbers, key=_layout_key))


@dataclass(frozen=True, slots=True)
class Placement:
    """A validated roulette wager: its kind, the numbers it covers, and for Column, Dozen and
    Five Adjacent Numbers the index or centre that was chosen (``None`` otherwise)."""

    kind: WagerKind
    numbers: frozenset[str]
    choice: str | None = None

    @property
    def spot(self) -> str:
        """The canonical spot text."""
        if self.kind in _NO_ARGUMENT:
            return str(self.kind.value)
        if self.kind in _INDEXED:
            return f"{self.kind.value}:{self.choice}"
        return f"{self.kind.value}:{'-'.join(_sorted(self.numbers))}"

    @property
    def net_if_won(self) -> Fraction:
        """Net odds per unit of the whole amount when the ball lands on a covered number."""
        if self.kind is WagerKind.FIVE_ADJACENT:
            return FIVE_ADJACENT_NET
        return PAYOUT_ODDS[self.kind]


def _inside_allowed(kind: WagerKind, wheel: WheelType) -> frozenset[frozenset[str]]:
    if kind is WagerKind.STRAIGHT:
        return frozenset(frozenset({n}) for n in layout_numbers(wheel))
    if kind is WagerKind.SPLIT:
        return _GRID_SPLITS | _ZERO_SPLITS[wheel]
    if kind is WagerKind.THREE_NUMBERS:
        return frozenset(_ROWS) | _ZERO_GROUPS[wheel]
    if kind is WagerKind.FOUR_NUMBERS:
        return _CORNERS
    assert kind is WagerKind.SIX_NUMBERS
    return _SIX_LINES


_PLACEMENT_RULE: Final = {
    WagerKind.SPLIT: "two numbers whose boxes share a side (617a.3(e)(2))",
    WagerKind.THREE_NUMBERS: (
        "a row of the layout, or the group 0-1-2, 0-2-00 or 00-2-3 (617a.3(e)(3))"
    ),
    WagerKind.FOUR_NUMBERS: "four numbers whose boxes share a corner (617a.3(e)(4))",
    WagerKind.SIX_NUMBERS: "two contiguous rows of the layout (617a.3(e)(6))",
}


def _five_adjacent(centre: str, wheel: WheelType) -> Placement:
    """617a.3(e)(1)(i)–(ii): the centre number on the wheel replica and two on either side."""
    _number(centre, wheel)
    covered = neighbours(wheel_order(wheel), centre)
    if DOUBLE_ZERO in covered and wheel is WheelType.DOUBLE_ZERO_AS_SINGLE:
        raise IllegalAction(
            ILLEGAL_PLACEMENT,
            f"the five adjacent numbers around {centre} ({', '.join(covered)}) include 00, "
            "which is not an available wager on a double zero wheel used as a single zero "
            "wheel (617a.1(e)(1), (e)(2)(i))",
            centre,
        )
    return Placement(WagerKind.FIVE_ADJACENT, frozenset(covered), centre)


def _indexed(kind: WagerKind, argument: str, wheel: WheelType) -> Placement:
    if kind is WagerKind.FIVE_ADJACENT:
        return _five_adjacent(argument, wheel)
    table = _COLUMNS if kind is WagerKind.COLUMN else _DOZENS
    if argument not in ("1", "2", "3"):
        raise IllegalAction(
            ILLEGAL_PLACEMENT,
            f"a {kind.value} wager is on {kind.value} 1, 2 or 3, not {argument!r} "
            "(617a.3(e)(7), (8))",
            argument,
        )
    return Placement(kind, table[int(argument) - 1], argument)


def _inside(kind: WagerKind, argument: str, wheel: WheelType) -> Placement:
    parts = [_number(part, wheel) for part in argument.split("-")]
    numbers = frozenset(parts)
    size = _INSIDE_SIZES[kind]
    if len(numbers) != len(parts) or len(numbers) != size:
        raise IllegalAction(
            ILLEGAL_PLACEMENT,
            f"a {kind.value} wager covers {size} different number{'s' if size > 1 else ''}, "
            f"not {argument}",
            argument,
        )
    if numbers not in _inside_allowed(kind, wheel):
        raise IllegalAction(
            ILLEGAL_PLACEMENT,
            f"{'-'.join(_sorted(numbers))} cannot be covered by one {kind.value} wager: "
            f"it must be {_PLACEMENT_RULE[kind]}",
            argument,
        )
    return Placement(kind, numbers)


def parse_spot(spot: str, wheel: WheelType) -> Placement:
    """Read and validate ``spot`` for a table with ``wheel``, 617a.3(e).

    Raises ``IllegalAction`` with ``UNKNOWN_WAGER`` (no such wager), ``MALFORMED_SPOT``,
    ``NUMBER_NOT_ON_LAYOUT``, ``ILLEGAL_PLACEMENT`` (numbers no single chip position covers)
    or ``WAGER_NOT_OFFERED`` (First Five Numbers without 00, docs/interpretations.md, 13).
    """
    if not isinstance(spot, str):
        raise IllegalAction(MALFORMED_SPOT, "a spot is text such as 'split:17-20'", spot)
    name, colon, argument = spot.partition(":")
    try:
        kind = WagerKind(name)
    except ValueError:
        raise IllegalAction(UNKNOWN_WAGER, f"roulette has no wager {name!r}", spot) from None
    if kind in _NO_ARGUMENT:
        if colon:
            raise IllegalAction(MALFORMED_SPOT, f"a {name} wager takes no numbers", spot)
        if kind is WagerKind.FIRST_FIVE:
            if wheel is not WheelType.DOUBLE_ZERO:
                raise IllegalAction(
                    WAGER_NOT_OFFERED,
                    "First Five Numbers (0, 00, 1, 2, 3) exists only where 00 is a wager "
                    "(617a.3(e)(5), docs/interpretations.md, 13)",
                    spot,
                )
            return Placement(kind, _FIRST_FIVE)
        return Placement(kind, _OUTSIDE[kind])
    if not argument:
        raise IllegalAction(MALFORMED_SPOT, f"a {name} wager needs its numbers: {name}:…", spot)
    if kind in _INDEXED:
        return _indexed(kind, argument, wheel)
    return _inside(kind, argument, wheel)


def placements(kind: WagerKind, wheel: WheelType) -> Iterator[Placement]:
    """Every legal placement of ``kind`` at a table with ``wheel`` (for par sheets and tests).

    Nothing for First Five Numbers without 00. Five Adjacent Numbers: one per available centre
    whose five numbers are all available."""
    if kind in _NO_ARGUMENT:
        if kind is not WagerKind.FIRST_FIVE or wheel is WheelType.DOUBLE_ZERO:
            yield parse_spot(kind.value, wheel)
    elif kind in (WagerKind.COLUMN, WagerKind.DOZEN):
        for index in ("1", "2", "3"):
            yield _indexed(kind, index, wheel)
    elif kind is WagerKind.FIVE_ADJACENT:
        for centre in layout_numbers(wheel):
            try:
                yield _five_adjacent(centre, wheel)
            except IllegalAction:
                continue
    else:
        for numbers in sorted(_inside_allowed(kind, wheel), key=_sorted_keys):
            if all(n in layout_numbers(wheel) for n in numbers):
                yield Placement(kind, numbers)


def _sorted_keys(numbers: frozenset[str]) -> tuple[int, ...]:
    return tuple(_layout_key(n) for n in _sorted(numbers))
