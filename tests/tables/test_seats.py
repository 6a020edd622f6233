"""Who holds a seat: ``Seats.count`` (what the lobby shows of every table) always agrees with
the set ``Seats.seated`` builds, whatever players join, leave and drop, and as held seats
run out."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from server.core.seats import Seats
from server.games.errors import IllegalAction

PLAYERS = [f"p{n}" for n in range(6)]
STEPS = st.lists(
    st.tuples(
        st.sampled_from(["join", "leave", "drop"]),
        st.sampled_from(PLAYERS),
        st.sampled_from(["player", "spectator"]),
        st.floats(min_value=0, max_value=40),  # seconds before this step
    ),
    max_size=60,
)


@settings(max_examples=300, deadline=None)
@given(steps=STEPS, seats=st.integers(min_value=1, max_value=4))
def test_the_count_is_the_number_seated_at_every_moment(
    steps: list[tuple[str, str, str, float]], seats: int
) -> None:
    table = Seats("t", seats, grace_seconds=60.0)
    connected: dict[str, int] = {}  # the model: live player connections, and holds' ends
    held: dict[str, float] = {}
    now = 0.0
    for action, player, role, wait in steps:
        now += wait
        held = {p: until for p, until in held.items() if until > now}
        if action == "join":
            seated = set(connected) | set(held)
            full = role == "player" and player not in seated and len(seated) >= seats
            try:
                table.join(player, role, now)
            except IllegalAction:
                assert full
                continue
            assert not full
            held.pop(player, None)
            if role == "player":
                connected[player] = connected.get(player, 0) + 1
        elif player in connected and role == "player":  # leave or drop a live connection
            connected[player] -= 1
            if not connected[player]:
                del connected[player]
            if action == "leave":
                table.leave(player, role)
            else:
                table.drop(player, role, now)
                if player not in connected:
                    held[player] = now + 60.0
        else:
            continue
        expected = set(connected) | set(held)
        assert table.count(now) == len(expected)
        assert table.seated(now) == expected
    later = now + 61.0
    assert table.count(later) == len(connected) == len(table.seated(later))


def test_a_held_seat_counts_until_its_grace_ends_then_frees() -> None:
    table = Seats("t", 1, grace_seconds=60.0)
    table.join("ann", "player", 0.0)
    table.drop("ann", "player", 10.0)
    assert table.count(69.9) == 1
    try:
        table.join("bob", "player", 69.9)
    except IllegalAction as refused:
        assert refused.code == "table_full"
    else:
        raise AssertionError("a held seat was given away")
    assert table.count(70.0) == 0
    table.join("bob", "player", 70.0)
    assert table.seated(70.0) == {"bob"}


def test_a_hold_dropped_again_runs_from_the_later_drop() -> None:
    """Holds are kept in the order they end: a held player dropped again (as a node that
    learns of the drop late tells it) is held from the later drop, and the holds before
    and after it still end on time."""
    table = Seats("t", 3, grace_seconds=60.0)
    table.join("ann", "player", 0.0)
    table.join("bob", "player", 0.0)
    table.drop("ann", "player", 0.0)  # ann's hold ends at 60
    table.drop("bob", "player", 5.0)  # bob's at 65
    table.drop("ann", "player", 20.0)  # ann's now at 80
    assert table.count(66.0) == 1 and table.seated(66.0) == {"ann"}
    assert table.count(80.0) == 0
