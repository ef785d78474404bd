"""Upper layers hear of appended messages through the hook threads offers."""

import pytest

from apps.threads import hooks


@pytest.fixture
def heard(monkeypatch):
    calls = []
    monkeypatch.setattr(hooks, "_appended", [])
    hooks.on_messages_appended(lambda *, thread, messages: calls.append((thread, messages)))
    return calls


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


def test_a_callback_registered_twice_is_called_once(alice, heard):
    def callback(*, thread, messages):
        heard.append("again")

    hooks.on_messages_appended(callback)
    hooks.on_messages_appended(callback)
    thread = alice.new_thread()
    alice.append(thread["id"], {"role": "user", "content": "hi"})

    assert heard.count("again") == 1
