"""Migration 0006: PostgreSQL's GIN index over (thread, words), and taking it back.

Whether the planner takes it is a matter of the data's size (in a table of a million items it
read a thread's matches in 0.5 ms instead of 2.4); bench/search.py measures that.
"""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.skipif("connection.vendor != 'postgresql'")
INDEX = "search_item_thread_tsv"


def _indexes() -> dict[str, str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'search_searchitem'"
        )
        return dict(cursor.fetchall())


def _migrate(target: str) -> None:
    executor = MigrationExecutor(connection)
    executor.migrate([("search", target)])


def test_the_thread_words_index_covers_messages_threads_and_words(db):
    definition = _indexes()[INDEX]

    assert "USING gin (thread_id, tsv)" in definition
    assert "WHERE (thread_id IS NOT NULL)" in definition


def test_the_migration_takes_the_index_back_and_puts_it_again(transactional_db):
    _migrate("0005_drop_redundant_indexes")
    assert INDEX not in _indexes()

    _migrate("0006_thread_words_index")
    assert INDEX in _indexes()

    # Taking 0006 back took the later migrations back too: put them again for the tests after.
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
