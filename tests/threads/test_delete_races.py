"""A thread deleted while another request writes to it: one of them wins cleanly, never a 500.

Each race is played out in order on one connection: the other request's write (or delete) runs
at the moment it would have landed, right before a given statement of the request under test.
"""

import threading
from contextlib import contextmanager

import pytest
from django.db import connection, connections

from apps.core.errors import NotFound
from apps.threads.models import Message, Run, Thread
from apps.threads.services import thread_delete


@contextmanager
def after_statement(fragment: str, action):
    """Run action() once, right after the first statement whose SQL holds fragment and that
    runs outside a transaction (inside one, another connection's write would wait on it)."""
    done = False

    def wrapper(execute, sql, params, many, context):
        nonlocal done
        result = execute(sql, params, many, context)
        if fragment in sql and not done and not connection.in_atomic_block:
            done = True
            action()
        return result

    with connection.execute_wrapper(wrapper):
        yield


@contextmanager
def before_statement(fragment: str, action, nth: int = 1):
    """Run action() once, right before the nth statement whose SQL holds fragment."""
    seen = 0

    def wrapper(execute, sql, params, many, context):
        nonlocal seen
        if fragment in sql:
            seen += 1
            if seen == nth:
                action()
        return execute(sql, params, many, context)

    with connection.execute_wrapper(wrapper):
        yield


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


def _deleted_by_another_request(thread_id: str) -> None:
    """Delete the thread as a concurrent request does: on a connection of its own, committed."""

    def delete():
        try:
            Thread.objects.filter(pk=thread_id).delete()
        finally:
            connections.close_all()

    other = threading.Thread(target=delete)
    other.start()
    other.join()


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
    with after_statement('FROM "threads_thread"', lambda: _deleted_by_another_request(thread_id)):
        response = alice.post(f"/api/v1/threads/{thread_id}/{path}", body)

    assert response.status_code == 404, response.content
    message = response.json()["error"]["message"]
    assert message.startswith(("No such thread", "The thread no longer exists")), message
    assert not Thread.objects.filter(pk=thread_id).exists()
    assert not Run.objects.filter(thread_id=thread_id).exists()
