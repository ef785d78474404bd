"""Vector indexes are made by migrations and `manage.py vector_index`, never by the vectors job:
building one over a large table holds whoever builds it."""

import logging

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from apps.search.backends import backend

POSTGRES = "connection.vendor == 'postgresql'"


def _run(*args) -> str:
    from io import StringIO

    out = StringIO()
    call_command("vector_index", *args, stdout=out)
    return out.getvalue()


@pytest.mark.skipif(f"not ({POSTGRES})", reason="PostgreSQL's HNSW indexes")
def test_the_common_dimensions_are_indexed_by_the_migration(db):
    for dims in (384, 512, 768, 1024, 1536):
        assert not backend().vector_index_missing(dims), dims
    assert backend().vector_index_missing(48)
    assert not backend().vector_index_missing(3072)  # scanned exactly: nothing to miss


def test_the_vectors_job_builds_no_index_and_says_how_to(alice, use_embedder, caplog):
    from apps.search import vectors

    vectors._CHECKED.discard(48)
    thread = alice.new_thread()
    alice.append(thread["id"], {"role": "user", "content": "the red kite nests in the oak"})

    with caplog.at_level(logging.WARNING, logger="apps.search.vectors"):
        use_embedder(alice, dims=48)()

    postgres = connection.vendor == "postgresql"
    assert backend().vector_index_missing(48) is postgres  # SQLite has no index to miss
    warned = [r.getMessage() for r in caplog.records if "vector_index 48" in r.getMessage()]
    assert bool(warned) is postgres
    hits = alice.post("/api/v1/search", {"query": "red kite"}).json()["results"]
    assert hits[0]["signals"]["vector"]["rank"] == 1  # scanned exactly meanwhile


@pytest.mark.skipif(f"not ({POSTGRES})", reason="PostgreSQL's HNSW indexes")
def test_the_vectors_job_warns_once_per_dimension(alice, use_embedder, caplog):
    from apps.search import vectors

    vectors._CHECKED.discard(48)
    thread = alice.new_thread()
    with caplog.at_level(logging.WARNING, logger="apps.search.vectors"):
        use_embedder(alice, dims=48)()
        alice.append(thread["id"], {"role": "user", "content": "a second message"})
        use_embedder(alice, dims=48)()

    assert sum("vector_index 48" in r.getMessage() for r in caplog.records) == 1


@pytest.mark.skipif(f"not ({POSTGRES})", reason="PostgreSQL's HNSW indexes")
def test_the_command_indexes_the_dimensions_in_use(alice, use_embedder):
    assert _run().startswith("No project has vectors yet")
    use_embedder(alice, dims=48)()

    assert _run() == "48 dimensions: index created.\n"
    assert not backend().vector_index_missing(48)
    assert _run("48", "3072") == (
        "48 dimensions: already indexed.\n"
        "3072 dimensions: scanned exactly (HNSW holds at most 2,000), no index.\n"
    )


@pytest.mark.skipif(f"not ({POSTGRES})", reason="PostgreSQL's HNSW indexes")
@pytest.mark.django_db(transaction=True)
def test_outside_a_transaction_the_index_is_built_concurrently_and_valid():
    try:
        assert _run("40") == "40 dimensions: index created.\n"
        assert not backend().vector_index_missing(40)  # valid: the concurrent build finished
    finally:
        with connection.cursor() as cursor:
            cursor.execute("DROP INDEX IF EXISTS search_embedding_hnsw_40")


@pytest.mark.skipif(f"not ({POSTGRES})", reason="PostgreSQL's HNSW indexes")
@pytest.mark.django_db(transaction=True)
def test_an_interrupted_build_is_said_so_and_the_next_run_finishes_it():
    # A concurrent build waits for every transaction open on the table; one that stays open
    # past lock_timeout ends the build after its unfinished index was recorded.
    reader = connection.copy()
    try:
        with reader.cursor() as cursor:
            cursor.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
            cursor.execute("SELECT count(*) FROM search_itemembedding")
        with connection.cursor() as cursor:
            cursor.execute("SET lock_timeout = '300ms'")
        with pytest.raises(CommandError, match=r"40 dimensions: the build was interrupted .*again"):
            _run("40")
        assert backend().vector_index_missing(40)  # there, but not valid
        with reader.cursor() as cursor:
            cursor.execute("ROLLBACK")
        with connection.cursor() as cursor:
            cursor.execute("RESET lock_timeout")

        assert _run("40") == "40 dimensions: index created.\n"
        assert not backend().vector_index_missing(40)
    finally:
        reader.close()
        with connection.cursor() as cursor:
            cursor.execute("RESET lock_timeout")
            cursor.execute("DROP INDEX IF EXISTS search_embedding_hnsw_40")


@pytest.mark.skipif(POSTGRES, reason="SQLite")
def test_on_sqlite_there_is_nothing_to_index(db):
    assert _run("384") == "SQLite scans vectors with NumPy: there is no vector index to make.\n"


def test_a_dimension_out_of_range_is_refused_by_name(db):
    with pytest.raises(CommandError, match="dims 0: give a dimension from 1 to 16,000"):
        _run("0")
