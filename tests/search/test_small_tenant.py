"""A small tenant among thousands of other tenants' matches still gets its complete top-k.

Its rows are the oldest (lowest ids), so a search that filtered after taking the newest or
nearest candidates would come back short.
"""

import numpy as np
import pytest
from django.db import connection
from django.utils import timezone

from apps.search.backends import backend
from apps.search.models import ItemEmbedding, SearchItem
from apps.search.scope import Scope
from apps.search.selectors import QueryVector, search
from apps.tenancy.services import agent_get_or_create, project_get_or_create

OTHER_AGENTS, ROWS_EACH, MINE = 20, 200, 3
DIMS = 16


@pytest.fixture
def tenants(db):
    """Return (the small agent, its item ids) after storing every tenant's matching rows."""
    project, _ = project_get_or_create(slug="crowded")
    elsewhere, _ = project_get_or_create(slug="elsewhere")
    small, _ = agent_get_or_create(project=project, slug="small")
    others = [
        agent_get_or_create(project=project if n % 2 else elsewhere, slug=f"big-{n}")[0]
        for n in range(OTHER_AGENTS)
    ]
    mine = _bulk_items([small] * MINE, "overdue invoice reminder for the small tenant")
    _bulk_items(
        [agent for agent in others for _ in range(ROWS_EACH)], "overdue invoice reminder again"
    )
    return small, [item.id for item in mine]


def _bulk_items(agents, text) -> list[SearchItem]:
    now = timezone.now()
    rows = [
        SearchItem(
            kind="message",
            project_id=agent.project_id,
            agent_id=agent.id,
            content=f"{text} {n}",
            created_at=now,
        )
        for n, agent in enumerate(agents)
    ]
    return SearchItem.objects.bulk_create(rows, batch_size=2000)


def _scope(agent) -> Scope:
    return Scope(kind="message", project_id=agent.project_id, agent_id=agent.id)


@pytest.mark.parametrize("top_k", [1, MINE - 1, MINE, 10, 50])
def test_lexical_search_returns_min_of_k_and_the_tenants_rows(tenants, settings, top_k):
    settings.SEARCH_LEXICAL_CANDIDATES = 50  # far fewer than the other tenants' matches
    settings.SEARCH_CANDIDATES = 10
    small, mine = tenants

    hits = search(
        scopes=[_scope(small)], query="overdue invoice", top_k=top_k, signals=("lexical",)
    )

    assert len(hits) == min(top_k, MINE)
    assert {hit.item.id for hit in hits} <= set(mine)
    assert all(hit.signals["lexical"]["rank"] <= MINE for hit in hits)


@pytest.mark.parametrize("exact_scan_rows", [20_000, 0])
@pytest.mark.parametrize("top_k", [MINE - 1, 10])
def test_vector_search_returns_min_of_k_and_the_tenants_rows(
    tenants, settings, exact_scan_rows, top_k
):
    settings.SEARCH_EXACT_SCAN_ROWS = exact_scan_rows  # 0: PostgreSQL walks the HNSW index
    small, mine = tenants
    rng = np.random.default_rng(3)
    _embed_every_item(rng)
    query = rng.normal(size=DIMS).astype(np.float32)
    query /= np.linalg.norm(query)

    nearest = backend().vector_candidates(_scope(small), "test", DIMS, query, top_k)
    hits = search(
        scopes=[_scope(small)],
        query="no such words",
        top_k=top_k,
        vector=QueryVector("test", DIMS, query),
    )

    assert len(nearest) == min(top_k, MINE)
    assert {c.item_id for c in nearest} <= set(mine)
    assert [hit.item.id for hit in hits] == [c.item_id for c in nearest]


def _embed_every_item(rng) -> None:
    items = list(SearchItem.objects.order_by("id"))
    vectors = rng.normal(size=(len(items), DIMS)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ItemEmbedding.objects.bulk_create(
        [
            ItemEmbedding(
                item_id=item.id,
                model="test",
                dims=DIMS,
                vector=vector,
                kind=item.kind,
                project_id=item.project_id,
                agent_id=item.agent_id,
            )
            for item, vector in zip(items, vectors, strict=True)
        ],
        batch_size=2000,
    )
    backend().ensure_vector_index(DIMS)
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE search_itemembedding")
