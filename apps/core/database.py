"""What the SQLite default needs beyond the ORM (on both backends, a no-op where not needed),
and telling a write that failed because a row it names was deleted meanwhile."""

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection, models, transaction

from apps.core.errors import NotFound

logger = logging.getLogger(__name__)


def deleted_text_release() -> None:
    """Leave no copy of just-deleted rows in the SQLite files; call it after the commit.

    secure_delete (set on every connection, memory_console/database.py) zeroes the pages the
    deletion freed, but their old images stay in the write-ahead log until it is checkpointed:
    copy the log into the database and truncate it. A reader holding an old snapshot keeps
    the log from being truncated this time; the next checkpoint does it.
    """
    if connection.vendor != "sqlite":
        return
    with connection.cursor() as cursor:
        busy, _, _ = cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    if busy:
        logger.warning("the write-ahead log was not truncated after a forget: a reader held it")


@contextmanager
def record_transaction() -> Iterator[None]:
    """A transaction for a record that may be lost in a crash but never half-written: its
    commit does not wait for the write-ahead log to reach the disk.

    On PostgreSQL that is synchronous_commit off for this transaction alone: a crash of the
    server may lose the last such commits (those of well under a second), never corrupt
    anything, and other transactions keep waiting for the disk. For a context's snapshot it
    took ~3 ms off a 7-8 ms insert at p50 on a 2-core machine whose disk was busy (60 inserts
    each way, three times); on a quiet one the whole request measured the same either way
    (bench/ab.py, p50 32.0 → 32.2 ms, p95 43.8 → 42.8). Inside a transaction already open,
    nothing changes: its other writes must stay durable. SQLite's write-ahead log with
    synchronous NORMAL (the default here) already commits without a sync.
    """
    outermost = not connection.in_atomic_block
    with transaction.atomic():
        if outermost and connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SET LOCAL synchronous_commit TO OFF")
        yield


def deleted_meanwhile(references: dict[str, models.Model | None]) -> str | None:
    """Return the name of the first of the rows a write refers to that no longer exists, or
    None when all are there (None values are no reference).

    For a write whose commit failed on a foreign key, or that found no row to update: a row it
    names was deleted by a request that ran at the same time. The caller then answers with the
    object that is gone (a 404 or a 409 naming it), not a server failure or a stale version.
    """
    for name, row in references.items():
        if row is not None and not type(row)._default_manager.filter(pk=row.pk).exists():
            return name
    return None


# What a write answers when a row it names went while it ran.
DELETED_MEANWHILE = "it was deleted while this request ran; nothing was stored."


def refuse_if_deleted(references: dict[str, models.Model | None]) -> None:
    """Raise NotFound naming the first of the rows a write belongs to (its thread, run, end
    user) that a concurrent request deleted; do nothing when all are there."""
    gone = deleted_meanwhile(references)
    if gone is not None:
        raise NotFound(f"No such {gone}: {DELETED_MEANWHILE}")


def delete_or_not_found(row: models.Model, what: str) -> None:
    """Delete the row; NotFound when a concurrent request deleted it first.

    Of two deletes of one row both answered 204, and both were audited: the second deleted
    nothing. Raised inside the caller's transaction, its audit row is rolled back with it.
    """
    _, deleted = row.delete()
    if not deleted.get(row._meta.label):
        raise NotFound(f"No such {what}: another request deleted it first.")
