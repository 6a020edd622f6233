"""What comes out of a table core: effects, in the order they must happen.

Most effects are performed and forgotten (``Emit``, ``Reply``, ``Deadline``…). A ``Wait``
holds effects whose results the core needs before it can go on — a ledger post, a journal
record, a chance outcome, a balance — performed together (the ledger and the journal write
at the same time) and answered with one ``Done`` carrying their results in order and the
``Wait``'s number. A player's bets wait side by side (``Wait.shared``): the core takes
further commands meanwhile. The table's life and a decision wait alone: the core does nothing
else until answered. A ``Wait`` is always the last effect its generator gives in a batch.

A write that could not be made durable is answered ``Failed`` (nothing of it was applied);
a ledger batch refused for lack of funds is answered ``Refused``. The core knows no store's
own exceptions: the adapter translates them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from server.games.chance import ChanceRequest
from server.games.errors import Refusal
from server.journal.records import Opened, Record, Settled, Voided
from server.wallet.ledger import Transfer

__all__ = [
    "VIRTUAL",
    "AppendRecord",
    "BalanceChanged",
    "Chance",
    "Deadline",
    "Decided",
    "Effect",
    "Emit",
    "Failed",
    "FinishRound",
    "Irregular",
    "Log",
    "NewShoe",
    "OpenRound",
    "Post",
    "ReadAvailable",
    "ReadLinked",
    "Refused",
    "Reply",
    "RoundFinished",
    "SaveState",
    "SettleLinked",
    "Wait",
]


# --- performed and forgotten ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Emit:
    """Send table event ``name`` (its wire ``data``) with sequence number ``seq`` to every
    viewer, or only to player ``audience``."""

    seq: int
    round_id: str
    name: str
    data: dict[str, Any]
    audience: str | None


@dataclass(frozen=True, slots=True)
class Log:
    """Write ``message`` to the server's log at ``level`` ("warning", "error", "critical"),
    with ``error``'s traceback if any. The core cannot log itself: the logging module starts
    threads' machinery, and a sans-I/O core loads none of it (a test proves it)."""

    level: str
    message: str
    error: BaseException | None = None


@dataclass(frozen=True, slots=True)
class BalanceChanged:
    """Tell ``player_id``'s connections their balance now (read from the ledger)."""

    player_id: str
    reason: str


@dataclass(frozen=True, slots=True)
class Reply:
    """The answer to command ``cid``: its ``refusal`` or ``data``; with ``balance_of``, the
    adapter adds ``data["balance"]``, that player's balance now."""

    cid: int
    refusal: Refusal | None = None
    data: dict[str, Any] | None = None
    balance_of: str | None = None


@dataclass(frozen=True, slots=True)
class Deadline:
    """Tick the core at ``at`` (its clock), or never (None): a betting window, a decision's
    deadline, the pause between rounds."""

    at: float | None


@dataclass(frozen=True, slots=True)
class RoundFinished:
    """A round ended, ``settled`` or ``voided``, its outcome durable in the journal and its
    money in the ledger (for metrics and the player stations' meters)."""

    status: str
    round_id: str = ""


# --- performed, with a result the core waits for ---------------------------------------------


@dataclass(frozen=True, slots=True)
class OpenRound:
    round_id: str
    record: Opened


@dataclass(frozen=True, slots=True)
class AppendRecord:
    """Journal one record of the open round; ``player``: the same commit notes that the
    player had wagers in it (game recall)."""

    round_id: str
    record: Record
    player: str | None = None


@dataclass(frozen=True, slots=True)
class FinishRound:
    round_id: str
    record: Settled | Voided


@dataclass(frozen=True, slots=True)
class SaveState:
    """Keep table state that outlives rounds (progressive meters, the sequence epoch)."""

    key: str
    state: dict[str, Any]


@dataclass(frozen=True, slots=True)
class SettleLinked:
    """Apply a round's ``ops`` to its link's shared progressive meters, once (the answer:
    the round's result, with the awards the shared meters paid)."""

    round_id: str
    ops: tuple[dict[str, Any], ...]


