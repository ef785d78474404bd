"""Upper layers hear of appended messages through the signal threads sends."""

import pytest

from apps.threads.hooks import messages_appended


@pytest.fixture
def heard():
    calls = []

    def receiver(sender, *, thread, messages, **kwargs):
        calls.append((thread, messages))

    messages_appended.connect(receiver)
    yield calls
    messages_appended.disconnect(receiver)


def test_it_tells_of_the_newly_stored_messages_once_per_append(alice, heard):
    thread = alice.new_thread()
    alice.append(
        thread["id"],
        {"role": "user", "content": "hi", "idempotency_key": "a"},
        {"role": "assistant", "content": "hello"},
    )
    alice.append(thread["id"], {"role": "user", "content": "hi", "idempotency_key": "a"})

    [(told_thread, messages)] = heard
    assert str(told_thread.id) == thread["id"]
    assert [(m.seq, m.content) for m in messages] == [(1, "hi"), (2, "hello")]


def test_the_memory_apps_listen_from_the_start():
    receivers = {key[0] for key, *_ in messages_appended.receivers}

    assert {"observations.queue", "episodic.memory_actions"} <= receivers
