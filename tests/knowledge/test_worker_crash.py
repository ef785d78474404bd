"""Kill -9 a real worker process in the middle of a 200-page PDF."""

import os
import signal
from pathlib import Path

from apps.jobs.models import Job
from apps.knowledge.models import Chunk, Document
from apps.search.models import SearchItem
from tests.conftest import make_actor
from tests.pdfs import make_pdf, page_text
from tests.processes import start_run_worker, wait_until, worker_env

ROOT = Path(__file__).resolve().parents[2]


def test_a_killed_worker_leaves_nothing_visible_and_a_new_worker_finishes(transactional_db):
    alice = make_actor("acme", "alice")
    alice.post("/api/v1/knowledge-bases", {"slug": "manuals"})
    pdf = make_pdf([page_text(number) for number in range(1, 201)])
    document = alice.upload("/api/v1/knowledge-bases/manuals/documents", "manual.pdf", pdf).json()
    env = worker_env(JOB_LEASE_SECONDS="2")

    first = start_run_worker(env)
    try:
        wait_until(
            lambda: Document.objects.get(pk=document["id"]).status == "processing",
            30,
            "the worker to start the document",
        )
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()

    assert Document.objects.get(pk=document["id"]).status == "processing"
    assert Chunk.objects.count() == 0
    found = alice.post("/api/v1/search", {"query": "coolant valve", "scopes": ["knowledge"]})
    assert found.json()["results"] == []

    second = start_run_worker(env)
    try:
        wait_until(
            lambda: Document.objects.get(pk=document["id"]).status == "ready",
            90,
            "a new worker to reclaim and finish the document",
        )
    finally:
        second.send_signal(signal.SIGTERM)
        second.wait(timeout=30)

    ready = Document.objects.get(pk=document["id"])
    indexes = list(Chunk.objects.filter(document=ready).values_list("chunk_index", flat=True))
    assert len(indexes) == len(set(indexes)) == ready.chunk_count > 200
    assert sorted(indexes) == list(range(ready.chunk_count))
    assert SearchItem.objects.filter(kind="chunk").count() == ready.chunk_count
    assert Job.objects.get(kind="knowledge.ingest").attempts == 2
    results = alice.post("/api/v1/search", {"query": "coolant valve", "scopes": ["knowledge"]})
    assert results.json()["results"]
