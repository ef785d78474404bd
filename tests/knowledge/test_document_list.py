"""GET /api/v1/knowledge-bases/{slug}/documents: what it says about each document."""

import hashlib

from apps.jobs.services import job_run_pending
from apps.knowledge.models import Chunk, Document
from tests.pdfs import make_pdf, page_text

KB = "/api/v1/knowledge-bases/ops/documents"
RUNBOOK = b"# Runbook\n\n## Restarts\n\nRestart the worker.\n\n## Backups\n\nBackups run nightly.\n"
DAMAGED = make_pdf([page_text(1), page_text(2)])[:1500]


def _list(actor, **params) -> list[dict]:
    response = actor.get(KB, params)
    assert response.status_code == 200, response.content
    return response.json()["results"]


def _sha256(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


def test_it_lists_each_document_with_its_state_and_who_uploaded_it(alice, bob):
    alice.post("/api/v1/knowledge-bases", {"slug": "ops"})
    runbook = alice.upload(KB, "runbook.md", RUNBOOK, title="Runbook").json()
    damaged = bob.upload(KB, "manual.pdf", DAMAGED).json()
    job_run_pending()
    note = bob.post(KB, {"title": "Parking", "text": "Parking is behind building C."}).json()

    listed = {document["id"]: document for document in _list(alice)}

    assert list(listed) == [note["id"], damaged["id"], runbook["id"]]  # newest first
    ready = listed[runbook["id"]]
    chunks = Chunk.objects.filter(document_id=runbook["id"])
    assert {key: ready[key] for key in ready if key not in ("id", "created_at", "updated_at")} == {
        "knowledge_base": "ops",
        "title": "Runbook",
        "status": "ready",
        "progress": 100,
        "error": "",
        "attempts": 1,
        "mime_type": "text/markdown",
        "size_bytes": len(RUNBOOK),
        "content_hash": _sha256(RUNBOOK),
        "chunk_count": 2,
        "token_count": sum(chunk.token_count for chunk in chunks),
        "metadata": {"filename": "runbook.md"},
        "uploaded_by": "agent:acme/alice",
    }
    assert chunks.count() == 2
    failed = listed[damaged["id"]]
    assert (failed["status"], failed["attempts"], failed["chunk_count"]) == ("failed", 1, 0)
    assert failed["error"].startswith("The PDF is damaged")
    assert (failed["title"], failed["uploaded_by"]) == ("manual.pdf", "agent:acme/bob")
    pending = listed[note["id"]]
    assert (pending["status"], pending["attempts"], pending["progress"]) == ("pending", 0, 0)
    assert (pending["mime_type"], pending["metadata"]) == ("text/markdown", {})
    assert pending["content_hash"] == _sha256(b"Parking is behind building C.")
    stored = Document.objects.get(pk=runbook["id"])
    assert (stored.uploaded_by, stored.attempts) == ("agent:acme/alice", 1)


def test_the_status_filter_lists_only_documents_in_that_state(alice):
    alice.post("/api/v1/knowledge-bases", {"slug": "ops"})
    runbook = alice.upload(KB, "runbook.md", RUNBOOK).json()
    damaged = alice.upload(KB, "manual.pdf", DAMAGED).json()
    job_run_pending()
    note = alice.post(KB, {"title": "Parking", "text": "Parking is behind building C."}).json()

    assert [d["id"] for d in _list(alice, status="ready")] == [runbook["id"]]
    assert [d["id"] for d in _list(alice, status="failed")] == [damaged["id"]]
    assert [d["id"] for d in _list(alice, status="pending")] == [note["id"]]
    assert _list(alice, status="processing") == []
    bad = alice.get(KB, {"status": "done"})
    assert bad.status_code == 400
    assert bad.json()["error"]["message"].startswith("status: Must be one of pending")


def test_it_pages_through_the_documents(alice):
    alice.post("/api/v1/knowledge-bases", {"slug": "ops"})
    sent = [alice.post(KB, {"title": f"n{n}", "text": f"note {n}"}).json()["id"] for n in range(5)]

    first = alice.get(KB, {"limit": 2}).json()
    second = alice.client.get(first["next"]).json()
    third = alice.client.get(second["next"]).json()

    pages = [first, second, third]
    assert [d["id"] for page in pages for d in page["results"]] == sent[::-1]
    assert third["next"] is None
