"""Play a race between two requests out in order, on the test's own connection.

The other request's write (or delete) runs at the moment it would have landed: right after, or
right before, a given statement of the request under test.
"""

import threading
from contextlib import contextmanager

from django.db import connection, connections


@contextmanager
def after_statement(fragment: str, action, nth: int = 1):
    """Run action() once, right after the nth statement whose SQL holds fragment and that runs
    outside a transaction (inside one, another connection's write would wait on it)."""
    seen = 0

    def wrapper(execute, sql, params, many, context):
        nonlocal seen
        result = execute(sql, params, many, context)
        if fragment in sql and not connection.in_atomic_block:
            seen += 1
            if seen == nth:
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


def deleted_elsewhere(rows) -> None:
    """Delete the rows as a concurrent request does: on a connection of its own, committed."""

    def delete():
        try:
            rows.delete()
        finally:
            connections.close_all()

    other = threading.Thread(target=delete)
    other.start()
    other.join()
