"""messages_at: the messages a search shows of its message hits, read by (thread, seq)."""

import uuid

from apps.threads.selectors import messages_at


def _thread(actor, count: int) -> uuid.UUID:
    thread = actor.new_thread()
    actor.append(thread["id"], *({"role": "user", "content": f"turn {n}"} for n in range(count)))
    return uuid.UUID(thread["id"])


def test_places_of_several_threads_and_their_ranges_come_in_one_query(
    alice, django_assert_num_queries
):
    first, second = _thread(alice, 8), _thread(alice, 5)

    with django_assert_num_queries(1):
        found = messages_at(places=[(first, 1), (first, 6), (second, 5)], before=2, after=1)

    # Nothing before seq 1 or after a thread's last message; overlapping stretches once each.
    assert sorted(found) == sorted(
        [(first, seq) for seq in (1, 2, 4, 5, 6, 7)] + [(second, seq) for seq in (3, 4, 5)]
    )
    row = found[(first, 6)]
    assert (row.thread_id, row.seq, row.role, row.content) == (first, 6, "user", "turn 5")
    assert row.metadata == {} and row.token_count > 0


def test_no_places_read_nothing(alice, django_assert_num_queries):
    with django_assert_num_queries(0):
        assert messages_at(places=[], before=2, after=1) == {}
