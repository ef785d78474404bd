"""What the SQLite default needs beyond the ORM, on both backends a no-op where not needed."""

import logging

from django.db import connection

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
