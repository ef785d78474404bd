"""What the recency bonus reads of each candidate: its created_at, on both backends."""

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.providers.embeddings import embedder_for
from apps.search.lexical import lexical_candidates
from apps.search.models import ItemEmbedding, SearchItem
from apps.search.nearest import vector_candidates
from apps.search.scope import Scope
from apps.search.selectors import items_created_at, query_vector, rank
from apps.search.times import from_epoch
from apps.search.vectors import _ensure_ann_index
from apps.tenancy.services import project_get_or_create


def test_candidates_created_at_comes_back_as_stored(db):
    project, _ = project_get_or_create(slug="times")
    stamps = [
        datetime(2026, 3, 29, 1, 59, 58, 123456, tzinfo=UTC),
        datetime(1999, 12, 31, 23, 59, 59, tzinfo=UTC),
        datetime(2026, 11, 23, 4, 0, 0, 999999, tzinfo=UTC),
    ]
    items = SearchItem.objects.bulk_create(
        SearchItem(kind="message", project_id=project.id, content=f"t{n}", created_at=at)
        for n, at in enumerate(stamps)
    )

    found = items_created_at([item.id for item in items] + [10**9])  # and one that is gone

    assert set(found) == {item.id for item in items}
    for item, stamp in zip(items, stamps, strict=True):
        assert found[item.id].utcoffset() == timedelta(0)
        assert abs(found[item.id] - stamp) < timedelta(milliseconds=1)


def test_no_candidates_read_nothing(db, django_assert_num_queries):
    with django_assert_num_queries(0):
        assert items_created_at([]) == {}


def _dated_items(project, texts_and_stamps):
    return SearchItem.objects.bulk_create(
        SearchItem(kind="message", project_id=project.id, content=text, created_at=at)
        for text, at in texts_and_stamps
    )


_STAMPS = [
    ("the harbour crane lifts", datetime(2026, 3, 29, 1, 59, 58, 123456, tzinfo=UTC)),
    ("a harbour at dawn", datetime(1999, 12, 31, 23, 59, 59, tzinfo=UTC)),
    ("the crane was repaired", datetime(2026, 11, 23, 4, 0, 0, 999999, tzinfo=UTC)),
]


def _assert_seen_as_stored(seen_at, found, items):
    stored = {item.id: stamp for item, (_, stamp) in zip(items, _STAMPS, strict=True)}
    assert set(seen_at) == {item_id for item_id, _ in found}
    assert set(seen_at) <= set(stored)
    for item_id, seconds in seen_at.items():
        assert abs(from_epoch(seconds) - stored[item_id]) < timedelta(milliseconds=1)


def test_lexical_candidates_bring_their_created_at(db):
    project, _ = project_get_or_create(slug="times")
    items = _dated_items(project, _STAMPS)
    seen_at = {}

    found = lexical_candidates(
        Scope(kind="message", project_id=project.id), ["harbour", "crane"], 10, seen_at=seen_at
    )

    assert len(found) == 3
    _assert_seen_as_stored(seen_at, found, items)


@pytest.mark.parametrize("exact", [True, False], ids=["exact scan", "index"])
def test_vector_candidates_bring_their_created_at(db, settings, exact):
    if not exact and connection.vendor != "postgresql":
        pytest.skip("the HNSW index is PostgreSQL's")
    project, _ = project_get_or_create(slug="times")
    items = _dated_items(project, _STAMPS)
    embedder = embedder_for("builtin-hash", 32)
    vectors = embedder.embed([text for text, _ in _STAMPS])
    ItemEmbedding.objects.bulk_create(
        ItemEmbedding(
            item_id=item.id,
            model="builtin-hash",
            dims=32,
            vector=vector,
            kind="message",
            project_id=project.id,
        )
        for item, vector in zip(items, vectors, strict=True)
    )
    if not exact:
        settings.SEARCH_EXACT_SCAN_ROWS = 0
        _ensure_ann_index(32)
    [query] = embedder.embed(["harbour crane"])
    seen_at = {}

    found = vector_candidates(
        Scope(kind="message", project_id=project.id),
        "builtin-hash",
        32,
        np.asarray(query, np.float32),
        10,
        seen_at=seen_at,
    )

    assert len(found) == 3
    _assert_seen_as_stored(seen_at, found, items)


def test_ranking_reads_no_created_at_of_its_own(alice, use_embedder):
    thread = alice.new_thread()
    alice.append(
        thread["id"],
        {"role": "user", "content": "the harbour crane lifts containers"},
        {"role": "user", "content": "the crane was repaired at the harbour"},
    )
    use_embedder(alice)()
    vector = query_vector(project_id=alice.agent.project_id, query="harbour crane")
    scope = Scope(kind="message", project_id=alice.agent.project_id, thread_id=thread["id"])

    with CaptureQueriesContext(connection) as queries:
        ranked = rank(scopes=[scope], query="harbour crane", top_k=5, vector=vector)

    assert len(ranked) == 2
    assert {"lexical", "vector", "recency"} <= set(ranked[0].signals)
    by_id = [q["sql"] for q in queries if "search_searchitem WHERE id" in q["sql"]]
    assert by_id == []  # lexical and vector candidates brought their created_at along
