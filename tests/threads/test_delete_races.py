"""A thread deleted while another request writes to it: one of them wins cleanly, never a 500.

Each race is played out in order on one connection (tests/races.py).
"""

import pytest

from apps.core.errors import NotFound
from apps.threads.models import Message, Run, Thread
from apps.threads.services import thread_delete
from tests.races import after_statement, before_statement, deleted_elsewhere


def test_a_thread_deleted_twice_is_not_found_the_second_time(alice):
    thread_id = alice.new_thread()["id"]
    stale = Thread.objects.get(pk=thread_id)  # what both requests read before either deleted
    thread_delete(thread=Thread.objects.get(pk=thread_id), actor="first")

    with pytest.raises(NotFound):
        thread_delete(thread=stale, actor="second")


def test_a_message_appended_while_the_thread_is_deleted_goes_with_it(alice):
    thread_id = alice.new_thread()["id"]
    alice.append(thread_id, {"role": "user", "content": "first"})
    thread = Thread.objects.get(pk=thread_id)

    def append_meanwhile():
        Message.objects.create(thread=thread, seq=2, role="user", content="meanwhile")

    # The other request's message lands after the delete locked the thread: the delete
    # collects it with the rest.
    with before_statement('FROM "threads_message"', append_meanwhile):
        thread_delete(thread=thread, actor="test")

    assert not Thread.objects.filter(pk=thread_id).exists()
    assert not Message.objects.filter(thread_id=thread_id).exists()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("iterations", {"task": "deploy", "outcome": "failed"}),
        ("runs", {}),
        ("context", {"query": "hello"}),
    ],
)
def test_a_write_whose_thread_was_deleted_meanwhile_is_not_found(alice, path, body):
    thread_id = alice.new_thread()["id"]

    # Right after the view found the thread, before its service writes.
    gone = Thread.objects.filter(pk=thread_id)
    with after_statement('FROM "threads_thread"', lambda: deleted_elsewhere(gone)):
        response = alice.post(f"/api/v1/threads/{thread_id}/{path}", body)

    assert response.status_code == 404, response.content
    message = response.json()["error"]["message"]
    assert message.startswith(("No such thread", "The thread no longer exists")), message
    assert not Thread.objects.filter(pk=thread_id).exists()
    assert not Run.objects.filter(thread_id=thread_id).exists()
