"""A ready document is its project's: another project's key can neither see nor change it."""

import pytest

from apps.jobs.services import job_run_pending
from apps.knowledge.models import Chunk, Document

ALICES = b"# Runbook\n\nRestart the ingest worker with systemctl restart ingest.\n"
CAROLS = b"# Runbook\n\nRestart the billing worker with supervisorctl restart billing.\n"


def _documents_in_search(actor, query, **body) -> set[str]:
    response = actor.post("/api/v1/search", {"query": query, "scopes": ["knowledge"], **body})
    assert response.status_code == 200, response.content
    return {hit["metadata"]["document_id"] for hit in response.json()["results"]}


def _listed(actor, kb_slug) -> list[str]:
    response = actor.get(f"/api/v1/knowledge-bases/{kb_slug}/documents")
    assert response.status_code == 200, response.content
    return [document["id"] for document in response.json()["results"]]


@pytest.fixture
def documents(alice, carol):
    """A ready document of alice's project and one of carol's, in knowledge bases both named ops."""
    ids = {}
    for actor, content in ((alice, ALICES), (carol, CAROLS)):
        assert actor.post("/api/v1/knowledge-bases", {"slug": "ops"}).status_code == 201
        response = actor.upload("/api/v1/knowledge-bases/ops/documents", "runbook.md", content)
        ids[actor.agent.slug] = response.json()["id"]
    job_run_pending()
    assert set(Document.objects.values_list("status", flat=True)) == {"ready"}
    return ids


def test_another_projects_key_cannot_read_or_delete_a_ready_document(alice, carol, documents):
    document = documents["alice"]

    assert carol.get(f"/api/v1/documents/{document}").status_code == 404
    assert carol.get(f"/api/v1/documents/{document}/chunks").status_code == 404
    assert carol.post(f"/api/v1/documents/{document}/reindex").status_code == 404
    assert carol.delete(f"/api/v1/documents/{document}").status_code == 404
    assert Document.objects.get(pk=document).status == "ready"
    assert Chunk.objects.filter(document_id=document).count() == 1


def test_another_projects_key_does_not_list_or_find_a_ready_document(alice, carol, documents):
    assert _listed(carol, "ops") == [documents["carol"]]
    assert _documents_in_search(carol, "restart worker") == {documents["carol"]}
    assert _documents_in_search(carol, "systemctl ingest") == set()
    assert _documents_in_search(carol, "restart worker", knowledge_base="ops") == {
        documents["carol"]
    }


def test_the_projects_own_agents_read_list_find_and_delete_it(alice, bob, documents):
    document = documents["alice"]

    assert alice.get(f"/api/v1/documents/{document}").json()["status"] == "ready"
    [chunk] = alice.get(f"/api/v1/documents/{document}/chunks").json()["results"]
    assert "systemctl restart ingest" in chunk["content"]
    assert _listed(alice, "ops") == _listed(bob, "ops") == [document]
    assert _documents_in_search(alice, "restart worker") == {document}
    assert _documents_in_search(bob, "systemctl ingest", knowledge_base="ops") == {document}
    assert alice.delete(f"/api/v1/documents/{document}").status_code == 204
    assert _documents_in_search(alice, "restart worker") == set()


def test_the_knowledge_base_filter_leaves_out_the_other_knowledge_bases(alice):
    for slug, text in (("ops", "Rotate the pager every monday."), ("hr", "The pager budget.")):
        alice.post("/api/v1/knowledge-bases", {"slug": slug})
        alice.post(f"/api/v1/knowledge-bases/{slug}/documents", {"title": slug, "text": text})
    job_run_pending()
    ops, hr = (str(Document.objects.get(knowledge_base__slug=slug).id) for slug in ("ops", "hr"))

    assert _documents_in_search(alice, "pager") == {ops, hr}
    assert _documents_in_search(alice, "pager", knowledge_base="ops") == {ops}
    assert _documents_in_search(alice, "pager", knowledge_base="hr") == {hr}
    missing = alice.post(
        "/api/v1/search", {"query": "pager", "scopes": ["knowledge"], "knowledge_base": "nope"}
    )
    assert missing.status_code == 404
