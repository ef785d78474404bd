"""What the recency bonus reads of each candidate: its created_at, on both backends."""

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.providers.embeddings import embedder_for
from apps.search.backends import backend
from apps.search.models import ItemEmbedding, SearchItem
from apps.search.scope import Scope
from apps.search.selectors import query_vector, rank
from apps.tenancy.services import project_get_or_create


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


def _assert_created_as_stored(found, items):
    stored = {item.id: stamp for item, (_, stamp) in zip(items, _STAMPS, strict=True)}
    assert {candidate.item_id for candidate in found} <= set(stored)
    for candidate in found:
        created = datetime.fromtimestamp(candidate.created, UTC)
        assert abs(created - stored[candidate.item_id]) < timedelta(milliseconds=1)


def test_lexical_candidates_bring_their_created_at(db):
    project, _ = project_get_or_create(slug="times")
    items = _dated_items(project, _STAMPS)

    found = backend().lexical_candidates(
        Scope(kind="message", project_id=project.id), ["harbour", "crane"], 10
    )

    assert len(found) == 3
    _assert_created_as_stored(found, items)


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
        backend().ensure_vector_index(32)
    [query] = embedder.embed(["harbour crane"])

    found = backend().vector_candidates(
        Scope(kind="message", project_id=project.id),
        "builtin-hash",
        32,
        np.asarray(query, np.float32),
        10,
    )

    assert len(found) == 3
    _assert_created_as_stored(found, items)


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
