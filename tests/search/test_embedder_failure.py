"""When the embedder fails after vectors serve, reads and writes fall back to words and recency."""

import logging

import pytest

from apps.memconfig.services import config_update
from apps.providers.fake_openai import FakeOpenAIServer
from apps.search.vectors import vector_index_serving

FACT = "the staging database password rotates every monday"


@pytest.fixture
def server(alice, use_embedder, settings):
    """Serve alice's project from fake-server vectors, with every item embedded."""
    with FakeOpenAIServer() as fake:
        settings.OPENAI_BASE_URL = fake.base_url
        settings.OPENAI_API_KEY = "test-key"
        settings.OPENAI_MAX_RETRIES = 0
        config_update(
            agent=alice.agent, changes={"episodic_approval_required": False}, changed_by="ops"
        )
        thread = alice.new_thread(resource_id="ann")
        alice.append(thread["id"], {"role": "user", "content": FACT})
        alice.post("/api/v1/episodic", {"content": FACT, "resource_id": "ann"})
        alice.post("/api/v1/memory/upsert", {"content": FACT, "namespace": "ops"})
        use_embedder(alice, model="text-embedding-3-small", dims=64)()
        assert vector_index_serving(project_id=alice.agent.project_id) is not None
        yield fake


def _cosine(result):
    """Return a result's vector score: search and recall keep it in signals, memory search flat."""
    return result.get("similarity") or result.get("signals", {}).get("vector", {}).get("score")


def _post_ok(actor, path, body):
    response = actor.post(path, body)
    assert response.status_code == 200, response.content
    return response.json()


SEARCHES = [
    ("/api/v1/search", {"scopes": ["messages", "knowledge", "episodic"], "top_k": 10}, 3),
    ("/api/v1/memory/search", {"namespace": "ops"}, 1),
    ("/api/v1/episodic/recall", {"resource_id": "ann"}, 1),
]


@pytest.mark.parametrize("path, body, count", SEARCHES)
def test_search_falls_back_to_words_and_says_so_when_the_embedder_fails(
    alice, server, caplog, path, body, count
):
    query = {"query": "staging database password", **body}
    healthy = _post_ok(alice, path, query)
    server.fail_next(1000, status=500)

    with caplog.at_level(logging.WARNING, logger="apps.search.selectors"):
        degraded = _post_ok(alice, path, query)

    assert "warnings" not in healthy
    assert len(healthy["results"]) == count
    assert all(_cosine(r) is not None for r in healthy["results"])
    assert [r["id"] for r in degraded["results"]] == [r["id"] for r in healthy["results"]]
    assert all(_cosine(r) is None for r in degraded["results"])
    assert [w["code"] for w in degraded["warnings"]] == ["vectors_unavailable"]
    assert "searches without vectors" in caplog.text
    assert server.bodies("/v1/embeddings")[-1]["input"] == ["staging database password"]


def test_a_proposal_is_stored_without_similarity_dedupe_and_exact_copies_still_dedupe(
    alice, server
):
    near = FACT + ", usually"
    server.fail_next(1000, status=500)
    calls = len(server.bodies("/v1/embeddings"))

    exact = alice.post("/api/v1/episodic", {"content": f"  {FACT.upper()} ", "resource_id": "ann"})
    stored = alice.post("/api/v1/episodic", {"content": near, "resource_id": "ann"})

    assert exact.status_code == 200, exact.content
    assert exact.json()["duplicate_of"] == "hash"
    assert stored.status_code == 201, stored.content
    assert stored.json()["duplicate_of"] is None
    assert len(server.bodies("/v1/embeddings")) == calls + 1  # only the near copy was embedded


def test_a_context_that_searches_nothing_does_not_embed_its_query(alice, server):
    def configure(**changes):
        config_update(agent=alice.agent, changes=changes, changed_by="test")

    configure(
        episodic_auto_inject=False, knowledge_top_k=0, notes_top_k=0, semantic_recall_enabled=False
    )
    thread = alice.new_thread(resource_id="ann")
    alice.append(thread["id"], {"role": "user", "content": "what rotates on monday?"})
    embedded = len(server.bodies("/v1/embeddings"))
    server.fail_next(1000, status=500)

    quiet = _post_ok(alice, f"/api/v1/threads/{thread['id']}/context", {"query": "password"})
    configure(knowledge_top_k=5)
    searching = _post_ok(alice, f"/api/v1/threads/{thread['id']}/context", {"query": "password"})

    assert quiet["warnings"] == []
    assert [w["code"] for w in searching["warnings"]] == ["vectors_unavailable"]
    assert len(server.bodies("/v1/embeddings")) == embedded + 1
