"""Concurrent creates of knowledge bases and sources through the real HTTP server: no 500s.

On PostgreSQL the requests really overlap (each server thread has its own connection); on
SQLite the writers are serialised by the database lock, and the answers must be the same.
"""

from apps.knowledge.models import Document, KnowledgeBase, Source
from tests.conftest import make_actor
from tests.processes import send_at_once

CLIENTS = 6


def _race(live_server, key: str, requests_to_send: list[tuple[str, dict]]) -> list:
    """Send every (path, body) at once, one client each, and return the responses in order."""
    calls = [("POST", path, body) for path, body in requests_to_send]
    return send_at_once(live_server.url, key, calls)


def test_concurrent_creates_of_one_slug_store_one_base_and_answer_409(
    live_server, transactional_db
):
    alice = make_actor("acme", "alice")

    responses = _race(
        live_server, alice.key, [("/api/v1/knowledge-bases", {"slug": "ops"})] * CLIENTS
    )

    statuses = sorted(r.status_code for r in responses)
    assert statuses == [201] + [409] * (CLIENTS - 1), [r.text for r in responses]
    for response in responses:
        if response.status_code == 409:
            assert response.json()["error"]["code"] == "duplicate"
            assert "'ops' exists" in response.json()["error"]["message"]
    assert KnowledgeBase.objects.filter(project=alice.agent.project, slug="ops").count() == 1


def test_a_create_racing_upserts_into_the_same_namespace_never_fails(live_server, transactional_db):
    alice = make_actor("acme", "alice")
    create = ("/api/v1/knowledge-bases", {"slug": "facts"})
    upsert = ("/api/v1/memory/upsert", {"namespace": "facts", "content": "The sky is blue"})

    responses = _race(live_server, alice.key, [create, upsert] * (CLIENTS // 2))

    creates, upserts = responses[0::2], responses[1::2]
    assert all(r.status_code in (201, 409) for r in creates), [r.text for r in creates]
    assert sorted(r.status_code for r in upserts) == [200] * (len(upserts) - 1) + [201], [
        r.text for r in upserts
    ]
    assert len({r.json()["document_id"] for r in upserts}) == 1
    kb = KnowledgeBase.objects.get(project=alice.agent.project, slug="facts")
    assert kb.documents.count() == 1


def test_concurrent_first_uploads_share_one_source(live_server, transactional_db):
    alice = make_actor("acme", "alice")
    assert alice.post("/api/v1/knowledge-bases", {"slug": "ops"}).status_code == 201
    path = "/api/v1/knowledge-bases/ops/documents"

    responses = _race(
        live_server,
        alice.key,
        [(path, {"title": f"note {n}", "text": f"Runbook note number {n}."}) for n in range(6)],
    )
    later = alice.post(path, {"title": "later", "text": "A note sent after the rush."})

    assert [r.status_code for r in responses] == [202] * 6, [r.text for r in responses]
    assert later.status_code == 202, later.content
    sources = Source.objects.filter(knowledge_base__slug="ops", kind="text")
    assert sources.count() == 1
    assert Document.objects.filter(source=sources.get()).count() == 7


def test_concurrent_first_upserts_into_a_new_namespace_share_one_source(
    live_server, transactional_db
):
    alice = make_actor("acme", "alice")
    upserts = [
        ("/api/v1/memory/upsert", {"namespace": "facts", "content": f"Fact number {n}"})
        for n in range(CLIENTS)
    ]

    responses = _race(live_server, alice.key, upserts)

    assert [r.status_code for r in responses] == [201] * CLIENTS, [r.text for r in responses]
    assert Source.objects.filter(knowledge_base__slug="facts", kind="api").count() == 1
    assert KnowledgeBase.objects.filter(slug="facts").count() == 1