@dataclass(frozen=True, slots=True)
class ReadLinked:
    """The link's shared meters as the store holds them now (the answer: states by name)."""


@dataclass(frozen=True, slots=True)
class Post:
    """One ledger batch under its idempotency key."""

    key: str
    transfers: tuple[Transfer, ...]


@dataclass(frozen=True, slots=True)
class ReadAvailable:
    """What a further debit of ``account`` may take: its balance less debits still on their
    way to disk (the answer is an ``int``)."""

    account: str


@dataclass(frozen=True, slots=True)
class NewShoe:
    """Before a round: reshuffle when the shoe's cover card was reached. The answer is the new
    shoe's burn record, or None."""


@dataclass(frozen=True, slots=True)
class Chance:
    """Answer an engine's chance request from the table's source (the virtual shoe or wheel,
    a device): the answer is the journal ``Record`` of the outcome (``CardDrawn``, ``Spin``,
    ``HoleRangeRead``, ``MysteryHit``; ``ChanceAnswered`` for any other kind a game declares),
    which the core journals before the engine — or anyone — sees it. A device may first
    answer ``Held`` (the table is on hold until staff decide: the core journals it, shows it
    and asks again), then ``Decided`` or ``Irregular``. ``hole`` is the face-down card a
    hole-card reader reads."""

    request: ChanceRequest | NewShoe
    hole: str | None = None
    round_id: str = ""  # the round it is for (for ``NewShoe``, the round about to open)


@dataclass(frozen=True, slots=True)
class Wait:
    """Effects whose results the core needs to go on, performed together and answered with
    one ``Done(results, wid)``. The core numbers each ``Wait`` (``wid``) as it yields it.
    ``shared``: a player's bet, cancel or repeat — the adapter performs it while it hands
    the core further commands and answers it whenever its results are in (answers may come
    in any order); otherwise (the table's life, a decision) nothing else runs until it is
    answered."""

    effects: Sequence[Any]
    wid: int = 0
    shared: bool = False


# --- results -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Failed:
    """The effect could not be performed: a write not made durable (nothing of it applied), a
    ledger error, or (``rng``) the random number generator failing its health tests."""

    message: str
    rng: bool = False
    # A debit whose outcome at an operator's wallet is unknown (it is being rolled back):
    # the bet is refused with this code rather than as a storage failure.
    code: str | None = None


VIRTUAL = "virtual"
"""A device layer's answer to a ``Chance`` it leaves to the table's virtual shoe or wheel."""


@dataclass(frozen=True, slots=True)
class Irregular:
    """The round cannot go on — a card drawn before no more bets, a malfunction, staff voiding
    a hold: the core voids it and returns every wager ("malfunction voids all pays and
    plays")."""

    reason: str

    @classmethod
    def by_console(cls, staff: Any) -> Irregular:
        """The dealer and a supervisor voided the round from the console outside a hold
        (``staff``: their ``StaffDecision``), wherever the round was waiting."""
        return cls(f"voided from the dealer console by {staff.dealer} and {staff.supervisor}")


@dataclass(frozen=True, slots=True)
class Decided:
    """Staff decided a hold (``staff``, journaled first), and ``answer`` is the chance
    request's answer: a record, or ``Irregular``."""

    staff: Record
    answer: Any


@dataclass(frozen=True, slots=True)
class Refused:
    """A ledger batch refused: ``account`` holds ``balance``, the batch needed ``needed``.
    ``code`` and ``message``: what the player is told, where it is not the balance that
    refused (an operator's wallet refusing a debit: ``player_blocked``, docs/wallet.md)."""

    account: str
    balance: int
    needed: int
    code: str = "insufficient_funds"
    message: str | None = None


Effect = (
    Emit
    | BalanceChanged
    | Reply
    | Deadline
    | RoundFinished
    | Wait
    | OpenRound
    | AppendRecord
    | FinishRound
    | SaveState
    | SettleLinked
    | ReadLinked
    | Post
    | ReadAvailable
    | Chance
)
