import numpy as np
import pytest
from django.db import connection
from django.db.models import Q

from apps.jobs.models import Job
from apps.jobs.services import job_run_pending
from apps.providers.fake_openai import FakeOpenAIServer
from apps.search.backends import backend
from apps.search.models import ItemEmbedding, SearchItem, VectorIndex
from apps.search.scope import Scope


def _search(actor, query, **body):
    response = actor.post("/api/v1/search", {"query": query, **body})
    assert response.status_code == 200, response.content
    return response.json()["results"]


def _statuses(actor):
    return sorted(
        VectorIndex.objects.filter(project=actor.agent.project).values_list("dims", "status")
    )


def test_changing_dimensions_re_embeds_in_the_background_and_then_switches(alice, use_embedder):
    thread = alice.new_thread()
    alice.append(thread["id"], {"role": "user", "content": "the red kite nests in the oak"})
    use_embedder(alice, dims=32)()
    assert _statuses(alice) == [(32, "ready")]

    use_embedder(alice, dims=48)
    alice.append(thread["id"], {"role": "user", "content": "a kite was seen at noon"})
    [old_hit, *_] = _search(alice, "red kite oak")

    assert old_hit["signals"]["vector"]["rank"] == 1  # the 32-dim vectors still serve
    job_run_pending()
    assert _statuses(alice) == [(32, "retired"), (48, "ready")]
    assert set(ItemEmbedding.objects.values_list("dims", flat=True)) == {48}
    assert ItemEmbedding.objects.count() == SearchItem.objects.count() == 2
    [new_hit, *_] = _search(alice, "red kite oak")
    assert new_hit["content"] == "the red kite nests in the oak"
    assert new_hit["signals"]["vector"]["rank"] == 1


def test_turning_the_embedder_off_retires_vectors_and_search_stays_lexical(alice, use_embedder):
    thread = alice.new_thread()
    alice.append(thread["id"], {"role": "user", "content": "granite countertops"})
    use_embedder(alice)()

    use_embedder(alice, model="")()

    assert _statuses(alice) == [(64, "retired")]
    assert ItemEmbedding.objects.count() == 0
    [hit] = _search(alice, "granite")
    assert "vector" not in hit["signals"]


def test_an_openai_compatible_endpoint_embeds_over_http(alice, use_embedder, settings):
    with FakeOpenAIServer() as server:
        settings.OPENAI_BASE_URL = server.base_url
        settings.OPENAI_API_KEY = "test-key"
        thread = alice.new_thread()
        alice.append(
            thread["id"],
            {"role": "user", "content": "our kubernetes cluster ran out of memory"},
            {"role": "user", "content": "the picnic is on saturday"},
        )
        use_embedder(alice, model="text-embedding-3-small", dims=256)()

        [hit, *_] = _search(alice, "kubernetes memory")

        embeddings = server.bodies("/v1/embeddings")
    assert hit["content"] == "our kubernetes cluster ran out of memory"
    assert hit["signals"]["vector"]["rank"] == 1
    assert embeddings[0]["model"] == "text-embedding-3-small"
    assert embeddings[0]["dimensions"] == 256
    assert len(embeddings[0]["input"]) == 2


def test_an_embedder_failure_leaves_the_job_to_retry_and_search_working(
    alice, use_embedder, settings
):
    with FakeOpenAIServer() as server:
        settings.OPENAI_BASE_URL = server.base_url
        settings.OPENAI_MAX_RETRIES = 0
        server.fail_next(1, status=500)
        thread = alice.new_thread()
        alice.append(thread["id"], {"role": "user", "content": "printer jammed again"})
        use_embedder(alice, model="text-embedding-3-small", dims=64)()

        job = Job.objects.get(kind="search.vectors")
        [hit] = _search(alice, "printer jammed")
    assert job.status == "pending"
    assert "500" in job.error
    assert "vector" not in hit["signals"]


@pytest.mark.skipif("connection.vendor != 'postgresql'")
def test_pgvector_filtered_to_a_small_tenant_returns_full_top_k_with_high_recall(db, settings):
    from tests.conftest import make_actor

    settings.SEARCH_EXACT_SCAN_ROWS = 0  # force the HNSW path with iterative scans
    rng = np.random.default_rng(7)
    big, small = make_actor("big", "a").agent, make_actor("small", "a").agent
    dims, rows = 32, 100_000
    vectors = rng.normal(size=(rows, dims)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    owners = np.where(rng.random(rows) < 0.01, 1, 0)
    item_ids = _bulk_vectors(vectors, owners, [big, small], dims)

    backend().ensure_vector_index(dims)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE search_itemembedding")
    tenant = Scope(kind="message", project_id=small.project_id, agent_id=small.id)
    mine = np.flatnonzero(owners == 1)
    recalls = []
    for query in rng.normal(size=(20, dims)).astype(np.float32):
        query /= np.linalg.norm(query)
        found = backend().vector_candidates(tenant, "bench", dims, query, 10)
        exact = mine[np.argsort(-(vectors[mine] @ query))[:10]]
        assert len(found) == min(10, len(mine))
        ids = {c.item_id for c in found}
        recalls.append(len(ids & {item_ids[i] for i in exact}) / 10)
    assert np.mean(recalls) >= 0.95


def _bulk_vectors(vectors, owners, agents, dims) -> list[int]:
    """Store one item per vector, owned by agents[owner]; return the item ids in order."""
    from django.utils import timezone

    now = timezone.now()
    items = SearchItem.objects.bulk_create(
        [
            SearchItem(
                kind="message",
                project_id=agents[o].project_id,
                agent_id=agents[o].id,
                content="x",
                created_at=now,
            )
            for o in owners
        ],
        batch_size=5000,
    )
    ItemEmbedding.objects.bulk_create(
        [
            ItemEmbedding(
                item_id=item.id,
                model="bench",
                dims=dims,
                vector=vector,
                kind="message",
                project_id=agents[o].project_id,
                agent_id=agents[o].id,
            )
            for item, vector, o in zip(items, vectors, owners, strict=True)
        ],
        batch_size=5000,
    )
    return [item.id for item in items]


def test_a_scopes_cached_vectors_follow_every_change_to_them(alice, use_embedder):
    from apps.search.indexing import index_set_visible
    from apps.search.selectors import query_vector

    thread = alice.new_thread()
    first, second = alice.append(
        thread["id"],
        {"role": "user", "content": "the harbour crane lifts containers"},
        {"role": "user", "content": "the harbour crane was repaired"},
    )
    use_embedder(alice)()
    project_id = alice.agent.project_id
    scope = Scope(kind="message", project_id=project_id, thread_id=thread["id"])
    vector = query_vector(project_id=project_id, query="harbour crane")

    def found():
        hits = backend().vector_candidates(scope, vector.model, vector.dims, vector.vector, 10)
        return set(
            SearchItem.objects.filter(id__in=[c.item_id for c in hits]).values_list(
                "message_id", flat=True
            )
        )

    ids = {first["id"], second["id"]}
    assert {str(m) for m in found()} == ids  # loaded and cached
    index_set_visible(items=Q(message_id=first["id"]), visible=False)
    assert {str(m) for m in found()} == {second["id"]}
    index_set_visible(items=Q(message_id=first["id"]), visible=True)
    assert {str(m) for m in found()} == ids
    [third] = alice.append(thread["id"], {"role": "user", "content": "a harbour crane fell"})
    job_run_pending()
    assert {str(m) for m in found()} == ids | {third["id"]}
    ItemEmbedding.objects.filter(item__message_id=second["id"]).delete()
    assert {str(m) for m in found()} == {first["id"], third["id"]}
