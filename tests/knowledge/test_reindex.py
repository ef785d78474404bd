"""A re-index that fails leaves no chunks of the old version behind."""

from pathlib import Path

import pytest
from django.utils import timezone

from apps.jobs.models import Job
from apps.knowledge.models import Chunk, Document
from apps.search.models import ItemEmbedding, SearchItem
from tests.pdfs import make_pdf, page_text

KB = "/api/v1/knowledge-bases/manuals/documents"


PDF = make_pdf(["The coolant valve is checked weekly.", page_text(2), page_text(3)])
MARKDOWN = (
    b"# Valves\n\nThe coolant valve is checked weekly.\n\n## Pumps\n\nPumps are oiled monthly."
)


def _damage(path: Path) -> None:
    path.write_bytes(PDF[:1500])


def _remove(path: Path) -> None:
    path.unlink()


@pytest.mark.parametrize(
    "name, content, break_file, says",
    [
        # Unreadable content fails at once.
        ("manual.pdf", PDF, _damage, "The PDF is damaged"),
        # Any other error is retried, and the document fails with the last attempt.
        ("notes.md", MARKDOWN, _remove, "FileNotFoundError"),
    ],
    ids=["damaged-file", "missing-file"],
)
def test_a_failed_reindex_drops_the_old_chunks_and_vectors(
    alice, use_embedder, name, content, break_file, says
):
    run_jobs = use_embedder(alice)
    alice.post("/api/v1/knowledge-bases", {"slug": "manuals"})
    document = alice.upload(KB, name, content).json()
    run_jobs()
    run_jobs()
    assert ItemEmbedding.objects.filter(kind="chunk").count() == Chunk.objects.count() > 0
    break_file(Path(Document.objects.get(pk=document["id"]).file.path))

    assert alice.post(f"/api/v1/documents/{document['id']}/reindex").status_code == 202
    for _ in range(3):  # every attempt a retry may take
        Job.objects.filter(status="pending").update(run_after=timezone.now())
        run_jobs()

    failed = alice.get(f"/api/v1/documents/{document['id']}").json()
    assert (failed["status"], failed["chunk_count"], failed["token_count"]) == ("failed", 0, 0)
    assert says in failed["error"]
    assert alice.get(f"/api/v1/documents/{document['id']}/chunks").json()["results"] == []
    assert Chunk.objects.count() == 0
    assert SearchItem.objects.filter(kind="chunk").count() == 0
    assert ItemEmbedding.objects.filter(kind="chunk").count() == 0
    found = alice.post("/api/v1/search", {"query": "coolant valve", "scopes": ["knowledge"]})
    assert found.json()["results"] == []
